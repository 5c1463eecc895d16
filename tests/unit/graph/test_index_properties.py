"""Property-based checks of the in-memory graph: traversal bounds and incremental == rebuilt."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.graph.filter import SUPERSEDED_AT
from cef.graph.index import GraphIndex
from cef.model import Edge, Node, RelationType

RELS = [
    RelationType(name="R0"),
    RelationType(name="R1", inverse="R1_INV"),
    RelationType(name="R2", bidirectional=True),
]


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(2, 30))
    m = draw(st.integers(0, 80))
    edges = [
        (
            draw(st.integers(0, n - 1)),
            draw(st.integers(0, n - 1)),
            draw(st.sampled_from(["R0", "R1", "R2"])),
            draw(st.floats(0.05, 1.0)),
        )
        for _ in range(m)
    ]
    return n, edges


def build(n: int, edges: list[tuple[int, int, str, float]], compact_every: int | None = None) -> GraphIndex:
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label="T") for i in range(n)])
    for k, (s, t, r, c) in enumerate(edges):
        g.add_edges([Edge(id=f"e{k}", relation_type=r, source=f"n{s}", target=f"n{t}", confidence=c)])
        if compact_every and k % compact_every == 0:
            g.compact()
    return g


@settings(max_examples=60, deadline=None)
@given(graphs(), st.integers(0, 4), st.integers(1, 40), st.floats(0.0, 0.9))
def test_expand_respects_depth_size_and_confidence(data, depth, max_nodes, min_conf) -> None:  # type: ignore[no-untyped-def]
    n, edges = data
    g = build(n, edges)
    exp = g.expand([0], depth, g.edge_filter(), max_nodes=max_nodes, min_path_confidence=min_conf)
    assert len(exp.nodes) <= max(max_nodes, 1)
    assert len(set(exp.nodes.tolist())) == len(exp.nodes)
    assert exp.depth.max() <= depth
    for node, d, conf in zip(exp.nodes.tolist(), exp.depth.tolist(), exp.confidence.tolist(), strict=True):
        nodes, path_edges, _ = exp.path_to(node)
        assert len(path_edges) == d and nodes[0] == 0 and nodes[-1] == node
        prod = float(np.prod([g.e_conf[e] for e in path_edges])) if path_edges else 1.0
        assert abs(prod - conf) < 1e-5
        if d > 0:
            assert conf >= min_conf - 1e-9


@settings(max_examples=60, deadline=None)
@given(graphs(), st.integers(0, 3), st.sampled_from(["out", "in", "both"]))
def test_incremental_delta_equals_rebuilt_csr(data, depth, direction) -> None:  # type: ignore[no-untyped-def]
    n, edges = data
    incremental = build(n, edges, compact_every=7)
    rebuilt = build(n, edges)
    rebuilt.compact()
    for g in (incremental, rebuilt):
        g.remove_edges([f"e{k}" for k in range(0, len(edges), 5)])
    a = incremental.expand([0], depth, incremental.edge_filter(direction=direction), max_nodes=1000)
    b = rebuilt.expand([0], depth, rebuilt.edge_filter(direction=direction), max_nodes=1000)
    assert dict(zip(a.nodes.tolist(), a.depth.tolist(), strict=True)) == dict(
        zip(b.nodes.tolist(), b.depth.tolist(), strict=True)
    )


def test_relation_filters_direction_and_inverse_names() -> None:
    g = build(3, [(0, 1, "R1", 1.0), (1, 2, "R2", 1.0)])
    out = g.expand([0], 1, g.edge_filter(relation_types=["R1"], direction="out"))
    assert set(out.nodes.tolist()) == {0, 1}
    assert set(g.expand([1], 1, g.edge_filter(relation_types=["R1"], direction="out")).nodes.tolist()) == {1}
    # walking R1 backwards is walking its inverse name forwards
    inv = g.expand([1], 1, g.edge_filter(relation_types=["R1_INV"], direction="out"))
    assert set(inv.nodes.tolist()) == {0, 1}
    assert g.relation_name(int(inv.parent_edge[1]), bool(inv.forward[1])) == "R1_INV"
    # bidirectional R2 is walkable both ways whatever the direction
    assert set(g.expand([2], 1, g.edge_filter(relation_types=["R2"], direction="out")).nodes.tolist()) == {
        1,
        2,
    }


def test_ppr_concentrates_near_seed() -> None:
    g = build(6, [(0, 1, "R0", 1.0), (1, 2, "R0", 1.0), (3, 4, "R0", 1.0), (4, 5, "R0", 1.0)])
    scores = g.personalized_pagerank({0: 1.0})
    assert scores[0] > scores[1] > scores[2] > 0
    assert scores[3] == scores[4] == scores[5] == 0
    assert abs(scores.sum() - 1.0) < 1e-6


@settings(max_examples=60, deadline=None)
@given(
    graphs(),
    st.lists(st.integers(1, 12), min_size=1, max_size=12),
    st.integers(0, 3),
    st.sampled_from(["out", "in", "both"]),
)
def test_batches_merged_into_the_csr_equal_a_rebuilt_csr(data, sizes, depth, direction) -> None:  # type: ignore[no-untyped-def]
    """Big batches are merged into the CSR (no full re-sort); deletions in between leave garbage it must skip."""
    n, edges = data
    merged = GraphIndex()
    merged.COMPACT_MIN = 2  # every batch of 3+ edges takes the merge path
    merged.set_relation_types(RELS)
    merged.add_nodes([Node(id=f"n{i}", label="T") for i in range(n)])
    k = 0
    for size in itertools.cycle(sizes):
        if k >= len(edges):
            break
        part = edges[k : k + size]
        merged.add_edges(
            [
                Edge(id=f"e{k + j}", relation_type=r, source=f"n{s}", target=f"n{t}", confidence=c)
                for j, (s, t, r, c) in enumerate(part)
            ]
        )
        merged.remove_edges([f"e{k}"])  # garbage inside the CSR
        merged.add_nodes([Node(id=f"late{k}", label="T")])  # nodes the CSR has not seen yet
        k += len(part)
    rebuilt = build(n, edges)
    rebuilt.add_nodes([Node(id=f"late{j}", label="T") for j in range(len(edges))])
    rebuilt.remove_edges([i for i in merged.edge_ids if i not in merged._edge_pos])
    rebuilt.compact()
    assert merged.edge_count == rebuilt.edge_count
    for start in range(n):
        a = merged.expand([start], depth, merged.edge_filter(direction=direction), max_nodes=1000)
        b = rebuilt.expand([start], depth, rebuilt.edge_filter(direction=direction), max_nodes=1000)
        assert dict(zip(a.nodes.tolist(), a.depth.tolist(), strict=True)) == dict(
            zip(b.nodes.tolist(), b.depth.tolist(), strict=True)
        )


@settings(max_examples=60, deadline=None)
@given(graphs(), st.sets(st.integers(0, 29), max_size=12), st.sampled_from([(), ("R1",), ("R0", "R2")]))
def test_edges_among_are_the_allowed_edges_inside_the_set(data, chosen, excluded) -> None:  # type: ignore[no-untyped-def]
    n, edges = data
    g = build(n, edges)
    g.remove_edges([f"e{k}" for k in range(0, len(edges), 4)])
    inside = sorted(p for p in chosen if p < n)
    got = g.edges_among(inside, g.edge_filter(exclude_relations=excluded)).tolist()
    want = sorted(
        g.edge_pos(f"e{k}")
        for k, (s, t, r, _) in enumerate(edges)
        if k % 4 and s in inside and t in inside and r not in excluded
    )
    assert got == want


def test_a_walk_never_enters_excluded_labels_nor_follows_excluded_relations() -> None:
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id="a", label="T"), Node(id="rule", label="Rule"), Node(id="b", label="T")])
    g.add_edges(
        [
            Edge(id="a-rule", relation_type="R0", source="a", target="rule"),
            Edge(id="rule-b", relation_type="R0", source="rule", target="b"),
            Edge(id="a-b", relation_type="R1", source="a", target="b"),
        ]
    )
    a, b = g.pos("a"), g.pos("b")
    assert a is not None and b is not None
    reached = g.expand([a], 3, g.edge_filter()).nodes.tolist()
    assert {g.node_ids[p] for p in reached} == {"a", "rule", "b"}
    no_rules = g.expand([a], 3, g.edge_filter(exclude_labels={"Rule"})).nodes.tolist()
    assert {g.node_ids[p] for p in no_rules} == {"a", "b"}
    neither = g.expand([a], 3, g.edge_filter(exclude_labels={"Rule"}, exclude_relations={"R1"}))
    assert neither.nodes.tolist() == [a]


@settings(max_examples=40, deadline=None)
@given(graphs(), st.lists(st.integers(0, 29), min_size=1, max_size=6, unique=True), st.integers(0, 3))
def test_seed_rank_only_breaks_ties_and_the_better_seed_wins_them(data, seeds, depth) -> None:  # type: ignore[no-untyped-def]
    n, edges = data
    g = build(n, [(s, t, r, 1.0) for s, t, r, _ in edges])  # every path equally confident: ranks decide
    seeds = [s for s in seeds if s < n] or [0]
    flt = g.edge_filter()
    plain = g.expand(seeds, depth, flt)
    ranked = g.expand(seeds, depth, flt, seed_rank=list(range(len(seeds))))
    depth_of = dict(zip(plain.nodes.tolist(), plain.depth.tolist(), strict=True))
    assert dict(zip(ranked.nodes.tolist(), ranked.depth.tolist(), strict=True)) == depth_of
    rank = {s: i for i, s in enumerate(seeds)}
    root: dict[int, int] = {}
    for v, u in zip(ranked.nodes.tolist(), ranked.parent.tolist(), strict=True):
        root[v] = v if u < 0 else root[u]
    for v, d in depth_of.items():  # no seed better than v's own reaches v as quickly through a rooted parent
        if d == 0:
            continue
        for e in g.incident_edges(v):
            w = int(g.e_src[e]) if int(g.e_dst[e]) == v else int(g.e_dst[e])
            if depth_of.get(w) == d - 1:
                assert rank[root[v]] <= rank[root[w]]


@settings(max_examples=60, deadline=None)
@given(
    graphs(),
    st.sampled_from([(), ("R1",), ("R0", "R2")]),
    st.floats(0.0, 0.9),
    st.sampled_from([None, "s1", "s2"]),
)
def test_allowed_edges_are_those_a_walk_from_everywhere_follows(data, excluded, min_conf, scope) -> None:  # type: ignore[no-untyped-def]
    """Every third edge superseded, every fifth in scope s1: the edges the filter allows are the ones
    ``step`` from all nodes walks (the nodes are unscoped, so only the edges decide)."""
    n, edges = data
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label="T") for i in range(n)])
    g.add_edges(
        [
            Edge(
                id=f"e{k}",
                relation_type=r,
                source=f"n{s}",
                target=f"n{t}",
                confidence=c,
                scope="s1" if k % 5 == 0 else None,
                properties={SUPERSEDED_AT: "2020-01-01T00:00:00+00:00"} if k % 3 == 0 else {},
            )
            for k, (s, t, r, c) in enumerate(edges)
        ]
    )
    g.remove_edges([f"e{k}" for k in range(0, len(edges), 4)])
    flt = g.edge_filter(exclude_relations=excluded, min_confidence=min_conf, scope=scope)
    got = g.allowed_edges(flt).tolist()
    walked, _, _, _ = g.step(np.arange(n, dtype=np.int64), flt)
    assert got == sorted(set(walked.tolist()))
    for e in got:
        k = int(g.edge_ids[e][1:])
        assert k % 4 and k % 3 and edges[k][2] not in excluded and edges[k][3] >= min_conf
        assert scope != "s2" or k % 5
