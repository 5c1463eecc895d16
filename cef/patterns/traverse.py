"""The traversal core: walk one pattern from its start nodes, pruning as it goes.

Partial paths are numpy matrices (one row per path: node positions, edge
positions, walked-forward flags). Each step takes a block of partial paths,
calls :meth:`GraphIndex.step` once on the block's distinct end nodes, filters
the moves with the step's edge and node checks (so a failing constraint drops
the move before any path is extended), then joins surviving moves back onto
the paths and drops cycles. Blocks are processed depth first from a stack, so
complete paths appear early, memory stays bounded, and the time limit (checked
between blocks) can stop the search with everything found so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from cef.graph.filter import EdgeFilter
from cef.graph.index import GraphIndex
from cef.patterns import npx
from cef.patterns.constraints import EdgeCheck, NodeCheck


@dataclass
class StepPlan:
    flt: EdgeFilter
    edge_check: EdgeCheck
    node_check: NodeCheck  # on the node this step reaches


@dataclass
class Plan:
    start_check: NodeCheck
    steps: list[StepPlan]
    allow_cycles: bool = False


@dataclass
class StepCounter:
    moves: int = 0  # edges leaving the distinct end nodes, after relation/direction/time/scope filtering
    pruned_by_edge: int = 0
    pruned_by_node: int = 0
    pruned_cycles: int = 0
    paths: int = 0  # partial paths extended by this step

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class Found:
    """Complete paths of one pattern, in discovery order."""

    nodes: np.ndarray  # (n, k+1) int64 node positions
    edges: np.ndarray  # (n, k) int64 edge positions
    forward: np.ndarray  # (n, k) bool: edge walked source -> target
    timed_out: bool = False
    truncated: bool = False
    start_candidates: int = 0
    start_matched: int = 0
    steps: list[StepCounter] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.nodes)

    @classmethod
    def empty(cls, k: int) -> Found:
        return cls(
            np.zeros((0, k + 1), dtype=np.int64),
            np.zeros((0, k), dtype=np.int64),
            np.zeros((0, k), dtype=np.bool_),
            steps=[StepCounter() for _ in range(k)],
        )


_Block = tuple[int, np.ndarray, np.ndarray, np.ndarray]  # depth, nodes, edges, forward


def walk(
    graph: GraphIndex,
    plan: Plan,
    starts: np.ndarray,
    *,
    deadline: float | None,
    clock: Callable[[], float],
    max_candidates: int,
    stop_after: int | None = None,
    block_size: int = 2048,
) -> Found:
    """Every path matching ``plan`` from ``starts`` (until the deadline or the candidate cap)."""
    k = len(plan.steps)
    found = Found.empty(k)
    found.start_candidates = len(starts)
    limit = min(max_candidates, stop_after) if stop_after is not None else max_candidates
    done_nodes: list[np.ndarray] = []
    done_edges: list[np.ndarray] = []
    done_fwd: list[np.ndarray] = []
    count = 0
    stack: list[_Block] = []
    starts = starts.astype(np.int64)
    empty_e, empty_f = np.zeros((len(starts), 0), np.int64), np.zeros((len(starts), 0), np.bool_)
    _push(stack, -1, starts[:, None], empty_e, empty_f, block_size, eager=True)
    while stack:
        if deadline is not None and clock() >= deadline:
            found.timed_out = True
            break
        depth, nodes, edges, fwd = stack.pop()
        if depth < 0:  # a block of raw start nodes
            keep = plan.start_check(nodes[:, 0])
            found.start_matched += int(keep.sum())
            nodes, edges, fwd = nodes[keep], edges[keep], fwd[keep]
            depth = 0
            if not len(nodes):
                continue
        children = _extend(graph, plan, depth, nodes, edges, fwd, found.steps[depth], block_size * 8)
        if depth + 1 < k:
            for i in reversed(range(len(children))):
                # until a first path is complete, dive with a small block: first results come fast
                _push(stack, depth + 1, *children[i], block_size, eager=count == 0 and i == 0)
            continue
        rows = sum(len(cn) for cn, _, _ in children)
        for cn, ce, cf in children:
            take = min(len(cn), limit - count)
            done_nodes.append(cn[:take])
            done_edges.append(ce[:take])
            done_fwd.append(cf[:take])
            count += take
            rows -= take
            if count >= limit:
                break
        if count >= limit:
            # the cap cut the search short (an early stop for PATH_LENGTH loses nothing: ranks tie)
            found.truncated = count >= max_candidates and (rows > 0 or bool(stack))
            break
    if done_nodes:
        found.nodes = np.concatenate(done_nodes)
        found.edges = np.concatenate(done_edges)
        found.forward = np.concatenate(done_fwd)
    return found


#: rows in the first block of a level while no path is complete yet
FIRST_BLOCK = 16


def _push(
    stack: list[_Block],
    depth: int,
    nodes: np.ndarray,
    edges: np.ndarray,
    fwd: np.ndarray,
    block_size: int,
    *,
    eager: bool,
) -> None:
    """Push rows as blocks so that the first rows are popped first (a small first block if ``eager``)."""
    n = len(nodes)
    if not n:
        return
    first = min(FIRST_BLOCK, block_size) if eager else block_size
    bounds = [0, *range(first, n, block_size), n] if n > first else [0, n]
    for lo, hi in reversed(list(pairwise(bounds))):
        stack.append((depth, nodes[lo:hi], edges[lo:hi], fwd[lo:hi]))


def _extend(
    graph: GraphIndex,
    plan: Plan,
    depth: int,
    nodes: np.ndarray,
    edges: np.ndarray,
    fwd: np.ndarray,
    stats: StepCounter,
    max_rows: int,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Extend every path of the block by one hop of step ``depth`` (children of at most ``max_rows``)."""
    sp = plan.steps[depth]
    uniq, inv = npx.unique_inverse(nodes[:, -1])
    m_edge, m_owner, m_target, m_fwd = graph.step(uniq, sp.flt)
    stats.moves += len(m_edge)
    if sp.edge_check and len(m_edge):
        ok = sp.edge_check(m_edge, m_fwd)
        stats.pruned_by_edge += int(len(ok) - ok.sum())
        m_edge, m_owner, m_target, m_fwd = m_edge[ok], m_owner[ok], m_target[ok], m_fwd[ok]
    if len(m_edge):
        ok = sp.node_check(m_target)
        stats.pruned_by_node += int(len(ok) - ok.sum())
        m_edge, m_owner, m_target, m_fwd = m_edge[ok], m_owner[ok], m_target[ok], m_fwd[ok]
    if not len(m_edge):
        return []
    owner_idx = np.searchsorted(uniq, m_owner)
    by_owner = np.argsort(owner_idx, kind="stable")
    m_edge, m_target, m_fwd = m_edge[by_owner], m_target[by_owner], m_fwd[by_owner]
    counts = np.bincount(owner_idx, minlength=len(uniq))
    first = np.cumsum(counts) - counts
    per_path = counts[inv]
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    # cut the block into runs of paths whose extensions fit in max_rows
    cum = np.cumsum(per_path)
    lo = 0
    n = len(nodes)
    while lo < n:
        base = int(cum[lo - 1]) if lo else 0
        hi = int(np.searchsorted(cum, base + max_rows, side="right"))
        hi = max(hi, lo + 1)
        c = per_path[lo:hi]
        total = int(c.sum())
        if total:
            path_idx = np.repeat(np.arange(lo, hi), c)
            within = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
            move = np.repeat(first[inv[lo:hi]], c) + within
            prev = nodes[path_idx]
            target = m_target[move]
            new_nodes = np.concatenate([prev, target[:, None]], axis=1)
            new_edges = np.concatenate([edges[path_idx], m_edge[move][:, None].astype(np.int64)], axis=1)
            new_fwd = np.concatenate([fwd[path_idx], m_fwd[move][:, None]], axis=1)
            if not plan.allow_cycles:
                fresh = ~(prev == target[:, None]).any(axis=1)
                stats.pruned_cycles += int(len(fresh) - fresh.sum())
                if not fresh.all():
                    new_nodes, new_edges, new_fwd = new_nodes[fresh], new_edges[fresh], new_fwd[fresh]
            if len(new_nodes):
                stats.paths += len(new_nodes)
                out.append((new_nodes, new_edges, new_fwd))
        lo = hi
    return out
