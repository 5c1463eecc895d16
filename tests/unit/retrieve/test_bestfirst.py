"""The best-first walk (:mod:`cef.retrieve.bestfirst`): its bounds, its order, and what the weights do."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.graph.index import GraphIndex
from cef.model import RelationType
from cef.retrieve.bestfirst import Reached, WalkSettings, walk, walk_weights

WALK = WalkSettings()


def _graph(
    edges: list[tuple[str, str, str]], conf: float = 1.0, labels: dict[str, str] | None = None
) -> GraphIndex:
    g = GraphIndex()
    g.set_relation_types([RelationType(name=r) for r in sorted({r for _, _, r in edges})])
    ids = sorted({n for s, t, _ in edges for n in (s, t)})
    g.add_node_arrays(ids, [(labels or {}).get(i, "Thing") for i in ids], [None] * len(ids))
    m = len(edges)
    g.add_edge_arrays(
        [f"e{i}" for i in range(m)],
        [s for s, _, _ in edges],
        [t for _, t, _ in edges],
        [r for _, _, r in edges],
        [1.0] * m,
        [conf] * m,
        [-math.inf] * m,
        [math.inf] * m,
        [0.0] * m,
        [None] * m,
    )
    return g


def _from(
    g: GraphIndex,
    node: str,
    named: dict[str, float] | None = None,
    *,
    never: tuple[str, ...] = (),
    max_nodes: int = 100,
    max_depth: int = 5,
) -> dict[str, Reached]:
    pos = g.pos(node)
    assert pos is not None
    weights = walk_weights(g, named or {}, None, WALK, never=never)
    got = walk(
        g, [Reached(pos, 1.0, 0)], g.edge_filter(), weights, WALK, max_nodes=max_nodes, max_depth=max_depth
    )
    return {g.node_ids[p]: r for p, r in got.items()}


def test_a_relation_the_question_names_is_walked_first() -> None:
    g = _graph([("a", "b", "WORKS_AT"), ("a", "c", "LIKES")])
    plain = _from(g, "a", max_nodes=2)
    named = _from(g, "a", {"LIKES": 1.0}, max_nodes=2)
    assert set(plain) == {"a", "b"}  # equal weights: the first edge
    assert set(named) == {"a", "c"}
    assert named["c"].priority == WALK.hop_decay  # named: the whole priority
    assert plain["b"].priority == WALK.hop_decay * WALK.unnamed_relation


def test_relations_never_walked_are_not_walked() -> None:
    g = _graph([("a", "b", "BELIEVES"), ("b", "c", "KNOWS")])
    assert set(_from(g, "a")) == {"a", "b", "c"}
    assert set(_from(g, "a", never=("BELIEVES",))) == {"a"}


@given(
    st.lists(
        st.tuples(st.integers(0, 14), st.integers(0, 14), st.sampled_from(["R", "S"])),
        min_size=1,
        max_size=60,
    ),
    st.integers(1, 15),
    st.integers(0, 4),
)
@settings(max_examples=150, deadline=None)
def test_the_walk_keeps_its_bounds_and_its_order(
    raw: list[tuple[int, int, str]], max_nodes: int, max_depth: int
) -> None:
    edges = [(f"n{s}", f"n{t}", r) for s, t, r in raw]
    g = _graph(edges, conf=0.9)
    seed = edges[0][0]
    got = _from(g, seed, {"R": 1.0}, max_nodes=max_nodes, max_depth=max_depth)
    assert seed in got and len(got) <= max_nodes
    for node, r in got.items():
        assert r.depth <= max_depth
        if node == seed:
            assert r.parent == -1 and r.depth == 0
            continue
        parent = got[g.node_ids[r.parent]]
        assert r.depth == parent.depth + 1
        assert r.priority <= parent.priority  # every hop keeps at most its parent's priority
        # the edge it was reached over joins it to its parent
        ends = {int(g.e_src[r.edge]), int(g.e_dst[r.edge])}
        assert ends == {r.parent, g.pos(node)} or (r.parent == g.pos(node))
    priorities = np.array([r.priority for r in got.values()])
    assert np.all(np.isfinite(priorities)) and np.all(priorities > 0)
