"""A classifier noun names a CLASSIFICATION relation (issue 23).

"What *kind* of piece is X?", "which *type* of claim": a classifier noun asks for the class a thing
is filed under. Where node types tell nothing, :meth:`~cef.retrieve.pathtypes.PathTypes._category`
finds the category relation by how many things share each end; where the ends are typed, the
relation's declared ``semantics`` says it: :func:`classification_relation` is the one candidate last
hop, walked toward the class (forward), whose relation type is a ``CLASSIFICATION``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from cef.model.graph import RelationSemantics, RelationType
from cef.retrieve.pathasked import AskedFor
from cef.retrieve.pathwords import Hop

__all__ = ["classification_relation"]


def classification_relation(
    asked: AskedFor | None, ends: Iterable[Hop], relation_type: Callable[[str], RelationType | None]
) -> str | None:
    """The relation a classifier noun names by the graph's declared semantics: among the last hops
    of the candidate paths (``ends``), the one relation of ``CLASSIFICATION`` semantics walked
    forward (source: the thing, target: its class); None when the question asks with no classifier
    noun (``asked``), or when none or several such relations end a candidate."""
    if asked is None or not asked.classifier or asked.at is None:
        return None
    found = set()
    for h in ends:
        rt = relation_type(h.relation)
        if h.forward and rt is not None and rt.semantics == RelationSemantics.CLASSIFICATION:
            found.add(h.relation)
    return next(iter(found)) if len(found) == 1 else None
