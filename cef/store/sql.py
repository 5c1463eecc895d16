"""The SQL record-store base: one write path, one change feed, one duplicate-id rule for every SQL dialect.

:class:`SQLRecordStore` holds what the SQLite and PostgreSQL stores share: the
order a :class:`~cef.store.base.WriteSet` is written in (relation types,
deletes, inserts, updates, meta), edge rows, the change feed and its retention,
the meta table, and naming the record behind a uniqueness violation. A dialect
supplies its placeholder, its table names and the hooks that differ (bulk
inserts, full-text upkeep, what a uniqueness violation looks like).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from cef.errors import CefError, DuplicateIdError, StoreError
from cef.model import Edge, Node
from cef.store.base import Change, WriteSet

__all__ = [
    "CHANGE_RETENTION",
    "EDGE_COLS",
    "NODE_TEXT_META",
    "NODE_TEXT_VERSION",
    "ChangeRow",
    "SQLRecordStore",
    "edge_columns",
    "edge_from_row",
    "new_store_meta",
    "node_text",
    "utc_from_ts",
]

#: change-feed entries kept (older ones are trimmed; a reader that far behind reloads everything)
CHANGE_RETENTION = 200_000
#: the edge columns every read selects, in :func:`edge_from_row` order
EDGE_COLS = "id, rel, src, dst, weight, confidence, valid_from, valid_to, recorded_at, scope, props"

#: one change-feed entry before it gets its sequence number: (kind, op, id, rid_from, rid_to)
ChangeRow = tuple[str, str, str, int | None, int | None]


#: the version of what :func:`node_text` puts in the node full-text index, recorded in a store's meta
#: under ``node_text.version``; bump it whenever :func:`node_text` changes, and a store written before
#: gets its node text rewritten when it is next opened (:func:`cef.engine.upgrade.refresh_node_text`).
#: 2: a node's short naming property values are among its names (``Node.value_names``).
NODE_TEXT_VERSION = 2
#: the meta key recording which :data:`NODE_TEXT_VERSION` wrote a store's node text (new stores get it at creation)
NODE_TEXT_META = "node_text.version"


def new_store_meta() -> list[tuple[str, str]]:
    """The meta rows (key, JSON value) a store starts with when it is created: the version of its node text."""
    return [(NODE_TEXT_META, json.dumps(NODE_TEXT_VERSION))]


def node_text(node: Node) -> str:
    """What the node-name full-text index holds: the names a question may call it by (name, aliases,
    short naming property values: :attr:`~cef.model.Node.names`) and its label."""
    return " ".join([*node.names, node.label])


def utc_from_ts(value: float | None) -> datetime | None:
    """A UTC datetime from epoch seconds (None stays None)."""
    return datetime.fromtimestamp(value, UTC) if value is not None else None


def edge_columns(e: Edge) -> tuple[Any, ...]:
    """An edge's columns after its id, in :data:`EDGE_COLS` order."""
    return (
        e.relation_type,
        e.source,
        e.target,
        float(e.weight),
        float(e.confidence),
        e.valid_from.timestamp() if e.valid_from else None,
        e.valid_to.timestamp() if e.valid_to else None,
        e.recorded_at.timestamp(),
        e.scope,
        json.dumps(e.properties, separators=(",", ":")) if e.properties else "{}",
    )


def edge_from_row(row: Sequence[Any]) -> Edge:
    """The edge a row selected with :data:`EDGE_COLS` holds."""
    return Edge(
        id=row[0],
        relation_type=row[1],
        source=row[2],
        target=row[3],
        weight=row[4],
        confidence=row[5],
        valid_from=utc_from_ts(row[6]),
        valid_to=utc_from_ts(row[7]),
        recorded_at=utc_from_ts(row[8]),  # type: ignore[arg-type]
        scope=row[9],
        properties=json.loads(row[10]),
    )


class SQLRecordStore:
    """What the SQL record stores share; subclasses implement the dialect hooks below."""

    #: the driver's parameter placeholder (``?`` or ``%s``)
    PARAM: ClassVar[str]
    #: table names by role: ``node``, ``edge``, ``chunk``, ``changes``, ``meta``, ``relation_types``
    TABLES: ClassVar[Mapping[str, str]]

    # ------------------------------------------------------------ dialect hooks
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of one read statement."""
        raise NotImplementedError

    def existing_ids(self, kind: str, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` (of ``kind``: node, edge, chunk) are stored."""
        raise NotImplementedError

    def _executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run ``sql`` once per row inside the write transaction."""
        raise NotImplementedError

    def _delete_records(self, conn: Any, kind: str, ids: Sequence[str]) -> None:
        """Delete these records of ``kind`` (and their full-text entries)."""
        raise NotImplementedError

    def _insert_nodes(self, conn: Any, base: int, w: WriteSet) -> None:
        """Insert ``w.nodes`` at row ids ``base``, ``base + 1``, … with their vectors and full text."""
        raise NotImplementedError

    def _update_nodes(self, conn: Any, w: WriteSet) -> None:
        """Rewrite ``w.updated_nodes`` in place (a vector left out keeps the stored one)."""
        raise NotImplementedError

    def _insert_edges(self, conn: Any, base: int, edges: Sequence[Edge]) -> None:
        """Insert ``edges`` at row ids ``base``, ``base + 1``, …"""
        raise NotImplementedError

    def _insert_chunks(self, conn: Any, base: int, w: WriteSet) -> None:
        """Insert ``w.chunks`` at row ids ``base``, ``base + 1``, … with their vectors and full text."""
        raise NotImplementedError

    def _id_violation(self, kind: str, exc: BaseException) -> bool:
        """Whether ``exc`` is the uniqueness violation of ``kind``'s id column."""
        raise NotImplementedError

    # ------------------------------------------------------------ writes
    def _next_rid(self, conn: Any, kind: str) -> int:
        return int(conn.execute(f"SELECT COALESCE(MAX(rid), 0) FROM {self.TABLES[kind]}").fetchone()[0]) + 1

    def _write(self, conn: Any, w: WriteSet) -> list[ChangeRow]:
        """Write ``w`` inside the caller's transaction; the change-feed rows it makes, in order."""
        p, t = self.PARAM, self.TABLES
        changes: list[ChangeRow] = []

        def one(kind: str, op: str, ident: str) -> None:
            changes.append((kind, op, ident, None, None))

        if w.relation_types:
            self._executemany(
                conn,
                f"INSERT INTO {t['relation_types']}(name, data) VALUES ({p}, {p}) "
                "ON CONFLICT(name) DO UPDATE SET data = excluded.data",
                [(rt.name, rt.model_dump_json()) for rt in w.relation_types],
            )
            for rt in w.relation_types:
                one("relation_type", "upsert", rt.name)
        # deletes first (a batch may delete then re-create)
        for kind, ids in (("edge", w.delete_edges), ("chunk", w.delete_chunks), ("node", w.delete_nodes)):
            if ids:
                self._delete_records(conn, kind, ids)
                for i in ids:
                    one(kind, "delete", i)
        if w.nodes:
            base = self._next_rid(conn, "node")
            self._insert_nodes(conn, base, w)
            changes.append(("node", "insert_range", "", base, base + len(w.nodes) - 1))
        if w.updated_nodes:
            self._update_nodes(conn, w)
            for n in w.updated_nodes:
                one("node", "upsert", n.id)
        if w.edges:
            base = self._next_rid(conn, "edge")
            self._insert_edges(conn, base, w.edges)
            changes.append(("edge", "insert_range", "", base, base + len(w.edges) - 1))
        if w.updated_edges:
            self._executemany(
                conn,
                f"UPDATE {t['edge']} SET rel = {p}, src = {p}, dst = {p}, weight = {p}, confidence = {p}, "
                f"valid_from = {p}, valid_to = {p}, recorded_at = {p}, scope = {p}, props = {p} WHERE id = {p}",
                [(*edge_columns(e), e.id) for e in w.updated_edges],
            )
            for e in w.updated_edges:
                one("edge", "upsert", e.id)
        if w.chunks:
            base = self._next_rid(conn, "chunk")
            self._insert_chunks(conn, base, w)
            changes.append(("chunk", "insert_range", "", base, base + len(w.chunks) - 1))
        for key, value in w.meta.items():
            if value is None:
                conn.execute(f"DELETE FROM {t['meta']} WHERE key = {p}", (key,))
                one("meta", "delete", key)
                continue
            conn.execute(
                f"INSERT INTO {t['meta']}(key, value) VALUES ({p}, {p}) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, json.dumps(value)),
            )
            one("meta", "upsert", key)
        return changes

    @staticmethod
    def _retention_due(before: int, after: int) -> bool:
        """Trim the change feed when a write crosses a thousand past :data:`CHANGE_RETENTION`."""
        return after > CHANGE_RETENTION and after // 1000 != before // 1000

    def _trim_changes(self, conn: Any, before: int, after: int) -> None:
        if self._retention_due(before, after):
            conn.execute(
                f"DELETE FROM {self.TABLES['changes']} WHERE seq <= {self.PARAM}", (after - CHANGE_RETENTION,)
            )

    def _duplicate(self, w: WriteSet, exc: BaseException) -> CefError:
        """Name the record that broke a uniqueness constraint (the transaction is already rolled back)."""
        for kind, items in (("node", w.nodes), ("edge", w.edges), ("chunk", w.chunks)):
            if not self._id_violation(kind, exc):
                continue
            ids = [x.id for x in items]
            twice = [i for i, c in Counter(ids).items() if c > 1]
            if twice:
                return DuplicateIdError(
                    kind, twice[0], f"{kind}s[{ids.index(twice[0])}] and another item of the same batch"
                )
            deleted = set(getattr(w, f"delete_{kind}s"))
            clash = self.existing_ids(kind, [i for i in ids if i not in deleted])
            if clash:
                first = next(i for i in ids if i in clash)
                return DuplicateIdError(
                    kind, first, f"{kind}s[{ids.index(first)}] already exists in the store"
                )
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return StoreError(f"write refused by the database: {first_line}")

    # ------------------------------------------------------------ change feed and meta
    def current_seq(self) -> int:
        """The newest change-feed sequence number (0 when nothing was written)."""
        return int(self._query(f"SELECT COALESCE(MAX(seq), 0) FROM {self.TABLES['changes']}")[0][0])

    def changes_since(self, seq: int) -> tuple[int, list[Change]]:
        """Changes after ``seq``; a first entry of kind ``reset`` means: reload everything."""
        table = self.TABLES["changes"]
        rows = self._query(
            f"SELECT seq, kind, op, id, rid_from, rid_to FROM {table} WHERE seq > {self.PARAM} ORDER BY seq",
            (seq,),
        )
        if rows and seq > 0 and rows[0][0] != seq + 1:
            oldest = self._query(f"SELECT MIN(seq) FROM {table}")[0][0]
            if oldest is None or oldest > seq + 1:
                return int(rows[-1][0]), [Change(seq=int(rows[-1][0]), kind="reset", op="reset", id="")]
        if not rows:
            return seq, []
        return int(rows[-1][0]), [
            Change(seq=int(s), kind=k, op=o, id=i, rid_from=a, rid_to=b) for s, k, o, i, a, b in rows
        ]

    def counts(self) -> dict[str, int]:
        """Stored nodes, edges, chunks and relation types."""
        t = self.TABLES
        row = self._query(
            f"SELECT (SELECT COUNT(*) FROM {t['node']}), (SELECT COUNT(*) FROM {t['edge']}), "
            f"(SELECT COUNT(*) FROM {t['chunk']}), (SELECT COUNT(*) FROM {t['relation_types']})"
        )[0]
        return {
            "nodes": int(row[0]),
            "edges": int(row[1]),
            "chunks": int(row[2]),
            "relation_types": int(row[3]),
        }

    def get_meta(self, key: str) -> Any:
        """The meta value stored under ``key`` (None when absent)."""
        rows = self._query(f"SELECT value FROM {self.TABLES['meta']} WHERE key = {self.PARAM}", (key,))
        return json.loads(rows[0][0]) if rows else None

    def meta_items(self, prefix: str) -> list[tuple[str, Any]]:
        """Every meta entry whose key starts with ``prefix``."""
        p = self.PARAM
        rows = self._query(
            f"SELECT key, value FROM {self.TABLES['meta']} WHERE key >= {p} AND key < {p} ORDER BY key",
            (prefix, prefix + "\uffff"),
        )
        return [(k, json.loads(v)) for k, v in rows]
