"""The in-memory graph index: compact arrays, CSR adjacency, incremental updates.

Nodes and edges are dense integer positions. Per-edge attributes live in
parallel numpy arrays; adjacency is a CSR pair (out and in) built over the
edges present at the last compaction, plus a small delta of edges added
since, merged into the CSR when it grows. Deletions flip an ``alive`` flag.
Traversal reads only these arrays; the record store is never touched.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from cef.graph.arrays import GrowArray, Interner
from cef.graph.filter import NEG_INF, POS_INF, SUPERSEDED_AT, EdgeFilter, ts, tx_end_ts
from cef.graph.journal import ChangeJournal
from cef.graph.journal import GraphChanges as GraphChanges  # re-exported: importers of the index use it
from cef.graph.traverse import GraphTraversal
from cef.model import Edge, Node, RelationSemantics, RelationType


class GraphIndex(ChangeJournal, GraphTraversal):
    """Compact in-memory property-graph index (structure only; records stay in the store)."""

    #: merge the delta into the CSR once it holds this share of the edges
    COMPACT_RATIO = 0.05
    COMPACT_MIN = 20_000

    def __init__(self) -> None:
        self.node_ids: list[str] = []
        self._node_pos: dict[str, int] = {}
        self.labels = Interner()
        self.scopes = Interner()
        self.node_label = GrowArray(np.int32)
        self.node_scope = GrowArray(np.int32, -1)
        self.node_alive = GrowArray(np.bool_, False)

        self.edge_ids: list[str] = []
        #: edge id -> position (see :attr:`_edge_pos`); None: not made yet (a graph read from a snapshot)
        self._edge_pos_map: dict[str, int] | None = {}
        self.relations = Interner()
        self.e_src = GrowArray(np.int32)
        self.e_dst = GrowArray(np.int32)
        self.e_rel = GrowArray(np.int32)
        self.e_weight = GrowArray(np.float32, 1.0)
        self.e_conf = GrowArray(np.float32, 1.0)
        self.e_from = GrowArray(np.float64, NEG_INF)
        self.e_to = GrowArray(np.float64, POS_INF)
        self.e_rec = GrowArray(np.float64, 0.0)
        self.e_tx_end = GrowArray(np.float64, POS_INF)  # SUPERSEDED_AT of superseded versions
        self._has_tx_end = False
        self.e_scope = GrowArray(np.int32, -1)
        self.e_alive = GrowArray(np.bool_, False)

        # relation metadata by relation code
        self.rel_types: dict[str, RelationType] = {}
        self._rel_bidir = np.zeros(0, dtype=np.bool_)
        self._rel_sem = np.zeros(0, dtype=np.int16)
        self._inverse_of: dict[str, str] = {}  # inverse name -> base name

        # adjacency: CSR over edges [0, _csr_edges) + delta lists
        self._out_ptr = np.zeros(1, dtype=np.int64)
        self._out_e = np.zeros(0, dtype=np.int32)
        self._in_ptr = np.zeros(1, dtype=np.int64)
        self._in_e = np.zeros(0, dtype=np.int32)
        self._csr_nodes = 0
        self._csr_edges = 0
        self._delta_out: dict[int, list[int]] = {}
        self._delta_in: dict[int, list[int]] = {}
        self._delta_count = 0
        self._live_edges = 0
        self._live_nodes = 0
        self.generation = 0  # bumps on every change (caches key on it)
        # what each recent change did, by the generation it ended on: see changes_since()
        self._journal: dict[int, tuple[int, str, tuple[int, ...], range]] = {}

    @property
    def _edge_pos(self) -> dict[str, int]:
        """Live edge id -> position, made on first use when the graph was read from a snapshot: queries
        address edges by position, and a big graph's millions of ids would take seconds of every open."""
        m = self._edge_pos_map
        if m is None:
            alive = self.e_alive.view
            if alive.all():
                m = dict(zip(self.edge_ids, range(len(self.edge_ids)), strict=True))
            else:
                live = np.flatnonzero(alive).tolist()
                m = dict(zip(itertools.compress(self.edge_ids, alive.tolist()), live, strict=True))
            self._edge_pos_map = m
        return m

    # ------------------------------------------------------------------ sizes
    @property
    def node_count(self) -> int:
        return self._live_nodes

    @property
    def edge_count(self) -> int:
        return self._live_edges

    # --------------------------------------------------------------- relations
    def set_relation_types(self, types: Iterable[RelationType]) -> None:
        since = self.generation
        for rt in types:
            self.rel_types[rt.name] = rt
            self.relations.code(rt.name)
            if rt.inverse:
                self._inverse_of[rt.inverse] = rt.name
        n = len(self.relations)
        sems = list(RelationSemantics)
        self._rel_bidir = np.zeros(n, dtype=np.bool_)
        self._rel_sem = np.full(n, sems.index(RelationSemantics.CUSTOM), dtype=np.int16)
        for name, code in ((nm, self.relations.code(nm)) for nm in self.relations.names):
            known = self.rel_types.get(name)
            if known is not None:
                self._rel_bidir[code] = known.bidirectional
                self._rel_sem[code] = sems.index(known.semantics)
        self.generation += 1
        self._note(since, "relations")

    def relation_name(self, edge: int, forward: bool) -> str:
        """The name of walking ``edge`` in a direction (inverse name when walked backward)."""
        name = self.relations.names[int(self.e_rel[edge])]
        if forward:
            return name
        rt = self.rel_types.get(name)
        if rt is not None and (rt.bidirectional or rt.inverse):
            return rt.inverse or name
        return name

    def known_relation(self, name: str) -> bool:
        return name in self.rel_types or name in self._inverse_of

    def edge_filter(
        self,
        *,
        relation_types: Sequence[str] | None = None,
        semantics: Sequence[RelationSemantics] | None = None,
        direction: str = "both",
        min_confidence: float = 0.0,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        scope: str | None = None,
        exclude_relations: Collection[str] = (),
        exclude_labels: Collection[str] = (),
    ) -> EdgeFilter:
        """What a walk may follow: ``relation_types`` (all when empty; an inverse name walks its base
        backwards) in ``direction``, of ``semantics``, at least ``min_confidence``, valid at
        ``valid_at``, as known at ``known_at`` (superseded versions skipped when None), inside
        ``scope`` (and unscoped records); never ``exclude_relations`` nor into ``exclude_labels`` nodes."""
        n = len(self.relations)
        names = self.relations.names
        wanted = set(relation_types or ())
        out_dir = direction in ("out", "both")
        in_dir = direction in ("in", "both")
        fwd = np.zeros(n, dtype=np.bool_)
        bwd = np.zeros(n, dtype=np.bool_)
        sems = list(RelationSemantics)
        sem_ok = {sems.index(s) for s in semantics} if semantics else None
        for code in range(n):
            name = names[code]
            rt = self.rel_types.get(name)
            inv = rt.inverse if rt else None
            bidir = bool(rt and rt.bidirectional)
            named = not wanted or name in wanted
            inv_named = inv is not None and inv in wanted
            f = (out_dir and named) or (in_dir and inv_named) or (bidir and named)
            b = (in_dir and named) or (out_dir and inv_named) or (bidir and named)
            if sem_ok is not None and int(self._rel_sem[code]) not in sem_ok:
                f = b = False
            if name in exclude_relations:
                f = b = False
            fwd[code] = f
            bwd[code] = b
        scope_code = None
        if scope is not None:
            scope_code = self.scopes.get(scope)
            if scope_code is None:
                scope_code = -2  # a scope nobody has: only unscoped data matches
        return EdgeFilter(
            forward_ok=fwd,
            backward_ok=bwd,
            min_confidence=min_confidence,
            valid_at=valid_at.timestamp() if valid_at else None,
            known_at=known_at.timestamp() if known_at else None,
            scope=scope_code,
            scope_strict=scope is not None,
            label_ok=(
                np.array([name not in exclude_labels for name in self.labels.names], dtype=np.bool_)
                if exclude_labels
                else None
            ),
        )

    # ------------------------------------------------------------------ nodes
    def pos(self, node_id: str) -> int | None:
        p = self._node_pos.get(node_id)
        return p

    def has_node(self, node_id: str) -> bool:
        return node_id in self._node_pos

    def sees(self, node_id: str, scope: str | None) -> bool:
        """Whether node ``node_id`` exists and a reader of ``scope`` sees it: its own scope's and
        unscoped (shared) nodes; every node when ``scope`` is None."""
        pos = self._node_pos.get(node_id)
        if pos is None:
            return False
        if scope is None:
            return True
        code = int(self.node_scope[pos])
        return code == -1 or self.scopes.names[code] == scope

    def add_nodes(self, nodes: Sequence[Node]) -> None:
        """Add nodes, or update label/scope of nodes already present."""
        since, first_new = self.generation, len(self.node_ids)
        new_labels, new_scopes = [], []
        for node in nodes:
            label = self.labels.code(node.label)
            scope = self.scopes.code(node.scope) if node.scope is not None else -1
            p = self._node_pos.get(node.id)
            if p is not None:
                self.node_label[p] = label
                self.node_scope[p] = scope
                if not self.node_alive[p]:
                    self.node_alive[p] = True
                    self._live_nodes += 1
                continue
            self._node_pos[node.id] = len(self.node_ids)
            self.node_ids.append(node.id)
            new_labels.append(label)
            new_scopes.append(scope)
        if new_labels:
            self.node_label.extend(new_labels)
            self.node_scope.extend(new_scopes)
            self.node_alive.extend(np.ones(len(new_labels), dtype=np.bool_))
            self._live_nodes += len(new_labels)
        self.generation += 1
        pos = self._node_pos
        updated = tuple(p for n in nodes if (p := pos[n.id]) < first_new)
        self._note(since, "nodes", updated, range(first_new, len(self.node_ids)))

    def add_node_arrays(
        self, ids: Sequence[str], labels: Sequence[str], scopes: Sequence[str | None]
    ) -> None:
        """Bulk load (open/reload): ids must be new."""
        start = len(self.node_ids)
        self.node_ids.extend(ids)
        self._node_pos.update(zip(ids, range(start, start + len(ids)), strict=True))
        self.node_label.extend(self._codes(self.labels, labels))
        self.node_scope.extend(self._codes(self.scopes, scopes))
        self.node_alive.extend(np.ones(len(ids), dtype=np.bool_))
        self._live_nodes += len(ids)
        self.generation += 1

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        """Remove nodes (their edges must be removed by the caller first or with them)."""
        for nid in node_ids:
            p = self._node_pos.pop(nid, None)
            if p is None:
                continue
            if self.node_alive[p]:
                self._live_nodes -= 1
            self.node_alive[p] = False
            self.node_ids[p] = ""
        self.generation += 1
        self._note(self.generation - 1, "removed")

    def nodes_with_label(self, label: str) -> np.ndarray:
        code = self.labels.get(label)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero((self.node_label.view == code) & self.node_alive.view)

    def visible_nodes(
        self, scopes: Collection[str] | None, positions: np.ndarray | None = None
    ) -> np.ndarray:
        """A mask over ``positions`` (every node when None): live nodes of one of ``scopes`` or of no
        scope (every live node when ``scopes`` is None) — the node side of an EdgeFilter's scope."""
        pos = slice(0, len(self.node_ids)) if positions is None else positions
        mask: np.ndarray = self.node_alive.view[pos].copy()
        if scopes is not None:
            codes = [-1, *(c for s in scopes if (c := self.scopes.get(s)) is not None)]
            mask &= np.isin(self.node_scope.view[pos], codes)
        return mask

    def label_of(self, pos: int) -> str:
        return self.labels.names[int(self.node_label[pos])]

    # ------------------------------------------------------------------ edges
    def edge_pos(self, edge_id: str) -> int | None:
        return self._edge_pos.get(edge_id)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        if not edges:
            return
        since, first_new = self.generation, len(self.edge_ids)
        rows = []
        updated = []
        for e in edges:
            if e.id in self._edge_pos:
                updated.append(self._edge_pos[e.id])
                self._update_edge(updated[-1], e)
                continue
            rows.append(e)
        if rows:
            self._add_edge_rows(rows)
        else:
            self.generation += 1
        self._note(since, "edges", tuple(updated), range(first_new, len(self.edge_ids)))

    def _add_edge_rows(self, rows: list[Edge]) -> None:
        self._append_edges(
            [e.id for e in rows],
            [self._node_pos[e.source] for e in rows],
            [self._node_pos[e.target] for e in rows],
            [e.relation_type for e in rows],
            [e.weight for e in rows],
            [e.confidence for e in rows],
            [ts(e.valid_from, NEG_INF) for e in rows],
            [ts(e.valid_to, POS_INF) for e in rows],
            [e.recorded_at.timestamp() for e in rows],
            [e.scope for e in rows],
            [tx_end_ts(e.properties.get(SUPERSEDED_AT)) for e in rows],
        )

    def add_edge_arrays(
        self,
        ids: Sequence[str],
        sources: Sequence[str],
        targets: Sequence[str],
        relations: Sequence[str],
        weights: Sequence[float],
        confidences: Sequence[float],
        valid_from: Sequence[float],
        valid_to: Sequence[float],
        recorded_at: Sequence[float],
        scopes: Sequence[str | None],
        tx_end: Sequence[float] | None = None,
    ) -> None:
        """Bulk load with node ids; endpoints must exist. ``tx_end``: epoch of SUPERSEDED_AT (inf: none)."""
        pos = self._node_pos
        self._append_edges(
            ids,
            [pos[s] for s in sources],
            [pos[t] for t in targets],
            relations,
            weights,
            confidences,
            valid_from,
            valid_to,
            recorded_at,
            scopes,
            tx_end,
        )

    #: rows converted to arrays at a time by :meth:`load_edge_rows` (bounds the transient Python objects)
    LOAD_BLOCK = 200_000

    def load_edge_rows(self, rows: Iterable[Sequence[Any]]) -> int:
        """Bulk load (open/reload) from record-store edge rows; returns how many rows were skipped.

        A row is ``(id, relation, source id, target id, weight, confidence, valid_from,
        valid_to, recorded_at, scope[, superseded_at])`` with ``None`` for open validity
        bounds. Rows are converted to arrays a block at a time, so a graph of millions
        of edges never exists as millions of Python tuples at once. A row whose endpoint
        is not loaded (it was committed after the node scan; the change feed replays it)
        is skipped. The CSR is built once, at the end.
        """
        it = iter(rows)
        pos_get = self._node_pos.get
        skipped = 0
        while True:
            block = list(itertools.islice(it, self.LOAD_BLOCK))
            if not block:
                break
            cols: list[Sequence[Any]] = list(zip(*block, strict=False))
            del block
            n = len(cols[0])
            src = np.fromiter(map(pos_get, cols[2], itertools.repeat(-1)), dtype=np.int64, count=n)
            dst = np.fromiter(map(pos_get, cols[3], itertools.repeat(-1)), dtype=np.int64, count=n)
            ok = (src >= 0) & (dst >= 0)
            if not ok.all():
                keep = ok.tolist()
                cols = [list(itertools.compress(c, keep)) for c in cols]
                src, dst = src[ok], dst[ok]
                skipped += n - len(src)
                if not len(src):
                    continue
            valid_from = np.array(cols[6], dtype=np.float64)  # None -> nan
            valid_from[np.isnan(valid_from)] = NEG_INF
            valid_to = np.array(cols[7], dtype=np.float64)
            valid_to[np.isnan(valid_to)] = POS_INF
            tx_end = None
            if len(cols) > 10 and any(v is not None for v in cols[10]):
                tx_end = np.array([tx_end_ts(v) for v in cols[10]], dtype=np.float64)
            self._append_edges(
                cols[0],
                src,
                dst,
                cols[1],
                np.array(cols[4], dtype=np.float32),
                np.array(cols[5], dtype=np.float32),
                valid_from,
                valid_to,
                np.array(cols[8], dtype=np.float64),
                cols[9],
                tx_end,
                compact=False,
            )
        self.compact()
        return skipped

    def _codes(self, interner: Interner, names: Sequence[str | None]) -> np.ndarray:
        """Interned codes of ``names`` (``None`` → -1), computed with one dict lookup per name."""
        distinct = set(names)
        table: dict[str | None, int] = {name: interner.code(name) for name in distinct if name is not None}
        table[None] = -1
        return np.fromiter(map(table.__getitem__, names), dtype=np.int32, count=len(names))

    def _append_edges(
        self,
        ids: Sequence[str],
        src: Sequence[int] | np.ndarray,
        dst: Sequence[int] | np.ndarray,
        relations: Sequence[str],
        weights: Sequence[float] | np.ndarray,
        confidences: Sequence[float] | np.ndarray,
        valid_from: Sequence[float] | np.ndarray,
        valid_to: Sequence[float] | np.ndarray,
        recorded_at: Sequence[float] | np.ndarray,
        scopes: Sequence[str | None],
        tx_end: Sequence[float] | np.ndarray | None = None,
        *,
        compact: bool = True,
    ) -> None:
        start = len(self.edge_ids)
        n = len(ids)
        known = len(self.relations)
        rel_codes = self._codes(self.relations, relations)
        if len(self.relations) != known:
            self.set_relation_types([])  # extend relation masks for new names
        self.edge_ids.extend(ids)
        self._edge_pos.update(zip(ids, range(start, start + n), strict=True))
        self.e_src.extend(src)
        self.e_dst.extend(dst)
        self.e_rel.extend(rel_codes)
        self.e_weight.extend(weights)
        self.e_conf.extend(confidences)
        self.e_from.extend(valid_from)
        self.e_to.extend(valid_to)
        self.e_rec.extend(recorded_at)
        if tx_end is not None and bool(np.any(np.asarray(tx_end, dtype=np.float64) != POS_INF)):
            self.e_tx_end.extend(tx_end)
            self._has_tx_end = True
        else:
            self.e_tx_end.extend(np.full(n, POS_INF))
        self.e_scope.extend(self._codes(self.scopes, scopes))
        self.e_alive.extend(np.ones(n, dtype=np.bool_))
        self._live_edges += n
        if not compact:
            self._delta_count += n
        elif start == 0:
            self.compact()
        elif n > self.COMPACT_MIN:
            self._merge_into_csr(start, n)
        else:
            self._delta_count += n
            for i in range(start, start + n):
                self._delta_out.setdefault(int(self.e_src[i]), []).append(i)
                self._delta_in.setdefault(int(self.e_dst[i]), []).append(i)
            if self._delta_count > max(self.COMPACT_MIN, self.COMPACT_RATIO * len(self.edge_ids)):
                self.compact()
        self.generation += 1

    def _update_edge(self, p: int, e: Edge) -> None:
        self.e_weight[p] = e.weight
        self.e_conf[p] = e.confidence
        self.e_from[p] = ts(e.valid_from, NEG_INF)
        self.e_to[p] = ts(e.valid_to, POS_INF)
        self.e_rec[p] = e.recorded_at.timestamp()
        self.e_tx_end[p] = end = tx_end_ts(e.properties.get(SUPERSEDED_AT))
        self._has_tx_end = self._has_tx_end or end != POS_INF
        self.e_scope[p] = self.scopes.code(e.scope) if e.scope is not None else -1

    def update_edges(self, edges: Sequence[Edge]) -> None:
        touched = []
        for e in edges:
            p = self._edge_pos.get(e.id)
            if p is not None:
                self._update_edge(p, e)
                touched.append(p)
        self.generation += 1
        self._note(self.generation - 1, "edges", tuple(touched))

    def remove_edges(self, edge_ids: Iterable[str]) -> None:
        for eid in edge_ids:
            p = self._edge_pos.pop(eid, None)
            if p is None:
                continue
            if self.e_alive[p]:
                self._live_edges -= 1
            self.e_alive[p] = False
        self.generation += 1
        self._note(self.generation - 1, "removed")

    def incident_edges(self, node_pos: int) -> list[int]:
        """Live edge positions touching a node (either direction)."""
        out, _ = self._gather(np.array([node_pos]), outgoing=True)
        inc, _ = self._gather(np.array([node_pos]), outgoing=False)
        both = np.concatenate([out, inc])
        return [int(e) for e in np.unique(both) if self.e_alive[e]]

    #: a merge rebuilds the CSR instead once this share of its entries are deleted edges
    GARBAGE_RATIO = 0.25

    def _merge_into_csr(self, start: int, n: int) -> None:
        """Insert edges [start, start + n) into the CSR without re-sorting the edges already in it.

        A big batch costs a sort of the batch plus one pass over the CSR (instead of a sort of
        every edge); deleted edges stay in the CSR as garbage (traversal checks ``e_alive``)
        until a full :meth:`compact`.
        """
        garbage = len(self._out_e) + self._delta_count - (self._live_edges - n)
        if self._delta_count or garbage > self.GARBAGE_RATIO * max(1, len(self._out_e)):
            self._delta_count += n
            self.compact()
            return
        n_nodes = len(self.node_ids)
        new = np.arange(start, start + n, dtype=np.int32)
        self._out_ptr, self._out_e = _csr_insert(
            self._out_ptr, self._out_e, self.e_src.view[start:], new, n_nodes
        )
        self._in_ptr, self._in_e = _csr_insert(
            self._in_ptr, self._in_e, self.e_dst.view[start:], new, n_nodes
        )
        self._csr_nodes = n_nodes
        self._csr_edges = start + n

    def compact(self) -> None:
        """Rebuild the CSR over every edge and empty the delta."""
        since = self.generation
        n_nodes = len(self.node_ids)
        m = len(self.edge_ids)
        alive = self.e_alive.view
        idx = np.flatnonzero(alive).astype(np.int32)
        src = self.e_src.view[idx]
        dst = self.e_dst.view[idx]
        order = np.argsort(src, kind="stable")
        self._out_e = idx[order]
        self._out_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n_nodes), out=self._out_ptr[1:])
        order = np.argsort(dst, kind="stable")
        self._in_e = idx[order]
        self._in_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=n_nodes), out=self._in_ptr[1:])
        self._csr_nodes = n_nodes
        self._csr_edges = m
        self._delta_out.clear()
        self._delta_in.clear()
        self._delta_count = 0
        self.generation += 1
        self._note(since, "compact")

    # -------------------------------------------------------------- traversal


def _csr_insert(
    ptr: np.ndarray, col: np.ndarray, owners: np.ndarray, edges: np.ndarray, n_nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(ptr, col)`` with ``edges`` (owned by ``owners``) appended to their owners' runs, in order."""
    if len(ptr) - 1 < n_nodes:  # nodes added since the CSR was built own no entries yet
        ptr = np.concatenate([ptr, np.full(n_nodes - (len(ptr) - 1), ptr[-1], dtype=ptr.dtype)])
    order = np.argsort(owners, kind="stable")
    owned = owners[order]
    col = np.insert(col, ptr[owned + 1], edges[order])
    grown = np.zeros(n_nodes + 1, dtype=ptr.dtype)
    np.cumsum(np.bincount(owned, minlength=n_nodes), out=grown[1:])
    return ptr + grown, col
