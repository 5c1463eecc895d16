"""Graph records: nodes, edges, relation types and chunks (data only, no I/O)."""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

JsonDict = dict[str, Any]

#: property keys, in order, that give a node its display name
NAME_KEYS = ("name", "title", "label_text")


#: the longest string property value that still names something (longer is a description)
VALUE_NAME_CHARS = 48
#: the most words such a value holds
VALUE_NAME_WORDS = 5


def _names_something(text: str) -> bool:
    """Whether a property value reads as a name or code (see :attr:`Node.value_names`)."""
    if not 2 <= len(text) <= VALUE_NAME_CHARS or len(text.split()) > VALUE_NAME_WORDS:
        return False
    if "\n" in text or "://" in text or not any(c.isalpha() for c in text):
        return False
    return any(c.isupper() or c.isdigit() for c in text)


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def in_scope(record_scope: str | None, scope: str | None) -> bool:
    """Whether a record of ``record_scope`` is visible to a query of ``scope``: its own scope's
    records and unscoped ones (every record when the query has no scope)."""
    return scope is None or record_scope is None or record_scope == scope


def stable_id(kind: str, *parts: str) -> str:
    """A deterministic id ``<kind>:<32 hex>`` from ``parts``, so re-ingest updates instead of duplicating."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]
    return f"{kind}:{digest}"


#: the largest magnitude a vector component may have (vectors are stored as 32-bit floats)
_FLOAT32_MAX = 3.4028234663852886e38

#: how deep properties and metadata may nest (lists and objects); deeper is refused, never recursed into
MAX_JSON_DEPTH = 32


def json_depth_ok(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` lists / objects deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return True


def check_json(value: JsonDict, what: str) -> JsonDict:
    """``value`` if it is plain JSON nesting at most :data:`MAX_JSON_DEPTH` deep (else ValueError)."""
    if not json_depth_ok(value, MAX_JSON_DEPTH):
        raise ValueError(f"{what} nests deeper than {MAX_JSON_DEPTH} levels of lists and objects: flatten it")
    try:
        json.dumps(value, allow_nan=False, default=_reject)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{what} must be JSON-serializable (str, number, bool, null, list, dict): {exc}"
        ) from exc
    return value


def _reject(obj: object) -> Any:
    raise TypeError(f"value of type {type(obj).__name__} is not allowed")


#: the error type of a validity window that ends before it starts: a rule between two fields that
#: JSON Schema cannot state, so the REST API answers it 409 (a conflict within the request), not 422
INVERTED_WINDOW = "inverted_window"


def inverted_window(what: str, start: datetime, end: datetime) -> PydanticCustomError:
    return PydanticCustomError(
        INVERTED_WINDOW,
        "{what}: valid_to {end} is before valid_from {start}: swap them, or leave valid_to out for an open window",
        {"what": what, "start": str(start), "end": str(end)},
    )


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


class RelationSemantics(StrEnum):
    """What a relation means to the reasoner."""

    HIERARCHY = "HIERARCHY"
    CONTAINMENT = "CONTAINMENT"
    CLASSIFICATION = "CLASSIFICATION"
    ASSOCIATION = "ASSOCIATION"
    SEQUENCE = "SEQUENCE"
    REFERENCE = "REFERENCE"
    CUSTOM = "CUSTOM"

    @property
    def is_structural(self) -> bool:
        """Parent/child semantics: HIERARCHY, CONTAINMENT, CLASSIFICATION."""
        return self in (
            RelationSemantics.HIERARCHY,
            RelationSemantics.CONTAINMENT,
            RelationSemantics.CLASSIFICATION,
        )


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False, frozen=False)


class RelationType(_Record):
    """A registered relation type. Every edge's ``relation_type`` must name one.

    ``parent_end`` says which end of a structural edge is the parent: ``target``
    for child→parent relations (``IS_A``, ``PART_OF``, ``BELONGS_TO``), ``source``
    for parent→child ones (``CONTAINS``, ``HAS_CHILD``). When omitted it follows
    the semantics: CONTAINMENT → source, HIERARCHY / CLASSIFICATION → target.
    """

    name: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    semantics: RelationSemantics = RelationSemantics.ASSOCIATION
    bidirectional: bool = False
    inverse: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="the name of walking it backward; a relation that is its own inverse is bidirectional",
    )
    description: str = ""
    parent_end: Literal["source", "target"] | None = None
    source_types: list[str] = Field(default_factory=list)
    target_types: list[str] = Field(default_factory=list)
    metadata: JsonDict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _defaults(self) -> RelationType:
        if self.parent_end is None and self.semantics.is_structural:
            self.parent_end = "source" if self.semantics is RelationSemantics.CONTAINMENT else "target"
        if self.inverse is not None and self.inverse == self.name:  # its own inverse: symmetric
            self.bidirectional = True
        check_json(self.metadata, "metadata")
        return self


class Node(_Record):
    """A node of the knowledge graph. ``label`` is the user's type (``Patient``, ``Drug``...)."""

    id: str = Field(default_factory=new_id, min_length=1, max_length=512)
    label: str = Field(min_length=1, max_length=128)
    properties: JsonDict = Field(default_factory=dict)
    content: str | None = Field(default=None, description="optional text embedded for vector search")
    scope: str | None = Field(default=None, max_length=256)
    created: datetime = Field(default_factory=utcnow)
    updated: datetime = Field(default_factory=utcnow)
    version: int = 1

    @field_validator("properties")
    @classmethod
    def _json_props(cls, v: JsonDict) -> JsonDict:
        return check_json(v, "properties")

    @field_validator("created", "updated")
    @classmethod
    def _tz(cls, v: datetime) -> datetime:
        return _aware(v) or v

    @property
    def name(self) -> str:
        for key in NAME_KEYS:
            value = self.properties.get(key)
            if isinstance(value, str) and value:
                return value
        return self.id

    @property
    def aliases(self) -> list[str]:
        raw = self.properties.get("aliases") or []
        return [a for a in raw if isinstance(a, str) and a] if isinstance(raw, list) else []

    @property
    def value_names(self) -> list[str]:
        """The short string property values that name something (a brand, a code, a title): each
        other property's string value of :data:`VALUE_NAME_CHARS` characters and
        :data:`VALUE_NAME_WORDS` words at most, on one line, holding a letter and a capital or a
        digit ("Eliquis", "M19", "ORD-1042"; not "active", not a date, not a sentence)."""
        own = {self.name, *self.aliases}
        out: list[str] = []
        for key, value in self.properties.items():
            if key == "aliases" or not isinstance(value, str):
                continue
            text = value.strip()
            if text in own or text in out or not _names_something(text):
                continue
            out.append(text)
        return out

    @property
    def names(self) -> list[str]:
        """What a question may call this node by: its name, aliases and :attr:`value_names`."""
        return [self.name, *self.aliases, *self.value_names]

    def embedding_text(self) -> str:
        """The text embedded for this node: its content, else ``label: name``."""
        return self.content if self.content else f"{self.label}: {self.name}"


class Edge(_Record):
    """A typed, weighted, bi-temporal edge.

    ``weight`` is a strength (> 0, default 1): shortest paths treat ``1/weight``
    as the cost. ``confidence`` is the probability the fact holds (0..1).
    ``valid_from``/``valid_to`` say when the fact is true in the world;
    ``recorded_at`` says when we learned it.
    """

    id: str = Field(default_factory=new_id, min_length=1, max_length=512)
    relation_type: str = Field(min_length=1, max_length=128)
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    properties: JsonDict = Field(default_factory=dict)
    weight: float = Field(
        default=1.0,
        ge=1e-6,
        le=1e6,
        description="strength, from 1e-6 to 1e6 (stored as float32; shortest paths use 1/weight)",
    )
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    valid_from: datetime | None = Field(default=None, description="when the fact starts to be true")
    valid_to: datetime | None = Field(
        default=None, description="when the fact stops being true; not before valid_from (else 422)"
    )
    recorded_at: datetime = Field(default_factory=utcnow)
    scope: str | None = Field(default=None, max_length=256)

    @field_validator("properties")
    @classmethod
    def _json_props(cls, v: JsonDict) -> JsonDict:
        return check_json(v, "properties")

    @field_validator("weight")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("weight must be finite")
        return v

    @field_validator("valid_from", "valid_to", "recorded_at")
    @classmethod
    def _tz(cls, v: datetime | None) -> datetime | None:
        return _aware(v)

    @model_validator(mode="after")
    def _window(self) -> Edge:
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise inverted_window(f"edge {self.id!r}", self.valid_from, self.valid_to)
        return self

    def valid_at(self, at: datetime) -> bool:
        at = _aware(at) or at
        return (self.valid_from is None or self.valid_from <= at) and (
            self.valid_to is None or at < self.valid_to
        )


class Chunk(_Record):
    """A passage of text, optionally linked to the node it is about."""

    id: str = Field(default_factory=new_id, min_length=1, max_length=512)
    content: str = Field(min_length=1)
    node_id: str | None = Field(default=None, description="the linked node, if any")
    metadata: JsonDict = Field(default_factory=dict)
    scope: str | None = Field(default=None, max_length=256)
    embedding: list[Annotated[float, Field(ge=-_FLOAT32_MAX, le=_FLOAT32_MAX)]] | None = Field(
        default=None,
        exclude=True,
        repr=False,
        max_length=8192,
        description="the chunk's vector from the knowledge base's own model (finite numbers, the model's "
        "dimension, e.g. 384 for the default all-MiniLM-L6-v2; another dimension is 409); leave it out "
        "to have the text embedded",
    )
    created: datetime = Field(default_factory=utcnow)

    @field_validator("embedding")
    @classmethod
    def _finite(cls, v: list[float] | None) -> list[float] | None:
        if v is not None:
            bad = next((i for i, x in enumerate(v) if not math.isfinite(x) or abs(x) > _FLOAT32_MAX), None)
            if bad is not None:
                raise ValueError(
                    f"embedding[{bad}] is {v[bad]}: every component must be a finite number that a 32-bit "
                    "float holds (|x| <= 3.4e38)"
                )
        return v

    @field_validator("metadata")
    @classmethod
    def _json_meta(cls, v: JsonDict) -> JsonDict:
        return check_json(v, "metadata")

    @field_validator("created")
    @classmethod
    def _tz(cls, v: datetime) -> datetime:
        return _aware(v) or v


class Batch(_Record):
    """Everything written by one ``index_batch`` call: one transaction."""

    relation_types: list[RelationType] = Field(default_factory=list)
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    chunks: list[Chunk] = Field(default_factory=list)

    def __len__(self) -> int:
        return len(self.relation_types) + len(self.nodes) + len(self.edges) + len(self.chunks)
