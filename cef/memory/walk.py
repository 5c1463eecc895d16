"""``retrieve_context`` stages 2 and 3: anchors (names, the scope's own node, vectors, passages)
and best-first expansion from them, filtered by scope and time.

Every hop is the graph index's :meth:`~cef.graph.index.GraphIndex.step` under the query's
:class:`~cef.graph.filter.EdgeFilter` (valid and known time, scope), and the facts among the
reached nodes are :meth:`~cef.graph.index.GraphIndex.edges_among` — the same walks retrieval
and the graph context provider use. The order is the memory's own: a priority queue steered by
the question (named relations and types, the neighbour's likeness to the question), which a
breadth-first ``expand`` cannot give, so the walk drives ``step`` itself.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from cef.memory.constraints import Reached, Run
from cef.model import in_scope
from cef.retrieve.anchors import node_vector_hits, node_visible
from cef.retrieve.search import search_visible
from cef.schema.kinds import BELIEF_RELATIONS, NodeKind

__all__ = ["edges_among", "expand", "find_anchors", "relation_boosts"]

#: priority kept per hop away from an anchor (before edge confidence and relevance)
HOP_DECAY = 0.7

#: a relation the question does not name keeps this share of the priority (named: up to 1)
UNNAMED_RELATION = 0.5

#: a node of a type the question does not name keeps this share (named: 1)
UNNAMED_TYPE = 0.8

#: neighbour priority × clip(SIM_BASE + SIM_SLOPE × cosine(question, neighbour), SIM_BASE, 1)
SIM_BASE = 0.4

SIM_SLOPE = 1.2

#: most neighbours of one node offered to the queue (hubs)
FANOUT = 48

#: nodes taken from the queue and expanded together
EXPAND_BATCH = 8

#: a node-vector match below this cosine is not an anchor
MIN_VECTOR = 0.3


# ----------------------------------------------------------------- anchors
def find_anchors(run: Run) -> list[Reached]:
    memory = run.memory
    st = memory.kb.state
    g = st.graph
    reg = memory.registry
    found: dict[int, Reached] = {}

    def add(node_id: str, score: float, how: str) -> None:
        pos = g.pos(node_id)
        if pos is None or not node_visible(g, pos, run.scope):
            return
        kind = reg.kind_of(g.label_of(pos))
        if kind in (NodeKind.OBSERVATION, NodeKind.BELIEF) and how != "name":
            return
        cur = found.get(pos)
        if cur is None or score > cur.priority:
            found[pos] = Reached(pos=pos, priority=score, depth=0, anchor_how=how)

    hinted: set[str] = set()
    for u in run.understandings:
        hinted.update(u.type_hints)
        for e in u.entities:
            if e.how in ("name", "synonym", "self"):
                for nid in e.node_ids:
                    add(nid, 1.0 if e.how != "synonym" else 0.95, e.how)
            elif e.how == "ner":
                vec = run.embed(e.text)
                if vec is not None:
                    for nid, sim in _node_vector_hits(run, vec, 3):
                        if sim >= MIN_VECTOR + 0.1:
                            add(nid, 0.8 * sim, "ner")
    qvec = run.embed(run.query_text)
    if qvec is not None and len(st.node_vectors):
        for nid, sim in _node_vector_hits(run, qvec, 8):
            if sim >= MIN_VECTOR:
                add(nid, 0.9 * sim, "vector")
        for t in hinted:
            for nid, sim in _node_vector_hits(run, qvec, 6, t):
                if sim >= MIN_VECTOR:
                    add(nid, 0.9 * sim + 0.05, "type")
    # chunks by meaning and by words lend their nodes
    chunk_hits: list[tuple[str, float]] = []
    if qvec is not None and len(st.chunk_vectors):

        def visible(ids: list[str]) -> set[str]:
            return {ch.id for ch in st.store.get_chunks(ids) if in_scope(ch.scope, run.scope)}

        keep = visible if run.scope is not None else None
        chunk_hits.extend(
            (cid, 0.6 * s) for cid, s in search_visible(st.chunk_vectors, qvec, 8, keep) if s >= MIN_VECTOR
        )
    text_hits = st.store.search_text("chunk", run.query_text, 8, scope=run.scope)
    if text_hits:
        top = max(h.score for h in text_hits) or 1.0
        chunk_hits.extend((h.id, 0.5 * h.score / top) for h in text_hits)
    if chunk_hits:
        chunks = {ch.id: ch for ch in st.store.get_chunks([cid for cid, _ in chunk_hits])}
        for cid, s in chunk_hits:
            ch = chunks.get(cid)
            if ch is None or ch.node_id is None:
                continue
            if not in_scope(ch.scope, run.scope):
                continue
            add(ch.node_id, s, "passage")
    # in the current state (or as of T), a node whose every fact has ended is history, not an anchor
    if run.temporal.mode != "history":
        for pos in [p for p, a in found.items() if a.anchor_how not in ("name", "synonym", "self")]:
            if g.incident_edges(pos) and not len(g.step(np.array([pos], dtype=np.int64), run.flt)[0]):
                del found[pos]
    # type-hinted anchors first among equals
    for a in found.values():
        if hinted and not any(reg.is_a(g.label_of(a.pos), t) for t in hinted):
            a.priority *= UNNAMED_TYPE
    ranked = sorted(found.values(), key=lambda a: (-a.priority, g.node_ids[a.pos]))
    return ranked[: run.constraints.max_anchors]


def _node_vector_hits(
    run: Run, vec: np.ndarray, k: int, type_name: str | None = None
) -> list[tuple[str, float]]:
    """Top-k nodes by cosine among those the query may see (its scope; a type and its subtypes)."""
    st = run.memory.kb.state
    g = st.graph
    labels = None
    if type_name is not None:
        labels = {name for name in g.labels.names if run.memory.registry.is_a(name, type_name)}
    return node_vector_hits(g, st.node_vectors, vec, k, scope=run.scope, labels=labels)


# --------------------------------------------------------------- expansion
def relation_boosts(run: Run) -> dict[str, float]:
    """Relation name → how much the questions name it (0..1); an inverse name counts for its base."""
    g = run.memory.kb.state.graph
    boost: dict[str, float] = {}
    for u in run.understandings:
        for name, w in u.relation_hints.items():
            boost[name] = max(boost.get(name, 0.0), w)
    for name, rt in g.rel_types.items():
        if rt.inverse and rt.inverse in boost:
            boost[name] = max(boost.get(name, 0.0), boost[rt.inverse])
    return boost


def expand(run: Run, anchors: list[Reached]) -> dict[int, Reached]:
    """Best-first expansion from the anchors, bounded by max_depth and max_nodes."""
    memory = run.memory
    st = memory.kb.state
    g = st.graph
    reg = memory.registry
    c = run.constraints
    qvec = run.embed(run.query_text) if len(st.node_vectors) else None
    rel_boost = relation_boosts(run)
    hinted = {t for u in run.understandings for t in u.type_hints}
    rel_codes = {name: g.relations.get(name) for name in g.relations.names}
    boost_by_code = np.ones(len(g.relations), dtype=np.float64)
    skip_by_code = np.zeros(len(g.relations), dtype=np.bool_)
    for name, code in rel_codes.items():
        if code is None:
            continue
        boost_by_code[code] = UNNAMED_RELATION + (1.0 - UNNAMED_RELATION) * min(1.0, rel_boost.get(name, 0.0))
        skip_by_code[code] = name in BELIEF_RELATIONS
    label_boost_arr = np.array(
        [1.0 if not hinted or any(reg.is_a(lb, t) for t in hinted) else UNNAMED_TYPE for lb in g.labels.names]
        or [1.0],
        dtype=np.float64,
    )

    heap: list[tuple[float, int, int, int, int, int, bool]] = []
    counter = 0
    for a in anchors:
        heapq.heappush(heap, (-a.priority, counter, a.pos, 0, -1, -1, True))
        counter += 1
    anchor_how = {a.pos: a.anchor_how for a in anchors}
    reached: dict[int, Reached] = {}
    while heap and len(reached) < c.max_nodes:
        # the best few nodes of the queue are expanded together (one vectorized step)
        batch: list[Reached] = []
        while heap and len(batch) < EXPAND_BATCH and len(reached) < c.max_nodes:
            negp, _, pos, depth, parent, edge, fwd = heapq.heappop(heap)
            if pos in reached:
                continue
            r = reached[pos] = Reached(pos, -negp, depth, parent, edge, fwd, anchor_how.get(pos))
            if depth < c.max_depth:
                batch.append(r)
        if not batch:
            continue
        edges, owners, targets, forward = g.step(np.array([r.pos for r in batch], dtype=np.int64), run.flt)
        if not len(edges):
            continue
        codes = g.e_rel.view[edges]
        keep = ~skip_by_code[codes]
        if reached:
            keep &= ~np.isin(targets, np.fromiter(reached, dtype=np.int64, count=len(reached)))
        edges, owners, targets, forward, codes = (
            edges[keep],
            owners[keep],
            targets[keep],
            forward[keep],
            codes[keep],
        )
        if not len(edges):
            continue
        by_pos = {r.pos: r for r in batch}
        owner_prio = np.fromiter(
            (by_pos[int(o)].priority for o in owners), dtype=np.float64, count=len(owners)
        )
        tboost = label_boost_arr[g.node_label.view[targets]]
        prio = (
            owner_prio * HOP_DECAY * g.e_conf.view[edges].astype(np.float64) * boost_by_code[codes] * tboost
        )
        order = np.argsort(-prio, kind="stable")[: FANOUT * len(batch)]
        edges, owners, targets, forward, prio = (
            edges[order],
            owners[order],
            targets[order],
            forward[order],
            prio[order],
        )
        if qvec is not None:  # meaning steers the walk: a neighbour unlike the question costs more
            sims = st.node_vectors.similarities(qvec, [g.node_ids[t] for t in targets.tolist()])
            prio = prio * np.clip(SIM_BASE + SIM_SLOPE * sims.astype(np.float64), SIM_BASE, 1.0)
        for p_, t, o, e, f in zip(
            prio.tolist(), targets.tolist(), owners.tolist(), edges.tolist(), forward.tolist(), strict=True
        ):
            heapq.heappush(heap, (-p_, counter, t, by_pos[o].depth + 1, o, e, f))
            counter += 1
    return reached


def edges_among(run: Run, positions: Sequence[int]) -> list[tuple[int, int, int]]:
    """Allowed edges (position, source, target) between the given nodes, belief relations and
    self-loops left out."""
    g = run.memory.kb.state.graph
    skip = {g.relations.get(name) for name in BELIEF_RELATIONS}
    out = []
    for e in g.edges_among(positions, run.flt).tolist():
        src, dst = int(g.e_src[e]), int(g.e_dst[e])
        if src != dst and int(g.e_rel[e]) not in skip:
            out.append((e, src, dst))
    return out
