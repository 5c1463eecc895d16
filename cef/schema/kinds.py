"""The universal vocabulary every domain starts from: node kinds and edge types.

Domain extensions add node types (each under one of these kinds) and edge
types; the core never names a domain. Edge types here are registered as
:class:`~cef.model.RelationType` records with semantics the reasoner uses
(structural parents, sequences, references) and inverses the graph walks.
"""

from __future__ import annotations

import re
from enum import StrEnum

from cef.model import RelationSemantics, RelationType

__all__ = [
    "BELIEF_RELATIONS",
    "MEMORY_RELATIONS",
    "UNIVERSAL_RELATIONS",
    "UNKNOWN_KIND",
    "NodeKind",
    "infer_kind",
    "universal_relation_types",
]


class NodeKind(StrEnum):
    """The universal node kinds (the root of every node type hierarchy)."""

    INSTANCE = "instance"  # a specific individual: Doug, src/auth.py, patient 123
    CLASS = "class"  # an abstract type or category: Person, PythonFile, Medication
    ATTRIBUTE = "attribute"  # a property value: age 45, color orange, dosage 10 mg
    EVENT = "event"  # something that happened: file modified, medication prescribed
    COLLECTION = "collection"  # a group of instances: Doug's cats, auth-related files
    OBSERVATION = "observation"  # what a source said (immutable)
    BELIEF = "belief"  # a reconciled understanding (can change)
    TIME_POINT = "time_point"  # a moment: 2025-12-31T10:00
    TIME_RANGE = "time_range"  # a duration: December 2025, last week


#: the kind of a node type written before any declaration placed it under a universal kind
UNKNOWN_KIND = "unknown"


def infer_kind(label: str) -> NodeKind | None:
    """The universal kind a label names itself (``Event``, ``TimePoint``, ``time_range``), else None.

    A label seen for the first time is registered under this kind, or under
    :data:`UNKNOWN_KIND` until a declaration places it (the label's spelling is
    all there is to go by: no word list of any domain)."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", label.strip())
    key = re.sub(r"[\s\-]+", "_", snake).lower()
    try:
        return NodeKind(key)
    except ValueError:
        return None


_A = RelationSemantics.ASSOCIATION
_H = RelationSemantics.HIERARCHY
_C = RelationSemantics.CONTAINMENT
_K = RelationSemantics.CLASSIFICATION
_S = RelationSemantics.SEQUENCE
_R = RelationSemantics.REFERENCE

# (name, semantics, inverse, bidirectional, parent_end, description)
_SPEC: list[tuple[str, RelationSemantics, str | None, bool, str | None, str]] = [
    # ontological
    ("instance_of", _K, "has_instance", False, None, "an individual belongs to a class"),
    ("subclass_of", _H, "has_subclass", False, None, "a class is a kind of a broader class"),
    ("has_attribute", _A, "attribute_of", False, None, "a node has an attribute value"),
    ("member_of", _C, "has_member", False, "target", "an instance belongs to a collection"),
    # semantic
    ("synonym", _A, None, True, None, "two names for the same thing"),
    ("antonym", _A, None, True, None, "opposites"),
    ("part_of", _C, "has_part", False, "target", "a part of a whole"),
    # possessive / relational
    ("owns", _A, "owned_by", False, None, "ownership"),
    ("belongs_to", _A, None, False, None, "belongs to someone or something"),
    ("created_by", _A, "created", False, None, "who or what made it"),
    ("authored_by", _A, "authored", False, None, "who wrote it"),
    # spatial
    ("located_in", _C, "contains", False, "target", "spatial containment"),
    ("near", _A, None, True, None, "spatial proximity"),
    # temporal
    ("happened_at", _R, "time_of", False, None, "an event's time point or range"),
    ("before", _S, "after", False, None, "temporal order"),
    ("during", _C, "spans", False, "target", "inside a time range"),
    # causal / logical
    ("causes", _S, "caused_by", False, None, "causation"),
    ("depends_on", _R, "required_by", False, None, "dependency"),
    ("enables", _A, "enabled_by", False, None, "makes possible"),
    ("prevents", _A, "prevented_by", False, None, "makes impossible"),
    # social
    ("knows", _A, None, True, None, "acquaintance"),
    ("works_with", _A, None, True, None, "collaboration"),
    ("related_to", _A, None, True, None, "any other relation"),
    # beliefs
    ("supports", _R, "supported_by", False, None, "an observation supports a belief"),
    ("contradicts", _R, "contradicted_by", False, None, "an observation contradicts a belief"),
    ("derived_from", _R, "derives", False, None, "a belief was derived from an observation"),
]

#: the seed's universal edge types with their semantics and inverses
UNIVERSAL_RELATIONS: tuple[str, ...] = tuple(s[0] for s in _SPEC)
#: relations the memory itself writes beyond the seed's list
MEMORY_RELATIONS: tuple[str, ...] = ("about", "mentions", "supersedes")
#: relations that tie observations and beliefs to the graph
BELIEF_RELATIONS: frozenset[str] = frozenset(
    {"about", "supports", "contradicts", "derived_from", "supersedes"}
)

_MEMORY_SPEC: list[tuple[str, RelationSemantics, str | None, bool, str | None, str]] = [
    ("about", _R, "subject_of", False, None, "an observation or belief is about a node"),
    ("mentions", _R, "mentioned_in", False, None, "a document mentions an entity"),
    ("supersedes", _S, "superseded_by", False, None, "a belief replaced an earlier one"),
]


def universal_relation_types(existing: set[str] | frozenset[str] = frozenset()) -> list[RelationType]:
    """The universal relation types, minus names already in ``existing``.

    ``existing`` holds the relation type names and inverse names a knowledge
    base already uses. A universal type whose name is taken is left out; an
    inverse whose name is taken is dropped (the two names then stay separate
    relation types), so the vocabulary can be added to any knowledge base.
    """
    out: list[RelationType] = []
    for name, sem, inverse, bidir, parent_end, desc in [*_SPEC, *_MEMORY_SPEC]:
        if name in existing:
            continue
        inv = inverse if inverse is not None and inverse not in existing else None
        out.append(
            RelationType(
                name=name,
                semantics=sem,
                inverse=inv,
                bidirectional=bidir,
                parent_end=parent_end,  # type: ignore[arg-type]
                description=desc,
                metadata={"vocabulary": "universal"},
            )
        )
    return out
