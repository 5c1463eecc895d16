"""The embedded reference for traversal: the engine's in-memory graph behind the GraphStore port."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from cef.engine.state import EngineState
from cef.store.base import StepFn, bfs_neighbourhood, bfs_shortest_path


class MemoryGraphStore:
    """A :class:`cef.store.base.GraphStore` over ``EngineState.graph`` (what the retriever walks)."""

    def __init__(self, state: EngineState) -> None:
        self.state = state

    def _step(self, relation_types: Sequence[str] | None) -> StepFn:
        g = self.state.graph

        def step(frontier: list[str], seen: Collection[str]) -> list[tuple[str, str, str]]:
            if relation_types is not None and not relation_types:
                return []
            flt = g.edge_filter(relation_types=list(relation_types) if relation_types else None)
            pos = np.array([g.pos(f) for f in frontier], dtype=np.int64)
            edges, owners, targets, _ = g.step(pos, flt)
            return [
                (g.node_ids[int(o)], g.edge_ids[int(e)], g.node_ids[int(t)])
                for e, o, t in zip(edges, owners, targets, strict=True)
            ]

        return step

    def neighbourhood(
        self, seeds: Sequence[str], depth: int, relation_types: Sequence[str] | None, limit: int
    ) -> list[tuple[str, int, list[str]]]:
        with self.state.reading():
            present = [s for s in seeds if self.state.graph.has_node(s)]
            return bfs_neighbourhood(self._step(relation_types), present, depth, limit)

    def shortest_path(
        self, source: str, target: str, max_depth: int, relation_types: Sequence[str] | None = None
    ) -> list[str] | None:
        with self.state.reading():
            g = self.state.graph
            if not (g.has_node(source) and g.has_node(target)):
                return None
            return bfs_shortest_path(self._step(relation_types), source, target, max_depth)
