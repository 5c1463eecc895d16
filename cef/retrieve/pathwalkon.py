"""One unnamed hop walked past a relation the question names (issue 23, tenth wave).

"Which titles has X *published*?" asks what the named relation reaches; a path that walks on one hop
no question word names, to a type the asked noun fits only by an embedder's cosine ("titles" is
nearer ``Genre`` than ``Game`` to MiniLM), answers something else. :func:`end_fits` gives such a
path no more answer-type fit than the named path it extends (:func:`walked_on`), unless a noun
names its end type.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import combinations

from cef.retrieve.pathagent import agent_noun
from cef.retrieve.pathasked import AskedFor, asks_broad_kind
from cef.retrieve.pathcues import coming_back, unasked_back, without_back
from cef.retrieve.pathwords import FUNCTION_WORDS, WH_WORDS, Hop, RelationPath

__all__ = [
    "detours",
    "embedding_parts",
    "end_fits",
    "hold_below",
    "modifiers",
    "no_detours",
    "revisits",
    "unasked_backs",
    "walked_on",
    "walked_past",
]


def walked_on(
    paths: Sequence[RelationPath],
    explained: Sequence[float],
    least: float,
    tokens: Sequence[tuple[str, str]] = (),
    asked: AskedFor | None = None,
) -> dict[RelationPath, RelationPath]:
    """Each path that walks one hop no question word names past a shorter candidate whose every hop
    one names (at least ``least`` of a hop each), mapped to that shorter path: "which titles has X
    *published*" asks what the named relation reaches, not what lies one unnamed hop beyond it.
    Only for an ``asked`` noun (none: every path), not a question word alone ("who"), not a
    classifier (a category lies past its things), and none when a relative pronoun follows it in
    ``tokens`` ("which CVEs hit the versions *that* X ships"): the named relations describe another
    noun on the way."""
    if asked is not None and (asked.classifier or asks_broad_kind(asked) or asked.at is None):
        return {}
    if asked is not None and any(t in WH_WORDS or t == "where" for t, _ in tokens[(asked.at or 0) + 1 :]):
        return {}
    got = dict(zip(paths, explained, strict=True))
    return {
        p: p[:-1]
        for p in paths
        if len(p) > 1 and p[:-1] in got and got[p[:-1]] >= least * (len(p) - 1) and got[p] <= got[p[:-1]]
    }


def end_fits(
    hops: Sequence[tuple[float, float]],
    fit: dict[tuple[int, ...], float],
    end_of: dict[RelationPath, tuple[int, ...]],
    named: bool,
    wording: tuple[Sequence[tuple[str, str]], AskedFor | None, float],
    types: frozenset[str],
    reached: Callable[[Hop], frozenset[str]],
) -> dict[RelationPath, float]:
    """Each path's end fit (``fit``: that of each set of end types; ``end_of``: each candidate
    path's end types, in the order of ``hops``, its explained hops; ``named``: a noun names the
    best fitting type); one unnamed hop past a named path
    (:func:`walked_on`; ``wording``: the question's tokens, what it asks, ``soft_cue``) to no type
    the question mentions (``types``' lemmas; ``reached``: the types a hop reaches) gains no fit over that
    path, unless a noun names its end type."""
    tokens, asked, least = wording
    got = {p: fit.get(e, 0.0) for p, e in end_of.items()}
    if not fit or len(got) != len(hops):  # no asked kind, or not one explanation a path
        return got
    for p, q in walked_on(list(got), [e for e, _ in hops], least, tokens, asked).items():
        if not (types & set().union(*(reached(h) for h in q))) and not (named and got[p] >= 1.0):
            got[p] = min(got[p], got[q])
    return got


def no_detours(
    scored: list[tuple[float, RelationPath]], below: Mapping[RelationPath, Collection[RelationPath]]
) -> list[tuple[float, RelationPath]]:
    """``scored`` with each path of ``below`` scored just below the shorter candidates it maps to
    (those of them among ``scored``): a detour out along a relation and straight back to another
    node of the type it left (:func:`detours`), or a hop walked on past the answer
    (:func:`walked_past`), adds nothing the question asks for to the path it leaves out."""
    got = {p: sc for sc, p in scored}
    return [(min([sc, *(got[q] - _BELOW for q in below.get(p, ()) if q in got)]), p) for sc, p in scored]


def detours(unasked: Collection[RelationPath]) -> dict[RelationPath, list[RelationPath]]:
    """Each path of ``unasked`` (it walks out along a relation and straight back, and no question
    word asks for that: ``unasked_back``) mapped to the direct paths without that walk: "who chairs
    the department that offers X" asks for X's department's chair, not the chair of a department
    beside it that one more naming of the department's relation made look asked."""
    return {p: [q for k in coming_back(p) if (q := without_back(p, k))] for p in unasked}


def walked_past(
    fits: Mapping[RelationPath, float],
    namings: Mapping[str, Sequence[tuple[float, frozenset[int]]]],
    own: frozenset[int],
    mentioned: tuple[frozenset[str], Callable[[Hop], frozenset[str]]] = (
        frozenset(),
        lambda hop: frozenset(),
    ),
) -> dict[RelationPath, list[RelationPath]]:
    """Each path whose last hop walks on past a shorter candidate that fits what is asked better
    (``fits``: each path's end fit) and that no question word of its own names, mapped to that
    shorter path: "who sits on X's school *board*" stops at the board's members, though "board"
    names the relation from a member onwards too. A word that names a hop of the shorter path, or
    one of ``own`` (the asked noun's own modifiers: "the *faculty* advisors" says what the advisors
    are), is no word of the last hop's own. Not past a type the question mentions (``mentioned``:
    those types' head lemmas, and the head lemmas of the types a hop reaches): "which post houses
    worked on the *film* that ..." passes the film on the way."""
    types, reached = mentioned
    return {
        p: [p[:-1]]
        for p, f in fits.items()
        if len(p) > 1
        and fits.get(p[:-1], f) > f
        and not types & reached(p[-2])
        and _words(namings, {p[-1].relation}) <= _words(namings, {h.relation for h in p[:-1]}) | own
    }


def revisits(
    paths: Sequence[RelationPath],
    types_at: tuple[int | None, Callable[[RelationPath, int | None], tuple[int, ...]]],
    namings: Mapping[str, Sequence[tuple[float, frozenset[int]]]],
    own: frozenset[int],
) -> dict[RelationPath, list[RelationPath]]:
    """Each path that leaves a node type and comes back to it (``types_at``: the anchor's type and the types
    a path from it reaches) on hops no question word of their own names (one that names no other hop of
    the path, nor is one of ``own``), mapped to the path with that loop cut out: "the *faculty*
    advisors of X" are X's advisors, not the members of the department one of them chairs."""
    out: dict[RelationPath, list[RelationPath]] = {}
    start, ends = types_at
    seen: dict[RelationPath, tuple[int, ...]] = {(): () if start is None else (start,)}
    for p in paths:
        at = [
            seen[q] if (q := p[:k]) in seen else seen.setdefault(q, ends(q, start)) for k in range(len(p) + 1)
        ]
        if len(set(at)) in (1, len(at)):  # no type twice, or one type throughout: no loop (most paths)
            continue
        for i, j in combinations(range(len(p) + 1), 2):
            loop, rest = p[i:j], p[:i] + p[j:]
            if at[i] and at[i] == at[j] and rest and any(at[k] != at[i] for k in range(i + 1, j)):
                rest_words = _words(namings, {h.relation for h in rest}) | own
                if _words(namings, {h.relation for h in loop}) <= rest_words:
                    out.setdefault(p, []).append(rest)
    return out


def _words(
    namings: Mapping[str, Sequence[tuple[float, frozenset[int]]]], relations: set[str]
) -> frozenset[int]:
    """Positions of the question words that name any of ``relations``."""
    return frozenset().union(*(at for r in relations for _, at in namings.get(r, ())))


def modifiers(tokens: Sequence[tuple[str, str]], asked: AskedFor | None) -> frozenset[int]:
    """Positions of the words right before the asked noun that are no function words: its own
    modifiers ("which *faculty* advisors"), none for a question word alone."""
    if asked is None or asked.at is None:
        return frozenset()
    start = asked.at
    while start > 0 and tokens[start - 1][0] not in FUNCTION_WORDS:
        start -= 1
    return frozenset(range(start, asked.at))


#: how far below the shorter path a longer one is held: any positive amount orders the two, no more
_BELOW = 1e-6


def hold_below(
    scored: list[tuple[float, RelationPath]],
    paths: Sequence[RelationPath],
    back: Collection[RelationPath],
    types_at: tuple[int | None, Callable[[RelationPath, int | None], tuple[int, ...]]],
    held: tuple[
        Mapping[RelationPath, float],
        Mapping[str, Sequence[tuple[float, frozenset[int]]]],
        frozenset[int],
        tuple[frozenset[str], Callable[[Hop], frozenset[str]]],
    ],
) -> list[tuple[float, RelationPath]]:
    """``scored`` with each unasked walk out and back (``back``: :func:`detours`), each loop back to
    a type (:func:`revisits`) and each hop past the answer (:func:`walked_past`; ``held``: the
    paths' end fits, the question's namings, the asked noun's modifiers, the mentioned types) held
    just below the shorter path it adds nothing to (:func:`no_detours`)."""
    fits, namings, own, mentioned = held
    for below in (
        detours(back),
        revisits(paths, types_at, namings, own),
        walked_past(fits, namings, own, mentioned),
    ):
        scored = no_detours(scored, below)
    return scored


def embedding_parts(
    parts: dict[RelationPath, dict[str, float]],
    scored: Sequence[tuple[float, RelationPath]],
    lexical: Mapping[RelationPath, float],
) -> None:
    """Each path's ``embedding`` part: what the vectors added to its ``lexical`` score."""
    for score, p in scored:
        parts[p]["embedding"] = score - lexical[p]


def unasked_backs(
    tokens: Sequence[tuple[str, str]],
    where: Mapping[str, Sequence[int]],
    cues: Mapping[str, tuple[float, int]],
    paths: Sequence[RelationPath],
    turns: tuple[Collection[str], Callable[[Hop], Collection[str]]],
) -> set[RelationPath]:
    """The paths that walk out and straight back unasked (:func:`unasked_back`): the agent nouns
    naming a relation (``where``: its words' positions; "the *director*") ask for its turn, a
    type's noun only at a node of its type (``turns``)."""
    doers = {r: [tokens[i][1] for i in pos if agent_noun(*tokens[i])] for r, pos in where.items()}
    return {p for p in paths if unasked_back(p, cues, doers, turns)}
