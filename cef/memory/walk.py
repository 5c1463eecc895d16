"""``retrieve_context`` stages 2 and 3: anchors and best-first expansion from them, filtered by
scope and time, both the engine's stages: the anchors are :func:`cef.retrieve.anchors.anchor_stage`
on what the memory's understanding read in the question (the nodes it names, the scope's own node,
the types it names), with the question's nearest nodes and the nodes of its best passages.

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

from cef.memory.constraints import Reached, Run
from cef.model import GraphQuery, TraversalHint
from cef.retrieve.anchors import NAMED, AnchorRequest, anchor_stage
from cef.retrieve.bestfirst import WalkRequest, walk_stage
from cef.retrieve.context import Anchor, QueryContext
from cef.retrieve.presets import WalkSettings
from cef.schema.kinds import BELIEF_RELATIONS, NodeKind

__all__ = ["edges_among", "expand", "find_anchors", "query_context", "relation_boosts"]

#: the walk's settings (the engine's best-first walk, :mod:`cef.retrieve.bestfirst`)
WALK = WalkSettings(order="best")

#: a node of a type the question does not name keeps this share (named: 1)
UNNAMED_TYPE = WALK.unnamed_type


# ----------------------------------------------------------------- anchors
def query_context(run: Run) -> QueryContext:
    """The engine's working set for the memory's question: its text, scope, bounds, clock and
    the memory's edge filter (its time mode: current, as of, history); the question's vector is
    the memory's (cached across questions)."""
    st = run.memory.kb.state
    c = run.constraints
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
    qc.__dict__["edge_filter"] = run.flt
    qc.__dict__["query_vector"] = run.embed(run.query_text)
    return qc


def find_anchors(run: Run, qc: QueryContext) -> list[Anchor]:
    """The anchors of the memory's questions by the engine's anchor stage
    (:func:`cef.retrieve.anchors.anchor_stage`), from what the understanding read in them: the
    nodes they name (names, synonyms, the scope's own node), the extractor's unmatched names, the
    types they name; observations and beliefs only when named; ended nodes dropped unless the
    query walks history."""
    reg = run.memory.registry
    named: list[tuple[str, float, str]] = []
    mentions: list[str] = []
    for u in run.understandings:
        for e in u.entities:
            if e.how in NAMED:
                named.extend((nid, 1.0 if e.how != "synonym" else 0.95, e.how) for nid in e.node_ids)
            elif e.how == "ner":
                mentions.append(e.text)
    request = AnchorRequest(
        named=named,
        mentions=mentions,
        type_hints=list(dict.fromkeys(t for u in run.understandings for t in u.type_hints)),
        is_a=reg.is_a,
        named_only=lambda label: reg.kind_of(label) in (NodeKind.OBSERVATION, NodeKind.BELIEF),
        unnamed_type=UNNAMED_TYPE,
        drop_ended=run.temporal.mode != "history",
        limit=run.constraints.max_anchors,
    )
    return anchor_stage(qc, request)


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


def expand(run: Run, qc: QueryContext) -> dict[int, Reached]:
    """Best-first from the anchors in ``qc`` (:func:`find_anchors`), bounded by max_depth and
    max_nodes: the engine's traversal stage (:func:`cef.retrieve.bestfirst.walk_stage`); relations
    and types the questions name weigh more, belief relations are not walked, and a neighbour
    unlike the question costs more."""
    st = run.memory.kb.state
    reg = run.memory.registry
    hinted = {t for u in run.understandings for t in u.type_hints}
    request = WalkRequest(
        relation_boosts(run),
        (lambda label: any(reg.is_a(label, t) for t in hinted)) if hinted else None,
        BELIEF_RELATIONS,
        qc.query_vector if len(st.node_vectors) else None,
    )
    reached = walk_stage(qc, WALK, request)
    for a in qc.anchors:  # the anchors' own way of being found
        if a.pos in reached:
            reached[a.pos].anchor_how = a.how
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
