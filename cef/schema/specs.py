"""What a domain registers: property, node-type, edge-type, vocabulary and pipeline specs.

The specs are frozen pydantic models the :class:`~cef.schema.registry.SchemaRegistry`
persists in the store's meta table; the helpers here parse property schemas,
check properties against them and name callables by import path so they can be
restored when a knowledge base is reopened.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from cef.errors import ConfigurationError, InvalidPropertyError, ValidationError
from cef.model import Node, RelationSemantics, RelationType
from cef.plugins import load_object
from cef.plugins import object_ref as import_path

__all__ = [
    "NAME_PATTERN",
    "ClassExtension",
    "EdgeTypeSpec",
    "NodeTypeSpec",
    "NodeValidation",
    "PipelineSpec",
    "PropertySpec",
    "PropertyType",
    "Registers",
    "SemanticMemoryExtension",
    "Vocabulary",
    "check_properties",
    "import_path",
    "instantiate",
    "load_object",
    "merge_endpoint_types",
    "property_schema",
    "relation_key",
    "run_validation",
]

#: a valid node or edge type name
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

PropertyType = Literal["string", "int", "float", "bool", "date", "datetime", "list", "dict", "any"]
_TYPE_ALIASES: dict[str, PropertyType] = {
    "string": "string",
    "str": "string",
    "text": "string",
    "int": "int",
    "integer": "int",
    "float": "float",
    "number": "float",
    "bool": "bool",
    "boolean": "bool",
    "date": "date",
    "datetime": "datetime",
    "list": "list",
    "array": "list",
    "dict": "dict",
    "object": "dict",
    "map": "dict",
    "any": "any",
}

#: what a validation callable may return: None/True (fine), False or a message (refused)
NodeValidation = Callable[[Node], object]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PropertySpec(_Spec):
    """One property of a node or edge type."""

    type: PropertyType = "any"
    required: bool = False
    description: str = ""

    def check(self, value: Any) -> str | None:
        """Why ``value`` does not fit, or None."""
        ok = {
            "string": lambda v: isinstance(v, str),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "date": _is_date,
            "datetime": _is_datetime,
            "list": lambda v: isinstance(v, list),
            "dict": lambda v: isinstance(v, dict),
            "any": lambda v: True,
        }[self.type](value)
        if ok:
            return None
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        return f"expected {self.type}, got {type(value).__name__} {shown}"


def _is_date(v: Any) -> bool:
    if not isinstance(v, str):
        return False
    try:
        date.fromisoformat(v)
    except ValueError:
        return False
    return True


def _is_datetime(v: Any) -> bool:
    if not isinstance(v, str):
        return False
    try:
        datetime.fromisoformat(v)
    except ValueError:
        return False
    return True


class NodeTypeSpec(_Spec):
    """A registered node type: its parent (a universal kind or another node type) and property schema.

    ``declared`` is False for a label registered when first written: its parent
    is then the kind its name infers (:func:`~cef.schema.kinds.infer_kind`) or
    ``unknown``, and a later declaration may place it anywhere."""

    name: str
    parent: str
    properties: dict[str, PropertySpec] = Field(default_factory=dict)
    description: str = ""
    validation: str | None = Field(default=None, description="import path of the validation callable")
    domain: str | None = None
    declared: bool = True


class EdgeTypeSpec(_Spec):
    """A registered edge type: allowed endpoint types, property schema, inverse and semantics."""

    name: str
    source_types: list[str] = Field(default_factory=list, description="empty: any")
    target_types: list[str] = Field(default_factory=list, description="empty: any")
    properties: dict[str, PropertySpec] = Field(default_factory=dict)
    inverse: str | None = None
    semantics: RelationSemantics = RelationSemantics.ASSOCIATION
    bidirectional: bool = False
    description: str = ""
    domain: str | None = None

    @classmethod
    def of(cls, rt: RelationType, extra: EdgeTypeSpec | None = None) -> EdgeTypeSpec:
        """The spec of a relation type: its record's attributes, with the property schema and domain
        a registration added (``extra``)."""
        return cls(
            name=rt.name,
            source_types=list(rt.source_types),
            target_types=list(rt.target_types),
            properties=dict(extra.properties) if extra is not None else {},
            inverse=rt.inverse,
            semantics=rt.semantics,
            bidirectional=rt.bidirectional,
            description=rt.description,
            domain=extra.domain if extra is not None else None,
        )

    def relation_type(self) -> RelationType:
        return RelationType(
            name=self.name,
            semantics=self.semantics,
            inverse=self.inverse,
            bidirectional=self.bidirectional,
            description=self.description,
            source_types=list(self.source_types),
            target_types=list(self.target_types),
            metadata={"vocabulary": self.domain or "extension"},
        )


class ClassExtension(_Spec):
    """A term placed under a class (the seed's WordNet extensions): ``metformin`` is a ``medication``."""

    term: str
    class_id: str
    gloss: str = ""

    @property
    def class_name(self) -> str:
        """``medication.n.01`` → ``medication``."""
        return self.class_id.split(".", 1)[0].replace("_", " ")


class Vocabulary(_Spec):
    """A domain's synonyms (canonical term → other words for it) and class extensions."""

    domain: str
    synonyms: dict[str, list[str]] = Field(default_factory=dict)
    class_extensions: list[ClassExtension] = Field(default_factory=list)


class PipelineSpec(_Spec):
    """An ingestion pipeline: a parser (and optional decomposer) for a content type."""

    content_type: str
    parser: str | None = Field(default=None, description="import path of the parser's class")
    decomposer: str | None = None
    extensions: list[str] = Field(default_factory=list, description="file suffixes it reads, e.g. .py")
    domain: str | None = None


@runtime_checkable
class Registers(Protocol):
    name: str

    def register(self, memory: Any) -> None: ...


class SemanticMemoryExtension:
    """Base class of domain extensions: a name and one method that registers vocabulary.

    Define extensions at module level with a no-argument constructor so they
    can be restored when the memory is reopened.
    """

    name: str = ""

    def register(self, memory: Any) -> None:  # memory: cef.memory.SemanticMemory
        """Register this extension's node types, edge types, vocabulary and pipelines."""


def property_schema(
    schema: Mapping[str, Any] | None, required: Sequence[str], what: str
) -> dict[str, PropertySpec]:
    out: dict[str, PropertySpec] = {}
    for key, raw in (schema or {}).items():
        if not isinstance(key, str) or not key:
            raise ValidationError(f"{what}: property names must be non-empty strings, got {key!r}")
        if isinstance(raw, PropertySpec):
            out[key] = raw
        elif isinstance(raw, str):
            t = _TYPE_ALIASES.get(raw.strip().lower())
            if t is None:
                raise ValidationError(
                    f"{what}: property {key!r} has unknown type {raw!r}; use one of {sorted(set(_TYPE_ALIASES))}"
                )
            out[key] = PropertySpec(type=t)
        elif isinstance(raw, Mapping):
            t_raw = str(raw.get("type", "any")).strip().lower()
            t = _TYPE_ALIASES.get(t_raw)
            if t is None:
                raise ValidationError(f"{what}: property {key!r} has unknown type {raw.get('type')!r}")
            try:
                out[key] = PropertySpec(
                    type=t,
                    required=bool(raw.get("required", False)),
                    description=str(raw.get("description", "")),
                )
            except PydanticValidationError as exc:
                raise ValidationError(f"{what}: property {key!r}: {exc}") from exc
        else:
            raise ValidationError(f"{what}: property {key!r} must be a type name or a mapping, got {raw!r}")
    for key in required:
        spec = out.get(key, PropertySpec())
        out[key] = spec.model_copy(update={"required": True})
    return out


def check_properties(props: Mapping[str, Any], schema: Mapping[str, PropertySpec], where: str) -> None:
    for key, spec in schema.items():
        value = props.get(key)
        if value is None:
            if spec.required:
                raise InvalidPropertyError(f"{where}: required property {key!r} is missing")
            continue
        why = spec.check(value)
        if why is not None:
            raise InvalidPropertyError(f"{where}: property {key!r}: {why}")


def merge_endpoint_types(old: list[str], new: list[str]) -> list[str]:
    if not old or not new:  # one side allows anything
        return []
    return list(dict.fromkeys([*old, *new]))


def relation_key(rt: RelationType) -> tuple[Any, ...]:
    return (
        rt.semantics,
        rt.inverse,
        rt.bidirectional,
        tuple(rt.source_types),
        tuple(rt.target_types),
    )


def run_validation(check: NodeValidation, node: Node, where: str) -> None:
    try:
        verdict = check(node)
    except (ValueError, TypeError, ValidationError) as exc:
        raise InvalidPropertyError(f"{where}: {exc}") from exc
    if verdict is False:
        raise InvalidPropertyError(f"{where}: refused by the validation of its type")
    if isinstance(verdict, str) and verdict:
        raise InvalidPropertyError(f"{where}: {verdict}")


def instantiate(path: str, method: str) -> Any:
    cls = load_object(path)
    if not isinstance(cls, type):
        raise ConfigurationError(f"{path} is not a class")
    obj = cls()
    if not callable(getattr(obj, method, None)):
        raise ConfigurationError(f"{path} has no {method}() method")
    return obj
