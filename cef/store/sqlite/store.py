"""The embedded system of record: one SQLite file (WAL), FTS5 for BM25.

Every :meth:`SQLiteStore.apply` is one ``BEGIN IMMEDIATE`` transaction, so a
batch is wholly present or absent even if the process is killed mid-write.
Each transaction appends to a change feed (``changes``) that other processes
replay to keep their in-memory indexes current.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
import unicodedata
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cef.errors import NotAKnowledgeBaseError, RetryableStoreError, StoreError
from cef.model import Chunk, Edge, Node, RelationType
from cef.store.base import Capabilities, TextHit, WriteSet
from cef.store.sql import EDGE_COLS, SQLRecordStore, edge_columns, edge_from_row, new_store_meta, node_text
from cef.store.textplan import SCORE_BUDGET, TermPlan, plan_terms

SCHEMA_VERSION = 1
#: a write of at least this many records runs with a larger page cache (BIG_WRITE_CACHE_KB)
BIG_WRITE = 50_000
#: 256 MB: the id, source and target B-trees of millions of edges stay cached during a big write
BIG_WRITE_CACHE_KB = 262_144
#: SQLite's default page cache (about 2 MB), restored after a big write
DEFAULT_CACHE = -2000
#: keep this many change-feed entries; readers further behind reload fully

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS relation_types(name TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes(
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    scope TEXT,
    data TEXT NOT NULL,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS nodes_label ON nodes(label);
CREATE TABLE IF NOT EXISTS edges(
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    rel TEXT NOT NULL,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    weight REAL NOT NULL,
    confidence REAL NOT NULL,
    valid_from REAL,
    valid_to REAL,
    recorded_at REAL NOT NULL,
    scope TEXT,
    props TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
CREATE TABLE IF NOT EXISTS chunks(
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    node_id TEXT,
    scope TEXT,
    data TEXT NOT NULL,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS chunks_node ON chunks(node_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(content, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS node_fts USING fts5(text, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vocab USING fts5vocab(chunk_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS node_vocab USING fts5vocab(node_fts, 'row');
CREATE TABLE IF NOT EXISTS changes(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    op TEXT NOT NULL,   -- upsert | delete (id set) or insert_range (rid_from..rid_to set)
    id TEXT NOT NULL,
    rid_from INTEGER,
    rid_to INTEGER
);
"""

_FTS = {"node": "node_fts", "chunk": "chunk_fts"}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def query_terms(text: str, max_terms: int = 64) -> list[str]:
    """The terms of free text as the index tokenizes them (lower case, diacritics removed)."""
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return list(dict.fromkeys(_WORD.findall(folded)))[:max_terms]


def fts_query(terms: Sequence[str]) -> str | None:
    """A safe FTS5 OR-query of quoted terms (no user syntax reaches FTS5)."""
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms)


#: JSON texts of the literals (``props -> key`` gives JSON text)
_JSON_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _check_is_knowledge_base(conn: sqlite3.Connection, path: str) -> None:
    """Refuse another application's SQLite database (tables, none of ours); sqlite3.DatabaseError: not SQLite."""
    tables = sorted(row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'"))
    if tables and "meta" not in tables:
        raise NotAKnowledgeBaseError(path, f"a SQLite database with other tables: {', '.join(tables[:5])}")


class SQLiteStore(SQLRecordStore):
    """A :class:`cef.store.base.RecordStore` on one SQLite file."""

    capabilities = Capabilities(native_vector_search=False, native_full_text=True, traversal_pushdown=False)
    PARAM = "?"
    TABLES: ClassVar[Mapping[str, str]] = {
        "node": "nodes",
        "edge": "edges",
        "chunk": "chunks",
        "changes": "changes",
        "meta": "meta",
        "relation_types": "relation_types",
    }

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=timeout, check_same_thread=False, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite database {self.path!r}: {exc}") from exc
        self._lock = threading.RLock()
        self._local_writes = 0
        self._count_cache: dict[str, tuple[tuple[int, int], int]] = {}
        self._df_cache: dict[str, tuple[tuple[int, int], dict[str, int]]] = {}
        c = self._conn
        try:
            _check_is_knowledge_base(c, self.path)
            c.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:  # "file is not a database", "disk image is malformed"
            c.close()
            raise NotAKnowledgeBaseError(self.path, str(exc)) from None
        except NotAKnowledgeBaseError:
            c.close()
            raise
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA foreign_keys=OFF")
        c.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        with self._lock:
            self._execute_script(_SCHEMA)
            row = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:  # a new database: its node text is written by this cef's node_text
                c.execute("INSERT OR IGNORE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
                c.executemany("INSERT OR IGNORE INTO meta VALUES(?, ?)", new_store_meta())
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: schema version {row[0]} is newer than this cef ({SCHEMA_VERSION}); upgrade cef"
                )
            if c.execute("SELECT 1 FROM meta WHERE key='instance_id'").fetchone() is None:
                # databases made before instance ids get one now (read-only ones go without)
                with contextlib.suppress(sqlite3.OperationalError):
                    c.execute(
                        "INSERT OR IGNORE INTO meta VALUES('instance_id', ?)", (json.dumps(uuid.uuid4().hex),)
                    )

    def _execute_script(self, script: str) -> None:
        try:
            self._conn.executescript(script)
        except sqlite3.OperationalError as exc:
            raise _translate(exc, "creating the schema") from exc

    # --------------------------------------------------------------- writes
    def apply(self, writes: WriteSet) -> tuple[int, int]:
        with self._lock:
            c = self._conn
            try:
                c.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise _translate(exc, "starting a write transaction") from exc
            except sqlite3.ProgrammingError as exc:
                raise StoreError(f"knowledge base {self.path!r} is not usable: {exc}") from exc
            big = _write_size(writes) >= BIG_WRITE
            try:
                if big:  # the indexes a big write touches stay in memory while it runs
                    c.execute(f"PRAGMA cache_size=-{BIG_WRITE_CACHE_KB}")
                before = int(c.execute("SELECT COALESCE(MAX(seq),0) FROM changes").fetchone()[0])
                changes = self._write(c, writes)
                if changes:
                    c.executemany(
                        "INSERT INTO changes(kind, op, id, rid_from, rid_to) VALUES (?,?,?,?,?)", changes
                    )
                seq = int(c.execute("SELECT COALESCE(MAX(seq),0) FROM changes").fetchone()[0])
                self._trim_changes(c, before, seq)
                c.execute("COMMIT")
                self._local_writes += 1
                return before, seq
            except BaseException as exc:
                c.execute("ROLLBACK")
                if isinstance(exc, sqlite3.IntegrityError):
                    raise self._duplicate(writes, exc) from exc
                if isinstance(exc, sqlite3.OperationalError):
                    raise _translate(exc, "writing") from exc
                raise
            finally:
                if big:  # give the memory back (SQLite frees the pages above the limit)
                    with contextlib.suppress(sqlite3.Error):
                        c.execute(f"PRAGMA cache_size={DEFAULT_CACHE}")

    # ------------------------------------------------------------ dialect hooks of SQLRecordStore
    def _executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        conn.executemany(sql, rows)

    def _delete_records(self, conn: Any, kind: str, ids: Sequence[str]) -> None:
        table = self.TABLES[kind]
        if kind != "edge":
            self._delete_fts(conn, table, _FTS[kind], ids)
        conn.executemany(f"DELETE FROM {table} WHERE id=?", [(i,) for i in ids])

    def _insert_nodes(self, conn: Any, base: int, w: WriteSet) -> None:
        conn.executemany(
            "INSERT INTO nodes(rid,id,label,scope,data,embedding) VALUES (?,?,?,?,?,?)",
            [
                (base + k, n.id, n.label, n.scope, n.model_dump_json(), _blob(w.node_vectors.get(n.id)))
                for k, n in enumerate(w.nodes)
            ],
        )
        conn.executemany(
            "INSERT INTO node_fts(rowid, text) VALUES (?, ?)",
            [(base + k, node_text(n)) for k, n in enumerate(w.nodes)],
        )

    def _update_nodes(self, conn: Any, w: WriteSet) -> None:
        self._delete_fts(conn, "nodes", "node_fts", [n.id for n in w.updated_nodes])
        conn.executemany(
            "UPDATE nodes SET label=?, scope=?, data=?, embedding=COALESCE(?, embedding) WHERE id=?",
            [
                (n.label, n.scope, n.model_dump_json(), _blob(w.node_vectors.get(n.id)), n.id)
                for n in w.updated_nodes
            ],
        )
        conn.executemany(
            "INSERT INTO node_fts(rowid, text) SELECT rid, ? FROM nodes WHERE id=?",
            [(node_text(n), n.id) for n in w.updated_nodes],
        )

    def _insert_edges(self, conn: Any, base: int, edges: Sequence[Edge]) -> None:
        conn.executemany(
            "INSERT INTO edges(rid,id,rel,src,dst,weight,confidence,valid_from,valid_to,recorded_at,scope,props)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [(base + k, *row) for k, row in enumerate(_edge_rows(edges))],
        )

    def _insert_chunks(self, conn: Any, base: int, w: WriteSet) -> None:
        conn.executemany(
            "INSERT INTO chunks(rid,id,node_id,scope,data,embedding) VALUES (?,?,?,?,?,?)",
            [
                (
                    base + k,
                    ch.id,
                    ch.node_id,
                    ch.scope,
                    ch.model_dump_json(),
                    _blob(w.chunk_vectors.get(ch.id)),
                )
                for k, ch in enumerate(w.chunks)
            ],
        )
        conn.executemany(
            "INSERT INTO chunk_fts(rowid, content) VALUES (?, ?)",
            [(base + k, ch.content) for k, ch in enumerate(w.chunks)],
        )

    def _id_violation(self, kind: str, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError) and f"{self.TABLES[kind]}.id" in str(exc)

    @staticmethod
    def _delete_fts(c: sqlite3.Connection, table: str, fts: str, ids: Sequence[str]) -> None:
        c.executemany(
            f"DELETE FROM {fts} WHERE rowid = (SELECT rid FROM {table} WHERE id=?)",
            [(i,) for i in ids],
        )

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @property
    def instance_id(self) -> str | None:
        """A random id given to this database when it was created (tells its caches from another's)."""
        value = self.get_meta("instance_id")
        return None if value is None else str(value)

    @property
    def snapshot_path(self) -> Path | None:
        """Where the engine may cache a binary snapshot of the graph index (``<db>-graph``)."""
        return None if self.path == ":memory:" else Path(self.path + "-graph")

    # ---------------------------------------------------------------- reads
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                raise _translate(exc, "reading") from exc
            except sqlite3.ProgrammingError as exc:  # e.g. the store was closed
                raise StoreError(f"knowledge base {self.path!r} is not usable: {exc}") from exc

    def _rows_in(self, sql: str, ids: Iterable[str], *params: Any, part: int = 500) -> Iterator[Any]:
        """Rows of ``sql`` for the distinct ``ids``, asked ``part`` at a time: ``{marks}`` in ``sql``
        becomes their placeholders (``{marks2}``: placeholders for the same ids again)."""
        todo = list(dict.fromkeys(ids))
        for i in range(0, len(todo), part):
            chunk = todo[i : i + part]
            marks = ",".join("?" * len(chunk))
            twice = "{marks2}" in sql
            yield from self._query(
                sql.format(marks=marks, marks2=marks), [*params, *chunk, *(chunk if twice else [])]
            )

    def _by_ids(self, table: str, ids: Sequence[str], extra: str = "") -> dict[str, str]:
        return {
            row[0]: row[1]
            for row in self._rows_in(f"SELECT id, data{extra} FROM {table} WHERE id IN ({{marks}})", ids)
        }

    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        found = self._by_ids("nodes", ids)
        return [Node.model_validate_json(found[i]) for i in ids if i in found]

    def get_edges(self, ids: Sequence[str]) -> list[Edge]:
        rows = self._rows_in(f"SELECT {EDGE_COLS} FROM edges WHERE id IN ({{marks}})", ids)
        found = {row[0]: edge_from_row(row) for row in rows}
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def edge_property(self, ids: Sequence[str], key: str) -> dict[str, Any]:
        path = f"$.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else "$." + json.dumps(key)
        rows = self._rows_in(
            "SELECT id, props -> ? FROM edges WHERE id IN ({marks}) AND props <> '{{}}'", ids, path
        )
        literal = _JSON_LITERALS  # flags are most of what is asked: no JSON parser for them
        return {
            eid: literal[value] if value in literal else json.loads(value)
            for eid, value in rows
            if value is not None
        }

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        found = self._by_ids("chunks", ids)
        return [Chunk.model_validate_json(found[i]) for i in ids if i in found]

    def existing_ids(self, kind: str, ids: Iterable[str]) -> set[str]:
        table = {"node": "nodes", "edge": "edges", "chunk": "chunks", "relation_type": "relation_types"}[kind]
        col = "name" if kind == "relation_type" else "id"
        return {r[0] for r in self._rows_in(f"SELECT {col} FROM {table} WHERE {col} IN ({{marks}})", ids)}

    def _iter(self, sql: str, batch: int = 5000) -> Iterator[Any]:
        # a dedicated read connection so a long scan never blocks writers or holds our lock
        conn = sqlite3.connect(self.path, check_same_thread=False) if self.path != ":memory:" else self._conn
        try:
            cur = conn.execute(sql)
            while True:
                rows = cur.fetchmany(batch)
                if not rows:
                    break
                yield from rows
        finally:
            if conn is not self._conn:
                conn.close()

    def iter_nodes(self) -> Iterator[Node]:
        for (data,) in self._iter("SELECT data FROM nodes ORDER BY rid"):
            yield Node.model_validate_json(data)

    def iter_edges(self) -> Iterator[Edge]:
        for row in self._iter(f"SELECT {EDGE_COLS} FROM edges ORDER BY rid"):
            yield edge_from_row(row)

    def ids_in_range(self, kind: str, rid_from: int, rid_to: int) -> list[str]:
        """Ids of records inserted with row ids in a range (the change feed's insert ranges)."""
        table = {"node": "nodes", "edge": "edges", "chunk": "chunks"}[kind]
        return [
            r[0]
            for r in self._query(
                f"SELECT id FROM {table} WHERE rid BETWEEN ? AND ? ORDER BY rid", (rid_from, rid_to)
            )
        ]

    def iter_chunks(self) -> Iterator[Chunk]:
        for (data,) in self._iter("SELECT data FROM chunks ORDER BY rid"):
            yield Chunk.model_validate_json(data)

    def iter_node_rows(self) -> Iterator[tuple[str, str, str | None]]:
        """(id, label, scope) of every node, in insertion order (fast graph load)."""
        yield from self._iter("SELECT id, label, scope FROM nodes ORDER BY rid")

    def iter_edge_rows(self) -> Iterator[tuple[Any, ...]]:
        """(id, rel, src, dst, weight, confidence, valid_from, valid_to, recorded_at, scope, superseded_at)."""
        yield from self._iter(
            "SELECT id, rel, src, dst, weight, confidence, valid_from, valid_to, recorded_at, scope, "
            "CASE WHEN props = '{}' THEN NULL ELSE json_extract(props, '$.superseded_at') END "
            "FROM edges ORDER BY rid"
        )

    def relation_types(self) -> list[RelationType]:
        return [
            RelationType.model_validate_json(d) for (d,) in self._query("SELECT data FROM relation_types")
        ]

    def iter_vectors(self, kind: str) -> Iterator[tuple[str, np.ndarray]]:
        table = {"node": "nodes", "chunk": "chunks"}[kind]
        for ident, blob in self._iter(
            f"SELECT id, embedding FROM {table} WHERE embedding IS NOT NULL ORDER BY rid"
        ):
            yield ident, np.frombuffer(blob, dtype=np.float32)

    def get_vectors(self, kind: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        table = {"node": "nodes", "chunk": "chunks"}[kind]
        sql = f"SELECT id, embedding FROM {table} WHERE embedding IS NOT NULL AND id IN ({{marks}})"
        return {ident: np.frombuffer(blob, dtype=np.float32) for ident, blob in self._rows_in(sql, ids)}

    def chunks_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for cid, nid in self._rows_in(
            "SELECT id, node_id FROM chunks WHERE node_id IN ({marks}) ORDER BY rid", node_ids
        ):
            out.setdefault(nid, []).append(cid)
        return out

    def edges_for_nodes(self, node_ids: Sequence[str]) -> list[str]:
        rows = self._rows_in(
            "SELECT id FROM edges WHERE src IN ({marks}) OR dst IN ({marks2})", node_ids, part=400
        )
        return list(dict.fromkeys(r[0] for r in rows))

    def nodes_by_property(
        self, key: str, value: Any, label: str | None = None, limit: int = 100
    ) -> list[Node]:
        path = "$." + json.dumps(key) if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"$.{key}"
        sql = "SELECT data FROM nodes WHERE json_extract(data, ?) = ?"
        params: list[Any] = [f"$.properties{path[1:]}", value if not isinstance(value, bool) else int(value)]
        if isinstance(value, (dict, list)):
            sql = "SELECT data FROM nodes WHERE json_extract(data, ?) = json(?)"
            params[1] = json.dumps(value)
        if label is not None:
            sql += " AND label = ?"
            params.append(label)
        sql += " ORDER BY rid LIMIT ?"
        params.append(limit)
        return [Node.model_validate_json(d) for (d,) in self._query(sql, params)]

    def search_text(self, kind: str, query: str, k: int, scope: str | None = None) -> list[TextHit]:
        """BM25 top-k of the query's terms, planned by :func:`cef.store.textplan.plan_terms`."""
        if k <= 0:
            return []
        plan = self._plan(kind, query_terms(query))
        if not plan.terms:
            return []
        if not plan.conjunctive:
            return self._ranked(kind, fts_query(plan.terms), k, scope)
        hits = self._ranked(kind, " AND ".join(f'"{t}"' for t in plan.terms), k, scope)
        if len(hits) < k and plan.fallback is not None:  # few documents hold every term: top up
            seen = {h.id for h in hits}
            more = self._ranked(kind, fts_query([plan.fallback]), k + len(hits), scope)
            hits.extend(h for h in more if h.id not in seen)
        return hits[:k]

    def _ranked(self, kind: str, q: str | None, k: int, scope: str | None) -> list[TextHit]:
        table, fts = {"chunk": ("chunks", "chunk_fts"), "node": ("nodes", "node_fts")}[kind]
        if q is None:
            return []
        # FTS5 computes the top-k by rank (BM25) inside the index; records are joined for those rows only
        fetch = k if scope is None else k * 4
        while True:
            ranked = self._query(
                f"SELECT rowid, rank FROM {fts} WHERE {fts} MATCH ? ORDER BY rank LIMIT ?", (q, fetch)
            )
            if not ranked:
                return []
            marks = ",".join("?" * len(ranked))
            rows = self._query(
                f"SELECT rid, id, scope FROM {table} WHERE rid IN ({marks})", [r[0] for r in ranked]
            )
            by_rid = {r[0]: (r[1], r[2]) for r in rows}
            hits = []
            for rid, rank in ranked:
                found = by_rid.get(rid)
                if found is None or (scope is not None and found[1] is not None and found[1] != scope):
                    continue
                hits.append(TextHit(id=found[0], score=-float(rank)))
            if len(hits) >= k or len(ranked) < fetch:
                return hits[:k]
            fetch *= 4

    def _plan(self, kind: str, terms: list[str]) -> TermPlan:
        """Which terms to score (see :mod:`cef.store.textplan`), from the index's document frequencies."""
        if not terms:
            return TermPlan()
        table = {"chunk": "chunks", "node": "nodes"}[kind]
        df = self._document_frequencies(kind, terms)
        return plan_terms(terms, df, self._doc_count(table) if len(df) > 1 else 0, self.score_budget)

    #: postings a text query scores at most (see :mod:`cef.store.textplan`)
    score_budget = SCORE_BUDGET
    #: cached document frequencies per kind (fts5vocab reads a term's whole posting list to count it)
    DF_CACHE_SIZE = 50_000

    def _document_frequencies(self, kind: str, terms: list[str]) -> dict[str, int]:
        version = (self.data_version(), self._local_writes)
        stamp, cache = self._df_cache.get(kind, (None, {}))
        if stamp != version or len(cache) > self.DF_CACHE_SIZE:
            cache = {}
            self._df_cache[kind] = (version, cache)
        missing = [t for t in terms if t not in cache]
        if missing:
            vocab = {"chunk": "chunk_vocab", "node": "node_vocab"}[kind]
            marks = ",".join("?" * len(missing))
            found = dict(self._query(f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})", missing))
            cache.update({t: int(found.get(t, 0)) for t in missing})
        return {t: cache[t] for t in terms if cache[t] > 0}

    def _doc_count(self, table: str) -> int:
        version = (self.data_version(), self._local_writes)
        cached = self._count_cache.get(table)
        if cached is None or cached[0] != version:
            cached = (version, int(self._query(f"SELECT MAX(rid) FROM {table}")[0][0] or 0))
            self._count_cache[table] = cached
        return cached[1]

    # ----------------------------------------------------------- change feed
    def data_version(self) -> int:
        """Changes when another connection commits (cheap freshness probe)."""
        return int(self._query("PRAGMA data_version")[0][0])

    def labels(self) -> list[tuple[str, int]]:
        return [
            (r[0], int(r[1]))
            for r in self._query("SELECT label, COUNT(*) FROM nodes GROUP BY label ORDER BY 2 DESC")
        ]

    def property_names(self, label: str, sample: int = 200) -> list[str]:
        names: dict[str, None] = {}
        for (data,) in self._query("SELECT data FROM nodes WHERE label=? LIMIT ?", (label, sample)):
            names.update(dict.fromkeys(json.loads(data).get("properties", {})))
        return list(names)

    def relation_endpoints(self) -> list[tuple[str, str, str, int]]:
        """(relation, source label, target label, count) observed in the data."""
        rows = self._query(
            "SELECT e.rel, s.label, t.label, COUNT(*) FROM edges e JOIN nodes s ON s.id = e.src "
            "JOIN nodes t ON t.id = e.dst GROUP BY 1, 2, 3 ORDER BY 4 DESC"
        )
        return [(r[0], r[1], r[2], int(r[3])) for r in rows]


def _write_size(w: WriteSet) -> int:
    return sum(
        len(x)
        for x in (
            w.nodes,
            w.updated_nodes,
            w.delete_nodes,
            w.edges,
            w.updated_edges,
            w.delete_edges,
            w.chunks,
        )
    )


def _edge_rows(edges: Sequence[Edge]) -> list[tuple[Any, ...]]:
    """``(id, *columns)`` per edge; a big batch sorted by source id, so the source index fills in order."""
    rows = [(e.id, *edge_columns(e)) for e in edges]
    if len(rows) >= 10_000:
        rows.sort(key=lambda r: r[2])
    return rows


def _blob(vec: np.ndarray | None) -> bytes | None:
    if vec is None:
        return None
    return np.ascontiguousarray(vec, dtype=np.float32).tobytes()


def _translate(exc: sqlite3.OperationalError, doing: str) -> StoreError:
    msg = str(exc)
    if "locked" in msg or "busy" in msg:
        return RetryableStoreError(f"database busy while {doing}: {msg}; retry")
    return StoreError(f"SQLite error while {doing}: {msg}")
