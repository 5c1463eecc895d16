"""What a caller (often an LLM, through a tool) writes to ask for graph patterns.

A :class:`GraphPattern` starts somewhere (``start``), walks a fixed list of
:class:`TraversalStep` (one hop each), and keeps only the paths whose nodes and
edges satisfy every :class:`Constraint`. A :class:`QueryCombinator` joins
several patterns (INTERSECTION / UNION / SEQUENTIAL). Field descriptions are
written for the model that fills them in: they end up in the JSON Schema the
MCP and REST front doors publish.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator
from pydantic.config import JsonValue

from cef.model.pattern_terms import (
    _TEXT_TYPES,
    EDGE_NUMERIC,
    EDGE_TEXT,
    EDGE_TIMES,
    NODE_BUILTINS,
    CombinatorType,
    ConstraintTarget,
    ConstraintType,
    Direction,
    RankingStrategy,
)

JsonScalar = str | int | float | bool | None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=False)


def parse_time(value: JsonScalar) -> float:
    """Epoch seconds from a number or an ISO-8601 string (naive times are UTC)."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"expected a time (ISO-8601 string or epoch seconds), got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an ISO-8601 time such as '2024-05-01T00:00:00Z'") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


_EDGE_NUMBERS = [*EDGE_NUMERIC, *(p[1:] for p in EDGE_NUMERIC)]
_EDGE_PROPERTIES = [*_EDGE_NUMBERS, *EDGE_TEXT, *(p[1:] for p in EDGE_TEXT)]
_EDGE_TIMES = [*EDGE_TIMES, *(p[1:] for p in EDGE_TIMES)]
_SCALAR = {"type": ["string", "number", "boolean"]}


def _when(
    condition: dict[str, Any], then: dict[str, Any], otherwise: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``if`` every property in ``condition`` is present and matches, ``then`` holds (else ``otherwise``)."""
    rule = {"if": {"required": sorted(condition), "properties": condition}, "then": then}
    return rule if otherwise is None else {**rule, "else": otherwise}


def _value(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": ["value"], "properties": {"value": schema}}


#: the rules ``Constraint._check`` enforces, stated as JSON Schema (``if``/``then``) so that the
#: published schema (REST OpenAPI, MCP tool input) accepts exactly what validation accepts
CONSTRAINT_RULES: list[JsonValue] = [
    _when(
        {"type": {"enum": ["GREATER_THAN", "LESS_THAN", "GREATER_THAN_EQUALS", "LESS_THAN_EQUALS"]}},
        _value({"type": ["string", "number"]}),
    ),
    _when({"type": {"enum": ["STARTS_WITH", "ENDS_WITH"]}}, _value({"type": "string"})),
    _when({"type": {"const": "REGEX_MATCH"}}, _value({"type": "string", "format": "regex"})),
    _when({"type": {"const": "CONTAINS"}}, _value(_SCALAR)),
    _when(
        {"target": {"const": "EDGE"}},
        {
            "required": ["property"],
            "properties": {"property": {"enum": _EDGE_PROPERTIES}, "node_label": {"type": "null"}},
        },
        {"properties": {"property": {"anyOf": [{"pattern": "^[^@]"}, {"enum": list(NODE_BUILTINS)}]}}},
    ),
    _when(
        {"target": {"const": "EDGE"}, "property": {"enum": _EDGE_NUMBERS}},
        {"properties": {"type": {"enum": [t.value for t in ConstraintType if t not in _TEXT_TYPES]}}},
    ),
    _when(
        {
            "target": {"const": "EDGE"},
            "property": {"enum": ["weight", "@weight", "confidence", "@confidence"]},
        },
        _value({"anyOf": [{"type": "number"}, {"type": "array", "items": {"type": "number"}}]}),
    ),
    _when(
        {"target": {"const": "EDGE"}, "property": {"enum": _EDGE_TIMES}},
        {
            "properties": {
                "value": {
                    "anyOf": [
                        {"type": ["number", "null"]},
                        {"type": "string", "format": "date-time"},
                        {
                            "type": "array",
                            "items": {
                                "anyOf": [
                                    {"type": ["number", "null"]},
                                    {"type": "string", "format": "date-time"},
                                ]
                            },
                        },
                    ]
                }
            }
        },
    ),
]


class Constraint(_Model):
    """A condition every matched path must meet, checked while walking (failing paths are dropped early).

    On a node it reads ``Node.properties`` by ``property`` (a dotted path such
    as ``address.city``) or a built-in (``@id``, ``@label``, ``@scope``). On an
    edge it reads ``@weight``, ``@confidence``, ``@valid_from``, ``@valid_to``,
    ``@recorded_at`` (numbers; times also as ISO-8601 strings), ``@relation``
    (the name as walked, inverse name when walked backward), ``@id`` or ``@scope``.
    A missing property fails every type except NOT_IN (and PROPERTY_EQUALS null).
    """

    model_config = ConfigDict(json_schema_extra={"allOf": CONSTRAINT_RULES})

    type: ConstraintType = Field(
        description=(
            "PROPERTY_EQUALS: equal to value; PROPERTY_IN: one of value (a list); NOT_IN: none of value "
            "(missing passes); GREATER_THAN / LESS_THAN / GREATER_THAN_EQUALS / LESS_THAN_EQUALS: numbers "
            "with numbers, strings with strings (ISO dates compare correctly); CONTAINS: substring of a "
            "string, or element of a list property; STARTS_WITH / ENDS_WITH: string prefix / suffix; "
            "REGEX_MATCH: Python regular expression found anywhere in the string (anchor with ^...$)"
        )
    )
    property: str = Field(
        min_length=1,
        max_length=256,
        description=(
            "node: a key of the node's properties, dotted for nested values ('address.city'), or @id / "
            "@label / @scope; edge: weight, confidence, valid_from, valid_to, recorded_at, relation, id, "
            "scope (with or without '@')"
        ),
        examples=["name", "age", "@label", "confidence"],
    )
    value: JsonScalar | list[JsonScalar] = Field(
        default=None,
        description="what to compare with; a list for PROPERTY_IN / NOT_IN (a single value is accepted too)",
    )
    target: ConstraintTarget = Field(
        default=ConstraintTarget.NODE,
        description="NODE: the node a step reaches; EDGE: the edge a step walks",
    )
    node_label: str | None = Field(
        default=None,
        description="only check nodes with this label; nodes with another label pass untested (NODE only)",
    )
    at_step: int | None = Field(
        default=None,
        ge=0,
        description=(
            "pattern-level constraints only: the 0-based index of the step whose reached node (or walked "
            "edge) is checked; null = every step. The start node is checked by 'start' instead. An at_step "
            "past the pattern's last step checks nothing (the result's warnings say so)"
        ),
    )
    ignore_case: bool = Field(default=False, description="compare strings case-insensitively")

    @model_validator(mode="after")
    def _check(self) -> Self:
        t = self.type
        if self.target is ConstraintTarget.EDGE:
            prop = self.property if self.property.startswith("@") else "@" + self.property
            if prop not in (*EDGE_NUMERIC, *EDGE_TEXT):
                allowed = ", ".join(p[1:] for p in (*EDGE_NUMERIC, *EDGE_TEXT))
                raise ValueError(f"edges can be tested on {allowed}; got {self.property!r}")
            if self.node_label is not None:
                raise ValueError("node_label only applies to NODE constraints; remove it or use target NODE")
            self.property = prop
            if prop in EDGE_NUMERIC and (t is ConstraintType.CONTAINS or t.is_text):
                raise ValueError(f"edge {prop[1:]} is a number: use PROPERTY_EQUALS, *_IN or a comparison")
            if prop in EDGE_NUMERIC and prop not in EDGE_TIMES:
                values = self.value if isinstance(self.value, list) else [self.value]
                if any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
                    raise ValueError(f"edge {prop[1:]} is compared with numbers, got {self.value!r}")
        elif self.property.startswith("@") and self.property not in NODE_BUILTINS:
            raise ValueError(
                f"{self.property!r} is not a node built-in (use {', '.join(NODE_BUILTINS)}, "
                "or a property name without '@')"
            )
        if t in (ConstraintType.PROPERTY_IN, ConstraintType.NOT_IN):
            if not isinstance(self.value, list):
                self.value = [self.value]
        elif isinstance(self.value, list) and t is not ConstraintType.PROPERTY_EQUALS:
            raise ValueError(f"{t.value} compares with one value, not a list (PROPERTY_IN takes a list)")
        if t.is_comparison and (self.value is None or isinstance(self.value, bool)):
            raise ValueError(f"{t.value} needs a number or a string value, got {self.value!r}")
        if t.is_text and not isinstance(self.value, str):
            raise ValueError(f"{t.value} needs a string value, got {self.value!r}")
        if t is ConstraintType.CONTAINS and self.value is None:
            raise ValueError("CONTAINS needs a value")
        if t is ConstraintType.REGEX_MATCH:
            assert isinstance(self.value, str)
            try:
                re.compile(self.value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {self.value!r}: {exc}") from exc
        if self.target is ConstraintTarget.EDGE and self.property in EDGE_TIMES:
            values = self.value if isinstance(self.value, list) else [self.value]
            for v in values:
                if v is not None:
                    parse_time(v)
        return self

    # ---------------------------------------------------------------- factories (as in IDR-003)
    @classmethod
    def property_equals(
        cls, label: str | None, prop: str, value: JsonScalar, step: int | None = None
    ) -> Constraint:
        return cls(
            type=ConstraintType.PROPERTY_EQUALS, node_label=label, property=prop, value=value, at_step=step
        )

    @classmethod
    def property_in(
        cls, label: str | None, prop: str, values: list[JsonScalar], step: int | None = None
    ) -> Constraint:
        return cls(
            type=ConstraintType.PROPERTY_IN, node_label=label, property=prop, value=values, at_step=step
        )

    @classmethod
    def not_in(
        cls, label: str | None, prop: str, values: list[JsonScalar], step: int | None = None
    ) -> Constraint:
        return cls(type=ConstraintType.NOT_IN, node_label=label, property=prop, value=values, at_step=step)

    @classmethod
    def edge(
        cls, prop: str, type: ConstraintType, value: JsonScalar | list[JsonScalar], step: int | None = None
    ) -> Constraint:
        """An edge constraint, e.g. ``Constraint.edge("confidence", ConstraintType.GREATER_THAN_EQUALS, 0.8)``."""
        return cls(type=type, target=ConstraintTarget.EDGE, property=prop, value=value, at_step=step)

    def describe(self) -> str:
        """Short human text, e.g. ``Medication.name in ['Methotrexate']`` or ``edge confidence >= 0.8``."""
        if self.target is ConstraintTarget.EDGE:
            subject = f"edge {self.property[1:]}"
        else:
            subject = f"{self.node_label}.{self.property}" if self.node_label else self.property
        case = " (any case)" if self.ignore_case else ""
        return f"{subject} {self.type.symbol} {self.value!r}{case}"


class TraversalStep(_Model):
    """One hop: from the node the path is at, along one edge, to the next node."""

    source_label: str | None = Field(
        default=None,
        description="label the node this step leaves from must have; null = whatever the previous step reached",
    )
    relation_type: str | list[str] | None = Field(
        default=None,
        description=(
            "relation to walk (a name, or a list meaning any of them); null = any relation. An inverse "
            "name (e.g. TREATED_BY for TREATS) walks the base relation the other way"
        ),
        examples=["HAS_CONDITION", ["TREATS", "PRESCRIBED_FOR"]],
    )
    target_label: str | None = Field(default=None, description="label the reached node must have; null = any")
    direction: Direction = Field(
        default=Direction.OUTGOING,
        description="OUTGOING: source→target as stored; INCOMING: against the edge; BOTH: either way",
    )
    constraints: list[Constraint] = Field(
        default_factory=list,
        max_length=50,
        description="conditions on this step's reached node or walked edge (they apply to this step: at_step is "
        "ignored here, with a warning)",
    )

    def problems(self, index: int) -> list[str]:
        """What of this step checks nothing (each becomes a warning of the search)."""
        return [
            f"step {index}: constraint {c.describe()} has at_step={c.at_step}; constraints inside a step "
            "apply to that step (at_step is ignored here; it is for the pattern's own constraints)"
            for c in self.constraints
            if c.at_step is not None
        ]

    @property
    def relation_names(self) -> list[str] | None:
        if self.relation_type is None:
            return None
        names = [self.relation_type] if isinstance(self.relation_type, str) else list(self.relation_type)
        return names or None

    def describe(self) -> str:
        rel = "|".join(self.relation_names or ["*"])
        src = f"({self.source_label})" if self.source_label else "()"
        dst = f"({self.target_label})" if self.target_label else "()"
        arrow = {
            Direction.OUTGOING: f"-[{rel}]->",
            Direction.INCOMING: f"<-[{rel}]-",
            Direction.BOTH: f"-[{rel}]-",
        }[self.direction]
        return f"{src}{arrow}{dst}"


#: a node property a start may match: a name, dotted for nested values, or a built-in (@id, @label, @scope)
_PROPERTY_NAME = r"^(?:[^@][\s\S]*|@id|@label|@scope)$"
PropertyName = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=_PROPERTY_NAME)]


class PatternStart(_Model):
    """Where paths begin: explicit node ids, and/or every node with a label (optionally filtered)."""

    node_ids: list[str] = Field(default_factory=list, description="start at these node ids")
    label: str | None = Field(default=None, description="start at nodes with this label")
    properties: dict[PropertyName, JsonScalar] = Field(
        default_factory=dict,
        description="start nodes must have these property values (exact match); keys as a constraint's property",
        json_schema_extra={"propertyNames": {"minLength": 1, "maxLength": 256, "pattern": _PROPERTY_NAME}},
    )
    constraints: list[Constraint] = Field(
        default_factory=list,
        max_length=50,
        description="further NODE conditions on the start (EDGE constraints check nothing here: the start "
        "walks no edge; at_step is ignored; both with a warning)",
    )

    def problems(self) -> list[str]:
        """What of the start checks nothing (each becomes a warning of the search)."""
        out = []
        for c in self.constraints:
            if c.target is not ConstraintTarget.NODE:
                out.append(
                    f"start constraint {c.describe()} tests an edge, and the start walks none: ignored"
                )
            elif c.at_step is not None:
                out.append(
                    f"start constraint {c.describe()} has at_step={c.at_step}: ignored (it tests the start)"
                )
        return out

    def all_constraints(self) -> list[Constraint]:
        eq = [Constraint.property_equals(None, k, v) for k, v in self.properties.items()]
        return [*eq, *self.constraints]


class HybridWeights(_Model):
    """Weights of the HYBRID ranking (each component is scaled to 0..1 over the candidates first)."""

    model_config = ConfigDict(
        json_schema_extra={  # the rule of _positive: not all four given as 0
            "not": {
                "required": ["path_length", "edge_weight", "node_centrality", "semantic"],
                "properties": {
                    k: {"const": 0} for k in ("path_length", "edge_weight", "node_centrality", "semantic")
                },
            }
        }
    )

    path_length: float = Field(default=0.2, ge=0.0, description="shorter paths score higher")
    edge_weight: float = Field(
        default=0.4, ge=0.0, description="product of weight × confidence along the path"
    )
    node_centrality: float = Field(default=0.1, ge=0.0, description="mean centrality of the path's nodes")
    semantic: float = Field(
        default=0.3, ge=0.0, description="mean similarity of the path's nodes to the query"
    )

    @model_validator(mode="after")
    def _positive(self) -> Self:
        if self.path_length + self.edge_weight + self.node_centrality + self.semantic <= 0:
            raise ValueError("at least one hybrid weight must be positive")
        return self


class GraphPattern(_Model):
    """A multi-hop pattern: start nodes, then one hop per step, with constraints checked on the way.

    Example (3 hops): patients with a condition shared by a patient who takes Methotrexate::

        {"pattern_id": "multi_hop_contra",
         "start": {"label": "Patient"},
         "steps": [
           {"relation_type": "HAS_CONDITION", "target_label": "Condition"},
           {"relation_type": "HAS_CONDITION", "direction": "INCOMING", "target_label": "Patient"},
           {"relation_type": "TAKES_MEDICATION", "target_label": "Medication",
            "constraints": [{"type": "PROPERTY_IN", "property": "name", "value": ["Methotrexate"]}]}]}
    """

    pattern_id: str = Field(
        default="pattern", min_length=1, max_length=128, description="a name for this pattern"
    )
    description: str = Field(default="", max_length=2000, description="what the pattern looks for, in words")
    start: PatternStart = Field(
        default_factory=PatternStart,
        description="where paths begin; if empty, the first step's source_label (or the caller's entry points)",
    )
    steps: list[TraversalStep] = Field(min_length=1, max_length=12, description="hops, in order")
    constraints: list[Constraint] = Field(
        default_factory=list,
        max_length=50,
        description="conditions for the whole pattern (use at_step to pin one step)",
    )
    max_paths: int = Field(
        default=100, ge=1, le=10_000, description="return at most this many paths, best first"
    )
    time_limit_ms: int | None = Field(
        default=1000,
        ge=1,
        le=60_000,
        description="stop searching after this many milliseconds and return what was found (timed_out=true)",
    )
    ranking: RankingStrategy = Field(default=RankingStrategy.HYBRID, description="how to order the paths")
    hybrid_weights: HybridWeights = Field(
        default_factory=HybridWeights, description="weights for HYBRID ranking"
    )
    semantic_query: str | None = Field(
        default=None,
        max_length=2000,
        description="text the path's nodes should be similar to (SEMANTIC_SCORE / HYBRID); default: the query",
    )
    valid_at: datetime | None = Field(default=None, description="only walk edges valid at this time")
    scope: str | None = Field(
        default=None, description="only walk edges and nodes of this scope (or unscoped)"
    )
    allow_cycles: bool = Field(default=False, description="let a path visit the same node twice")

    @field_validator("valid_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    def problems(self) -> list[str]:
        """Parts of the pattern that check nothing, for the search's warnings: a constraint pinned to a step
        the pattern does not have, a step constraint with at_step, an edge constraint on the start.

        These are not validation errors: the published JSON Schema cannot state them, and a schema-valid
        pattern is accepted (it runs, and says what it ignored)."""
        out = self.start.problems()
        for i, step in enumerate(self.steps):
            out += step.problems(i)
        out += [
            f"constraint {c.describe()} has at_step={c.at_step} but the pattern has {len(self.steps)} step(s) "
            "(at_step counts steps from 0): it checks nothing"
            for c in self.constraints
            if c.at_step is not None and c.at_step >= len(self.steps)
        ]
        return out

    @classmethod
    def single_hop(
        cls, source_label: str | None, relation_type: str | None, target_label: str | None, **fields: Any
    ) -> GraphPattern:
        """``(source_label)-[relation_type]->(target_label)`` from every ``source_label`` node."""
        step = TraversalStep(
            source_label=source_label, relation_type=relation_type, target_label=target_label
        )
        fields.setdefault("pattern_id", "single_hop")
        return cls(steps=[step], **fields)

    def constraints_at(self, step: int) -> list[Constraint]:
        """Every constraint checked at ``step``: the step's own and the pattern's that apply there."""
        own = self.steps[step].constraints
        shared = [c for c in self.constraints if c.at_step is None or c.at_step == step]
        return [*own, *shared]


class QueryCombinator(_Model):
    """Several patterns joined into one answer.

    INTERSECTION keeps the paths (of every pattern) whose end node is reached by
    all patterns; UNION merges the paths of all patterns, duplicates removed;
    SEQUENTIAL runs the patterns in order, the end nodes of one becoming the
    start nodes of the next (each later pattern's ``start`` label/properties
    still filter them), and returns the chained paths (each joined to the best
    path that reached its start; a chain never revisits a node unless the later
    pattern allows cycles).

    Each pattern of an INTERSECTION or UNION contributes at most its own
    ``max_paths`` (for INTERSECTION, counted after the common-end filter); the
    combined list is ranked once more and capped at this ``max_paths``.
    """

    type: CombinatorType = Field(description="INTERSECTION (AND), UNION (OR) or SEQUENTIAL (feed forward)")
    patterns: list[GraphPattern] = Field(min_length=1, max_length=10)
    description: str = Field(default="", max_length=2000)
    max_paths: int = Field(
        default=100, ge=1, le=10_000, description="return at most this many paths in total"
    )
    time_limit_ms: int | None = Field(
        default=2000, ge=1, le=120_000, description="time budget for all patterns together, in milliseconds"
    )
    ranking: RankingStrategy | None = Field(
        default=None, description="how to order the combined paths; null = the first pattern's ranking"
    )
    hybrid_weights: HybridWeights | None = Field(
        default=None, description="null = the first pattern's weights"
    )

    @property
    def effective_ranking(self) -> RankingStrategy:
        return self.ranking or self.patterns[0].ranking

    @property
    def effective_weights(self) -> HybridWeights:
        return self.hybrid_weights or self.patterns[0].hybrid_weights
