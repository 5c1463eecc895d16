"""One unnamed hop walked past a relation the question names (issue 23, tenth wave).

"Which titles has X *published*?" asks what the named relation reaches; a path that walks on one hop
no question word names, to a type the asked noun fits only by an embedder's cosine ("titles" is
nearer ``Genre`` than ``Game`` to MiniLM), answers something else. :func:`end_fits` gives such a
path no more answer-type fit than the named path it extends (:func:`walked_on`), unless a noun
names its end type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cef.retrieve.pathasked import AskedFor, asks_broad_kind
from cef.retrieve.pathcues import coming_back, without_back
from cef.retrieve.pathwords import WH_WORDS, Hop, RelationPath

__all__ = ["end_fits", "no_detours", "walked_on"]


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
    scored: list[tuple[float, RelationPath]], unasked: set[RelationPath]
) -> list[tuple[float, RelationPath]]:
    """``scored`` with each path of ``unasked`` (it walks out along a relation and straight back to
    another node of the type it left, and no question word asks for that: ``unasked_back``) scored
    just below the direct path without that detour, where that path is a candidate too: "who chairs
    the department that offers X" asks for X's department's chair, not the chair of a department
    beside it that the detour's extra words ("department" named twice by one word) made look named."""
    got = dict((p, sc) for sc, p in scored)
    out = []
    for sc, p in scored:
        direct = [got[q] for k in coming_back(p) if p in unasked and (q := without_back(p, k)) and q in got]
        out.append((min([sc, *(d - _BELOW for d in direct)]), p))
    return out


#: how far below the direct path a detour scores: any positive amount orders the two, no more
_BELOW = 1e-6
