"""How the pattern engine reads node properties and vectors (ports plus simple implementations).

The graph index holds structure only; property constraints need the node
records. :class:`NodeLookup` hands them over in bulk, by graph position, so a
store-backed implementation can batch its reads and cache them
(:class:`CachedNodeLookup`); :class:`InMemoryNodeLookup` serves tests and
benchmarks.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cef.graph.index import GraphIndex
from cef.model import Node
from cef.patterns.values import PropertyColumn

Properties = Mapping[str, Any]


@runtime_checkable
class NodeLookup(Protocol):
    """Node properties by graph position, in bulk."""

    def properties(self, positions: np.ndarray) -> Sequence[Properties | None]:
        """One mapping per position (``None`` for a node without a record), in the order given."""
        ...


@runtime_checkable
class ColumnarNodeLookup(NodeLookup, Protocol):
    """A lookup that can also hand over one property of every node as a column (vectorized constraints)."""

    def column(self, path: str) -> PropertyColumn | None:
        """The column of property ``path`` (dotted), covering every graph position; None if unavailable."""
        ...


@runtime_checkable
class NodeVectors(Protocol):
    """Cosine similarity of node vectors to a query vector (``ExactVectorIndex`` conforms)."""

    def similarities(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray: ...


#: node positions -> similarity to the query (one float per position)
SimilarityFn = Callable[[np.ndarray], np.ndarray]
#: query text -> query vector
EmbedQueryFn = Callable[[str], np.ndarray]


class InMemoryNodeLookup:
    """Properties held in a list indexed by graph position; columns built on first use and cached."""

    def __init__(self, graph: GraphIndex, nodes: Iterable[Node] = ()) -> None:
        self._graph = graph
        self._props: list[Properties | None] = []
        self._columns: dict[str, PropertyColumn] = {}
        self.update(nodes)

    @classmethod
    def from_properties(cls, graph: GraphIndex, props: Mapping[str, Properties]) -> InMemoryNodeLookup:
        """From ``{node id: properties}``."""
        lookup = cls(graph)
        lookup._set((graph.pos(nid), p) for nid, p in props.items())
        return lookup

    @classmethod
    def from_positions(cls, graph: GraphIndex, props: Sequence[Properties | None]) -> InMemoryNodeLookup:
        """From a list aligned with graph positions (``props[i]`` belongs to ``graph.node_ids[i]``)."""
        lookup = cls(graph)
        lookup._props = list(props)
        lookup._columns.clear()
        return lookup

    def update(self, nodes: Iterable[Node]) -> None:
        self._set((self._graph.pos(n.id), n.properties) for n in nodes)

    def _set(self, rows: Iterable[tuple[int | None, Properties]]) -> None:
        self._columns.clear()
        for pos, props in rows:
            if pos is None:
                continue
            if pos >= len(self._props):
                self._props.extend([None] * (pos + 1 - len(self._props)))
            self._props[pos] = props

    def properties(self, positions: np.ndarray) -> list[Properties | None]:
        props, n = self._props, len(self._props)
        return [props[p] if p < n else None for p in positions.tolist()]

    def column(self, path: str) -> PropertyColumn:
        size = max(len(self._props), len(self._graph.node_ids))
        col = self._columns.get(path)
        if col is None or len(col) < size:
            col = self._columns[path] = PropertyColumn.build(self._props, path, size)
        return col


class CachedNodeLookup:
    """Reads node records through ``fetch`` (e.g. ``store.get_nodes``) and keeps the latest in an LRU cache.

    Call :meth:`invalidate` with the ids a write touched (an engine write
    listener is the place), or with nothing to drop everything.
    """

    def __init__(
        self, graph: GraphIndex, fetch: Callable[[Sequence[str]], Iterable[Node]], *, capacity: int = 100_000
    ) -> None:
        self._graph = graph
        self._fetch = fetch
        self._capacity = capacity
        self._cache: OrderedDict[str, Properties | None] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def properties(self, positions: np.ndarray) -> list[Properties | None]:
        ids = self._graph.node_ids
        wanted = [ids[p] if p < len(ids) else "" for p in positions.tolist()]
        with self._lock:
            missing = [i for i in dict.fromkeys(wanted) if i and i not in self._cache]
        fetched: dict[str, Properties | None] = dict.fromkeys(missing)
        if missing:
            for node in self._fetch(missing):
                fetched[node.id] = node.properties
        with self._lock:
            self.misses += len(missing)
            self.hits += len(wanted) - len(missing)
            for nid, props in fetched.items():
                self._cache[nid] = props
            out: list[Properties | None] = []
            for nid in wanted:
                if not nid:
                    out.append(None)
                    continue
                props = self._cache.get(nid, fetched.get(nid))
                if nid in self._cache:
                    self._cache.move_to_end(nid)
                out.append(props)
            while len(self._cache) > self._capacity:
                self._cache.popitem(last=False)
        return out

    def invalidate(self, ids: Iterable[str] | None = None) -> None:
        with self._lock:
            if ids is None:
                self._cache.clear()
            else:
                for nid in ids:
                    self._cache.pop(nid, None)
