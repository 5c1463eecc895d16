"""Directions, inverse and bidirectional relations, validity time and scope."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cef.graph.index import GraphIndex
from cef.model import Edge, Node
from cef.patterns import GraphPattern, InMemoryNodeLookup, PatternExecutor, PatternResult


def run(executor: PatternExecutor, start: str, **step: Any) -> PatternResult:
    pattern: dict[str, Any] = {"start": {"node_ids": [start]}, "steps": [step]}
    return executor.execute(GraphPattern.model_validate(pattern))


def ends(result: PatternResult) -> set[str]:
    return {p.end_node_id for p in result.paths}


def test_outgoing_follows_edges_as_stored(executor: PatternExecutor) -> None:
    assert ends(run(executor, "ann", relation_type="HAS_CONDITION", direction="OUTGOING")) == {"ra"}
    assert ends(run(executor, "ra", relation_type="HAS_CONDITION", direction="OUTGOING")) == set()


def test_incoming_walks_against_the_edge(executor: PatternExecutor) -> None:
    result = run(executor, "ra", relation_type="HAS_CONDITION", direction="INCOMING")
    assert ends(result) == {"ann", "bob"}
    assert {tuple(p.relation_types) for p in result.paths} == {("CONDITION_OF",)}  # named as walked
    assert ends(run(executor, "ann", relation_type="HAS_CONDITION", direction="INCOMING")) == set()


def test_both_walks_either_way(executor: PatternExecutor) -> None:
    assert ends(run(executor, "ra", direction="BOTH")) == {"ann", "bob", "mtx", "pred"}
    assert ends(run(executor, "ra", direction="OUTGOING")) == set()
    assert ends(run(executor, "ra", direction="INCOMING")) == {"ann", "bob", "mtx", "pred"}


def test_inverse_name_walks_the_base_relation_backward(executor: PatternExecutor) -> None:
    result = run(executor, "ra", relation_type="TREATED_BY")
    assert ends(result) == {"mtx", "pred"}
    assert {tuple(p.edge_ids) for p in result.paths} == {("e_mtx_ra",), ("e_pred_ra",)}
    assert ends(run(executor, "mtx", relation_type="TREATED_BY", direction="INCOMING")) == {"ra"}


def test_relation_list_means_any_of_them(executor: PatternExecutor) -> None:
    assert ends(run(executor, "ann", relation_type=["TAKES", "HAS_CONDITION"])) == {"pred", "ra"}


def test_bidirectional_relation_is_walked_both_ways_even_outgoing(executor: PatternExecutor) -> None:
    assert ends(run(executor, "bob", relation_type="KNOWS", direction="OUTGOING")) == {"ann"}
    assert ends(run(executor, "ann", relation_type="KNOWS", direction="OUTGOING")) == {"bob"}


def test_valid_at_only_walks_edges_valid_then(executor: PatternExecutor) -> None:
    base = {"start": {"node_ids": ["ann"]}, "steps": [{"relation_type": "KNOWS"}]}
    then = GraphPattern.model_validate({**base, "valid_at": datetime(2021, 1, 1, tzinfo=UTC)})
    later = GraphPattern.model_validate({**base, "valid_at": "2023-01-01T00:00:00Z"})
    assert ends(executor.execute(then)) == {"bob"}
    assert ends(executor.execute(later)) == set()


def test_scope_keeps_unscoped_and_in_scope_data() -> None:
    g = GraphIndex()
    nodes = [Node(id="a", label="T"), Node(id="b", label="T", scope="x"), Node(id="c", label="T", scope="y")]
    g.add_nodes(nodes)
    g.add_edges([Edge(id="ab", relation_type="R", source="a", target="b", scope="x"),
                 Edge(id="ac", relation_type="R", source="a", target="c", scope="y")])  # fmt: skip
    ex = PatternExecutor(g, InMemoryNodeLookup(g, nodes))
    p = GraphPattern.model_validate({"start": {"node_ids": ["a"]}, "steps": [{}], "scope": "x"})
    assert ends(ex.execute(p)) == {"b"}


def test_cycles_are_pruned_unless_allowed(executor: PatternExecutor) -> None:
    steps = [{"relation_type": "HAS_CONDITION"}, {"relation_type": "CONDITION_OF"}]
    simple = GraphPattern.model_validate({"start": {"node_ids": ["ann"]}, "steps": steps})
    cyclic = simple.model_copy(update={"allow_cycles": True})
    assert ends(executor.execute(simple)) == {"bob"}
    assert executor.execute(simple).stats[0].steps[1].pruned_cycles == 1
    assert ends(executor.execute(cyclic)) == {"ann", "bob"}


def test_source_label_filters_the_node_a_step_leaves_from(executor: PatternExecutor) -> None:
    # from RA both ways, then TAKES back out only from Patients (Drugs have no TAKES anyway; check a 2nd hop)
    steps = [{"direction": "BOTH"}, {"source_label": "Drug", "relation_type": "TREATS"}]
    result = executor.execute(GraphPattern.model_validate({"start": {"node_ids": ["ra"]}, "steps": steps,
                                                           "allow_cycles": True}))  # fmt: skip
    assert {p.node_ids[1] for p in result.paths} == {"mtx", "pred"}
    assert ends(result) == {"ra"}
