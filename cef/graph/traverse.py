"""Traversal over the graph index's arrays: one step, bounded expansion, shortest paths, PageRank.

:class:`GraphTraversal` is mixed into :class:`~cef.graph.index.GraphIndex`; it
reads the index's arrays and never touches the record store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cef.graph.arrays import GrowArray, sorted_unique, spans
from cef.graph.filter import POS_INF, EdgeFilter, Expansion

__all__ = ["GraphTraversal"]


class GraphTraversal:
    """Traversal methods over the arrays a :class:`~cef.graph.index.GraphIndex` keeps."""

    node_ids: list[str]
    node_alive: GrowArray
    node_scope: GrowArray
    node_label: GrowArray
    e_src: GrowArray
    e_dst: GrowArray
    e_rel: GrowArray
    e_weight: GrowArray
    e_conf: GrowArray
    e_from: GrowArray
    e_to: GrowArray
    e_rec: GrowArray
    e_tx_end: GrowArray
    e_scope: GrowArray
    e_alive: GrowArray
    _has_tx_end: bool
    _out_ptr: np.ndarray
    _out_e: np.ndarray
    _in_ptr: np.ndarray
    _in_e: np.ndarray
    _csr_nodes: int
    _delta_out: dict[int, list[int]]
    _delta_in: dict[int, list[int]]

    def _gather(self, frontier: np.ndarray, outgoing: bool) -> tuple[np.ndarray, np.ndarray]:
        """Edge positions around ``frontier`` nodes and the frontier node of each."""
        ptr, col = (self._out_ptr, self._out_e) if outgoing else (self._in_ptr, self._in_e)
        f = frontier[frontier < self._csr_nodes]
        starts = ptr[f]
        counts = ptr[f + 1] - starts
        total = int(counts.sum())
        if total:
            offs = spans(starts, counts)
            edges = col[offs]
            owners = np.repeat(f, counts)
        else:
            edges = np.zeros(0, dtype=np.int32)
            owners = np.zeros(0, dtype=frontier.dtype)
        delta = self._delta_out if outgoing else self._delta_in
        if delta:
            extra_e: list[int] = []
            extra_o: list[int] = []
            for node in frontier.tolist():
                lst = delta.get(node)
                if lst:
                    extra_e.extend(lst)
                    extra_o.extend([node] * len(lst))
            if extra_e:
                edges = np.concatenate([edges, np.asarray(extra_e, dtype=np.int32)])
                owners = np.concatenate([owners, np.asarray(extra_o, dtype=owners.dtype)])
        return edges, owners

    def _edge_ok(self, edges: np.ndarray, mask: np.ndarray, flt: EdgeFilter) -> np.ndarray:
        ok = self.e_alive.view[edges] & mask[self.e_rel.view[edges]]
        if flt.min_confidence > 0:
            ok &= self.e_conf.view[edges] >= flt.min_confidence
        if flt.valid_at is not None:
            ok &= (self.e_from.view[edges] <= flt.valid_at) & (flt.valid_at < self.e_to.view[edges])
        if flt.known_at is not None:
            ok &= self.e_rec.view[edges] <= flt.known_at
            if self._has_tx_end:  # a version superseded by T is no longer what we knew at T
                ok &= flt.known_at < self.e_tx_end.view[edges]
        elif self._has_tx_end:  # current knowledge: superseded versions are history
            ok &= self.e_tx_end.view[edges] == POS_INF
        if flt.scope_strict:
            sc = self.e_scope.view[edges]
            ok &= (sc == -1) | (sc == flt.scope)
        return ok

    def step(
        self, frontier: np.ndarray, flt: EdgeFilter
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One hop from ``frontier``: (edge, from-node, to-node, forward) arrays of allowed moves."""
        e_out, o_out = self._gather(frontier, outgoing=True)
        keep = self._edge_ok(e_out, flt.forward_ok, flt)
        e_out, o_out = e_out[keep], o_out[keep]
        e_in, o_in = self._gather(frontier, outgoing=False)
        keep = self._edge_ok(e_in, flt.backward_ok, flt)
        e_in, o_in = e_in[keep], o_in[keep]
        edges = np.concatenate([e_out, e_in])
        owners = np.concatenate([o_out, o_in]).astype(np.int64)
        targets = np.concatenate([self.e_dst.view[e_out], self.e_src.view[e_in]]).astype(np.int64)
        forward = np.concatenate([np.ones(len(e_out), dtype=np.bool_), np.zeros(len(e_in), dtype=np.bool_)])
        alive = self.node_alive.view[targets]
        if flt.scope_strict:
            sc = self.node_scope.view[targets]
            alive &= (sc == -1) | (sc == flt.scope)
        if flt.label_ok is not None:
            alive &= flt.label_ok[self.node_label.view[targets]]
        return edges[alive], owners[alive], targets[alive], forward[alive]

    def allowed_edges(self, flt: EdgeFilter) -> np.ndarray:
        """Positions (ascending) of every edge ``flt`` lets a walk follow in some direction (the
        edge alone: relation, confidence, time, knowledge, scope; its end nodes are not checked)."""
        edges = np.arange(len(self.e_alive.view), dtype=np.int64)
        return edges[self._edge_ok(edges, flt.forward_ok | flt.backward_ok, flt)]

    def edges_among(self, nodes: Sequence[int], flt: EdgeFilter) -> np.ndarray:
        """Positions (ascending, each once) of the allowed edges whose two ends are both in ``nodes``."""
        if not len(nodes):
            return np.zeros(0, dtype=np.int64)
        arr = sorted_unique(np.asarray(nodes, dtype=np.int64))
        edges, _, targets, _ = self.step(arr, flt)
        return sorted_unique(edges[np.isin(targets, arr)]).astype(np.int64)

    def expand(
        self,
        seeds: Sequence[int],
        depth: int,
        flt: EdgeFilter,
        *,
        max_nodes: int = 10_000,
        min_path_confidence: float = 0.0,
        on_hop: Callable[[], None] | None = None,
        seed_rank: Sequence[float] | None = None,
    ) -> Expansion:
        """Breadth-first expansion: each node reached once, by its best-confidence shortest path.

        Equally confident paths go to the better-ranked seed's (``seed_rank``, one per seed, lower
        first; without it all seeds rank alike), then to the lowest edge position.
        ``on_hop`` is called before each hop (a caller's deadline check raises from it to stop)."""
        seed_arr = sorted_unique(np.asarray(seeds, dtype=np.int64))
        seed_arr = seed_arr[self.node_alive.view[seed_arr]] if len(seed_arr) else seed_arr
        rank_of: dict[int, float] = {}
        if seed_rank is not None:
            for seed, r in zip(seeds, seed_rank, strict=True):
                rank_of[int(seed)] = min(float(r), rank_of.get(int(seed), float(r)))
        frontier_rank = np.array([rank_of.get(s, 0.0) for s in seed_arr.tolist()], dtype=np.float64)
        nodes = [seed_arr]
        depths = [np.zeros(len(seed_arr), dtype=np.int16)]
        parents = [np.full(len(seed_arr), -1, dtype=np.int64)]
        pedges = [np.full(len(seed_arr), -1, dtype=np.int64)]
        fwds = [np.ones(len(seed_arr), dtype=np.bool_)]
        confs = [np.ones(len(seed_arr), dtype=np.float64)]
        # a flag per node: zero pages are mapped lazily, so only the pages the walk touches cost anything
        seen = np.zeros(len(self.node_ids), dtype=np.bool_)
        seen[seed_arr] = True
        count = len(seed_arr)
        frontier = seed_arr
        frontier_conf = confs[0]
        truncated = False
        for d in range(1, depth + 1):
            if not len(frontier) or count >= max_nodes:
                truncated = truncated or (count >= max_nodes and len(frontier) > 0)
                break
            if on_hop is not None:
                on_hop()
            edges, owners, targets, forward = self.step(frontier, flt)
            if not len(edges):
                break
            by_node = np.argsort(frontier, kind="stable")
            owner_at = by_node[np.searchsorted(frontier[by_node], owners)]
            owner_rank = frontier_rank[owner_at]
            pconf = frontier_conf[owner_at] * self.e_conf.view[edges]
            keep = (
                pconf >= min_path_confidence if min_path_confidence > 0 else np.ones(len(edges), dtype=bool)
            )
            keep &= ~seen[targets]
            edges, owners, targets, forward, pconf, owner_rank = (
                edges[keep],
                owners[keep],
                targets[keep],
                forward[keep],
                pconf[keep],
                owner_rank[keep],
            )
            if not len(edges):
                break
            order = np.lexsort((edges, owner_rank, -pconf))  # best confidence, seed rank, then edge
            edges, owners, targets, forward, pconf, owner_rank = (
                edges[order],
                owners[order],
                targets[order],
                forward[order],
                pconf[order],
                owner_rank[order],
            )
            _, first = np.unique(targets, return_index=True)
            first.sort()  # keep best-confidence order
            sel = first
            if count + len(sel) > max_nodes:
                sel = sel[: max_nodes - count]
                truncated = True
            t = targets[sel]
            nodes.append(t)
            depths.append(np.full(len(t), d, dtype=np.int16))
            parents.append(owners[sel])
            pedges.append(edges[sel].astype(np.int64))
            fwds.append(forward[sel])
            confs.append(pconf[sel])
            seen[t] = True
            count += len(t)
            frontier = t
            frontier_conf = pconf[sel]
            frontier_rank = owner_rank[sel]
        return Expansion(
            nodes=np.concatenate(nodes),
            depth=np.concatenate(depths),
            parent=np.concatenate(parents),
            parent_edge=np.concatenate(pedges),
            forward=np.concatenate(fwds),
            confidence=np.concatenate(confs),
            truncated=truncated,
        )

    def shortest_path(
        self, source: int, target: int, flt: EdgeFilter, *, weighted: bool = True, max_depth: int = 12
    ) -> tuple[list[int], list[int], list[bool], float] | None:
        """Dijkstra with cost 1/weight (or hop count): (nodes, edges, forward flags, cost)."""
        import heapq

        if source == target:
            return [source], [], [], 0.0
        dist: dict[int, float] = {source: 0.0}
        hops: dict[int, int] = {source: 0}
        prev: dict[int, tuple[int, int, bool]] = {}
        heap: list[tuple[float, int]] = [(0.0, source)]
        done: set[int] = set()
        while heap:
            d, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            if u == target:
                break
            if hops[u] >= max_depth:
                continue
            edges, _, targets, forward = self.step(np.array([u], dtype=np.int64), flt)
            costs = (1.0 / self.e_weight.view[edges]) if weighted else np.ones(len(edges))
            for e, v, f, c in zip(
                edges.tolist(), targets.tolist(), forward.tolist(), costs.tolist(), strict=True
            ):
                nd = d + c
                if v not in done and nd < dist.get(v, POS_INF):
                    dist[v] = nd
                    hops[v] = hops[u] + 1
                    prev[v] = (u, e, f)
                    heapq.heappush(heap, (nd, v))
        if target not in done:
            return None
        nodes, edges_out, fwd = [target], [], []
        cur = target
        while cur != source:
            u, e, f = prev[cur]
            nodes.append(u)
            edges_out.append(e)
            fwd.append(f)
            cur = u
        nodes.reverse()
        edges_out.reverse()
        fwd.reverse()
        return nodes, edges_out, fwd, dist[target]

    def adjacency(self, flt: EdgeFilter | None = None, *, weighted: bool = True) -> Any:
        """A scipy CSR matrix (nodes × nodes) of the allowed moves (both directions as allowed)."""
        from scipy import sparse

        n = len(self.node_ids)
        alive = np.flatnonzero(self.e_alive.view)
        src = self.e_src.view[alive].astype(np.int64)
        dst = self.e_dst.view[alive].astype(np.int64)
        w = (self.e_weight.view[alive] * self.e_conf.view[alive]).astype(np.float64) if weighted else None
        if flt is None:
            rows = np.concatenate([src, dst])
            cols = np.concatenate([dst, src])
            vals = np.concatenate([w, w]) if w is not None else np.ones(len(rows))
        else:
            fwd = self._edge_ok(alive.astype(np.int32), flt.forward_ok, flt)
            bwd = self._edge_ok(alive.astype(np.int32), flt.backward_ok, flt)
            rows = np.concatenate([src[fwd], dst[bwd]])
            cols = np.concatenate([dst[fwd], src[bwd]])
            vals = np.concatenate([w[fwd], w[bwd]]) if w is not None else np.ones(len(rows))
        return sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))

    def personalized_pagerank(
        self,
        seeds: dict[int, float],
        *,
        flt: EdgeFilter | None = None,
        damping: float = 0.5,
        iterations: int = 30,
        tol: float = 1e-8,
        matrix: Any = None,
    ) -> np.ndarray:
        """Personalized PageRank from weighted seeds over the (filtered) graph; returns a score per node."""
        n = len(self.node_ids)
        if n == 0 or not seeds:
            return np.zeros(n)
        a = matrix if matrix is not None else self.adjacency(flt)
        out = np.asarray(a.sum(axis=1)).ravel()
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        p = np.zeros(n)
        for k, v in seeds.items():
            p[k] += v
        total = p.sum()
        if total <= 0:
            return np.zeros(n)
        p /= total
        at = a.T.tocsr()
        r = p.copy()
        for _ in range(iterations):
            nxt = (1 - damping) * p + damping * (at @ (r * inv))
            dangling = r[out == 0].sum()
            nxt += damping * dangling * p
            if np.abs(nxt - r).sum() < tol:
                r = nxt
                break
            r = nxt
        return r
