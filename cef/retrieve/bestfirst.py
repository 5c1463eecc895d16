"""A best-first walk from weighted seeds: the priority-ordered traversal of the retrieval engine.

Breadth-first :meth:`~cef.graph.index.GraphIndex.expand` (the route's anchored traversal) reaches
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

The memory's ``retrieve_context`` (:mod:`cef.memory.walk`) walks its anchors with it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from cef.graph.filter import EdgeFilter
from cef.graph.index import GraphIndex
from cef.retrieve.settingsbase import Settings

__all__ = ["Reached", "WalkSettings", "WalkWeights", "walk", "walk_weights"]


class WalkSettings(Settings):
    """The best-first walk's constants. They are the memory walk's, set by hand when it was written
    and kept since: the memory tests (``tests/unit/memory``), the five domain cases and
    ``bench/bench_memory.py`` are scored with them; none was fitted on a benchmark's questions."""

    hop_decay: float = Field(
        default=0.7, gt=0.0, le=1.0, description="priority kept per hop away from a seed"
    )
    unnamed_relation: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="a relation the question does not name keeps this share of the priority (named: up to 1)",
    )
    unnamed_type: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="a node of a type the question does not name keeps this share (named, or none named: 1)",
    )
    sim_base: float = Field(
        default=0.4,
        ge=0.0,
        le=1.0,
        description="neighbour priority × clip(sim_base + sim_slope × likeness, sim_base, 1)",
    )
    sim_slope: float = Field(default=1.2, ge=0.0, description="see sim_base")
    fanout: int = Field(
        default=48, ge=1, le=100_000, description="most neighbours of one node offered to the queue"
    )
    batch: int = Field(
        default=8, ge=1, le=10_000, description="nodes taken from the queue and expanded together"
    )


@dataclass
class Reached:
    """A node the walk reached: its priority, hops from its seed, and the edge it was reached over
    (``parent`` -1 for a seed)."""

    pos: int
    priority: float
    depth: int
    parent: int = -1
    edge: int = -1
    forward: bool = True
    anchor_how: str | None = None


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
) -> dict[int, Reached]:
    """Best-first from ``seeds`` (see the module doc), until ``max_nodes`` are reached or the queue
    is empty; no node is expanded beyond ``max_depth`` hops. ``likeness``: each node position's
    likeness to the question (e.g. the cosine of its vector), None to leave meaning out."""
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
