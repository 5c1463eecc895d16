"""max_paths, the time limit (partial results, timed_out), the candidate cap, warnings, lookups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from cef.errors import QueryTimeoutError
from cef.graph.index import GraphIndex
from cef.model import Node
from cef.patterns import (
    CachedNodeLookup,
    GraphPattern,
    InMemoryNodeLookup,
    PatternExecutor,
    PatternResult,
    PatternTimeoutError,
    QueryCombinator,
)

from .conftest import NODES, random_graph

TWO_HOPS = {
    "start": {"label": "Patient"},
    "steps": [{"relation_type": "HAS_CONDITION"}, {"relation_type": "TREATED_BY"}],
}
# 5 hops both ways from every node, ending at one node in a hundred (v < 50): cannot finish in a second
FIVE_HOPS_ANYWHERE = {
    "start": {"label": "L0"},
    "steps": [{"direction": "BOTH"}] * 5,
    "constraints": [{"type": "LESS_THAN", "property": "v", "value": 50, "at_step": 4}],
    "max_paths": 20,
}


@pytest.fixture(scope="module")
def big() -> GraphIndex:
    """5,000 nodes, 60,000 edges: a 5-hop walk both ways has millions of paths."""
    return random_graph(5_000, 60_000)


def big_executor(graph: GraphIndex, **kw: Any) -> PatternExecutor:
    return PatternExecutor(
        graph, InMemoryNodeLookup.from_positions(graph, [{"v": i} for i in range(5_000)]), **kw
    )


def assert_valid(graph: GraphIndex, result: PatternResult, hops: int) -> None:
    """Every path is a real walk: each edge joins the nodes on either side of it; no node twice."""
    for p in result.paths:
        assert len(p.node_ids) == hops + 1 and len(p.edge_ids) == hops
        assert len(set(p.node_ids)) == len(p.node_ids)
        for a, b, e in zip(p.node_ids, p.node_ids[1:], p.edge_ids, strict=False):
            pe = graph.edge_pos(e)
            assert pe is not None
            ends = {graph.node_ids[int(graph.e_src[pe])], graph.node_ids[int(graph.e_dst[pe])]}
            assert ends == {a, b}


def test_max_paths_keeps_the_best(executor: PatternExecutor) -> None:
    result = executor.execute(
        GraphPattern.model_validate({**TWO_HOPS, "ranking": "EDGE_WEIGHT", "max_paths": 2})
    )
    assert [(p.start_node_id, p.end_node_id) for p in result.paths] == [("ann", "mtx"), ("bob", "mtx")]
    assert not result.truncated and not result.timed_out


def test_max_paths_on_a_big_graph(big: GraphIndex) -> None:
    ex = big_executor(big)
    pattern = GraphPattern.model_validate({**FIVE_HOPS_ANYWHERE, "start": {"node_ids": ["n1"]},
                                           "ranking": "PATH_LENGTH", "time_limit_ms": None})  # fmt: skip
    result = ex.execute(pattern)
    assert len(result.paths) == 20 and not result.truncated  # PATH_LENGTH stops at max_paths: ranks tie
    assert result.stats[0].paths == 20
    assert_valid(big, result, 5)


def test_time_limit_of_1ms_aborts_cleanly(big: GraphIndex) -> None:
    ex = big_executor(big)
    pattern = GraphPattern.model_validate({**FIVE_HOPS_ANYWHERE, "time_limit_ms": 1})
    ex.execute(pattern)  # warm numpy up
    result = ex.execute(pattern)
    assert result.timed_out
    assert result.stats[0].paths < 1_000_000  # far from finished
    assert len(result.paths) <= 20
    assert_valid(big, result, 5)


def test_time_limit_returns_the_partial_results_found(big: GraphIndex) -> None:
    # the fake clock (below) makes the 40 ms limit fall after 40 blocks whatever the machine's speed: a fast
    # machine finishes this whole search inside 150 real milliseconds
    ex = big_executor(big, clock=StepClock())
    result = ex.execute(GraphPattern.model_validate({**FIVE_HOPS_ANYWHERE, "time_limit_ms": 40}))
    assert result.timed_out and not result.truncated
    assert 0 < len(result.paths) <= 20
    assert_valid(big, result, 5)


class StepClock:
    """A fake clock: every reading advances one millisecond."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def test_time_limit_with_a_deterministic_clock(big: GraphIndex) -> None:
    pattern = GraphPattern.model_validate(
        {**FIVE_HOPS_ANYWHERE, "time_limit_ms": 12, "ranking": "EDGE_WEIGHT"}
    )
    first = big_executor(big, clock=StepClock()).execute(pattern)
    again = big_executor(big, clock=StepClock()).execute(pattern)
    assert first.timed_out and len(first.paths) == 20
    assert 20 <= first.stats[0].paths < 100_000
    assert [p.node_ids for p in first.paths] == [p.node_ids for p in again.paths]  # same cut, same answer
    scores = [p.score for p in first.paths]
    assert scores == sorted(scores, reverse=True)


def test_raise_on_timeout_carries_the_partial_result(big: GraphIndex) -> None:
    pattern = GraphPattern.model_validate({**FIVE_HOPS_ANYWHERE, "time_limit_ms": 12})
    with pytest.raises(PatternTimeoutError) as info:
        big_executor(big, clock=StepClock()).execute(pattern, raise_on_timeout=True)
    assert isinstance(info.value, QueryTimeoutError)
    assert info.value.partial.timed_out and info.value.partial.paths


def test_combinator_time_budget_is_shared(big: GraphIndex) -> None:
    p = {**FIVE_HOPS_ANYWHERE, "time_limit_ms": 50}
    comb = QueryCombinator.model_validate({"type": "UNION", "patterns": [p, p, p], "time_limit_ms": 20})
    result = big_executor(big, clock=StepClock()).execute_combinator(comb)
    assert result.timed_out
    assert result.stats[-1].paths == 0 and result.stats[-1].timed_out  # nothing left for the last


def test_candidate_cap_truncates(big: GraphIndex) -> None:
    ex = big_executor(big, max_candidates=500)
    result = ex.execute(GraphPattern.model_validate({**FIVE_HOPS_ANYWHERE, "time_limit_ms": None}))
    assert result.truncated and not result.timed_out
    assert result.stats[0].paths == 500 and len(result.paths) == 20


def test_block_size_does_not_change_the_answer(big: GraphIndex) -> None:
    pattern = GraphPattern.model_validate(
        {"start": {"node_ids": ["n1", "n2", "n3"]}, "steps": [{"direction": "BOTH"}] * 3, "time_limit_ms": None,
         "constraints": [{"type": "GREATER_THAN", "target": "EDGE", "property": "confidence", "value": 0.5}]}
    )  # fmt: skip
    small = big_executor(big, block_size=7).execute(pattern)
    large = big_executor(big, block_size=4096).execute(pattern)
    assert small.stats[0].paths == large.stats[0].paths > 100
    assert [p.model_dump() for p in small.paths] == [p.model_dump() for p in large.paths]
    assert_valid(big, small, 3)


def test_unknown_names_give_warnings_not_errors(executor: PatternExecutor) -> None:
    result = executor.execute(GraphPattern.model_validate({"start": {"label": "Pateint"}, "steps": [{}]}))
    assert result.paths == [] and any("'Pateint'" in w and "Patient" in w for w in result.warnings)
    result = executor.execute(
        GraphPattern.model_validate(
            {"start": {"node_ids": ["ann", "nobody"]}, "steps": [{"relation_type": "TAKEZ"}]}
        )
    )
    assert any("TAKEZ" in w and "TAKES" in w for w in result.warnings)
    assert any("'nobody'" in w for w in result.warnings)
    assert any("found no edge to walk" in w for w in result.warnings)


def test_empty_result_says_where_paths_were_lost(executor: PatternExecutor) -> None:
    pattern = {"start": {"label": "Patient"}, "steps": [{"relation_type": "TAKES", "constraints": [
        {"type": "PROPERTY_EQUALS", "property": "status", "value": "recalled"}]}]}  # fmt: skip
    result = executor.execute(GraphPattern.model_validate(pattern))
    assert result.paths == []
    assert any("step 1" in w and "3 move(s)" in w and "node constraints" in w for w in result.warnings)


def test_in_memory_lookup_by_ids_and_positions(graph: GraphIndex) -> None:
    by_nodes = InMemoryNodeLookup(graph, NODES)
    by_ids = InMemoryNodeLookup.from_properties(graph, {n.id: n.properties for n in NODES})
    pos = np.array([graph.pos("bob"), graph.pos("ra")])
    assert by_nodes.properties(pos) == by_ids.properties(pos)
    assert by_nodes.properties(pos)[0] == {"name": "Bob", "age": 40, "address": {"city": "Lyon"}}
    assert by_nodes.properties(np.array([10_000])) == [None]


def test_cached_lookup_batches_caches_and_invalidates(graph: GraphIndex) -> None:
    calls: list[list[str]] = []
    records = {n.id: n for n in NODES}

    def fetch(ids: Sequence[str]) -> list[Node]:
        calls.append(list(ids))
        return [records[i] for i in ids if i in records]

    lookup = CachedNodeLookup(graph, fetch, capacity=3)
    pos = np.array([graph.pos(i) for i in ("ann", "bob", "ann")])
    assert [(p or {}).get("name") for p in lookup.properties(pos)] == ["Ann", "Bob", "Ann"]
    assert calls == [["ann", "bob"]]  # one batched read, no repeats
    lookup.properties(pos)
    assert len(calls) == 1 and lookup.hits == 4  # the repeated ann, then all three
    records["ann"] = Node(id="ann", label="Patient", properties={"name": "Anne"})
    lookup.invalidate(["ann"])
    assert lookup.properties(pos[:1])[0] == {"name": "Anne"}
    assert calls[-1] == ["ann"]
    lookup.properties(
        np.array([graph.pos(i) for i in ("cat", "ra", "dia")])
    )  # capacity 3: ann and bob evicted
    lookup.properties(pos[:1])
    assert calls[-1] == ["ann"]


def test_executor_works_over_a_cached_lookup(graph: GraphIndex) -> None:
    records = {n.id: n for n in NODES}
    lookup = CachedNodeLookup(graph, lambda ids: [records[i] for i in ids])
    ex = PatternExecutor(graph, lookup)
    pattern = {"start": {"label": "Patient"}, "steps": [{"relation_type": "TAKES", "constraints": [
        {"type": "PROPERTY_EQUALS", "property": "status", "value": "approved"}]}]}  # fmt: skip
    assert {p.end_node_id for p in ex.execute(GraphPattern.model_validate(pattern)).paths} == {"mtx", "pred"}
