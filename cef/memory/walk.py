"""``retrieve_context`` stages 2 and 3: anchors (names, the scope's own node, vectors, passages)
and best-first expansion from them, filtered by scope and time.

Every hop is the graph index's :meth:`~cef.graph.index.GraphIndex.step` under the query's
:class:`~cef.graph.filter.EdgeFilter` (valid and known time, scope), and the facts among the
reached nodes are :meth:`~cef.graph.index.GraphIndex.edges_among` — the same walks retrieval
and the graph context provider use. The expansion is the engine's traversal stage walking best
first (:func:`cef.retrieve.bestfirst.walk_stage`, the route's anchored traversal with
``walk.order: best``) from the memory's anchors, steered by the question: the relations and
types it names, and the neighbour's likeness to it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from cef.memory.constraints import Reached, Run
from cef.model import GraphQuery, TraversalHint, in_scope
from cef.retrieve.anchors import node_vector_hits, node_visible
from cef.retrieve.bestfirst import WalkRequest, walk_stage
from cef.retrieve.context import Anchor, QueryContext
from cef.retrieve.presets import WalkSettings
from cef.retrieve.search import search_visible
from cef.schema.kinds import BELIEF_RELATIONS, NodeKind

__all__ = ["edges_among", "expand", "find_anchors", "relation_boosts"]

#: the walk's settings (the engine's best-first walk, :mod:`cef.retrieve.bestfirst`)
WALK = WalkSettings(order="best")

#: a node of a type the question does not name keeps this share (named: 1)
UNNAMED_TYPE = WALK.unnamed_type

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
    """Best-first from the anchors, bounded by max_depth and max_nodes: the engine's traversal stage
    (:func:`cef.retrieve.bestfirst.walk_stage`) on a query context holding the memory's anchors and
    edge filter; relations and types the questions name weigh more, belief relations are not
    walked, and a neighbour unlike the question costs more."""
    memory = run.memory
    st = memory.kb.state
    g = st.graph
    reg = memory.registry
    c = run.constraints
    hinted = {t for u in run.understandings for t in u.type_hints}
    qc = QueryContext(
        state=st,
        query=GraphQuery(
            query=run.query_text[:10_000],
            scope=run.scope,
            max_graph_nodes=c.max_nodes,
            traversal=TraversalHint(depth=c.max_depth),
        ),
        started=time.perf_counter(),
        now=run.now,
    )
    qc.__dict__["edge_filter"] = run.flt  # the memory's time mode (current, as of, history) and scope
    qc.anchors = [Anchor(a.pos, g.node_ids[a.pos], a.priority, a.anchor_how or "") for a in anchors]
    request = WalkRequest(
        relation_boosts(run),
        (lambda label: any(reg.is_a(label, t) for t in hinted)) if hinted else None,
        BELIEF_RELATIONS,
        run.embed(run.query_text) if len(st.node_vectors) else None,
    )
    reached = walk_stage(qc, WALK, request)
    for a in anchors:  # the anchors' own way of being found (None when the memory gave none)
        if a.pos in reached:
            reached[a.pos].anchor_how = a.anchor_how
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
