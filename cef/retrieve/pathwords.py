"""The words of relation paths and of questions: how a question word names a relation hop.

A question word names a relation when it shares a stem with one of the relation's name words
(:func:`cef.retrieve.qwords.stem_match`, the one matcher of question words to relation and type
words). Hops named outward from the anchor
read in walking order (:func:`hop_order`); a sharing word ("same", "share", "also", "co-") is
about the relation named next to it (:func:`shared_relation`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from cef import text
from cef.extract.lemmas import Lemmatize, default_lemmatizer, surface_tokens
from cef.retrieve.qwords import relation_words, stem_match

__all__ = [
    "SHARING_CUE",
    "Hop",
    "Lemmatize",
    "RelationPath",
    "default_lemmatizer",
    "hop_order",
    "masked_question",
    "possessive",
    "relation_words",
    "shared_relation",
    "stem_match",
    "surface_tokens",
]


class Hop(NamedTuple):
    """One hop of a relation path: ``relation`` walked source → target (``forward``) or back.

    A named tuple, not a dataclass: scoring hashes paths (tuples of hops) hundreds of thousands
    of times per question batch, and a tuple hashes and compares in C."""

    relation: str
    forward: bool


RelationPath = tuple[Hop, ...]
#: words that ask for things sharing a neighbour ("same director", "co-starred", "also appear")
SHARING_CUE = re.compile(r"\b(?:same|share[sd]?|sharing|also|together|co-\w+)\b", re.IGNORECASE)
#: function words that name no relation (articles, prepositions, auxiliaries, pronouns, question words)
FUNCTION_WORDS = text.FUNCTION_WORDS | text.QUESTION_WORDS
#: function words that relate two things: relation words on both sides of one are two namings
PREPOSITIONS = frozenset(["of", "by", "in", "on", "at", "to", "for", "with", "from"])
#: words that open a relative clause or a question about the thing named before them
WH_WORDS = frozenset(["which", "what", "whose", "whom", "who", "that"])
MASK = "X"


def content_words(words: Sequence[str]) -> list[str]:
    return [w for w in words if w not in FUNCTION_WORDS and len(w) > 1]


def masked_question(question: str, span: tuple[int, int] | None) -> str:
    """The question with the anchor's mention (``span``) replaced by a placeholder."""
    masked = f"{question[: span[0]]} {MASK} {question[span[1] :]}" if span else question
    return " ".join(masked.split())


def possessive(question: str, span: tuple[int, int] | None) -> bool:
    """Whether the mention at ``span`` is in the possessive: it ends in, or is followed by, "'s" /
    "s'" (either apostrophe): "who is *X's* agent"."""
    if span is None:
        return False
    around = question[span[1] - 2 : span[1] + 2].replace("\u2019", "'")
    return around[:2] in ("'s", "s'") or around[2:] == "'s" or around[2:3] == "'"


def hop_order(path: RelationPath, dists: dict[str, list[int]]) -> float:
    """+1 when hops of two or more relations are named on one side of the anchor, outward from it
    in walking order; -1 when a hop is named nearer the anchor, on its side, than a hop walked
    before it; else 0.

    English names a chain of relations outward from the thing it starts at ("the films *starred*
    by the *director* of X" walks X -> director -> films -> starred), so on each side of the anchor
    the hop walked first is named nearest it. Across sides nothing is told: "the films that share
    directors with X were *released* when" walks the left side first, "the drugs that *interact*
    with the drug X was *prescribed*" the right. ``dists`` holds signed distances (negative: before
    the anchor). Each hop takes an unused naming of its relation not nearer the anchor than the
    previous hop's on that side; a hop walking straight back along the previous relation may reuse
    its naming ("films by the director of X": one word, there and back); a word another relation's
    hop took names no further hop (one word, one hop). The hops named on one side
    form one stretch of the walk: a walk that leaves a side and comes back to it reads the question
    out of order. The best assignment of namings to hops counts (a path has at most a few hops)."""

    def walk(k: int, taken: dict[str, frozenset[int]], last: dict[int, int], sides: tuple[int, ...]) -> float:
        if k == len(path):
            # an order is told only between different relations named on one side
            placed = [{r for r, sd in zip(named_rel, sides, strict=True) if sd == side} for side in (-1, 1)]
            return 1.0 if max(len(p) for p in placed) >= 2 else 0.0
        h = path[k]
        names = dists.get(h.relation)
        if not names:
            return walk(k + 1, taken, last, sides)
        prev = path[k - 1] if k else None
        back = prev is not None and prev.relation == h.relation and prev.forward != h.forward
        mine = taken.get(h.relation, frozenset())
        # one word names one hop: a naming another relation's hop took is not free ("chairing"
        # names CHAIRED_BY or CHAIRS_COMMITTEE, not both one after the other)
        used = frozenset().union(*taken.values()) if taken else frozenset()
        free = [d for d in names if d not in used]
        outcomes: list[float] = []
        for d in free:
            side = 1 if d > 0 else -1
            if abs(d) < last[side] or (sides and side != sides[-1] and side in sides):
                continue  # nearer the anchor than a hop before it, or back to a side the walk left
            named_rel.append(h.relation)
            outcomes.append(
                walk(k + 1, {**taken, h.relation: mine | {d}}, {**last, side: abs(d)}, (*sides, side))
            )
            named_rel.pop()
        if (back and mine) or not free:  # there and back on one naming; or every naming is used
            outcomes.append(walk(k + 1, taken, last, sides))
        return max(outcomes) if outcomes else -1.0

    if sum(h.relation in dists for h in path) < 2:
        return 0.0  # one named hop or none: no order to tell, and one hop always finds a naming
    named_rel: list[str] = []  # the relation of each hop in ``sides`` (the walk's current branch)
    return walk(0, {}, {-1: 0, 1: 0}, ())


def shared_relation(tokens: list[tuple[str, str]], where: dict[str, list[int]]) -> str | None:
    """The relation a sharing word is about: the one named closest to it (within 3 words; a naming
    after the word wins a tie: "share actors", "whose directors also directed")."""
    marks = [i for i, (t, _) in enumerate(tokens) if SHARING_CUE.fullmatch(t)]
    best: tuple[int, int, str] | None = None
    for r, positions in where.items():
        for m in marks:
            for p in positions:
                d = abs(p - m)
                if d <= 3:
                    key = (d, 0 if p > m else 1, r)
                    if best is None or key < best:
                        best = key
    return best[2] if best is not None else None
