"""Forward-push PPR stays within its stated bound of exact PPR (solved directly on small graphs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from cef.graph.push import PushGraph, forward_push


def exact_ppr(a: sparse.csr_matrix, seeds: dict[int, float], damping: float) -> np.ndarray:
    """π = (1 − d)·p + d·π·P, solved as a linear system (a node without edges restarts at the seeds)."""
    n = a.shape[0]
    deg = np.asarray(a.sum(axis=1)).ravel()
    p = np.zeros(n)
    for k, v in seeds.items():
        p[k] += v
    p /= p.sum()
    dense = a.toarray()
    walk = np.divide(dense, deg[:, None], out=np.zeros_like(dense), where=deg[:, None] > 0)
    walk[deg == 0] = p  # dangling: back to the seeds
    # π (I − d·P) = (1 − d)·p
    return np.linalg.solve((np.eye(n) - damping * walk).T, (1 - damping) * p)


@st.composite
def graphs(draw: st.DrawFn) -> tuple[sparse.csr_matrix, dict[int, float]]:
    n = draw(st.integers(2, 40))
    m = draw(st.integers(0, 120))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.floats(0.1, 5.0), min_size=m, max_size=m))
    pairs = [(s, d, x) for s, d, x in zip(src, dst, w, strict=True) if s != d]
    rows = [s for s, _, _ in pairs] + [d for _, d, _ in pairs]
    cols = [d for _, d, _ in pairs] + [s for s, _, _ in pairs]
    vals = [x for _, _, x in pairs] * 2
    a = sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    seed_nodes = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4, unique=True))
    weights = draw(st.lists(st.floats(0.05, 2.0), min_size=len(seed_nodes), max_size=len(seed_nodes)))
    return a, dict(zip(seed_nodes, weights, strict=True))


@settings(max_examples=100, deadline=None)
@given(graphs(), st.sampled_from([0.3, 0.5, 0.85]), st.sampled_from([1e-2, 1e-3, 1e-5]))
def test_push_is_within_its_bound(
    case: tuple[sparse.csr_matrix, dict[int, float]], damping: float, eps: float
) -> None:
    a, seeds = case
    pg = PushGraph.from_matrix(a)
    res = forward_push(pg, seeds, damping=damping, epsilon=eps)
    exact = exact_ppr(a, seeds, damping)
    gap = exact - res.scores
    tol = 1e-9
    assert (gap >= -tol).all(), "the push estimate never exceeds exact PPR"
    # a node without edges is bounded by its seed share, which the push hands out whole
    bound = eps * pg.degree
    assert (gap[pg.degree > 0] <= bound[pg.degree > 0] + tol).all()
    # every node with a positive estimate was reached, and only those
    assert set(np.flatnonzero(res.scores > 0).tolist()) <= set(res.touched.tolist())
    assert res.scores.sum() <= 1.0 + 1e-9


def test_smaller_epsilon_is_closer_and_touches_more() -> None:
    rng = np.random.default_rng(3)
    n, m = 400, 1600
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    w = rng.uniform(0.5, 4.0, keep.sum())
    a = sparse.csr_matrix(
        (np.r_[w, w], (np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]])), shape=(n, n)
    )
    seeds = {1: 0.6, 2: 0.4}
    exact = exact_ppr(a, seeds, 0.5)
    pg = PushGraph.from_matrix(a)
    coarse = forward_push(pg, seeds, damping=0.5, epsilon=1e-3)
    fine = forward_push(pg, seeds, damping=0.5, epsilon=1e-7)
    assert len(coarse.touched) < len(fine.touched)
    assert np.abs(exact - fine.scores).sum() < np.abs(exact - coarse.scores).sum()
    assert (np.abs(exact - fine.scores) <= 1e-7 * pg.degree + 1e-12).all()
    top = set(np.argsort(-exact)[:10].tolist())
    assert top == set(np.argsort(-fine.scores)[:10].tolist())


def test_work_follows_the_neighbourhood_not_the_graph() -> None:
    """Two seeds in a small component of a big graph: the push never leaves that component."""
    n = 200_000
    ring = np.arange(10)
    src = np.r_[ring, 10 + np.arange(n - 11)]
    dst = np.r_[(ring + 1) % 10, 11 + np.arange(n - 11)]
    w = np.ones(len(src))
    a = sparse.csr_matrix((np.r_[w, w], (np.r_[src, dst], np.r_[dst, src])), shape=(n, n))
    res = forward_push(PushGraph.from_matrix(a), {0: 1.0, 5: 1.0}, damping=0.5, epsilon=1e-9)
    assert set(res.touched.tolist()) <= set(range(10))
    assert abs(res.scores.sum() - 1.0) < 1e-6


def test_bad_arguments_are_refused() -> None:
    a = sparse.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    pg = PushGraph.from_matrix(a)
    with pytest.raises(ValueError, match="damping"):
        forward_push(pg, {0: 1.0}, damping=1.0, epsilon=1e-3)
    with pytest.raises(ValueError, match="epsilon"):
        forward_push(pg, {0: 1.0}, damping=0.5, epsilon=0.0)
    with pytest.raises(ValueError, match="seed positions"):
        forward_push(pg, {5: 1.0}, damping=0.5, epsilon=1e-3)
    with pytest.raises(ValueError, match="square"):
        PushGraph.from_matrix(sparse.csr_matrix(np.ones((2, 3))))
    empty = forward_push(pg, {}, damping=0.5, epsilon=1e-3)
    assert not empty.scores.any() and not len(empty.touched)
