"""Approximate personalized PageRank by forward push: the work follows the seeds' neighbourhood.

Personalized PageRank from a seed distribution ``p`` is the fixed point of
``π = (1 − d)·p + d·π·P`` (``d`` the damping, ``P = D⁻¹A`` the random-walk
matrix of a weighted graph). The power iteration computes it over every node
of the graph, so its cost grows with the graph. Forward push (Andersen, Chung
and Lang, 2006) keeps an estimate ``x`` and a residual ``r`` (``r = p`` at the
start) and repeatedly *pushes* a node ``u`` whose residual is large for its
degree — ``r[u] > ε·deg(u)``: ``x[u] += (1 − d)·r[u]``, every neighbour ``v``
gets ``d·r[u]·A[u,v]/deg(u)``, ``r[u] = 0``. The invariant
``π = x + Σ_u r[u]·π_u`` holds throughout, so when no node is above its
threshold, on a symmetric matrix (``deg(u)·π_u(v) = deg(v)·π_v(u)``)::

    0 ≤ π(v) − x(v) ≤ ε·deg(v)        for every node v

and the nodes ever touched are bounded by ``1 / ((1 − d)·ε)`` pushed degree,
independent of the graph's size: a hub (a huge degree) is pushed only when a
large share of the mass reaches it. Here every node above its threshold is
pushed at once (one round = one vectorized step over the frontier), which
keeps the same invariant and bound. At the end each touched node also gets
``(1 − d)`` of its remaining residual (``π_u(u) ≥ 1 − d``, so the estimate stays
below ``π``). A node without edges (dangling) sends its walk mass back to the
seeds, as the power iteration does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cef.graph.arrays import spans

__all__ = ["PushGraph", "PushResult", "forward_push"]

#: a safety net: rounds never reach this on a graph whose degrees are positive
MAX_ROUNDS = 100_000


@dataclass(frozen=True)
class PushGraph:
    """A symmetric weighted adjacency (CSR arrays) with each node's weighted degree."""

    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    degree: np.ndarray

    @classmethod
    def from_matrix(cls, matrix: Any) -> PushGraph:
        """From a scipy CSR matrix (square, symmetric, non-negative weights)."""
        m = matrix.tocsr()
        if m.shape[0] != m.shape[1]:
            raise ValueError(f"forward push needs a square adjacency matrix, got shape {m.shape}")
        degree = np.asarray(m.sum(axis=1), dtype=np.float64).ravel()
        return cls(m.indptr.astype(np.int64), m.indices, m.data.astype(np.float64), degree)

    @property
    def size(self) -> int:
        return len(self.degree)


@dataclass(frozen=True)
class PushResult:
    """``scores``: one per node (zero where the push never reached); ``touched``: the nodes reached, sorted."""

    scores: np.ndarray
    touched: np.ndarray
    rounds: int
    pushes: int


def forward_push(
    graph: PushGraph,
    seeds: dict[int, float],
    *,
    damping: float,
    epsilon: float,
    blocked: np.ndarray | None = None,
) -> PushResult:
    """Approximate PPR from weighted ``seeds`` (normalized to 1): ``0 ≤ π(v) − x(v) ≤ ε·deg(v)``.

    ``blocked``: a mask over nodes the walk may not enter (another tenant's records): the mass
    sent to them is dropped, so they neither score nor pass mass on."""
    if not 0.0 < damping < 1.0:
        raise ValueError(f"damping must be between 0 and 1 (exclusive), got {damping}")
    if epsilon <= 0.0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    n = graph.size
    x = np.zeros(n)  # large zero arrays are mapped lazily: only the pages the push writes cost anything
    empty = np.zeros(0, dtype=np.int64)
    if not seeds:
        return PushResult(x, empty, 0, 0)
    seed_pos = np.fromiter(seeds.keys(), dtype=np.int64, count=len(seeds))
    seed_w = np.fromiter(seeds.values(), dtype=np.float64, count=len(seeds))
    if len(seed_pos) and (seed_pos.min() < 0 or seed_pos.max() >= n):
        raise ValueError(f"seed positions must be in 0..{n - 1}")
    keep = seed_w > 0
    if blocked is not None:
        keep &= ~blocked[seed_pos]
    seed_pos, seed_w = seed_pos[keep], seed_w[keep]
    total = float(seed_w.sum())
    if total <= 0:
        return PushResult(x, empty, 0, 0)
    seed_w = seed_w / total
    order = np.argsort(seed_pos)
    seed_pos, seed_w = seed_pos[order], seed_w[order]
    r = np.zeros(n)
    r[seed_pos] = seed_w
    seen = np.zeros(n, dtype=np.bool_)
    seen[seed_pos] = True
    deg, indptr, indices, weights = graph.degree, graph.indptr, graph.indices, graph.weights
    touched = [seed_pos]
    active = seed_pos[r[seed_pos] > epsilon * deg[seed_pos]]  # thresholds of the nodes looked at only
    rounds = pushes = 0
    while len(active) and rounds < MAX_ROUNDS:
        rounds += 1
        pushes += len(active)
        ru = r[active]
        r[active] = 0.0
        x[active] += (1.0 - damping) * ru
        walk = damping * ru
        d = deg[active]
        dangling = d <= 0
        cand = []
        if dangling.any():  # no edges: the walk restarts from the seeds
            r[seed_pos] += float(walk[dangling].sum()) * seed_w
            cand.append(seed_pos)
            live = ~dangling
            active, walk, d = active[live], walk[live], d[live]
        starts = indptr[active]
        counts = indptr[active + 1] - starts
        m = int(counts.sum())
        if m:
            offs = spans(starts, counts)
            nbr = indices[offs]
            sent = weights[offs] * np.repeat(walk / d, counts)
            if blocked is not None:
                open_ = ~blocked[nbr]
                nbr, sent = nbr[open_], sent[open_]
            np.add.at(r, nbr, sent)
            fresh = nbr[~seen[nbr]]
            if len(fresh):
                fresh = np.unique(fresh)
                seen[fresh] = True
                touched.append(fresh)
            cand.append(nbr)
        if not cand:
            break
        nxt = np.concatenate(cand) if len(cand) > 1 else cand[0]
        active = np.unique(nxt[r[nxt] > epsilon * deg[nxt]])
    reached = np.sort(np.concatenate(touched))
    x[reached] += (1.0 - damping) * r[reached]
    return PushResult(x, reached, rounds, pushes)
