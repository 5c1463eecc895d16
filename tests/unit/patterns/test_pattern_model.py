"""The pattern DTOs: lenient enums, validation that teaches, JSON Schema for the front doors."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import ValidationError

import cef.patterns as patterns
from cef.patterns import (
    CombinatorType,
    Constraint,
    ConstraintTarget,
    ConstraintType,
    Direction,
    GraphPattern,
    HybridWeights,
    PatternStart,
    QueryCombinator,
    RankingStrategy,
    TraversalStep,
)


def test_all_is_sorted_and_importable() -> None:
    assert patterns.__all__ == sorted(patterns.__all__)
    for name in patterns.__all__:
        assert getattr(patterns, name) is not None


def test_the_eleven_constraint_types_of_the_seed() -> None:
    assert [t.value for t in ConstraintType] == [
        "PROPERTY_EQUALS",
        "PROPERTY_IN",
        "NOT_IN",
        "GREATER_THAN",
        "LESS_THAN",
        "GREATER_THAN_EQUALS",
        "LESS_THAN_EQUALS",
        "CONTAINS",
        "STARTS_WITH",
        "ENDS_WITH",
        "REGEX_MATCH",
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("OUTGOING", Direction.OUTGOING), ("outgoing", Direction.OUTGOING), ("out", Direction.OUTGOING),
     ("In", Direction.INCOMING), ("both", Direction.BOTH), ("any", Direction.BOTH)],
)  # fmt: skip
def test_direction_accepts_any_case_and_short_names(raw: str, expected: Direction) -> None:
    assert TraversalStep(direction=raw).direction is expected  # type: ignore[arg-type]


def test_enums_are_case_insensitive_everywhere() -> None:
    c = Constraint.model_validate({"type": "property_equals", "property": "x", "value": 1, "target": "node"})
    assert c.type is ConstraintType.PROPERTY_EQUALS and c.target is ConstraintTarget.NODE
    assert (
        GraphPattern.model_validate({"steps": [{}], "ranking": "edge_weight"}).ranking
        is RankingStrategy.EDGE_WEIGHT
    )
    with pytest.raises(ValidationError):
        TraversalStep(direction="sideways")  # type: ignore[arg-type]


def test_in_and_not_in_wrap_a_single_value() -> None:
    assert Constraint(type=ConstraintType.PROPERTY_IN, property="x", value="a").value == ["a"]
    assert Constraint(type=ConstraintType.NOT_IN, property="x", value=3).value == [3]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": "REGEX_MATCH", "property": "name", "value": "(unclosed"}, "invalid regular expression"),
        ({"type": "GREATER_THAN", "property": "age", "value": [1, 2]}, "not a list"),
        ({"type": "GREATER_THAN", "property": "age", "value": None}, "needs a number or a string"),
        ({"type": "STARTS_WITH", "property": "name", "value": 3}, "needs a string"),
        ({"type": "CONTAINS", "property": "name"}, "CONTAINS needs a value"),
        ({"type": "PROPERTY_EQUALS", "property": "@colour", "value": 1}, "not a node built-in"),
        ({"type": "PROPERTY_EQUALS", "target": "EDGE", "property": "colour", "value": 1}, "edges can be tested on"),
        ({"type": "STARTS_WITH", "target": "EDGE", "property": "weight", "value": "1"}, "is a number"),
        ({"type": "GREATER_THAN", "target": "EDGE", "property": "confidence", "value": "high"}, "compared with numbers"),
        ({"type": "GREATER_THAN", "target": "EDGE", "property": "valid_from", "value": "yesterday"}, "ISO-8601"),
        ({"type": "PROPERTY_EQUALS", "target": "EDGE", "property": "weight", "value": 1, "node_label": "X"},
         "node_label only applies"),
    ],
)  # fmt: skip
def test_invalid_constraints_explain_themselves(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Constraint.model_validate(fields)
    # the published JSON Schema states the same rule: a schema-valid constraint is never refused
    schema = Constraint.model_json_schema()
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    assert not jsonschema.Draft202012Validator(schema, format_checker=checker).is_valid(fields)


def test_edge_properties_are_normalized_to_builtins() -> None:
    c = Constraint.edge("confidence", ConstraintType.GREATER_THAN_EQUALS, 0.5)
    assert c.property == "@confidence" and c.target is ConstraintTarget.EDGE
    assert c.describe() == "edge confidence >= 0.5"


def test_rules_the_schema_cannot_state_are_warnings_not_errors() -> None:
    """at_step against the number of steps, at_step inside a step, an edge constraint on the start: the
    pattern is accepted and says what checks nothing."""
    pinned = Constraint.property_equals(None, "x", 1, step=1)
    edge = Constraint.edge("weight", ConstraintType.GREATER_THAN, 0.5)
    p = GraphPattern(
        start=PatternStart(constraints=[edge]),
        steps=[TraversalStep(constraints=[Constraint.property_equals(None, "y", 2, step=0)])],
        constraints=[pinned],
    )
    problems = p.problems()
    assert len(problems) == 3, problems
    assert "start constraint edge weight > 0.5 tests an edge" in problems[0]
    assert "step 0: constraint y = 2 has at_step=0" in problems[1]
    assert "at_step=1 but the pattern has 1 step(s)" in problems[2] and "checks nothing" in problems[2]
    assert p.constraints_at(0) == p.steps[0].constraints  # the out-of-range constraint applies nowhere
    assert GraphPattern(steps=[TraversalStep(), TraversalStep()], constraints=[pinned]).problems() == []


def test_all_zero_hybrid_weights_are_refused_by_the_schema_too() -> None:
    zero = {"path_length": 0, "edge_weight": 0.0, "node_centrality": 0, "semantic": 0}
    with pytest.raises(ValidationError, match="at least one hybrid weight"):
        HybridWeights.model_validate(zero)
    schema = HybridWeights.model_json_schema()
    assert not jsonschema.Draft202012Validator(schema).is_valid(zero)
    assert jsonschema.Draft202012Validator(schema).is_valid({**zero, "semantic": 0.1})
    assert jsonschema.Draft202012Validator(schema).is_valid({"path_length": 0})  # the others default > 0


def test_pattern_needs_a_step_and_bounds_its_limits() -> None:
    with pytest.raises(ValidationError):
        GraphPattern(steps=[])
    with pytest.raises(ValidationError):
        GraphPattern(steps=[TraversalStep()], max_paths=0)
    with pytest.raises(ValidationError):
        GraphPattern.model_validate({"steps": [{}], "unknown_field": 1})


def test_constraints_at_merges_step_and_pattern_constraints() -> None:
    own = Constraint.property_equals(None, "a", 1)
    everywhere = Constraint.property_equals(None, "b", 2)
    pinned = Constraint.property_equals(None, "c", 3, step=1)
    p = GraphPattern(
        steps=[TraversalStep(constraints=[own]), TraversalStep()], constraints=[everywhere, pinned]
    )
    assert p.constraints_at(0) == [own, everywhere]
    assert p.constraints_at(1) == [everywhere, pinned]


def test_single_hop_factory() -> None:
    p = GraphPattern.single_hop("Patient", "TAKES", "Drug", max_paths=5)
    assert p.pattern_id == "single_hop" and p.max_paths == 5
    assert p.steps[0].describe() == "(Patient)-[TAKES]->(Drug)"


def test_naive_valid_at_is_utc() -> None:
    p = GraphPattern.model_validate({"steps": [{}], "valid_at": "2021-06-01T00:00:00"})
    assert p.valid_at is not None and p.valid_at.utcoffset() is not None


def test_json_schema_teaches_the_fields() -> None:
    schema = QueryCombinator.model_json_schema()
    text = json.dumps(schema)
    for word in ("INTERSECTION", "SEQUENTIAL", "REGEX_MATCH", "NOT_IN", "OUTGOING", "HYBRID", "at_step"):
        assert word in text
    step = schema["$defs"]["TraversalStep"]["properties"]
    assert "inverse name" in step["relation_type"]["description"]
    assert "description" in schema["$defs"]["Constraint"]["properties"]["type"]


def test_round_trip_through_json() -> None:
    comb = QueryCombinator(
        type=CombinatorType.UNION,
        patterns=[
            GraphPattern.single_hop("Patient", "TAKES", "Drug"),
            GraphPattern.single_hop(None, "X", None),
        ],
    )
    assert QueryCombinator.model_validate_json(comb.model_dump_json()) == comb
