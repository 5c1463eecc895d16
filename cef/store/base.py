"""Ports: what a storage backend must provide.

A backend is a :class:`RecordStore` (the system of record, transactional,
with full text). It may also provide native vector search
(:class:`VectorIndex`) or traversal pushdown (:class:`GraphStore`); it says
so in :class:`Capabilities`, and the engine uses its own in-memory index for
whatever a backend lacks. Backend names never appear outside their adapter.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
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
    """Nearest-neighbour search over unit vectors keyed by record id."""

    dim: int

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None: ...
    def remove(self, ids: Sequence[str]) -> None: ...
    def search(
        self, vector: np.ndarray, k: int, allowed: Iterable[str] | None = None
    ) -> list[tuple[str, float]]: ...
    def __len__(self) -> int: ...


@runtime_checkable
class GraphStore(Protocol):
    """Traversal pushed down to a graph database (optional capability)."""

    def neighbourhood(
        self, seeds: Sequence[str], depth: int, relation_types: Sequence[str] | None, limit: int
    ) -> list[tuple[str, int, list[str]]]:
        """Nodes within ``depth`` hops: (node id, hops, edge ids of one shortest path)."""
        ...

    def shortest_path(self, source: str, target: str, max_depth: int) -> list[str] | None:
        """Edge ids of a shortest path, or None."""
        ...
