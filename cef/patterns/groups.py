"""The paths one walk matched, grouped per pattern, and how a group is scored and ranked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from cef.graph.index import GraphIndex
from cef.model.patterns import (
    GraphPattern,
    HybridWeights,
    RankingStrategy,
)
from cef.patterns import npx
from cef.patterns.lookup import SimilarityFn
from cef.patterns.ranking import (
    CentralityCache,
    Components,
    MemoSimilarity,
    components,
    order,
    score,
)
from cef.patterns.result import PatternStats, StepStats
from cef.patterns.traverse import Found

__all__ = ["GroupScorer", "MatchGroup", "MatchRun", "ScoringSource"]


@dataclass
class MatchRun:
    """One pattern's walk."""

    index: int
    pattern: GraphPattern
    found: Found
    warnings: list[str]

    def stats(self) -> PatternStats:
        f = self.found
        return PatternStats(
            pattern_id=self.pattern.pattern_id,
            start_nodes=f.start_candidates,
            start_matched=f.start_matched,
            paths=f.count,
            timed_out=f.timed_out,
            truncated=f.truncated,
            steps=[StepStats(**s.as_dict()) for s in f.steps],
        )


@dataclass
class MatchGroup:
    """Equal-length candidate paths made of one pattern, or a chain of patterns (SEQUENTIAL)."""

    segments: list[GraphPattern]
    nodes: np.ndarray
    edges: np.ndarray
    forward: np.ndarray
    comps: Components | None = None

    @classmethod
    def of(cls, run: MatchRun) -> MatchGroup:
        return cls([run.pattern], run.found.nodes, run.found.edges, run.found.forward)

    def __len__(self) -> int:
        return len(self.nodes)

    def take(self, rows: np.ndarray) -> MatchGroup:
        comps = self.comps.take(rows) if self.comps is not None else None
        return MatchGroup(self.segments, self.nodes[rows], self.edges[rows], self.forward[rows], comps)

    @property
    def pattern_id(self) -> str:
        return ">".join(p.pattern_id for p in self.segments)


class ScoringSource(Protocol):
    """What a scorer reads of the executor: the graph, its centrality cache, query similarity."""

    graph: GraphIndex
    centrality: CentralityCache

    def similarity_for(self, text: str | None) -> SimilarityFn | None:
        """A node-similarity function for ``text``, when one can be built."""
        ...


class GroupScorer:
    """Ranking for one execution: strategy, weights, and the centrality/similarity it needs."""

    def __init__(
        self,
        executor: ScoringSource,
        strategy: RankingStrategy,
        weights: HybridWeights,
        text: str | None,
        similarity: SimilarityFn | None,
        warnings: list[str],
    ) -> None:
        g = executor.graph
        self.graph = g
        want_sem = strategy is RankingStrategy.SEMANTIC_SCORE or (
            strategy is RankingStrategy.HYBRID and weights.semantic > 0
        )
        fn = similarity if want_sem else None
        if want_sem and fn is None:
            fn = executor.similarity_for(text)
        if strategy is RankingStrategy.SEMANTIC_SCORE and fn is None:
            warnings.append(
                "SEMANTIC_SCORE needs a query text plus embed_query and node_vectors (or a similarity "
                "function); ranked by HYBRID without the semantic part instead"
            )
            strategy = RankingStrategy.HYBRID
        self.strategy = strategy
        self.weights = weights
        want_cent = strategy is RankingStrategy.NODE_CENTRALITY or (
            strategy is RankingStrategy.HYBRID and weights.node_centrality > 0
        )
        self.centrality = executor.centrality.get() if want_cent else None
        self.similarity = MemoSimilarity(fn, len(g.node_ids)) if fn is not None else None

    def comps(self, group: MatchGroup) -> Components:
        if group.comps is None:
            group.comps = components(
                self.graph, group.nodes, group.edges, centrality=self.centrality, similarity=self.similarity
            )
        return group.comps

    def order(
        self, groups: Sequence[MatchGroup], limit: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group index, row, score) arrays, best first; ties keep group then discovery order."""
        comp = Components.concat([self.comps(g) for g in groups])
        if not len(comp.hops):
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0)
        s = score(self.strategy, comp, self.weights)
        idx = order(s)
        if limit is not None:
            idx = idx[:limit]
        bounds = np.cumsum([0, *(len(g) for g in groups)])
        gi = np.searchsorted(bounds, idx, side="right") - 1
        return gi, idx - bounds[gi], s[idx]

    def rank(self, groups: Sequence[MatchGroup], limit: int) -> list[tuple[int, int, float]]:
        gi, rows, scores = self.order(groups, limit)
        return list(zip(gi.tolist(), rows.tolist(), scores.tolist(), strict=True))

    def top(self, group: MatchGroup, limit: int) -> MatchGroup:
        return group.take(self.order([group], limit)[1])

    def best_per_end(self, group: MatchGroup) -> tuple[np.ndarray, np.ndarray]:
        """(distinct end nodes sorted, row of the best path ending at each)."""
        rows = self.order([group])[1]
        uniq, first = npx.unique_first(group.nodes[rows, -1])
        return uniq, rows[first]
