"""A best-first walk from weighted seeds: the priority-ordered traversal of the retrieval engine.

Breadth-first :meth:`~cef.graph.index.GraphIndex.expand` (``walk.order: breadth``) reaches
every node within a depth; a caller that knows what the question is about wants the nodes in the
order the question makes likely instead, and as many as it can use. :func:`walk` keeps a priority
queue: a seed starts at its own priority, and a neighbour reached over an edge gets its parent's
priority × ``hop_decay`` × the edge's confidence × the edge's relation weight × the neighbour's
label weight × (optionally) its likeness to the question,
``clip(sim_base + sim_slope × likeness, sim_base, 1)``. Every hop is the graph index's
:meth:`~cef.graph.index.GraphIndex.step` under the caller's :class:`~cef.graph.filter.EdgeFilter`
(time, scope), the best ``batch`` nodes of the queue expanded together, at most ``fanout``
neighbours of each offered to the queue (hubs). :func:`walk_weights` turns what the question
names (relations with a strength in [0, 1], types) into the per-relation and per-label weights.

It is the engine's anchored traversal stage unless the query's :class:`WalkSettings` say ``order:
breadth`` (:func:`walk_stage`, run by :func:`cef.retrieve.expand.expand_anchors` in place of the
breadth-first expansion: the same records, ``qc.reached``, ``qc.stages.traversal`` and the
reasoning context, follow from it). The memory's ``retrieve_context`` (:mod:`cef.memory.walk`)
runs that stage on its own anchors, with what its understanding names (:class:`WalkRequest`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cef.graph.filter import EdgeFilter, Expansion
from cef.graph.index import GraphIndex
from cef.retrieve.context import QueryContext
from cef.retrieve.presets import WalkSettings
from cef.retrieve.stagestate import Reached

__all__ = [
    "Reached",
    "WalkRequest",
    "WalkSettings",
    "WalkWeights",
    "as_expansion",
    "walk",
    "walk_stage",
    "walk_weights",
]


@dataclass(frozen=True)
class WalkWeights:
    """Per relation code: its weight and whether it is never walked; per label code: its weight."""

    relation: np.ndarray
    skip: np.ndarray
    label: np.ndarray


def walk_weights(
    graph: GraphIndex,
    named_relations: Mapping[str, float],
    type_matches: Callable[[str], bool] | None,
    settings: WalkSettings,
    *,
    never: Collection[str] = (),
) -> WalkWeights:
    """The weights of a walk: a relation weighs ``unnamed_relation`` + (1 - it) × how much the
    question names it (an inverse name counts for its base); a label weighs 1 when
    ``type_matches`` says the question names its type (or it is None: no type named), else
    ``unnamed_type``; relations in ``never`` are not walked."""
    named = dict(named_relations)
    for name, rt in graph.rel_types.items():
        if rt.inverse and rt.inverse in named:
            named[name] = max(named.get(name, 0.0), named[rt.inverse])
    n = len(graph.relations)
    relation = np.ones(n, dtype=np.float64)
    skip = np.zeros(n, dtype=np.bool_)
    u = settings.unnamed_relation
    for name in graph.relations.names:
        code = graph.relations.get(name)
        if code is None:
            continue
        relation[code] = u + (1.0 - u) * min(1.0, named.get(name, 0.0))
        skip[code] = name in never
    label = np.array(
        [
            1.0 if type_matches is None or type_matches(lb) else settings.unnamed_type
            for lb in graph.labels.names
        ]
        or [1.0],
        dtype=np.float64,
    )
    return WalkWeights(relation, skip, label)


def walk(
    graph: GraphIndex,
    seeds: Iterable[Reached],
    flt: EdgeFilter,
    weights: WalkWeights,
    settings: WalkSettings,
    *,
    max_nodes: int,
    max_depth: int,
    likeness: Callable[[Sequence[int]], np.ndarray] | None = None,
    on_hop: Callable[[], None] | None = None,
) -> dict[int, Reached]:
    """Best-first from ``seeds`` (see the module doc), until ``max_nodes`` are reached or the queue
    is empty; no node is expanded beyond ``max_depth`` hops. ``likeness``: each node position's
    likeness to the question (e.g. the cosine of its vector), None to leave meaning out.
    ``on_hop`` is called before each batch is expanded (a query's deadline check)."""
    heap: list[tuple[float, int, int, int, int, int, bool]] = []
    counter = 0
    anchor_how: dict[int, str | None] = {}
    for a in seeds:
        heapq.heappush(heap, (-a.priority, counter, a.pos, 0, -1, -1, True))
        anchor_how[a.pos] = a.anchor_how
        counter += 1
    reached: dict[int, Reached] = {}
    while heap and len(reached) < max_nodes:
        # the best few nodes of the queue are expanded together (one vectorized step)
        batch: list[Reached] = []
        while heap and len(batch) < settings.batch and len(reached) < max_nodes:
            negp, _, pos, depth, parent, edge, fwd = heapq.heappop(heap)
            if pos in reached:
                continue
            r = reached[pos] = Reached(pos, -negp, depth, parent, edge, fwd, anchor_how.get(pos))
            if depth < max_depth:
                batch.append(r)
        if not batch:
            continue
        if on_hop is not None:
            on_hop()
        edges, owners, targets, forward = graph.step(np.array([r.pos for r in batch], dtype=np.int64), flt)
        if not len(edges):
            continue
        codes = graph.e_rel.view[edges]
        keep = ~weights.skip[codes]
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
        prio = (
            owner_prio
            * settings.hop_decay
            * graph.e_conf.view[edges].astype(np.float64)
            * weights.relation[codes]
            * weights.label[graph.node_label.view[targets]]
        )
        order = np.argsort(-prio, kind="stable")[: settings.fanout * len(batch)]
        edges, owners, targets, forward, prio = (
            edges[order],
            owners[order],
            targets[order],
            forward[order],
            prio[order],
        )
        if likeness is not None:  # meaning steers the walk: a neighbour unlike the question costs more
            sims = np.asarray(likeness(targets.tolist()), dtype=np.float64)
            prio = prio * np.clip(settings.sim_base + settings.sim_slope * sims, settings.sim_base, 1.0)
        for p_, t, o, e, f in zip(
            prio.tolist(), targets.tolist(), owners.tolist(), edges.tolist(), forward.tolist(), strict=True
        ):
            heapq.heappush(heap, (-p_, counter, t, by_pos[o].depth + 1, o, e, f))
            counter += 1
    return reached


@dataclass(frozen=True)
class WalkRequest:
    """What steers a walk besides the query: the relations it names (name -> strength in [0, 1]),
    whether a node label is of a type it names (None: none named), relations never walked, and the
    question's vector (None: the query's own, embedded by the query context)."""

    named_relations: Mapping[str, float] = field(default_factory=dict)
    type_matches: Callable[[str], bool] | None = None
    never: Collection[str] = ()
    vector: np.ndarray | None = None


def walk_stage(
    qc: QueryContext, settings: WalkSettings, request: WalkRequest | None = None
) -> dict[int, Reached]:
    """The anchored traversal, best first: from ``qc.anchors`` (each at its score), under the query's
    edge filter, at most ``max_graph_nodes`` nodes and ``traversal.depth`` hops. Without a request the
    query steers it: the relation types it lists count as named, and a neighbour unlike the
    question (its node vector) costs more. Returns what was reached (also kept as ``qc.stages.walked``)."""
    g = qc.state.graph
    q = qc.query
    if request is None:
        request = WalkRequest({name: 1.0 for name in q.traversal.relation_types})
    weights = walk_weights(g, request.named_relations, request.type_matches, settings, never=request.never)
    st = qc.state
    vec = None
    if len(st.node_vectors):
        vec = request.vector if request.vector is not None else qc.query_vector
    likeness = None
    if vec is not None:
        qvec = vec

        def likeness(targets: Sequence[int]) -> np.ndarray:
            return st.node_vectors.similarities(qvec, [g.node_ids[t] for t in targets])

    seeds = [Reached(pos=a.pos, priority=a.score, depth=0, anchor_how=a.how) for a in qc.anchors]
    reached = walk(
        g,
        seeds,
        qc.edge_filter,
        weights,
        settings,
        max_nodes=q.max_graph_nodes,
        max_depth=q.traversal.depth,
        likeness=likeness,
        on_hop=(lambda: qc.check_deadline("expansion")) if qc.watched else None,
    )
    qc.stages.walked = reached
    return reached


def as_expansion(
    graph: GraphIndex, reached: Mapping[int, Reached], max_nodes: int, min_path_confidence: float = 0.0
) -> Expansion:
    """The walk as the engine's traversal record: nodes in the order reached (a parent before its
    children), each path's confidence the product of its edges'; a path whose confidence falls
    below ``min_path_confidence`` stops there (its node and those reached through it are left out)."""
    order: list[Reached] = []
    conf: dict[int, float] = {}
    confidence = []
    for r in reached.values():
        if r.edge >= 0 and r.parent not in conf:
            continue  # reached through a node left out
        c = conf.get(r.parent, 1.0) * (float(graph.e_conf[r.edge]) if r.edge >= 0 else 1.0)
        if r.edge >= 0 and c < min_path_confidence:
            continue
        conf[r.pos] = c
        order.append(r)
        confidence.append(c)
    return Expansion(
        nodes=np.array([r.pos for r in order], dtype=np.int64),
        depth=np.array([r.depth for r in order], dtype=np.int64),
        parent=np.array([r.parent for r in order], dtype=np.int64),
        parent_edge=np.array([r.edge for r in order], dtype=np.int64),
        forward=np.array([r.forward for r in order], dtype=np.bool_),
        confidence=np.array(confidence, dtype=np.float64),
        truncated=len(reached) >= max_nodes,
    )
