"""Scoring matched paths: the raw components, the per-strategy score, and cached centrality.

Components of a path (computed on arrays of equal-length paths at once):

* ``hops`` — number of edges; PATH_LENGTH scores ``1 / (1 + hops)``;
* ``edge_weight`` — product over the edges of ``weight × confidence`` (one weak
  link weakens the chain);
* ``node_centrality`` — mean centrality of the path's nodes, centrality being
  degree (default) or PageRank, scaled to 0..1 and cached per graph generation;
* ``semantic`` — mean similarity of the path's nodes to the query.

HYBRID scales each component to 0..1 over the candidate set (min–max) and
takes the weighted mean; components without data (no query) are left out.
Ties keep discovery order, so rankings are deterministic.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

import numpy as np

from cef.graph.index import GraphIndex
from cef.model.patterns import HybridWeights, RankingStrategy
from cef.patterns import npx
from cef.patterns.lookup import SimilarityFn

CentralityKind = Literal["degree", "pagerank"]
COMPONENTS = ("hops", "edge_weight", "node_centrality", "semantic")


def degree_centrality(graph: GraphIndex) -> np.ndarray:
    """Live edges touching each node (both directions), divided by the largest."""
    n = len(graph.node_ids)
    alive = graph.e_alive.view
    deg = np.bincount(graph.e_src.view[alive], minlength=n) + np.bincount(
        graph.e_dst.view[alive], minlength=n
    )
    deg = deg.astype(np.float64)
    top = deg.max() if n else 0.0
    return deg / top if top > 0 else deg


def pagerank_centrality(graph: GraphIndex, damping: float = 0.85) -> np.ndarray:
    """Global PageRank over live edges (walked both ways), divided by the largest."""
    alive = np.flatnonzero(graph.node_alive.view)
    if not len(alive):
        return np.zeros(len(graph.node_ids))
    seeds = dict.fromkeys(alive.tolist(), 1.0)
    pr = graph.personalized_pagerank(seeds, damping=damping, iterations=50)
    top = float(pr.max())
    return pr / top if top > 0 else pr


class CentralityCache:
    """Centrality per node position, recomputed only when ``graph.generation`` changes."""

    def __init__(self, graph: GraphIndex, kind: CentralityKind = "degree") -> None:
        self.graph = graph
        self.kind = kind
        self._generation = -1
        self._values = np.zeros(0)
        self._lock = threading.Lock()
        self.computations = 0

    def get(self) -> np.ndarray:
        with self._lock:
            if self._generation != self.graph.generation or len(self._values) < len(self.graph.node_ids):
                fn = pagerank_centrality if self.kind == "pagerank" else degree_centrality
                self._values = fn(self.graph)
                self._generation = self.graph.generation
                self.computations += 1
            return self._values


class MemoSimilarity:
    """Wraps a similarity function so each node is asked about once per execution."""

    def __init__(self, fn: SimilarityFn, size: int) -> None:
        self.fn = fn
        self._memo = np.full(size, np.nan)

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        todo = npx.unique(positions[np.isnan(self._memo[positions])])
        if len(todo):
            values = np.asarray(self.fn(todo), dtype=np.float64).reshape(-1)
            if len(values) != len(todo):
                raise ValueError(f"similarity function returned {len(values)} values for {len(todo)} nodes")
            self._memo[todo] = np.nan_to_num(values, nan=0.0)
        return self._memo[positions]


@dataclass
class Components:
    """Raw ranking inputs, one entry per path."""

    hops: np.ndarray
    edge_weight: np.ndarray
    node_centrality: np.ndarray | None
    semantic: np.ndarray | None

    @classmethod
    def empty(cls) -> Components:
        z = np.zeros(0)
        return cls(z, z, None, None)

    def take(self, idx: np.ndarray) -> Components:
        return Components(
            self.hops[idx],
            self.edge_weight[idx],
            None if self.node_centrality is None else self.node_centrality[idx],
            None if self.semantic is None else self.semantic[idx],
        )

    def row(self, i: int) -> dict[str, float]:
        out = {"hops": float(self.hops[i]), "edge_weight": float(self.edge_weight[i])}
        if self.node_centrality is not None:
            out["node_centrality"] = float(self.node_centrality[i])
        if self.semantic is not None:
            out["semantic"] = float(self.semantic[i])
        return out

    @staticmethod
    def concat(parts: list[Components]) -> Components:
        if not parts:
            return Components.empty()

        def cat(vals: list[np.ndarray | None]) -> np.ndarray | None:
            return (
                None if any(v is None for v in vals) else np.concatenate([v for v in vals if v is not None])
            )

        return Components(
            np.concatenate([p.hops for p in parts]),
            np.concatenate([p.edge_weight for p in parts]),
            cat([p.node_centrality for p in parts]),
            cat([p.semantic for p in parts]),
        )


def components(
    graph: GraphIndex,
    nodes: np.ndarray,
    edges: np.ndarray,
    *,
    centrality: np.ndarray | None,
    similarity: SimilarityFn | None,
) -> Components:
    """Components of equal-length paths: ``nodes`` is (n, k+1), ``edges`` is (n, k)."""
    n, k = edges.shape
    hops = np.full(n, float(k))
    if k:
        strength = graph.e_weight.view[edges].astype(np.float64) * graph.e_conf.view[edges]
        edge_weight = strength.prod(axis=1)
    else:
        edge_weight = np.ones(n)
    cent = centrality[nodes].mean(axis=1) if centrality is not None and n else None
    if cent is None and centrality is not None:
        cent = np.zeros(0)
    sem = None
    if similarity is not None:
        sem = similarity(nodes.reshape(-1)).reshape(nodes.shape).mean(axis=1) if n else np.zeros(0)
    return Components(hops, edge_weight, cent, sem)


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    if hi - lo < 1e-12:
        return np.ones_like(x, dtype=np.float64)
    return (x - lo) / (hi - lo)


def score(strategy: RankingStrategy, comp: Components, weights: HybridWeights) -> np.ndarray:
    """One score per path, higher is better."""
    if not len(comp.hops):
        return np.zeros(0)
    length = 1.0 / (1.0 + comp.hops)
    if strategy is RankingStrategy.PATH_LENGTH:
        return length
    if strategy is RankingStrategy.EDGE_WEIGHT:
        return comp.edge_weight.astype(np.float64)
    if strategy is RankingStrategy.NODE_CENTRALITY and comp.node_centrality is not None:
        return comp.node_centrality
    if strategy is RankingStrategy.SEMANTIC_SCORE and comp.semantic is not None:
        return comp.semantic
    parts: list[tuple[float, np.ndarray]] = [
        (weights.path_length, length),
        (weights.edge_weight, comp.edge_weight.astype(np.float64)),
    ]
    if comp.node_centrality is not None:
        parts.append((weights.node_centrality, comp.node_centrality))
    if comp.semantic is not None:
        parts.append((weights.semantic, comp.semantic))
    total = sum(w for w, _ in parts)
    if total <= 0:
        return length
    return sum(w * _minmax(x) for w, x in parts if w > 0) / total  # type: ignore[return-value]


def order(scores: np.ndarray) -> np.ndarray:
    """Indices best first; ties keep their original (discovery) order."""
    return np.argsort(-scores, kind="stable")
