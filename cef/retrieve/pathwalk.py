"""Candidate relation paths: every typed path of 1..``max_hops`` hops that leaves an anchor.

One level at a time over all the frontiers of the level's paths at once (:func:`_next_level`):
one walk of the frontiers' nodes serves every path, and the distinct (path, hop, node) moves are
found by one sort. The last level asks only which hops leave each frontier
(:func:`~cef.graph.hops.hop_keys_many`), not where they lead. Used by
:func:`~cef.retrieve.relpaths.relation_path_search`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cef.graph.arrays import sorted_unique, spans
from cef.graph.filter import EdgeFilter
from cef.graph.hops import hop_keys_many, move_keys, neighbours
from cef.graph.index import GraphIndex
from cef.retrieve.pathwords import Hop, RelationPath

__all__ = ["candidate_paths"]


def candidate_paths(
    graph: GraphIndex,
    start: int,
    flt: EdgeFilter,
    max_hops: int,
    *,
    deep_limit: int | None = None,
    max_paths: int = 5_000,
    check: Callable[[], None] | None = None,
) -> list[RelationPath]:
    """The relation paths of 1..``max_hops`` hops that exist from node position ``start``.

    Walks never come back to the start (answers exclude it); a bidirectional
    relation is one hop whichever way it is walked. Hops beyond the third are
    explored only while fewer than ``deep_limit`` paths were found. ``check`` is called
    before each level (a query's deadline: it raises to stop the walk).
    """
    out: list[RelationPath] = []
    level: dict[RelationPath, np.ndarray] = {(): np.asarray([start], dtype=np.int64)}
    hop_of = _hops(graph.relations.names)
    for depth in range(max_hops):
        if depth >= 3 and deep_limit is not None and len(out) >= deep_limit:
            break
        if check is not None and depth:
            check()
        final = depth == max_hops - 1
        if final or (depth >= 2 and deep_limit is not None):
            # maybe the last level: which hops leave each frontier is enough, not where they lead
            near = neighbours(graph, start)
            paths = list(level)
            found = hop_keys_many(graph, list(level.values()), flt, exclude=start, near=near)
            for path, codes in zip(paths, found, strict=True):
                out.extend([(*path, hop_of(code)) for code in codes.tolist()])
                if len(out) >= max_paths:
                    return out[:max_paths]
            if final or (deep_limit is not None and len(out) >= deep_limit):
                break
            level = _next_level(graph, level, flt, start, None)
        else:
            level = _next_level(graph, level, flt, start, out)
            if len(out) >= max_paths:
                return out[:max_paths]
    return out


def _next_level(
    graph: GraphIndex,
    level: dict[RelationPath, np.ndarray],
    flt: EdgeFilter,
    start: int,
    out: list[RelationPath] | None,
) -> dict[RelationPath, np.ndarray]:
    """One hop further from every frontier of ``level``: the new paths (appended to ``out``
    when given) and the nodes each reaches, never ``start``. One walk of the frontiers' nodes
    serves every path; each frontier node then takes its node's moves."""
    names = graph.relations.names
    paths = list(level)
    if not paths:
        return {}
    frontiers = list(level.values())
    sizes = np.fromiter((len(f) for f in frontiers), dtype=np.int64, count=len(frontiers))
    nodes = np.concatenate(frontiers).astype(np.int64)
    owner = np.repeat(np.arange(len(paths)), sizes)
    uniq = sorted_unique(nodes)
    edges, origin, targets, fwd = graph.step(uniq, flt)
    keep = targets != start
    edges, origin, targets, fwd = edges[keep], origin[keep], targets[keep], fwd[keep]
    if not len(edges):
        return {}
    keys = move_keys(graph, edges, fwd)
    by_origin = np.argsort(origin, kind="stable")
    origin, keys, targets = origin[by_origin], keys[by_origin], targets[by_origin]
    # each (path, frontier node) takes the moves of its node
    lo = np.searchsorted(origin, nodes, side="left")
    count = np.searchsorted(origin, nodes, side="right") - lo
    total = int(count.sum())
    if not total:
        return {}
    move = spans(lo, count)
    path_of = np.repeat(owner, count)
    key_of, target_of = keys[move], targets[move]
    path_of, key_of, target_of = _distinct_moves(path_of, key_of, target_of, len(paths), len(graph.node_ids))
    # sorted by (path, hop, target): a new group starts where the path or the hop changes
    new_group = np.ones(len(path_of), dtype=bool)
    new_group[1:] = (path_of[1:] != path_of[:-1]) | (key_of[1:] != key_of[:-1])
    starts = np.flatnonzero(new_group)
    bounds = [*starts.tolist(), len(target_of)]
    hop_of = _hops(names)
    nxt: dict[RelationPath, np.ndarray] = {}
    for a, b, p, code in zip(
        bounds[:-1], bounds[1:], path_of[starts].tolist(), key_of[starts].tolist(), strict=True
    ):
        new = (*paths[p], hop_of(code))
        if out is not None:
            out.append(new)
        nxt[new] = target_of[a:b]
    return nxt


def _distinct_moves(
    path_of: np.ndarray, key_of: np.ndarray, target_of: np.ndarray, n_paths: int, n_nodes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (path, hop key, target) triples, sorted in that order. One sort of a combined
    integer when it fits in 63 bits (a level's moves number tens of thousands on a big graph: a
    three-key lexsort was a third of the walk), else a lexsort."""
    n_keys = int(key_of.max()) + 1 if len(key_of) else 1
    if n_paths * n_keys * max(n_nodes, 1) < 2**62:
        packed = sorted_unique((path_of * n_keys + key_of) * n_nodes + target_of)
        rest, target = np.divmod(packed, n_nodes)
        path, key = np.divmod(rest, n_keys)
        return path, key, target.astype(target_of.dtype, copy=False)
    order = np.lexsort((target_of, key_of, path_of))
    path_of, key_of, target_of = path_of[order], key_of[order], target_of[order]
    first = np.ones(len(path_of), dtype=bool)
    first[1:] = (
        (path_of[1:] != path_of[:-1]) | (key_of[1:] != key_of[:-1]) | (target_of[1:] != target_of[:-1])
    )
    return path_of[first], key_of[first], target_of[first]


def _hops(names: Sequence[str]) -> Callable[[int], Hop]:
    """The hop of each move key (relation code × 2 + forward), each built once per walk."""
    made: dict[int, Hop] = {}

    def hop(code: int) -> Hop:
        got = made.get(code)
        if got is None:
            got = made[code] = Hop(names[code // 2], bool(code % 2))
        return got

    return hop
