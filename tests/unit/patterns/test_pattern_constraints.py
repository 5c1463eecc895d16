"""Each constraint type keeps the paths that meet it and prunes the rest, while walking."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from cef.graph.index import GraphIndex
from cef.patterns import (
    Constraint,
    GraphPattern,
    InMemoryNodeLookup,
    PatternExecutor,
    PatternResult,
    StepStats,
)

from .conftest import NODES

# (Patient)-[TAKES]->(Drug): bob->mtx (Methotrexate, approved), ann->pred (Prednisone, approved),
# cat->ins (Insulin, withdrawn). Constraints on the reached Drug:
DRUG_CASES = [
    ("PROPERTY_EQUALS", "status", "approved", {"mtx", "pred"}),
    ("PROPERTY_IN", "name", ["Insulin", "Prednisone"], {"pred", "ins"}),
    ("NOT_IN", "status", ["withdrawn"], {"mtx", "pred"}),
    ("CONTAINS", "name", "tho", {"mtx"}),
    ("STARTS_WITH", "name", "Pred", {"pred"}),
    ("ENDS_WITH", "name", "in", {"ins"}),
    ("REGEX_MATCH", "name", "^[MP].*e$", {"mtx", "pred"}),
]
# (Drug)<-[TAKES]-(Patient): pred->ann (70), mtx->bob (40), ins->cat (30). Constraints on the Patient:
AGE_CASES = [
    ("GREATER_THAN", "age", 40, {"ann"}),
    ("LESS_THAN", "age", 40, {"cat"}),
    ("GREATER_THAN_EQUALS", "age", 40, {"ann", "bob"}),
    ("LESS_THAN_EQUALS", "age", 40, {"bob", "cat"}),
]


def run(executor: PatternExecutor, pattern: dict[str, Any]) -> PatternResult:
    return executor.execute(GraphPattern.model_validate(pattern))


def ends(result: PatternResult) -> set[str]:
    return {p.end_node_id for p in result.paths}


def step_stats(result: PatternResult, step: int) -> StepStats:
    return result.stats[0].steps[step]


def drug_pattern(constraint: dict[str, Any] | None) -> dict[str, Any]:
    step: dict[str, Any] = {"relation_type": "TAKES", "target_label": "Drug"}
    if constraint:
        step["constraints"] = [constraint]
    return {"start": {"label": "Patient"}, "steps": [step]}


def test_without_constraints_every_drug_is_reached(executor: PatternExecutor) -> None:
    assert ends(run(executor, drug_pattern(None))) == {"mtx", "pred", "ins"}


@pytest.mark.parametrize(("ctype", "prop", "value", "expected"), DRUG_CASES)
def test_node_constraint_types_on_strings(
    executor: PatternExecutor, ctype: str, prop: str, value: Any, expected: set[str]
) -> None:
    result = run(executor, drug_pattern({"type": ctype, "property": prop, "value": value}))
    assert ends(result) == expected  # the matching paths pass...
    assert step_stats(result, 0).pruned_by_node == 3 - len(expected)  # ...the others are pruned on the step
    assert all(
        ctype.split("_")[0].lower() in p.explanation.lower() or "met:" in p.explanation for p in result.paths
    )


@pytest.mark.parametrize(("ctype", "prop", "value", "expected"), AGE_CASES)
def test_node_constraint_types_on_numbers(
    executor: PatternExecutor, ctype: str, prop: str, value: Any, expected: set[str]
) -> None:
    pattern = {
        "start": {"label": "Drug"},
        "steps": [
            {
                "relation_type": "TAKES",
                "direction": "INCOMING",
                "target_label": "Patient",
                "constraints": [{"type": ctype, "property": prop, "value": value}],
            }
        ],
    }
    result = run(executor, pattern)
    assert ends(result) == expected
    assert step_stats(result, 0).pruned_by_node == 3 - len(expected)


def test_contains_looks_inside_list_properties(executor: PatternExecutor) -> None:
    pattern = {
        "start": {"label": "Drug"},
        "steps": [{"relation_type": "TAKES", "direction": "INCOMING",
                   "constraints": [{"type": "CONTAINS", "property": "tags", "value": "smoker"}]}],
    }  # fmt: skip
    assert ends(run(executor, pattern)) == {"ann"}


def test_ignore_case_and_case_sensitive_default(executor: PatternExecutor) -> None:
    c = {"type": "PROPERTY_EQUALS", "property": "name", "value": "INSULIN"}
    assert ends(run(executor, drug_pattern(c))) == set()
    assert ends(run(executor, drug_pattern({**c, "ignore_case": True}))) == {"ins"}
    rx = {"type": "REGEX_MATCH", "property": "name", "value": "^insulin$", "ignore_case": True}
    assert ends(run(executor, drug_pattern(rx))) == {"ins"}


def test_numbers_and_strings_do_not_mix(executor: PatternExecutor) -> None:
    # "40" is a string: age (a number) never compares with it; 40.0 equals 40
    text = {"type": "PROPERTY_EQUALS", "property": "age", "value": "40"}
    num = {"type": "PROPERTY_EQUALS", "property": "age", "value": 40.0}
    start = {"start": {"label": "Drug"}}
    step: dict[str, Any] = {"relation_type": "TAKES", "direction": "INCOMING"}
    assert ends(run(executor, {**start, "steps": [{**step, "constraints": [text]}]})) == set()
    assert ends(run(executor, {**start, "steps": [{**step, "constraints": [num]}]})) == {"bob"}


def test_missing_property_fails_everything_but_not_in(executor: PatternExecutor) -> None:
    # only Bob and Cat have an address
    base = {"start": {"label": "Drug"}}
    step: dict[str, Any] = {"relation_type": "TAKES", "direction": "INCOMING"}
    lyon_in = {"type": "PROPERTY_IN", "property": "address.city", "value": ["Lyon"]}
    not_lyon = {"type": "NOT_IN", "property": "address.city", "value": ["Lyon"]}
    has_city = {"type": "REGEX_MATCH", "property": "address.city", "value": "."}
    assert ends(run(executor, {**base, "steps": [{**step, "constraints": [lyon_in]}]})) == {"bob"}
    assert ends(run(executor, {**base, "steps": [{**step, "constraints": [not_lyon]}]})) == {"ann", "cat"}
    assert ends(run(executor, {**base, "steps": [{**step, "constraints": [has_city]}]})) == {"bob", "cat"}
    is_null = {"type": "PROPERTY_EQUALS", "property": "address", "value": None}
    assert ends(run(executor, {**base, "steps": [{**step, "constraints": [is_null]}]})) == {"ann"}


def test_node_builtins(executor: PatternExecutor) -> None:
    excluded = {"type": "NOT_IN", "property": "@id", "value": ["ra"]}
    pattern = {"start": {"node_ids": ["ann"]}, "steps": [{"constraints": [excluded]}]}  # any relation
    assert ends(run(executor, pattern)) == {"pred", "bob"}  # ann's neighbours except RA (house is incoming)
    by_label = {"type": "PROPERTY_IN", "property": "@label", "value": ["Drug"]}
    assert ends(run(executor, {"start": {"node_ids": ["ann"]}, "steps": [{"constraints": [by_label]}]})) == {
        "pred"
    }


def test_node_label_limits_where_a_constraint_applies(executor: PatternExecutor) -> None:
    # from RA, any direction: ann, bob (Patient), mtx, pred (Drug). Only Drugs are tested.
    c = {"type": "PROPERTY_EQUALS", "property": "name", "value": "Methotrexate", "node_label": "Drug"}
    pattern = {"start": {"node_ids": ["ra"]}, "steps": [{"direction": "BOTH", "constraints": [c]}]}
    assert ends(run(executor, pattern)) == {"ann", "bob", "mtx"}


def test_pattern_constraints_apply_every_step_or_the_pinned_one(executor: PatternExecutor) -> None:
    steps = [{"relation_type": "HAS_CONDITION"}, {"relation_type": "TREATED_BY"}]
    approved = Constraint.property_equals("Drug", "status", "approved").model_dump()
    everywhere = {"start": {"label": "Patient"}, "steps": steps, "constraints": [approved]}
    assert ends(run(executor, everywhere)) == {"mtx", "pred"}
    wrong_step = {**everywhere, "constraints": [{**approved, "node_label": None, "at_step": 0}]}
    assert ends(run(executor, wrong_step)) == set()  # conditions have no status: pruned at step 0
    res = run(executor, wrong_step)
    assert step_stats(res, 0).pruned_by_node == 3 and step_stats(res, 1).moves == 0


def test_pruning_happens_during_the_walk(executor: PatternExecutor) -> None:
    # code == E11 keeps Diabetes only at step 0, so step 1 walks from Diabetes alone
    steps: list[dict[str, Any]] = [
        {"relation_type": "HAS_CONDITION", "constraints": [{"type": "PROPERTY_EQUALS", "property": "code",
                                                           "value": "E11"}]},
        {"relation_type": "TREATED_BY"},
    ]  # fmt: skip
    pruned = run(executor, {"start": {"label": "Patient"}, "steps": steps})
    free = run(executor, {"start": {"label": "Patient"}, "steps": [steps[0] | {"constraints": []}, steps[1]]})
    assert ends(pruned) == {"ins"}
    assert step_stats(pruned, 1).moves == 1 < step_stats(free, 1).moves == 3


class CountingLookup:
    def __init__(self, inner: InMemoryNodeLookup) -> None:
        self.inner = inner
        self.asked: list[int] = []

    def properties(self, positions: np.ndarray) -> Sequence[Any]:
        self.asked.extend(positions.tolist())
        return self.inner.properties(positions)


def test_properties_are_read_once_per_node_and_only_when_needed(graph: GraphIndex) -> None:
    lookup = CountingLookup(InMemoryNodeLookup(graph, NODES))
    ex = PatternExecutor(graph, lookup)
    # two patients reach RA: its properties are read once; Diabetes' never (its edge is excluded first)
    steps = [
        {"relation_type": "HAS_CONDITION",
         "constraints": [{"type": "STARTS_WITH", "property": "name", "value": "R"},
                         {"type": "NOT_IN", "target": "EDGE", "property": "id", "value": "e_cat_dia"}]},
    ]  # fmt: skip
    pattern = GraphPattern.model_validate({"start": {"node_ids": ["ann", "bob", "cat"]}, "steps": steps})
    lookup.asked.clear()
    walk_reads = _reads_during_walk(ex, pattern, lookup)
    ra = graph.pos("ra")
    assert ra is not None and walk_reads.count(ra) == 1
    assert graph.pos("dia") not in walk_reads


def _reads_during_walk(ex: PatternExecutor, pattern: GraphPattern, lookup: CountingLookup) -> list[int]:
    result = ex.execute(pattern)
    assert {p.end_node_id for p in result.paths} == {"ra"}
    # the last lookup call is for display names of the result paths; drop it
    names = {ex.graph.pos(n) for p in result.paths for n in p.node_ids}
    return lookup.asked[: len(lookup.asked) - len(names)]


@pytest.mark.parametrize(
    ("ctype", "prop", "value", "expected"),
    [
        ("GREATER_THAN_EQUALS", "confidence", 0.7, {"mtx", "pred", "ins"}),  # 0.7 is kept (float32 safe)
        ("GREATER_THAN", "confidence", 0.7, {"mtx", "ins"}),
        ("LESS_THAN", "confidence", 0.9, {"mtx", "pred"}),
        ("PROPERTY_IN", "confidence", [0.8, 1.0], {"mtx", "ins"}),
        ("NOT_IN", "id", ["e_cat_ins"], {"mtx", "pred"}),
        ("PROPERTY_EQUALS", "relation", "TAKES", {"mtx", "pred", "ins"}),
    ],
)
def test_edge_constraints(
    executor: PatternExecutor, ctype: str, prop: str, value: Any, expected: set[str]
) -> None:
    c = {"type": ctype, "target": "EDGE", "property": prop, "value": value}
    result = run(executor, drug_pattern(c))
    assert ends(result) == expected
    assert step_stats(result, 0).pruned_by_edge == 3 - len(expected)


def test_edge_relation_is_the_walked_name(executor: PatternExecutor) -> None:
    c = {"type": "PROPERTY_EQUALS", "target": "EDGE", "property": "relation", "value": "CONDITION_OF"}
    pattern = {"start": {"node_ids": ["ra"]}, "steps": [{"direction": "BOTH", "constraints": [c]}]}
    result = run(executor, pattern)
    assert ends(result) == {"ann", "bob"}
    assert {r for p in result.paths for r in p.relation_types} == {"CONDITION_OF"}


def test_edge_time_constraints_accept_iso_strings(executor: PatternExecutor) -> None:
    c = {
        "type": "GREATER_THAN_EQUALS",
        "target": "EDGE",
        "property": "valid_from",
        "value": "2019-06-01T00:00:00Z",
    }
    pattern = {"start": {"node_ids": ["bob"]}, "steps": [{"direction": "BOTH", "constraints": [c]}]}
    assert ends(run(executor, pattern)) == {"ann"}  # only KNOWS has a valid_from (2020)


def test_start_properties_and_constraints(executor: PatternExecutor) -> None:
    pattern = {
        "start": {"label": "Patient", "properties": {"name": "Bob"}},
        "steps": [{"relation_type": "TAKES"}],
    }
    result = run(executor, pattern)
    assert ends(result) == {"mtx"} and result.stats[0].start_matched == 1
    pattern = {
        "start": {
            "label": "Patient",
            "constraints": [{"type": "GREATER_THAN", "property": "age", "value": 35}],
        },
        "steps": [{"relation_type": "TAKES"}],
    }
    assert ends(run(executor, pattern)) == {"mtx", "pred"}
