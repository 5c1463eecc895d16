"""Order words name a sequence relation, and its direction (issue 23).

"The concert *after* X", "the stop right *before* X", "X's *next* phase": general English order
words name a relation that orders things (``FOLLOWED_BY``, ``FOLLOWS``, ``PRECEDED_BY``,
``SUPERSEDES``, ``NEXT_PHASE``, ``REPLACED_BY``), whose name no question word holds. Which way is
"after" differs by name, so it is read from the relation's own words (:func:`forward_later`): a
verb of order ("follow", "precede", "succeed", "supersede", "replace") with its voice (a last
"by": passive), or an adjective of order naming the target ("next", "previous"); else the inverse
name read the same way and turned around; else, for a relation whose ``semantics`` is
``SEQUENCE``, an adjective of order in its description ("the *next* concert in the season").
:func:`order_namings` finds the order words near the anchor and the direction each asks the first
hop to walk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from cef.retrieve.pathwords import RelationPath
from cef.retrieve.qwords import relation_words

__all__ = [
    "EARLIER",
    "LATER",
    "add_order_cues",
    "forward_later",
    "order_cues",
    "order_namings",
    "order_of_type",
]

#: question words that place the asked thing after the anchor ("the concert *after* X", "X's *next*")
LATER = frozenset(["after", "next", "following", "subsequent", "later", "succeeding"])
#: question words that place the asked thing before the anchor ("the stop *before* X")
EARLIER = frozenset(["before", "previous", "preceding", "prior", "earlier", "former"])
#: adjectives and nouns of a relation's words that say its target comes after its source
_TARGET_LATER = frozenset(["next", "subsequent", "later", "successor", "successors"])
#: ... and before it
_TARGET_EARLIER = frozenset(
    ["previous", "prior", "preceding", "earlier", "predecessor", "predecessors", "former"]
)
#: stems of English verbs whose subject comes after their object ("A follows B": A is later)
_VERB_LATER = ("follow", "succeed", "supersed", "replac", "postdat")
#: ... whose subject comes before their object ("A precedes B": A is earlier)
_VERB_EARLIER = ("preced", "predat", "anteced")
#: tokens the order word and the anchor may have between them ("right / just / immediately before X")
_WINDOW = 3


def _read(words: Sequence[str]) -> bool | None:
    """Whether walking a relation named by ``words`` from source to target reaches a later thing."""
    low = [w.lower() for w in words]
    for w in low:
        if w in _TARGET_LATER:
            return True
        if w in _TARGET_EARLIER:
            return False
    passive = bool(low) and low[-1] == "by"
    for w in low:
        if w.startswith(_VERB_LATER):
            return passive  # "A followed by B": B later; "A follows B": B earlier
        if w.startswith(_VERB_EARLIER):
            return not passive
    return None


def forward_later(name: str, inverse: str | None, description: str, sequence: bool) -> bool | None:
    """Whether walking the relation forward reaches the later of two ordered things (None: its
    words say no order). Read from its name, else its inverse name (turned around), else, when its
    ``semantics`` is ``SEQUENCE`` (``sequence``), an adjective of order in its description."""
    got = _read(relation_words(name))
    if got is None and inverse:
        inv = _read(relation_words(inverse))
        got = None if inv is None else not inv
    if got is None and sequence:
        words = [w.strip(".,;:()\"'").lower() for w in description.split()]
        hit = next((w for w in words if w in _TARGET_LATER or w in _TARGET_EARLIER), None)
        got = None if hit is None else hit in _TARGET_LATER
    return got


class _TypeLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def inverse(self) -> str | None: ...
    @property
    def description(self) -> str: ...
    @property
    def semantics(self) -> object: ...


def order_of_type(rt: _TypeLike | None, relation: str) -> bool | None:
    """:func:`forward_later` of a relation type (a relation with no type reads its name alone)."""
    if rt is None:
        return forward_later(relation, None, "", False)
    sequence = str(getattr(rt.semantics, "value", rt.semantics)) == "SEQUENCE"
    return forward_later(relation, rt.inverse, rt.description, sequence)


def order_namings(
    order_of: Callable[[str], bool | None],
    tokens: Sequence[tuple[str, str]],
    at: int | None,
    paths: Iterable[RelationPath],
) -> dict[str, tuple[int, bool]]:
    """relation -> (position of the order word that names it, the direction its first hop walks
    from the anchor), for the relations that start a candidate path and whose words say an order
    (``order_of``: :func:`forward_later`). An order word names such a relation when it stands at
    most a few tokens from the anchor ("the concert *after* X", "right *before* the X", "X's
    *next*"); "after" names the later thing, so the hop walks forward when the relation's forward
    reaches the later one. A word farther off relates something else ("who took over after ...")."""
    if at is None:
        return {}
    near = [
        (i, t in LATER)
        for i, (t, _) in enumerate(tokens)
        if (t in LATER or t in EARLIER) and 0 < abs(i - at) <= _WINDOW
    ]
    if not near:
        return {}
    i, later = min(near, key=lambda x: abs(x[0] - at))
    out: dict[str, tuple[int, bool]] = {}
    for r in dict.fromkeys(p[0].relation for p in paths if p):
        fwd = order_of(r)
        if fwd is not None:
            out[r] = (i, fwd == later)
    return out


def add_order_cues(
    order: dict[str, tuple[int, bool]],
    at: int | None,
    cues: dict[str, tuple[float, int]],
    where: dict[str, list[int]],
    strong: dict[str, list[int]],
    namings: dict[str, list[tuple[float, frozenset[int]]]],
) -> None:
    """Count each order word of :func:`order_namings` as a naming of its relation, one hop, like a
    name word (unless that word names the relation already: "the *next* concert" in a description)."""
    for r, (i, _) in order.items():
        if any(i in pos for _, pos in namings.get(r, ())):
            continue
        count, near = cues.get(r, (0.0, 10_000))
        cues[r] = (count + 1.0, min(near, abs(i - at) if at is not None else i + 1))
        namings.setdefault(r, []).append((1.0, frozenset({i})))
        where.setdefault(r, []).append(i)
        strong.setdefault(r, []).append(i)


def order_cues(
    relation_type: Callable[[str], Any],
    tokens: Sequence[tuple[str, str]],
    at: int | None,
    paths: Sequence[RelationPath],
    found: tuple[
        dict[str, tuple[float, int]],
        dict[str, list[int]],
        dict[str, list[int]],
        dict[str, list[tuple[float, frozenset[int]]]],
    ],
) -> dict[str, tuple[int, bool]]:
    """:func:`order_namings` of the candidate ``paths`` (``relation_type``: the schema's relation
    type of a name, or None), counted into the question's namings ``found`` (cues, their
    positions, those of name words, each naming: :func:`add_order_cues`)."""
    ordered = order_namings(lambda r: order_of_type(relation_type(r), r), tokens, at, paths)
    add_order_cues(ordered, at, *found)
    return ordered
