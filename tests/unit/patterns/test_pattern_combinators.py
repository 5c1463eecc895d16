"""INTERSECTION, UNION and SEQUENTIAL combinations of patterns."""

from __future__ import annotations

from typing import Any

import pytest

from cef.errors import ValidationError
from cef.patterns import GraphPattern, PatternExecutor, QueryCombinator


def pattern(pid: str, start: dict[str, Any], *steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"pattern_id": pid, "start": start, "steps": list(steps), **extra}


# ann -HAS_CONDITION-> RA -TREATED_BY-> {mtx, pred}
VIA_CONDITION = pattern(
    "via_condition",
    {"node_ids": ["ann"]},
    {"relation_type": "HAS_CONDITION"},
    {"relation_type": "TREATED_BY"},
)
# every patient -TAKES-> {mtx, pred, ins}
TAKEN = pattern("taken", {"label": "Patient"}, {"relation_type": "TAKES"})
# bob -TAKES-> mtx
BOB_TAKES = pattern("bob_takes", {"node_ids": ["bob"]}, {"relation_type": "TAKES"})


def combine(kind: str, *patterns: dict[str, Any], **extra: Any) -> QueryCombinator:
    return QueryCombinator.model_validate({"type": kind, "patterns": list(patterns), **extra})


def test_intersection_keeps_paths_ending_at_common_nodes(executor: PatternExecutor) -> None:
    result = executor.execute_combinator(combine("INTERSECTION", VIA_CONDITION, TAKEN))
    assert set(result.end_node_ids) == {"mtx", "pred"}
    assert {p.pattern_id for p in result.paths} == {"via_condition", "taken"}
    assert len(result.paths) == 4  # two from each pattern, none ending at insulin
    # the second pattern's walk was pruned by the first's end nodes (insulin never became a path)
    assert result.stats[1].steps[0].pruned_by_node == 1


def test_intersection_of_three_narrows_to_all(executor: PatternExecutor) -> None:
    result = executor.execute_combinator(combine("INTERSECTION", VIA_CONDITION, TAKEN, BOB_TAKES))
    assert result.end_node_ids == ["mtx"]
    assert {p.pattern_id for p in result.paths} == {"via_condition", "taken", "bob_takes"}


def test_empty_intersection_stops_early(executor: PatternExecutor) -> None:
    cat = pattern("cat", {"node_ids": ["cat"]}, {"relation_type": "TAKES"})
    result = executor.execute_combinator(combine("INTERSECTION", BOB_TAKES, cat, TAKEN))
    assert result.paths == []
    assert len(result.stats) == 2 and any("not run" in w for w in result.warnings)


def test_union_merges_and_removes_duplicates(executor: PatternExecutor) -> None:
    result = executor.execute_combinator(combine("UNION", TAKEN, BOB_TAKES, VIA_CONDITION))
    keys = [(tuple(p.node_ids), tuple(p.edge_ids)) for p in result.paths]
    assert len(keys) == len(set(keys)) == 5  # bob->mtx appears in TAKEN and BOB_TAKES: kept once
    assert set(result.end_node_ids) == {"mtx", "pred", "ins"}
    bob = [p for p in result.paths if p.node_ids == ["bob", "mtx"]]
    assert [p.pattern_id for p in bob] == ["taken"]  # the first pattern that found it


def test_union_respects_each_patterns_max_paths_and_the_total(executor: PatternExecutor) -> None:
    capped = {**TAKEN, "max_paths": 1}
    result = executor.execute_combinator(combine("UNION", capped, VIA_CONDITION))
    assert sum(p.pattern_id == "taken" for p in result.paths) == 1
    result = executor.execute_combinator(combine("UNION", TAKEN, VIA_CONDITION, max_paths=2))
    assert len(result.paths) == 2


def test_sequential_feeds_end_nodes_forward_and_chains_paths(executor: PatternExecutor) -> None:
    conditions = pattern("conditions", {"node_ids": ["ann"]}, {"relation_type": "HAS_CONDITION"})
    sharing = pattern("sharing", {}, {"relation_type": "CONDITION_OF", "target_label": "Patient"})
    drugs = pattern("drugs", {}, {"relation_type": "TAKES"})
    result = executor.execute_combinator(combine("SEQUENTIAL", conditions, sharing, drugs))
    assert [p.node_ids for p in result.paths] == [["ann", "ra", "bob", "mtx"]]  # ann->ra->ann is a cycle
    path = result.paths[0]
    assert path.pattern_id == "conditions>sharing>drugs"
    assert path.relation_types == ["HAS_CONDITION", "CONDITION_OF", "TAKES"]
    for pid in ("conditions", "sharing", "drugs"):
        assert f"pattern '{pid}'" in path.explanation


def test_sequential_later_start_conditions_filter_the_seeds(executor: PatternExecutor) -> None:
    neighbours = pattern("n", {"node_ids": ["ra"]}, {"direction": "BOTH"})  # ann, bob, mtx, pred
    drugs_only = pattern("treats", {"label": "Drug"}, {"relation_type": "TREATS"}, allow_cycles=True)
    result = executor.execute_combinator(combine("SEQUENTIAL", neighbours, drugs_only))
    assert {p.node_ids[1] for p in result.paths} == {"mtx", "pred"}
    assert result.stats[1].start_nodes == 4 and result.stats[1].start_matched == 2


def test_entry_points_start_patterns_without_node_ids(executor: PatternExecutor) -> None:
    takes = pattern("takes", {}, {"relation_type": "TAKES"})
    result = executor.execute(GraphPattern.model_validate(takes), start_nodes=["cat"])
    assert result.end_node_ids == ["ins"]
    result = executor.execute_combinator(combine("UNION", takes, BOB_TAKES), start_nodes=["ann"])
    assert set(result.end_node_ids) == {"pred", "mtx"}  # BOB_TAKES keeps its own start


def test_a_pattern_needs_somewhere_to_start(executor: PatternExecutor) -> None:
    with pytest.raises(ValidationError, match="nowhere to start"):
        executor.execute(GraphPattern.model_validate({"steps": [{"relation_type": "TAKES"}]}))


def test_run_dispatches_patterns_and_combinators(executor: PatternExecutor) -> None:
    single = executor.run(GraphPattern.model_validate(BOB_TAKES))
    combined = executor.run(combine("UNION", BOB_TAKES))
    assert [p.node_ids for p in single.paths] == [p.node_ids for p in combined.paths] == [["bob", "mtx"]]
