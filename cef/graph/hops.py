"""Which typed hops leave a set of nodes, without walking their edges.

Enumerating relation paths asks, for every partial path, which relations (and
directions) leave its frontier. Walking the frontier's edges costs as much as
the frontier's degree: the films of a popular genre have hundreds of thousands
of edges. :func:`hop_keys` answers from two bit masks per node (relations of
its outgoing and of its incoming edges), an OR over the frontier, and walks
edges only for the nodes next to the node whose moves do not count (the start
of the paths) and for the nodes whose edges a filter could tell apart: edges with a
validity window, superseded versions, edges to deleted nodes (the masks are
made from the edge arrays, so edges added since the last compaction count). Filters on confidence,
scope, knowledge time or node labels, and graphs with more than 64 relation types, walk every edge
(:meth:`GraphIndex.step`). :func:`hop_keys_many` answers for all the frontiers of one level of
paths at once.

A key is ``relation_code * 2 + forward`` (a bidirectional relation reads
forward both ways), as in :func:`cef.retrieve.relpaths.candidate_paths`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cef.graph.arrays import sorted_unique, spans
from cef.graph.filter import NEG_INF, POS_INF, EdgeFilter

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex

__all__ = ["hop_keys", "hop_keys_many", "move_keys", "neighbours"]

_BITS = 64


@dataclass(frozen=True)
class _Masks:
    generation: int
    out_bits: np.ndarray  # uint64 per node: relations of its plain outgoing edges
    in_bits: np.ndarray  # uint64 per node: relations of its plain incoming edges
    walk: np.ndarray  # bool per node: some edge of the node needs the filter (walk it)


_cache: weakref.WeakKeyDictionary[GraphIndex, _Masks] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _build(g: GraphIndex) -> _Masks | None:
    n_rel = len(g.relations.names)
    if n_rel > _BITS:
        return None
    n_nodes = len(g.node_ids)
    n_edges = len(g.edge_ids)
    src = g.e_src.view[:n_edges].astype(np.int64)
    dst = g.e_dst.view[:n_edges].astype(np.int64)
    rel = g.e_rel.view[:n_edges].astype(np.uint64)
    alive = g.e_alive.view[:n_edges].astype(bool)
    node_alive = g.node_alive.view[:n_nodes].astype(bool)
    plain = alive & (g.e_from.view[:n_edges] == NEG_INF) & (g.e_to.view[:n_edges] == POS_INF)
    if g._has_tx_end:
        plain &= g.e_tx_end.view[:n_edges] == POS_INF
    plain &= node_alive[src] & node_alive[dst]
    walk = np.zeros(n_nodes, dtype=bool)
    odd = alive & ~plain  # edges a filter may tell apart: their nodes are walked
    walk[src[odd]] = True
    walk[dst[odd]] = True
    bit = np.left_shift(np.uint64(1), rel[plain])
    out_bits = np.zeros(n_nodes, dtype=np.uint64)
    in_bits = np.zeros(n_nodes, dtype=np.uint64)
    np.bitwise_or.at(out_bits, src[plain], bit)
    np.bitwise_or.at(in_bits, dst[plain], bit)
    return _Masks(g.generation, out_bits, in_bits, walk)


def _masks(g: GraphIndex) -> _Masks | None:
    with _lock:
        cur = _cache.get(g)
    if cur is not None and cur.generation == g.generation:
        return cur
    built = _build(g)
    if built is not None:
        with _lock:
            _cache[g] = built
    return built


def move_keys(g: GraphIndex, edges: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """The hop key of each move (edge walked ``forward`` or back); a bidirectional relation reads
    forward both ways."""
    codes = g.e_rel.view[edges].astype(np.int64)
    return codes * 2 + (forward | g._rel_bidir[codes]).astype(np.int64)


def _keys_by_walking(g: GraphIndex, frontier: np.ndarray, flt: EdgeFilter, exclude: int | None) -> np.ndarray:
    edges, _, targets, fwd = g.step(frontier, flt)
    if exclude is not None:
        keep = targets != exclude
        edges, fwd = edges[keep], fwd[keep]
    return sorted_unique(move_keys(g, edges, fwd))


def neighbours(g: GraphIndex, node: int) -> np.ndarray:
    """Sorted positions of the nodes one live edge away from ``node`` (either direction)."""
    edges = np.asarray(g.incident_edges(node), dtype=np.int64)
    ends = np.concatenate([g.e_src.view[edges], g.e_dst.view[edges]]).astype(np.int64)
    return sorted_unique(ends[ends != node])


def hop_keys(
    g: GraphIndex,
    frontier: np.ndarray,
    flt: EdgeFilter,
    *,
    exclude: int | None = None,
    near: np.ndarray | None = None,
) -> np.ndarray:
    """Sorted keys (``relation_code * 2 + forward``) of the hops ``flt`` allows out of
    ``frontier``, moves to ``exclude`` left out: exactly what walking every edge of the frontier
    finds (:func:`hop_keys_many` for one frontier)."""
    return hop_keys_many(g, [frontier], flt, exclude=exclude, near=near)[0]


def hop_keys_many(
    g: GraphIndex,
    frontiers: Sequence[np.ndarray],
    flt: EdgeFilter,
    *,
    exclude: int | None = None,
    near: np.ndarray | None = None,
) -> list[np.ndarray]:
    """:func:`hop_keys` of each frontier, in a few array passes over all of them (a level of
    candidate paths has dozens of small frontiers). Frontier nodes next to ``exclude`` (``near``:
    :func:`neighbours` of it, computed when not given) are walked, so are nodes with edges a filter
    can tell apart (one :meth:`GraphIndex.step` over them all); the others are read from their masks."""
    if not frontiers:
        return []
    exact = flt.min_confidence > 0 or flt.known_at is not None or flt.scope_strict or flt.label_ok is not None
    masks = None if exact else _masks(g)
    if masks is None:
        return [_keys_by_walking(g, f, flt, exclude) for f in frontiers]
    sizes = np.fromiter((len(f) for f in frontiers), dtype=np.int64, count=len(frontiers))
    nodes = np.concatenate([np.asarray(f, dtype=np.int64) for f in frontiers])
    owner = np.repeat(np.arange(len(frontiers)), sizes)
    inside = nodes < len(masks.walk)  # (a node added later changes the generation: new masks)
    nodes, owner = nodes[inside], owner[inside]
    walked = masks.walk[nodes]
    if exclude is not None:
        walked |= nodes == exclude  # its loops lead to itself
        if near is None:
            near = neighbours(g, exclude)
        if len(near):
            at = np.minimum(np.searchsorted(near, nodes), len(near) - 1)
            walked |= near[at] == nodes
    n_rel = min(len(flt.forward_ok), len(flt.backward_ok), len(g._rel_bidir))
    width = 2 * len(g.relations.names)
    has = np.zeros((len(frontiers), max(width, 2 * n_rel)), dtype=bool)
    plain = ~walked
    if plain.any():
        out_bits = np.zeros(len(frontiers), dtype=np.uint64)
        in_bits = np.zeros(len(frontiers), dtype=np.uint64)
        np.bitwise_or.at(out_bits, owner[plain], masks.out_bits[nodes[plain]])
        np.bitwise_or.at(in_bits, owner[plain], masks.in_bits[nodes[plain]])
        shifts = np.arange(n_rel, dtype=np.uint64)
        codes = np.arange(n_rel)
        has[:, codes * 2 + 1] |= ((out_bits[:, None] >> shifts) & np.uint64(1)).astype(bool) & flt.forward_ok[
            :n_rel
        ]
        back = codes * 2 + g._rel_bidir[:n_rel].astype(np.int64)  # a bidirectional relation reads forward
        has[:, back] |= ((in_bits[:, None] >> shifts) & np.uint64(1)).astype(bool) & flt.backward_ok[:n_rel]
    if walked.any():
        w_nodes, w_owner = nodes[walked], owner[walked]
        edges, origin, targets, fwd = g.step(sorted_unique(w_nodes), flt)
        if exclude is not None:
            keep = targets != exclude
            edges, origin, fwd = edges[keep], origin[keep], fwd[keep]
        keys = move_keys(g, edges, fwd)
        # (node, key) pairs, sorted by node: each walked frontier node takes its node's keys
        pair = sorted_unique(origin.astype(np.int64) * has.shape[1] + keys)
        p_node, p_key = pair // has.shape[1], pair % has.shape[1]
        lo = np.searchsorted(p_node, w_nodes, side="left")
        hi = np.searchsorted(p_node, w_nodes, side="right")
        count = hi - lo
        if count.sum():
            rows = np.repeat(w_owner, count)
            idx = spans(lo, count)
            has[rows, p_key[idx]] = True
    return [np.flatnonzero(row).astype(np.int64) for row in has]
