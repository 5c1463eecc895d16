"""The words of the pattern language: directions, constraint types and targets, rankings, combinators."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = [
    "EDGE_NUMERIC",
    "EDGE_TEXT",
    "EDGE_TIMES",
    "NODE_BUILTINS",
    "CombinatorType",
    "ConstraintTarget",
    "ConstraintType",
    "Direction",
    "RankingStrategy",
]

#: node attributes that live in the graph index rather than in ``Node.properties``
NODE_BUILTINS = ("@id", "@label", "@scope")
#: edge attributes a constraint may test (the index keeps no other edge data)
EDGE_NUMERIC = ("@weight", "@confidence", "@valid_from", "@valid_to", "@recorded_at")
EDGE_TEXT = ("@relation", "@id", "@scope")
EDGE_TIMES = ("@valid_from", "@valid_to", "@recorded_at")


class _LenientEnum(StrEnum):
    """Accepts values in any letter case (``"outgoing"`` for ``OUTGOING``)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            key = value.strip().upper()
            for member in cls:
                if member.value == key:
                    return member
        return None


class Direction(_LenientEnum):
    """Which way a step walks an edge: along it, against it, or either."""

    OUTGOING = "OUTGOING"
    INCOMING = "INCOMING"
    BOTH = "BOTH"

    @classmethod
    def _missing_(cls, value: object) -> Any:
        aliases = {"OUT": cls.OUTGOING, "IN": cls.INCOMING, "ANY": cls.BOTH}
        if isinstance(value, str) and value.strip().upper() in aliases:
            return aliases[value.strip().upper()]
        return super()._missing_(value)

    @property
    def index_direction(self) -> str:
        """The spelling :meth:`cef.graph.index.GraphIndex.edge_filter` takes."""
        return {"OUTGOING": "out", "INCOMING": "in", "BOTH": "both"}[self.value]


class ConstraintType(_LenientEnum):
    """How a constraint compares a property with its ``value`` (the eleven types of IDR-003)."""

    PROPERTY_EQUALS = "PROPERTY_EQUALS"
    PROPERTY_IN = "PROPERTY_IN"
    NOT_IN = "NOT_IN"
    GREATER_THAN = "GREATER_THAN"
    LESS_THAN = "LESS_THAN"
    GREATER_THAN_EQUALS = "GREATER_THAN_EQUALS"
    LESS_THAN_EQUALS = "LESS_THAN_EQUALS"
    CONTAINS = "CONTAINS"
    STARTS_WITH = "STARTS_WITH"
    ENDS_WITH = "ENDS_WITH"
    REGEX_MATCH = "REGEX_MATCH"

    @property
    def is_comparison(self) -> bool:
        return self in _COMPARISONS

    @property
    def is_text(self) -> bool:
        return self in (ConstraintType.STARTS_WITH, ConstraintType.ENDS_WITH, ConstraintType.REGEX_MATCH)

    @property
    def symbol(self) -> str:
        return _SYMBOLS[self]


_COMPARISONS = frozenset(
    {
        ConstraintType.GREATER_THAN,
        ConstraintType.LESS_THAN,
        ConstraintType.GREATER_THAN_EQUALS,
        ConstraintType.LESS_THAN_EQUALS,
    }
)
_SYMBOLS = {
    ConstraintType.PROPERTY_EQUALS: "=",
    ConstraintType.PROPERTY_IN: "in",
    ConstraintType.NOT_IN: "not in",
    ConstraintType.GREATER_THAN: ">",
    ConstraintType.LESS_THAN: "<",
    ConstraintType.GREATER_THAN_EQUALS: ">=",
    ConstraintType.LESS_THAN_EQUALS: "<=",
    ConstraintType.CONTAINS: "contains",
    ConstraintType.STARTS_WITH: "starts with",
    ConstraintType.ENDS_WITH: "ends with",
    ConstraintType.REGEX_MATCH: "matches",
}


_TEXT_TYPES = frozenset(
    {
        ConstraintType.CONTAINS,
        ConstraintType.STARTS_WITH,
        ConstraintType.ENDS_WITH,
        ConstraintType.REGEX_MATCH,
    }
)


class ConstraintTarget(_LenientEnum):
    """What a constraint tests: the node a step reaches, or the edge it walks."""

    NODE = "NODE"
    EDGE = "EDGE"


class RankingStrategy(_LenientEnum):
    """How matched paths are ordered (best first)."""

    PATH_LENGTH = "PATH_LENGTH"
    EDGE_WEIGHT = "EDGE_WEIGHT"
    NODE_CENTRALITY = "NODE_CENTRALITY"
    SEMANTIC_SCORE = "SEMANTIC_SCORE"
    HYBRID = "HYBRID"


class CombinatorType(_LenientEnum):
    """How a :class:`QueryCombinator` joins its patterns."""

    INTERSECTION = "INTERSECTION"
    UNION = "UNION"
    SEQUENTIAL = "SEQUENTIAL"
