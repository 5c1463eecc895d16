"""Ports: what a storage backend must provide.

A backend is a :class:`RecordStore` (the system of record, transactional,
with full text). It may also provide native vector search
(:class:`VectorIndex`) or traversal pushdown (:class:`GraphStore`); it says
so in :class:`Capabilities`, and the engine uses its own in-memory index for
whatever a backend lacks. Backend names never appear outside their adapter.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cef.model import Chunk, Edge, Node, RelationType


@dataclass(frozen=True)
class Capabilities:
    native_vector_search: bool = False
    native_full_text: bool = True
    traversal_pushdown: bool = False
    multi_process: bool = True


@dataclass
class WriteSet:
    """One transaction's writes (the engine validates before it builds one)."""

    relation_types: list[RelationType] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    node_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    chunk_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    updated_nodes: list[Node] = field(default_factory=list)
    updated_edges: list[Edge] = field(default_factory=list)
    delete_nodes: list[str] = field(default_factory=list)
    delete_edges: list[str] = field(default_factory=list)
    delete_chunks: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not any(
            (
                self.relation_types,
                self.nodes,
                self.edges,
                self.chunks,
                self.updated_nodes,
                self.updated_edges,
                self.delete_nodes,
                self.delete_edges,
                self.delete_chunks,
                self.meta,
            )
        )


@dataclass(frozen=True)
class Change:
    """One entry of the change feed other processes replay to stay current."""

    seq: int
    kind: str  # "node" | "edge" | "chunk" | "relation_type" | "meta" | "reset"
    op: str  # "upsert" | "delete" | "insert_range" (rows rid_from..rid_to)
    id: str
    rid_from: int | None = None
    rid_to: int | None = None


@dataclass(frozen=True)
class TextHit:
    id: str
    score: float


@runtime_checkable
class RecordStore(Protocol):
    """System of record: nodes, edges, chunks, relation types, vectors, full text, change feed.

    Every backend implements all of it and passes ``tests/conformance``.
    """

    capabilities: Capabilities

    def apply(self, writes: WriteSet) -> tuple[int, int]:
        """Apply all writes in one transaction (all or nothing).

        Returns ``(before, after)``: the change seq just before this
        transaction's own entries and the seq after them, so a caller can tell
        whether other writers committed since it last synchronized. Raises
        ``DuplicateIdError`` naming the record when an id already exists.
        """
        ...

    def close(self) -> None: ...

    # reads by id
    def get_nodes(self, ids: Sequence[str]) -> list[Node]: ...
    def get_edges(self, ids: Sequence[str]) -> list[Edge]: ...
    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]: ...
    def edge_property(self, ids: Sequence[str], key: str) -> dict[str, Any]:
        """Edge id -> the value of its property ``key``, for the edges of ``ids`` that have it.

        No :class:`~cef.model.Edge` is made: the entity index reads one flag of
        every ``MENTIONS`` edge (millions on a big store).
        """
        ...

    def existing_ids(self, kind: str, ids: Iterable[str]) -> set[str]: ...
    def get_vectors(self, kind: str, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    # scans (open / reload / export), in insertion order
    def iter_nodes(self) -> Iterator[Node]: ...
    def iter_edges(self) -> Iterator[Edge]: ...
    def iter_chunks(self) -> Iterator[Chunk]: ...
    def iter_node_rows(self) -> Iterator[tuple[str, str, str | None]]:
        """(id, label, scope) per node."""
        ...

    def iter_edge_rows(self) -> Iterator[tuple[Any, ...]]:
        """(id, rel, src, dst, weight, confidence, valid_from, valid_to, recorded_at, scope[, superseded_at]).

        Times as epoch floats. The optional 11th column is the edge property
        ``superseded_at`` (ISO text or epoch; None when absent): the engine pads
        rows without it, but then "as known at T" queries cannot see superseded versions after a reload.
        """
        ...

    def iter_vectors(self, kind: str) -> Iterator[tuple[str, np.ndarray]]: ...
    def relation_types(self) -> list[RelationType]: ...

    # lookups
    def chunks_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]: ...
    def edges_for_nodes(self, node_ids: Sequence[str]) -> list[str]: ...
    def nodes_by_property(
        self, key: str, value: Any, label: str | None = None, limit: int = 100
    ) -> list[Node]: ...
    def search_text(self, kind: str, query: str, k: int, scope: str | None = None) -> list[TextHit]:
        """BM25-style full-text search over chunk text (kind "chunk") or node names (kind "node")."""
        ...

    # schema discovery
    def labels(self) -> list[tuple[str, int]]: ...
    def property_names(self, label: str, sample: int = 200) -> list[str]: ...
    def relation_endpoints(self) -> list[tuple[str, str, str, int]]: ...

    # change feed (multi-process freshness)
    def data_version(self) -> int:
        """A cheap token that changes when another connection commits."""
        ...

    def current_seq(self) -> int: ...
    def changes_since(self, seq: int) -> tuple[int, list[Change]]: ...
    def ids_in_range(self, kind: str, rid_from: int, rid_to: int) -> list[str]: ...
    def counts(self) -> dict[str, int]: ...
    def get_meta(self, key: str) -> Any: ...
    def meta_items(self, prefix: str) -> list[tuple[str, Any]]:
        """Every meta entry whose key starts with ``prefix`` (a ``None`` value in WriteSet.meta deletes a key)."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-neighbour search over unit vectors keyed by record id (cosine similarity)."""

    dim: int

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None: ...
    def remove(self, ids: Sequence[str]) -> None: ...
    def search(
        self, vector: np.ndarray, k: int, allowed: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top ``k`` (id, cosine) pairs, best first; only ids in ``allowed`` when given."""
        ...

    def similarities(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        """Cosine of ``vector`` with each id, in order (0 for ids without a vector)."""
        ...

    def __len__(self) -> int: ...


@runtime_checkable
class Mirror(Protocol):
    """An external index the engine keeps in step with the record store (a graph or vector database).

    The engine writes each of its commits to every mirror right after the
    record store's transaction, and on open replays the change feed from the
    mirror's own marker (``synced_seq``), or rebuilds it from the record store
    when the marker is missing or unknown, so a writer that died between the
    two writes is repaired by the next process that opens the knowledge base.
    ``apply`` must be idempotent (upserts and deletes by id).
    """

    def synced_seq(self) -> int | None:
        """The change seq this mirror holds every commit up to, or None (empty or never synced)."""
        ...

    def apply(self, writes: WriteSet) -> None:
        """Write one transaction's records: deletes first (a node's delete cascades), then upserts.

        Inserts and updates (``nodes``/``updated_nodes``, ``edges``/``updated_edges``,
        vectors) are all upserts; a mirror ignores the parts it does not hold.
        """
        ...

    def advance(self, before: int | None, after: int) -> None:
        """Move the marker to ``after`` if it is at ``before`` (unconditionally when ``before`` is None)."""
        ...

    def reset(self) -> None:
        """Remove everything (before a rebuild)."""
        ...


@runtime_checkable
class VectorStore(Protocol):
    """Where the engine's two vector indexes (kinds ``"node"`` and ``"chunk"``) live instead of memory.

    ``mirror`` is None when the record store writes the vectors itself in the
    same transaction (native vector search); otherwise it is the
    :class:`Mirror` the engine feeds each commit to.
    """

    @property
    def mirror(self) -> Mirror | None: ...

    def index(self, kind: str, dim: int) -> VectorIndex: ...
    def close(self) -> None: ...


@runtime_checkable
class GraphStore(Protocol):
    """Traversal pushed down to a database (optional capability: ``Capabilities.traversal_pushdown``).

    Both methods walk edges in either direction. ``relation_types`` (None: all)
    restricts which edges a walk may use.
    """

    def neighbourhood(
        self, seeds: Sequence[str], depth: int, relation_types: Sequence[str] | None, limit: int
    ) -> list[tuple[str, int, list[str]]]:
        """Nodes within ``depth`` hops: (node id, hops, edge ids of one shortest path).

        Seeds come first with hops 0 (missing seeds are left out), then nodes by
        increasing hops; at most ``limit`` nodes. See :func:`bfs_neighbourhood`.
        """
        ...

    def shortest_path(
        self, source: str, target: str, max_depth: int, relation_types: Sequence[str] | None = None
    ) -> list[str] | None:
        """Edge ids of a path with the fewest hops (at most ``max_depth``), ``[]`` if source is target, or None.

        See :func:`bfs_shortest_path`.
        """
        ...


#: one hop of a breadth-first walk: (frontier node ids, nodes already reached) -> (from node, edge id, to node)
#: moves. A step may leave out moves into reached nodes and keep, per new node, only its move with the
#: smallest edge id (what the walk would pick anyway), so a database returns one row per new node.
StepFn = Callable[[list[str], Collection[str]], Iterable[tuple[str, str, str]]]


def bfs_neighbourhood(
    step: StepFn, seeds: Sequence[str], depth: int, limit: int
) -> list[tuple[str, int, list[str]]]:
    """The reference semantics of :meth:`GraphStore.neighbourhood`, driven by a per-hop query.

    Adapters push each hop down to their database (``step`` gets the whole
    frontier and returns every allowed move); this function keeps the visited
    set and, for each node, the first path found (moves are taken in edge-id
    order so every backend returns the same paths). ``seeds`` must exist.
    """
    out: list[tuple[str, int, list[str]]] = []
    paths: dict[str, list[str]] = {}
    for s in dict.fromkeys(seeds):
        if len(out) >= limit:
            return out
        paths[s] = []
        out.append((s, 0, []))
    frontier = list(paths)
    for hop in range(1, depth + 1):
        if not frontier or len(out) >= limit:
            break
        nxt: list[str] = []
        for src, edge, dst in sorted(step(frontier, paths.keys()), key=lambda m: (m[1], m[0], m[2])):
            if dst in paths or src not in paths:
                continue
            paths[dst] = [*paths[src], edge]
            out.append((dst, hop, paths[dst]))
            nxt.append(dst)
            if len(out) >= limit:
                return out
        frontier = nxt
    return out


def bfs_shortest_path(step: StepFn, source: str, target: str, max_depth: int) -> list[str] | None:
    """The reference semantics of :meth:`GraphStore.shortest_path`: the path :func:`bfs_neighbourhood` finds.

    ``source`` must exist. Returns ``[]`` when source is target, None when the
    target is not within ``max_depth`` hops.
    """
    if source == target:
        return []
    paths: dict[str, list[str]] = {source: []}
    frontier = [source]
    for _ in range(max_depth):
        if not frontier:
            break
        nxt: list[str] = []
        for src, edge, dst in sorted(step(frontier, paths.keys()), key=lambda m: (m[1], m[0], m[2])):
            if dst in paths or src not in paths:
                continue
            paths[dst] = [*paths[src], edge]
            if dst == target:
                return paths[dst]
            nxt.append(dst)
        frontier = nxt
    return None


class VectorMirror:
    """The :class:`Mirror` side of an external :class:`VectorStore`: feeds its ``node``/``chunk`` indexes.

    Adapters subclass it and keep the marker (``_read_marker``/``_write_marker``)
    and the reset in their own database; ``indexes`` is the store's live map of
    the indexes the engine opened.
    """

    def __init__(self, indexes: dict[str, VectorIndex]) -> None:
        self.indexes = indexes

    def _read_marker(self) -> int | None:
        raise NotImplementedError

    def _write_marker(self, seq: int) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    def synced_seq(self) -> int | None:
        return self._read_marker()

    def advance(self, before: int | None, after: int) -> None:
        if before is None or self._read_marker() == before:
            self._write_marker(after)

    def apply(self, writes: WriteSet) -> None:
        for kind, deleted, vectors in (
            ("node", writes.delete_nodes, writes.node_vectors),
            ("chunk", writes.delete_chunks, writes.chunk_vectors),
        ):
            index = self.indexes.get(kind)
            if index is None:
                continue
            if deleted:
                index.remove(list(deleted))
            if vectors:
                ids = list(vectors)
                index.upsert(ids, np.stack([vectors[i] for i in ids]))
