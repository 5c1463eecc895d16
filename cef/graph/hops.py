"""Which typed hops leave a set of nodes, without walking their edges.

Enumerating relation paths asks, for every partial path, which relations (and
directions) leave its frontier. Walking the frontier's edges costs as much as
the frontier's degree: the films of a popular genre have hundreds of thousands
of edges. :func:`hop_keys` answers from two bit masks per node (relations of
its outgoing and of its incoming edges), an OR over the frontier, and walks
edges only for the nodes next to the node whose moves do not count (the start
of the paths) and for the nodes whose edges a filter could tell apart: edges with a
validity window, superseded versions, edges to deleted nodes (the masks are
made from the edge arrays, so edges added since the last compaction count). Filters on confidence, scope or knowledge time, and graphs
with more than 64 relation types, walk every edge (:meth:`GraphIndex.step`).

A key is ``relation_code * 2 + forward`` (a bidirectional relation reads
forward both ways), as in :func:`cef.retrieve.relpaths.candidate_paths`.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cef.graph.filter import NEG_INF, POS_INF, EdgeFilter

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex

__all__ = ["MASK_MIN_FRONTIER", "hop_keys", "move_keys", "neighbours"]

#: frontiers smaller than this walk their edges (as cheap as reading masks)
MASK_MIN_FRONTIER = 4
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
    return np.unique(move_keys(g, edges, fwd))


def _bits_to_keys(bits: int, ok: np.ndarray, forward: np.ndarray) -> np.ndarray:
    codes = np.asarray([c for c in range(len(ok)) if bits >> c & 1 and ok[c]], dtype=np.int64)
    return codes * 2 + forward[codes].astype(np.int64) if len(codes) else codes


def neighbours(g: GraphIndex, node: int) -> np.ndarray:
    """Sorted positions of the nodes one live edge away from ``node`` (either direction)."""
    edges = np.asarray(g.incident_edges(node), dtype=np.int64)
    ends = np.concatenate([g.e_src.view[edges], g.e_dst.view[edges]]).astype(np.int64)
    return np.unique(ends[ends != node])


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
    finds. Frontier nodes next to ``exclude`` (``near``: :func:`neighbours` of it, computed when
    not given) are walked, so are nodes with edges a filter can tell apart; the others are read
    from their masks."""
    exact = (
        len(frontier) < MASK_MIN_FRONTIER
        or flt.min_confidence > 0
        or flt.known_at is not None
        or flt.scope_strict
    )
    masks = None if exact else _masks(g)
    if masks is None:
        return _keys_by_walking(g, frontier, flt, exclude)
    frontier = frontier[frontier < len(masks.walk)]
    walked = masks.walk[frontier]
    if exclude is not None:
        walked = walked | (frontier == exclude)  # its loops lead to itself
        if near is None:
            near = neighbours(g, exclude)
        if len(near):
            at = np.minimum(np.searchsorted(near, frontier), len(near) - 1)
            walked = walked | (near[at] == frontier)
    plain = frontier[~walked]
    out_bits = int(np.bitwise_or.reduce(masks.out_bits[plain])) if len(plain) else 0
    in_bits = int(np.bitwise_or.reduce(masks.in_bits[plain])) if len(plain) else 0
    n_rel = min(len(flt.forward_ok), len(flt.backward_ok), len(g._rel_bidir))
    keys = [
        _bits_to_keys(out_bits, flt.forward_ok[:n_rel], np.ones(n_rel, dtype=bool)),
        _bits_to_keys(in_bits, flt.backward_ok[:n_rel], g._rel_bidir[:n_rel]),
    ]
    if walked.any():
        keys.append(_keys_by_walking(g, frontier[walked], flt, exclude))
    return np.unique(np.concatenate(keys))
