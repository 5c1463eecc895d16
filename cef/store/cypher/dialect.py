"""The shared Cypher dialect: one graph model, one set of queries, for every Cypher database.

The graph mirrors the record store's structure: ``(:CefNode {id, label,
scope, name})`` and ``[:CEF_EDGE {id, rel, weight, confidence, valid_from,
valid_to, recorded_at, scope}]`` (one relationship type with the relation
name as a property, so queries never build Cypher text from data), plus one
``(:CefMeta {key: 'sync', seq})`` marker for :class:`~cef.store.base.Mirror`.
Every query takes its values as parameters. A :class:`CypherDriver` adapter
(FalkorDB, Neo4j) only runs queries, says how to create indexes and how to
drop everything, and translates its driver's errors.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

from cef.model import Edge, Node
from cef.store.base import WriteSet, bfs_neighbourhood, bfs_shortest_path


class CypherDriver(Protocol):
    """What differs between Cypher databases (everything else is in :class:`CypherGraphStore`)."""

    #: rows per UNWIND batch (FalkorDB answers one query at a time; keep batches short)
    batch_size: int

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """Run one parameterized query; rows as lists. Raises StoreError / RetryableStoreError."""
        ...

    def ensure_schema(self) -> None:
        """Create the id indexes (idempotent)."""
        ...

    def drop_all(self) -> None:
        """Delete every cef node, edge and marker."""
        ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- queries
Q_NODES_UPSERT = (
    "UNWIND $rows AS row MERGE (n:CefNode {id: row.id}) "
    "SET n.label = row.label, n.scope = row.scope, n.name = row.name"
)
Q_EDGES_UPSERT = (
    "UNWIND $rows AS row "
    "MATCH (a:CefNode {id: row.src}) MATCH (b:CefNode {id: row.dst}) "
    "MERGE (a)-[r:CEF_EDGE {id: row.id}]->(b) "
    "SET r.rel = row.rel, r.weight = row.weight, r.confidence = row.confidence, "
    "r.valid_from = row.valid_from, r.valid_to = row.valid_to, r.recorded_at = row.recorded_at, "
    "r.scope = row.scope"
)
Q_EDGES_DELETE = "UNWIND $ids AS i MATCH ()-[r:CEF_EDGE {id: i}]->() DELETE r"
Q_NODES_DELETE = "UNWIND $ids AS i MATCH (n:CefNode {id: i}) DETACH DELETE n"
Q_NODES_EXISTING = "UNWIND $ids AS i MATCH (n:CefNode {id: i}) RETURN n.id"
#: one row per newly reached node: the move with the smallest edge id (the walk's choice)
Q_STEP = (
    "UNWIND $frontier AS fid MATCH (a:CefNode {id: fid})-[r:CEF_EDGE]-(b) "
    "WHERE ($rels IS NULL OR r.rel IN $rels) AND NOT b.id IN $seen "
    "WITH b.id AS bid, collect([r.id, a.id]) AS moves "
    "WITH bid, reduce(best = head(moves), m IN moves | CASE WHEN m[0] < best[0] THEN m ELSE best END) AS best "
    "RETURN best[1], best[0], bid"
)
Q_MARKER = "MATCH (m:CefMeta {key: 'sync'}) RETURN m.seq"
Q_MARK = "MERGE (m:CefMeta {key: 'sync'}) SET m.seq = $after"
Q_ADVANCE = "MATCH (m:CefMeta {key: 'sync'}) WHERE m.seq = $before SET m.seq = $after"
Q_COUNTS = "MATCH (n:CefNode) RETURN count(n)"
Q_EDGE_COUNT = "MATCH ()-[r:CEF_EDGE]->() RETURN count(r)"


def _node_row(n: Node) -> dict[str, Any]:
    return {"id": n.id, "label": n.label, "scope": n.scope, "name": n.name}


def _edge_row(e: Edge) -> dict[str, Any]:
    return {
        "id": e.id,
        "src": e.source,
        "dst": e.target,
        "rel": e.relation_type,
        "weight": float(e.weight),
        "confidence": float(e.confidence),
        "valid_from": e.valid_from.timestamp() if e.valid_from else None,
        "valid_to": e.valid_to.timestamp() if e.valid_to else None,
        "recorded_at": e.recorded_at.timestamp(),
        "scope": e.scope,
    }


class CypherGraphStore:
    """A :class:`~cef.store.base.GraphStore` and :class:`~cef.store.base.Mirror` on a Cypher database.

    Traversal is pushed down one hop per query (the whole frontier at once);
    the walk itself follows :func:`~cef.store.base.bfs_neighbourhood`, so
    results are the same as every other backend's.
    """

    def __init__(self, driver: CypherDriver, name: str = "cef") -> None:
        self.driver = driver
        self.name = name
        self._ready = False

    def __repr__(self) -> str:
        return f"CypherGraphStore({self.driver!r})"

    def _run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        if not self._ready:
            self.driver.ensure_schema()
            self._ready = True
        return self.driver.run(query, params)

    def _batched(self, query: str, key: str, items: Sequence[Any]) -> None:
        size = max(1, self.driver.batch_size)
        for i in range(0, len(items), size):
            self._run(query, {key: list(items[i : i + size])})

    # ------------------------------------------------------------------ Mirror
    def synced_seq(self) -> int | None:
        rows = self._run(Q_MARKER)
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def advance(self, before: int | None, after: int) -> None:
        if before is None:
            self._run(Q_MARK, {"after": after})
        else:
            self._run(Q_ADVANCE, {"before": before, "after": after})

    def apply(self, writes: WriteSet) -> None:
        if writes.delete_edges:
            self._batched(Q_EDGES_DELETE, "ids", writes.delete_edges)
        if writes.delete_nodes:
            self._batched(Q_NODES_DELETE, "ids", writes.delete_nodes)
        nodes = [_node_row(n) for n in (*writes.nodes, *writes.updated_nodes)]
        if nodes:
            self._batched(Q_NODES_UPSERT, "rows", nodes)
        edges = [_edge_row(e) for e in (*writes.edges, *writes.updated_edges)]
        if edges:
            self._batched(Q_EDGES_UPSERT, "rows", edges)

    def reset(self) -> None:
        self.driver.drop_all()
        self._ready = False

    def counts(self) -> dict[str, int]:
        """Nodes and edges held (for checks and benchmarks)."""
        return {"nodes": int(self._run(Q_COUNTS)[0][0]), "edges": int(self._run(Q_EDGE_COUNT)[0][0])}

    # -------------------------------------------------------------- GraphStore
    def _existing(self, ids: Sequence[str]) -> set[str]:
        return {r[0] for r in self._run(Q_NODES_EXISTING, {"ids": list(dict.fromkeys(ids))})}

    def _step(self, relation_types: Sequence[str] | None) -> Any:
        rels = list(relation_types) if relation_types is not None else None

        def step(frontier: list[str], seen: Collection[str]) -> list[tuple[str, str, str]]:
            rows = self._run(Q_STEP, {"frontier": frontier, "rels": rels, "seen": list(seen)})
            return [(r[0], r[1], r[2]) for r in rows]

        return step

    def neighbourhood(
        self, seeds: Sequence[str], depth: int, relation_types: Sequence[str] | None, limit: int
    ) -> list[tuple[str, int, list[str]]]:
        present = self._existing(seeds)
        return bfs_neighbourhood(self._step(relation_types), [s for s in seeds if s in present], depth, limit)

    def shortest_path(
        self, source: str, target: str, max_depth: int, relation_types: Sequence[str] | None = None
    ) -> list[str] | None:
        if len(self._existing([source, target])) < len({source, target}):
            return None
        return bfs_shortest_path(self._step(relation_types), source, target, max_depth)

    def close(self) -> None:
        self.driver.close()
