"""PostgreSQL as the system of record: records, full text (tsvector), vectors (pgvector), change feed.

Every :meth:`PostgresStore.apply` is one transaction that first takes a
transaction-scoped advisory lock, so writers from every process are
serialized: change-feed sequence numbers and insert ranges are assigned in
commit order, which is what lets each process replay the feed without ever
skipping a commit that was still in flight. Reads never wait for writers
(MVCC). Connections come from a ``psycopg_pool`` pool.

The store also pushes traversal down (:class:`~cef.store.base.GraphStore`,
one SQL query per hop over the edge indexes) and searches vectors natively
(:meth:`PostgresStore.vector_store`, pgvector HNSW with cosine distance).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from cef.errors import CefError, StoreError, StoreNotFoundError
from cef.model import Chunk, Edge, Node, RelationType
from cef.store.base import (
    Capabilities,
    TextHit,
    WriteSet,
    bfs_neighbourhood,
    bfs_shortest_path,
)
from cef.store.postgres import migrations, text
from cef.store.postgres._driver import psycopg, translate
from cef.store.postgres.text import TsVector
from cef.store.sql import EDGE_COLS, SQLRecordStore, edge_columns, edge_from_row, node_text
from cef.store.textplan import SCORE_BUDGET, plan_terms

log = logging.getLogger(__name__)

#: keep this many change-feed entries; readers further behind reload fully
_TABLES = {"node": "cef_nodes", "edge": "cef_edges", "chunk": "cef_chunks"}


def split_dsn(dsn: str) -> tuple[str, str]:
    """(libpq DSN, cef schema): a ``schema=`` query parameter of a URL names the schema (default public)."""
    if "://" not in dsn:
        return dsn, "public"
    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), "public")
    rest = urlencode([(k, v) for k, v in query if k != "schema"], safe="/")
    return urlunsplit(parts._replace(query=rest)), schema


class PostgresStore(SQLRecordStore):
    """A :class:`cef.store.base.RecordStore` (and GraphStore) on PostgreSQL with pgvector.

    ``dsn`` is a libpq URL or key=value string; ``schema`` (or ``?schema=`` in
    the URL) keeps several knowledge bases in one database.
    """

    capabilities = Capabilities(native_vector_search=True, native_full_text=True, traversal_pushdown=True)
    PARAM = "%s"
    TABLES: ClassVar[Mapping[str, str]] = {
        **_TABLES,
        "changes": "cef_changes",
        "meta": "cef_meta",
        "relation_types": "cef_relation_types",
    }

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        pool_size: int = 8,
        timeout: float = 15.0,
        create: bool = True,
    ) -> None:
        pg = psycopg()
        from psycopg import sql
        from psycopg_pool import ConnectionPool

        self.dsn, url_schema = split_dsn(dsn)
        self.schema = schema or url_schema
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", self.schema):
            raise StoreError(f"invalid PostgreSQL schema name {self.schema!r}")
        self._search_path = sql.SQL("SET search_path TO {}, public").format(sql.Identifier(self.schema))
        self._lock = threading.Lock()
        self._vector_store: Any = None
        try:
            with pg.connect(self.dsn, autocommit=True, connect_timeout=int(timeout)) as conn:
                if not create and not migrations.exists(conn, self.schema):
                    raise StoreNotFoundError(
                        f"{_redact(self.dsn)} schema {self.schema}", "no cef tables in that schema"
                    )
                applied = migrations.migrate(conn, self.schema)
                if applied:
                    log.info("PostgreSQL schema %s: applied migrations %s", self.schema, applied)
            self._pool = ConnectionPool(
                self.dsn,
                min_size=1,
                max_size=pool_size,
                kwargs={"autocommit": True},
                configure=self._configure,
                timeout=timeout,
                open=True,
                name=f"cef-{self.schema}",
            )
        except CefError:
            raise
        except pg.Error as exc:
            raise translate(exc, f"opening {_redact(self.dsn)}") from exc

    def _configure(self, conn: Any) -> None:
        from pgvector.psycopg import register_vector

        conn.execute(self._search_path)
        register_vector(conn)
        text.register_tsvector(conn)

    def __repr__(self) -> str:
        return f"PostgresStore({_redact(self.dsn)!r}, schema={self.schema!r})"

    @contextmanager
    def _conn(self, doing: str) -> Iterator[Any]:
        pg = psycopg()
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn:
                yield conn
        except CefError:
            raise
        except (pg.Error, PoolTimeout) as exc:
            raise translate(exc, doing) from exc

    def _query(self, query: Any, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._conn("reading") as conn:
            return list(conn.execute(query, params).fetchall())

    def close(self) -> None:
        self._pool.close()

    # --------------------------------------------------------------- writes
    def apply(self, writes: WriteSet) -> tuple[int, int]:
        pg = psycopg()
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)", (migrations.LOCK_NAMESPACE, migrations.LOCK_WRITE)
                )
                before = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM cef_changes").fetchone()[0])
                changes = self._write(conn, writes)
                after = before + len(changes)
                if changes:
                    with conn.cursor() as cur:
                        cur.executemany(
                            "INSERT INTO cef_changes(seq, kind, op, id, rid_from, rid_to) "
                            "VALUES (%s, %s, %s, %s, %s, %s)",
                            [(before + k + 1, *c) for k, c in enumerate(changes)],
                        )
                    self._trim_changes(conn, before, after)
                return before, after
        except pg.errors.UniqueViolation as exc:
            raise self._duplicate(writes, exc) from exc
        except CefError:
            raise
        except pg.Error as exc:
            raise translate(exc, "writing") from exc

    # ------------------------------------------------------------ dialect hooks of SQLRecordStore
    def _executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    def _delete_records(self, conn: Any, kind: str, ids: Sequence[str]) -> None:
        if kind != "edge":
            self._text_stats(conn, kind, self._rids(conn, kind, ids), remove=True)
        conn.execute(f"DELETE FROM {_TABLES[kind]} WHERE id = ANY(%s)", (list(ids),))

    def _insert_nodes(self, conn: Any, base: int, w: WriteSet) -> None:
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY cef_nodes (rid, id, label, scope, data, tsv, ntokens, embedding) FROM STDIN (FORMAT BINARY)"
            ) as cp,
        ):
            cp.set_types(["int8", "text", "text", "text", "text", "tsvector", "int4", "vector"])
            for k, n in enumerate(w.nodes):
                tv = TsVector(node_text(n))
                vec = _vec(w.node_vectors.get(n.id))
                cp.write_row((base + k, n.id, n.label, n.scope, n.model_dump_json(), tv, tv.length, vec))
        self._text_stats(conn, "node", list(range(base, base + len(w.nodes))))

    def _update_nodes(self, conn: Any, w: WriteSet) -> None:
        rids = self._rids(conn, "node", [n.id for n in w.updated_nodes])
        self._text_stats(conn, "node", rids, remove=True)
        rows = []
        for n in w.updated_nodes:
            tv = TsVector(node_text(n))
            vec = _vec(w.node_vectors.get(n.id))
            rows.append((n.label, n.scope, n.model_dump_json(), tv, tv.length, vec, n.id))
        self._executemany(
            conn,
            "UPDATE cef_nodes SET label = %s, scope = %s, data = %s, tsv = %s, ntokens = %s, "
            "embedding = COALESCE(%s::vector, embedding) WHERE id = %s",
            rows,
        )
        self._text_stats(conn, "node", rids)

    def _insert_edges(self, conn: Any, base: int, edges: Sequence[Edge]) -> None:
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY cef_edges (rid, id, rel, src, dst, weight, confidence, valid_from, valid_to, "
                "recorded_at, scope, props) FROM STDIN (FORMAT BINARY)"
            ) as cp,
        ):
            cp.set_types(["int8", *(["text"] * 4), *(["float8"] * 5), "text", "text"])
            for k, e in enumerate(edges):
                cp.write_row((base + k, e.id, *edge_columns(e)))

    def _insert_chunks(self, conn: Any, base: int, w: WriteSet) -> None:
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY cef_chunks (rid, id, node_id, scope, data, tsv, ntokens, embedding) FROM STDIN (FORMAT BINARY)"
            ) as cp,
        ):
            cp.set_types(["int8", "text", "text", "text", "text", "tsvector", "int4", "vector"])
            for k, ch in enumerate(w.chunks):
                tv = TsVector(ch.content)
                vec = _vec(w.chunk_vectors.get(ch.id))
                cp.write_row(
                    (base + k, ch.id, ch.node_id, ch.scope, ch.model_dump_json(), tv, tv.length, vec)
                )
        self._text_stats(conn, "chunk", list(range(base, base + len(w.chunks))))

    def _id_violation(self, kind: str, exc: BaseException) -> bool:
        constraint = getattr(getattr(exc, "diag", None), "constraint_name", None) or str(exc)
        return f"{_TABLES[kind]}_id_key" in constraint

    @staticmethod
    def _rids(conn: Any, kind: str, ids: Sequence[str]) -> list[int]:
        rows = conn.execute(f"SELECT rid FROM {_TABLES[kind]} WHERE id = ANY(%s)", (list(ids),)).fetchall()
        return [int(r[0]) for r in rows]

    @staticmethod
    def _text_stats(conn: Any, kind: str, rids: list[int], *, remove: bool = False) -> None:
        """Add (or remove) these rows' terms and lengths to the BM25 statistics."""
        if not rids:
            return
        params = {"kind": kind, "rids": rids}
        table = _TABLES[kind]
        terms_sql = text.SQL_TERMS_REMOVE if remove else text.SQL_TERMS_ADD
        stats_sql = text.SQL_STATS_REMOVE if remove else text.SQL_STATS_ADD
        conn.execute(terms_sql.format(table=table), params)
        conn.execute(stats_sql.format(table=table), params)

    # ---------------------------------------------------------------- reads
    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        rows = self._query("SELECT id, data FROM cef_nodes WHERE id = ANY(%s)", (list(dict.fromkeys(ids)),))
        found = dict(rows)
        return [Node.model_validate_json(found[i]) for i in ids if i in found]

    def get_edges(self, ids: Sequence[str]) -> list[Edge]:
        rows = self._query(
            f"SELECT {EDGE_COLS} FROM cef_edges WHERE id = ANY(%s)", (list(dict.fromkeys(ids)),)
        )
        found = {r[0]: edge_from_row(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def edge_property(self, ids: Sequence[str], key: str) -> dict[str, Any]:
        rows = self._query(
            "SELECT id, (props::jsonb) -> %s FROM cef_edges WHERE id = ANY(%s) AND props <> '{}' "
            "AND (props::jsonb) ? %s",
            (key, list(dict.fromkeys(ids)), key),
        )
        return {eid: value for eid, value in rows}

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        rows = self._query("SELECT id, data FROM cef_chunks WHERE id = ANY(%s)", (list(dict.fromkeys(ids)),))
        found = dict(rows)
        return [Chunk.model_validate_json(found[i]) for i in ids if i in found]

    def existing_ids(self, kind: str, ids: Iterable[str]) -> set[str]:
        if kind == "relation_type":
            sql = "SELECT name FROM cef_relation_types WHERE name = ANY(%s)"
        else:
            sql = f"SELECT id FROM {_TABLES[kind]} WHERE id = ANY(%s)"
        return {r[0] for r in self._query(sql, (list(ids),))}

    def get_vectors(self, kind: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        table = {"node": "cef_nodes", "chunk": "cef_chunks"}[kind]
        rows = self._query(
            f"SELECT id, embedding FROM {table} WHERE embedding IS NOT NULL AND id = ANY(%s)", (list(ids),)
        )
        return {i: v.to_numpy() for i, v in rows}

    def _iter(self, query: str, batch: int = 5000) -> Iterator[Any]:
        """Stream a scan through a server-side cursor on its own pooled connection."""
        pg = psycopg()
        try:
            with self._pool.connection() as conn, conn.transaction(), conn.cursor(name="cef_scan") as cur:
                cur.itersize = batch
                cur.execute(query)
                yield from cur
        except CefError:
            raise
        except pg.Error as exc:
            raise translate(exc, "scanning") from exc

    def iter_nodes(self) -> Iterator[Node]:
        for (data,) in self._iter("SELECT data FROM cef_nodes ORDER BY rid"):
            yield Node.model_validate_json(data)

    def iter_edges(self) -> Iterator[Edge]:
        for row in self._iter(f"SELECT {EDGE_COLS} FROM cef_edges ORDER BY rid"):
            yield edge_from_row(row)

    def iter_chunks(self) -> Iterator[Chunk]:
        for (data,) in self._iter("SELECT data FROM cef_chunks ORDER BY rid"):
            yield Chunk.model_validate_json(data)

    def iter_node_rows(self) -> Iterator[tuple[str, str, str | None]]:
        yield from self._iter("SELECT id, label, scope FROM cef_nodes ORDER BY rid")

    def iter_edge_rows(self) -> Iterator[tuple[Any, ...]]:
        yield from self._iter(
            "SELECT id, rel, src, dst, weight, confidence, valid_from, valid_to, recorded_at, scope, "
            "CASE WHEN props = '{}' THEN NULL ELSE (props::jsonb) -> 'superseded_at' END "
            "FROM cef_edges ORDER BY rid"
        )

    def iter_vectors(self, kind: str) -> Iterator[tuple[str, np.ndarray]]:
        table = {"node": "cef_nodes", "chunk": "cef_chunks"}[kind]
        for ident, vec in self._iter(
            f"SELECT id, embedding FROM {table} WHERE embedding IS NOT NULL ORDER BY rid"
        ):
            yield ident, vec.to_numpy()

    def ids_in_range(self, kind: str, rid_from: int, rid_to: int) -> list[str]:
        return [
            r[0]
            for r in self._query(
                f"SELECT id FROM {_TABLES[kind]} WHERE rid BETWEEN %s AND %s ORDER BY rid", (rid_from, rid_to)
            )
        ]

    def relation_types(self) -> list[RelationType]:
        return [
            RelationType.model_validate_json(d)
            for (d,) in self._query('SELECT data FROM cef_relation_types ORDER BY name COLLATE "C"')
        ]

    def chunks_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        rows = self._query(
            "SELECT id, node_id FROM cef_chunks WHERE node_id = ANY(%s) ORDER BY rid",
            (list(dict.fromkeys(node_ids)),),
        )
        for cid, nid in rows:
            out.setdefault(nid, []).append(cid)
        return out

    def edges_for_nodes(self, node_ids: Sequence[str]) -> list[str]:
        ids = list(dict.fromkeys(node_ids))
        rows = self._query(
            "SELECT id FROM cef_edges WHERE src = ANY(%s) OR dst = ANY(%s) ORDER BY rid", (ids, ids)
        )
        return [r[0] for r in rows]

    def nodes_by_property(
        self, key: str, value: Any, label: str | None = None, limit: int = 100
    ) -> list[Node]:
        if value is None:
            return []
        sql = (
            "SELECT data FROM cef_nodes WHERE ((data::jsonb) -> 'properties') @> %s::jsonb "
            "AND ((data::jsonb) -> 'properties' -> %s) = %s::jsonb"
        )
        params: list[Any] = [json.dumps({key: value}), key, json.dumps(value)]
        if label is not None:
            sql += " AND label = %s"
            params.append(label)
        sql += " ORDER BY rid LIMIT %s"
        params.append(limit)
        return [Node.model_validate_json(d) for (d,) in self._query(sql, params)]

    #: postings a text query scores at most (see :mod:`cef.store.textplan`)
    score_budget = SCORE_BUDGET

    def search_text(self, kind: str, query: str, k: int, scope: str | None = None) -> list[TextHit]:
        """BM25 over the same terms the SQLite store indexes (see :mod:`cef.store.postgres.text`)."""
        terms = text.query_terms(query)
        if not terms or k <= 0:
            return []
        with self._conn("searching text") as conn:
            docs, ntok = conn.execute(
                "SELECT docs, tokens FROM cef_text_stats WHERE kind = %s", (kind,)
            ).fetchone()
            df = dict(
                conn.execute(
                    "SELECT term, df FROM cef_terms WHERE kind = %s AND term = ANY(%s) AND df > 0",
                    (kind, terms),
                ).fetchall()
            )
            plan = plan_terms(terms, df, int(docs or 0), self.score_budget)  # same rule as the SQLite store
            if not plan.terms or not docs:
                return []
            sql = text.SQL_SEARCH.format(
                table=_TABLES[kind],
                scope=" AND (scope IS NULL OR scope = %(scope)s)" if scope is not None else "",
                k1=text.K1,
                k1p=text.K1 + 1,
                b=text.B,
            )

            def ranked(scored: list[str], conjunctive: bool, limit: int) -> list[TextHit]:
                params: dict[str, Any] = {
                    "q": text.tsquery(scored, conjunctive=conjunctive),
                    "terms": scored,
                    "idfs": [text.idf(int(docs), int(df[t])) for t in scored],
                    "avgdl": max(float(ntok) / float(docs), 1e-9),
                    "k": limit,
                    "scope": scope,
                }
                return [TextHit(id=i, score=float(s)) for i, s in conn.execute(sql, params).fetchall()]

            hits = ranked(plan.terms, plan.conjunctive, k)
            if plan.conjunctive and len(hits) < k and plan.fallback is not None:
                seen = {h.id for h in hits}
                hits.extend(h for h in ranked([plan.fallback], False, k + len(hits)) if h.id not in seen)
        return hits[:k]

    # ----------------------------------------------------------- change feed
    def data_version(self) -> int:
        """The latest change seq (one index lookup): it moves whenever anyone commits."""
        return self.current_seq()

    def meta_items(self, prefix: str) -> list[tuple[str, Any]]:
        rows = self._query(
            'SELECT key, value FROM cef_meta WHERE starts_with(key, %s) ORDER BY key COLLATE "C"', (prefix,)
        )
        return [(k, json.loads(v)) for k, v in rows]

    def labels(self) -> list[tuple[str, int]]:
        rows = self._query(
            'SELECT label, COUNT(*) FROM cef_nodes GROUP BY label ORDER BY 2 DESC, label COLLATE "C"'
        )
        return [(r[0], int(r[1])) for r in rows]

    def property_names(self, label: str, sample: int = 200) -> list[str]:
        names: dict[str, None] = {}
        for (data,) in self._query(
            "SELECT data FROM cef_nodes WHERE label = %s ORDER BY rid LIMIT %s", (label, sample)
        ):
            names.update(dict.fromkeys(json.loads(data).get("properties", {})))
        return list(names)

    def relation_endpoints(self) -> list[tuple[str, str, str, int]]:
        rows = self._query(
            "SELECT e.rel, s.label, t.label, COUNT(*) FROM cef_edges e JOIN cef_nodes s ON s.id = e.src "
            'JOIN cef_nodes t ON t.id = e.dst GROUP BY 1, 2, 3 ORDER BY 4 DESC, e.rel COLLATE "C", s.label COLLATE "C", t.label COLLATE "C"'
        )
        return [(r[0], r[1], r[2], int(r[3])) for r in rows]

    # ------------------------------------------------------ traversal pushdown
    def _step(self, relation_types: Sequence[str] | None) -> Any:
        rels = list(relation_types) if relation_types is not None else None

        def step(frontier: list[str], seen: Collection[str]) -> list[tuple[str, str, str]]:
            # one row per newly reached node: its move with the smallest edge id (code point order)
            rows = self._query(
                "SELECT DISTINCT ON (m.dst) m.src, m.id, m.dst FROM ("
                "SELECT src, id, dst FROM cef_edges WHERE src = ANY(%(f)s) "
                "AND (%(r)s::text[] IS NULL OR rel = ANY(%(r)s)) "
                "UNION ALL "
                "SELECT dst, id, src FROM cef_edges WHERE dst = ANY(%(f)s) "
                "AND (%(r)s::text[] IS NULL OR rel = ANY(%(r)s))"
                ') m WHERE NOT (m.dst = ANY(%(seen)s)) ORDER BY m.dst, m.id COLLATE "C", m.src COLLATE "C"',
                {"f": frontier, "r": rels, "seen": list(seen)},
            )
            return [(a, b, c) for a, b, c in rows]

        return step

    def neighbourhood(
        self, seeds: Sequence[str], depth: int, relation_types: Sequence[str] | None, limit: int
    ) -> list[tuple[str, int, list[str]]]:
        present = self.existing_ids("node", seeds)
        return bfs_neighbourhood(self._step(relation_types), [s for s in seeds if s in present], depth, limit)

    def shortest_path(
        self, source: str, target: str, max_depth: int, relation_types: Sequence[str] | None = None
    ) -> list[str] | None:
        if len(self.existing_ids("node", [source, target])) < len({source, target}):
            return None
        return bfs_shortest_path(self._step(relation_types), source, target, max_depth)

    # ------------------------------------------------------------- vectors
    def vector_store(self) -> Any:
        """pgvector search over this store's own vector columns (a :class:`~cef.store.base.VectorStore`)."""
        from cef.store.postgres.vectors import PgVectorStore

        with self._lock:
            if self._vector_store is None:
                self._vector_store = PgVectorStore(self)
            return self._vector_store

    @contextmanager
    def connection(self, doing: str) -> Iterator[Any]:
        """A pooled connection with errors translated (for this package's vector index)."""
        with self._conn(doing) as conn:
            yield conn


def _vec(v: np.ndarray | None) -> Any:
    return None if v is None else np.ascontiguousarray(v, dtype=np.float32)


def _redact(dsn: str) -> str:
    """A DSN without its password (for messages and logs)."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", re.sub(r"(password\s*=\s*)\S+", r"\1***", dsn))
