"""A classifier noun names a CLASSIFICATION relation (issue 23).

"What *kind* of piece is X?", "which *type* of claim": a classifier noun asks for the class a thing
is filed under. Where node types tell nothing, :meth:`~cef.retrieve.pathtypes.PathTypes._category`
finds the category relation by how many things share each end; where the ends are typed, the
relation's declared ``semantics`` says it: :func:`classification_relation` is the one candidate last
hop, walked toward the class (forward), whose relation type is a ``CLASSIFICATION``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from cef.model.graph import RelationSemantics, RelationType
from cef.retrieve.pathasked import AskedFor
from cef.retrieve.pathwords import Hop

__all__ = ["classification_relation"]


class _Schema(Protocol):
    def relation_type(self, name: str) -> RelationType | None: ...


class _Types(Protocol):
    """What :func:`classification_relation` reads of the path scorer."""

    @property
    def schema(self) -> _Schema: ...
    def _end_labels(self, hop: Hop) -> tuple[int, ...]: ...
    def _names_type(self, asked: AskedFor, label: int) -> bool: ...


def classification_relation(
    asked: AskedFor | None, ends: Iterable[Hop], types: _Types, cues: Mapping[str, object]
) -> str | None:
    """The relation a classifier noun names by the graph's declared semantics: among the last hops
    of the candidate paths (``ends``), the one relation of ``CLASSIFICATION`` semantics walked
    forward (source: the thing, target: its class). None when the question asks with no classifier
    noun (``asked``); when the classifier phrase names an end type by every word of its name ("which
    *grape varieties*": ``GrapeVariety``, the type fit reads it); when the question names the
    relation already (``cues``: "what kind of *aircraft*" for ``TYPE_HAS_AIRCRAFT``: counted twice
    it would read as asked there and back); or when none or several such relations end a candidate."""
    if asked is None or not asked.classifier or asked.at is None:
        return None
    ends = list(ends)
    if any(types._names_type(asked, c) for h in ends for c in types._end_labels(h)):
        return None
    found = set()
    for h in ends:
        rt = types.schema.relation_type(h.relation)
        if (
            h.forward
            and h.relation not in cues
            and rt is not None
            and rt.semantics == RelationSemantics.CLASSIFICATION
        ):
            found.add(h.relation)
    return next(iter(found)) if len(found) == 1 else None
