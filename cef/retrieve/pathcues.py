"""How a question's words name the hops of a relation path (the lexical half of :mod:`cef.retrieve.pathscore`).

A *naming* is a run of question words that name one relation: its name words (one hop) or its
description words (``soft`` of a hop, :attr:`~cef.retrieve.presets.PathSettings.soft_cue`). :func:`name_cues` finds the namings of every candidate
relation in a question; :func:`explained_hops` counts the hops of one path they explain, each word
explaining one hop of one relation (:func:`assign`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

from cef.extract.lemmas import WORD
from cef.retrieve.english import CALENDAR, CLASSIFIERS, COPULAS, HAVE, OPENERS, PRO_FORMS, inflected_verb
from cef.retrieve.pathwords import (
    FUNCTION_WORDS,
    PREPOSITIONS,
    WH_WORDS,
    Hop,
    RelationPath,
    hop_order,
    stem_match,
)

__all__ = [
    "RelationWords",
    "assign",
    "coming_back",
    "explained_hops",
    "explained_many",
    "name_cues",
    "unasked_back",
    "unnamed_phrases",
    "voiced_direction",
    "voiced_first",
    "voiced_last",
    "without_back",
]


class _RelType(Protocol):
    bidirectional: bool


#: English prepositions and particles that may end a question after its verb ("fall *under*")
_PARTICLES = frozenset(["under", "into", "about", "after", "up", "out", "off", "over", "around", "through"])
#: auxiliaries between a subject and its verb ("who *is* supervised by", "which teams *have* owned")
_AUXILIARIES = COPULAS | HAVE


@dataclass
class RelationWords:
    """The words of one relation: name words (forward), inverse-name words, description words."""

    forward: list[str]
    inverse: list[str] | None
    description: list[str]
    cue: list[tuple[str, str]]  # (word, lemma) that explain a hop
    soft: list[tuple[str, str]]  # description words: PathSettings.soft_cue of a hop


#: endings of English verb forms (past participle, present participle): "stationed", "housing"
_VERB_FORMS = ("ed", "ing")


def name_cues(
    words_of: Callable[[str], RelationWords],
    tokens: list[tuple[str, str]],
    at: int | None,
    relations: set[str],
    where: dict[str, list[int]] | None = None,
    strong: dict[str, list[int]] | None = None,
    namings: dict[str, list[tuple[float, frozenset[int]]]] | None = None,
    *,
    soft: float = 0.75,
    no_soft: frozenset[int] = frozenset(),
    nouns: frozenset[int] = frozenset(),
) -> dict[str, tuple[float, int]]:
    """relation -> (how many times the question names it, distance of the nearest naming to the anchor).

    Words naming one relation next to each other are one naming ("starred which actors"); the
    anchor, another content word, a preposition between two name words or a repeat of the same
    relation word starts a new one ("movies starred by X actors" and "movies starred by actors in X" name starred_actors
    twice, so does "written by the writer of X"), except a repeat right after it or after a relative word
    ("which screenwriter wrote", "the director that directed": one naming). Description words count ``soft``. ``where``
    receives the token positions of the namings, ``strong`` those of name (not description) words,
    ``namings`` each naming's weight and token positions (a word may name several relations; in
    one path it explains one hop, :func:`explained_hops`). ``no_soft``: token positions whose
    words name no relation by its description (the noun that says what is asked names the end's
    kind: "which *groups* created" is not PART_OF's "a lab or group is part of ...").
    ``nouns``: token positions of nouns that name a node type: such a noun names no relation by a
    verb form made from it ("the *stations* run by X" is not STATIONED_AT's "stationed").
    """
    out: dict[str, tuple[float, int]] = {}
    for r in relations:
        w = words_of(r)
        count = 0.0
        # [weight, {weight: token positions}] of each naming: it counts as its strongest words
        mine: list[list[Any]] = []
        nearest = 10_000
        run: set[int] | None = None  # relation words matched by the current naming
        run_weight = 0.0
        split = False  # a preposition since the last relation word: "starred by actors" names twice
        same = False  # a relative word since the last relation word ("director that directed")
        last = -2  # position of the last relation word
        before: set[int] = set()  # relation words named before the anchor
        joined = False  # the anchor split one naming: "what year was X released" (release_year)
        for i, (t, lem) in enumerate(tokens):
            if i == at:
                run = None
                # "starred by X actors": a preposition ties the words before to the anchor, a
                # naming of their own; "what year was X released": one naming around it
                between = [w for w, _ in tokens[last + 1 : i]] if last >= 0 else []
                if any(w in PREPOSITIONS for w in between) and all(
                    w in FUNCTION_WORDS or len(w) < 2 for w in between
                ):
                    before.clear()
                continue
            if t in FUNCTION_WORDS or len(t) < 2:
                if t in PREPOSITIONS:
                    split = True
                elif t in WH_WORDS:
                    split = False  # "released in which years": one naming
                    same = run is not None  # "the director that directed X": one thing, one naming
                continue
            hit = next(
                (
                    k
                    for k, (cw, cl) in enumerate(w.cue)
                    if stem_match(t, cw, lem, cl) and not (i in nouns and cw.endswith(_VERB_FORMS))
                ),
                None,
            )
            weight = 1.0
            if hit is None:
                soft_hit = (
                    None
                    if i in no_soft
                    else next((k for k, (cw, cl) in enumerate(w.soft) if stem_match(t, cw, lem, cl)), None)
                )
                if soft_hit is None:
                    run = None
                    continue
                hit, weight = len(w.cue) + soft_hit, soft
            if run is not None and hit in run and (same or last == i - 1):
                same = False
                last = i
                mine[-1][1].setdefault(weight, set()).add(i)
                continue  # the same relation word again, about the same thing ("screenwriter wrote")
            same = False
            last = i
            if at is not None and weight == 1.0:
                if i < at:
                    before.add(hit)
                elif run is None and not joined and before and hit not in before:
                    # other words of a relation named before the anchor: the same naming around it
                    joined = True
                    run, run_weight, split = {hit}, weight, False
                    if mine:
                        mine[-1][1].setdefault(weight, set()).add(i)  # the naming before the anchor
                    continue
            if run is not None and hit not in run and (not split or weight < 1.0 or run_weight < 1.0):
                run.add(hit)
                mine[-1][1].setdefault(weight, set()).add(i)
                if weight > run_weight:  # a naming counts as its strongest word
                    mine[-1][0] = weight
                    count += weight - run_weight
                    run_weight = weight
                    if strong is not None:
                        strong.setdefault(r, []).append(i)
                continue
            split = False
            run = {hit}
            run_weight = weight
            count += weight
            mine.append([weight, {weight: {i}}])
            nearest = min(nearest, abs(i - at) if at is not None else i + 1)
            if where is not None:
                where.setdefault(r, []).append(i)
            if strong is not None and weight == 1.0:
                strong.setdefault(r, []).append(i)
        if count:
            out[r] = (count, nearest)
            if namings is not None:
                namings[r] = [(float(wt), frozenset(at_[wt])) for wt, at_ in mine]
    return out


def explained_hops(
    path: RelationPath,
    cues: dict[str, tuple[float, int]],
    sharing: bool,
    shared: str | None = None,
    dists: dict[str, list[int]] | None = None,
    namings: dict[str, list[tuple[float, frozenset[int]]]] | None = None,
) -> tuple[float, float]:
    """Hops a question word explains (each word one hop, of one relation of the path: "services
    that checkout calls" names one hop, not one of each relation whose description says
    "service"; a hop walking straight back along a
    relation named once, half a hop: "the films *for* the screenwriter of X"), and the order
    of the namings (:func:`~cef.retrieve.pathwords.hop_order`; ``dists``: relation -> distances of its namings from
    the anchor)."""
    hops: dict[str, int] = {}
    for h in path:
        hops[h.relation] = hops.get(h.relation, 0) + 1
    named = {r: c for r, (c, _) in cues.items()}
    if namings is not None and sum(r in namings for r in hops) > 1:
        named = assign(hops, namings, named)
    if sharing:  # "share actors", "same director": that relation walked there and back is named twice
        for a, b in pairwise(path):
            if a.relation == b.relation and a.forward != b.forward:
                if shared is not None and a.relation != shared:
                    continue  # the sharing word is about another relation
                # named once: the sharing word names the return; not named: the sharing word
                # alone tells that some relation is walked there and back ("the same movie")
                named[a.relation] = max(named[a.relation], 2.0) if a.relation in named else 1.0
                break
    else:  # "the films of the writer of X ...": back along a named relation, implied, half a hop
        # (only on the way to a further hop: a walk that ends coming back asks for things like
        # the anchor, "co-stars of X", which takes a sharing word)
        for a, b in pairwise(path[:-1]):
            if a.relation == b.relation and a.forward != b.forward and 0 < named.get(a.relation, 0) < 2:
                named[a.relation] += 0.5
                break
    explained = sum(min(named[r], n) for r, n in hops.items() if r in named)
    return explained, hop_order(path, dists or {})


#: stands in for every hop of a relation no question word names (:func:`explained_many`)
_UNNAMED = Hop("\x00", False)


def explained_many(
    paths: Sequence[RelationPath],
    cues: dict[str, tuple[float, int]],
    sharing: bool,
    shared: str | None = None,
    dists: dict[str, list[int]] | None = None,
    namings: dict[str, list[tuple[float, frozenset[int]]]] | None = None,
) -> list[tuple[float, float]]:
    """:func:`explained_hops` of each path, computed once per shape. A relation no question word
    names (not in ``cues``, ``dists``, ``namings``, nor ``shared``) explains nothing, and with a
    sharing word counts only by which hops walk it and which way (a hop there and back along it), so
    it is replaced by a placeholder: one for all without a sharing word, else one per relation,
    numbered by first use. Paths that differ only in unnamed relations explain alike (a big graph's
    hundreds of candidate paths have far fewer shapes)."""
    known = {*cues, *(dists or {}), *(namings or {})}
    if shared is not None:
        known.add(shared)
    memo: dict[RelationPath, tuple[float, float]] = {}
    out: list[tuple[float, float]] = []
    for path in paths:
        if sharing:
            canon: dict[str, str] = {}
            shape = tuple(
                h
                if h.relation in known
                else Hop(canon.setdefault(h.relation, f"\x00{len(canon)}"), h.forward)
                for h in path
            )
        else:
            shape = tuple(h if h.relation in known else _UNNAMED for h in path)
        got = memo.get(shape)
        if got is None:
            got = memo[shape] = explained_hops(shape, cues, sharing, shared, dists, namings)
        out.append(got)
    return out


def assign(
    hops: dict[str, int],
    namings: dict[str, list[tuple[float, frozenset[int]]]],
    named: dict[str, float],
) -> dict[str, float]:
    """How many hops of each relation of a path the question names when each word explains one
    hop of one relation: namings are taken strongest first (name words before description words,
    then the relation the path walks more often), each while its words are unused and its relation
    has hops left to explain."""
    order = sorted(
        ((wt, hops[r], r, at) for r in hops for wt, at in namings.get(r, ())),
        key=lambda x: (-x[0], -x[1], x[2]),
    )
    out = {r: c for r, c in named.items() if r not in hops}
    used: set[int] = set()
    for wt, _, r, at in order:
        if used.isdisjoint(at) and out.get(r, 0.0) < hops[r]:
            used.update(at)
            out[r] = out.get(r, 0.0) + wt
    return out


def voiced_direction(
    words: RelationWords, tokens: list[tuple[str, str]], at: int | None, positions: list[int]
) -> bool | None:
    """Whether the question's wording walks the relation forward from the anchor (None: it does
    not say), read from the name word nearest the anchor: the anchor is the agent when it comes
    before an active verb ("which services does X *depend on*") or after a passive one ("the teams
    *led by* X"); the agent is the source of an active name (``DEPENDS_ON``) and the target of a
    passive one (``OWNED_BY``); a word of the inverse name (``OWNS``) turns the walk around. Only a
    form of the name's verb says it: the word's lemma is that of the name's first word ("depended",
    not "dependency"; "screenwriters" says nothing of ``WRITTEN_BY``'s direction)."""
    if at is None or not positions:
        return None
    i = min(positions, key=lambda p: abs(p - at))
    lem = tokens[i][1]
    lemmas = dict(words.cue)

    def names(name: list[str] | None) -> bool:
        return name is not None and len(name) > 0 and lemmas.get(name[0]) == lem

    on_forward = names(words.forward)
    if not on_forward and not names(words.inverse):
        return None
    name = words.forward if on_forward else words.inverse
    assert name is not None
    passive = i + 1 < len(tokens) and tokens[i + 1][0] == "by"
    agent = (i > at) != passive
    source = agent != (name[-1] == "by")
    return source if on_forward else not source


def voiced_first(
    words_of: Callable[[str], RelationWords],
    rel_types: Mapping[str, _RelType],
    paths: Sequence[RelationPath],
    tokens: list[tuple[str, str]],
    at: int | None,
    strong: dict[str, list[int]],
) -> dict[str, bool]:
    """relation -> the direction the question's wording gives it (:func:`voiced_direction`), for
    the relations the anchor has both ways (a service that depends on services and is depended on)."""
    first = {(p[0].relation, p[0].forward) for p in paths}
    out: dict[str, bool] = {}
    for r, fwd in first:
        rt = rel_types.get(r)
        if not fwd or (r, False) not in first or r not in strong or (rt is not None and rt.bidirectional):
            continue
        got = voiced_direction(words_of(r), tokens, at, strong[r])
        if got is not None:
            out[r] = got
    return out


def voiced_last(
    words_of: Callable[[str], RelationWords],
    rel_types: Mapping[str, _RelType],
    paths: Sequence[RelationPath],
    tokens: list[tuple[str, str]],
    here: int | None,
    strong: dict[str, list[int]],
) -> dict[str, bool]:
    """relation -> the direction the wording gives the last hop, walked toward the answer, for
    relations the longer candidates (two hops or more; a one-hop path's hop is the anchor's, read
    by :func:`voiced_first`) end with both ways. ``here``: the position of the asked noun or
    question word, the thing at the answer's end: "*who* supervises the nurses" reads like an
    anchor before an active verb (:func:`voiced_direction` from the answer's side), and the last
    hop walks the other way (from the nurses to who supervises them). Only a verb right after it
    (auxiliaries aside) says so: in "which league does the team ... play in" the verb is another
    noun phrase's."""
    if here is None:
        return {}
    last = {(p[-1].relation, p[-1].forward) for p in paths if len(p) > 1}
    out: dict[str, bool] = {}
    for r, fwd in last:
        rt = rel_types.get(r)
        if not fwd or (r, False) not in last or r not in strong or (rt is not None and rt.bidirectional):
            continue
        verb = min((i for i in strong[r] if i > here), default=None)
        if verb is None or not {t for t, _ in tokens[here + 1 : verb]} <= _AUXILIARIES:
            continue
        got = voiced_direction(words_of(r), tokens, here, [verb])
        if got is not None:
            out[r] = not got
    return out


def unnamed_phrases(
    question: str,
    tokens: Sequence[tuple[str, str]],
    skip: frozenset[int],
    named: frozenset[int],
    *,
    end_named: bool = False,
) -> int:
    """How many relational phrases of the question no candidate relation's words name: runs of
    words that relate things rather than name them, read with general English (word order and
    inflection, no tagger): an inflected verb ("which objects has X *treated*", "the conservator
    who *relined*"), the verb right after a subject "who" / "that" ("who *runs*", "the department
    that *looks* after"), a verb stranded before a last preposition ("whom does ... *answer* to?"),
    or a noun that takes a complement ("the *boss* of", "in *charge* of", "X's *boss*").
    ``tokens`` are the question's (token, lemma) pairs; ``skip``: positions that are no phrase (the
    anchor's mask, other named things); ``named``: positions of words that name a candidate
    relation: a run of relational words next to one belongs to that naming ("the title
    *sponsor*"), the cues count it. Each other phrase asks for a hop the path must walk, one a
    synonym names ("runs" for HEADED_BY), which the lexical cues cannot see. No phrase: a
    capitalized word (a name's), a verb whose subject is the listener ("can you *name*"; a request),
    a verb before "as" and a named word ("*listed* as director"), and with ``end_named`` (the asked
    noun names a relation: "what *genres* ...") the question's last verb ("... *belong* to?"),
    which is that relation's wording."""
    from cef.text import QUERY_STOP_WORDS

    raw = WORD.findall(question)  # the tokens as written (``tokens`` are lower case)
    relational: list[int] = []
    for i, (tok, lem) in enumerate(tokens):
        if i in skip or (0 < i < len(raw) and raw[i][:1].isupper()):
            continue  # a capitalized word is a name's (another mention's: "The *Opposite* of X")
        if i in named:
            relational.append(i)
            continue
        word = tok[:-2] if tok.endswith(("'s", "’s")) else tok
        if (
            i == 0
            or tokens[i - 1][0] == "you"  # a request: the listener's verb
            or word in QUERY_STOP_WORDS
            or word in FUNCTION_WORDS
            or word in OPENERS  # determiners and prepositions ("*during*": no -ing verb)
            or word in CALENDAR
            or word in PRO_FORMS
            or word in CLASSIFIERS
            or not any(c.isalpha() for c in word)
        ):
            continue
        if i + 2 < len(tokens) and tokens[i + 1][0] == "as" and (i + 2 in named or i + 3 in named):
            continue  # "*listed* as (a) director": the naming's wording
        last = all(t in _PARTICLES or t in PREPOSITIONS for t, _ in tokens[i + 1 :])
        if end_named and last:
            continue  # the question's last verb, the asked relation's wording ("*belong* to?")
        verb = inflected_verb(word, lem) or tokens[i - 1][0] in ("who", "that")
        complement = i + 1 < len(tokens) and tokens[i + 1][0] == "of"
        possessed = tokens[i - 1][0].endswith(("'s", "’s"))
        stranded = i + 2 == len(tokens) and tokens[i + 1][0] in PREPOSITIONS  # "... *answer* to?"
        if verb or complement or possessed or stranded:
            relational.append(i)
    runs: list[list[int]] = []
    for i in relational:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return sum(1 for run in runs if named.isdisjoint(run))


def coming_back(path: RelationPath) -> list[int]:
    """The positions of the hops that walk straight back along the hop before them, anywhere on the
    path: "the watch X is on, then its station, then the station's watches" reaches X's watch's
    siblings, things like the one before, which a question asks with a sharing word or by naming
    the relation twice, in the middle of a path as at its end."""
    return [
        k
        for k in range(1, len(path))
        if path[k].relation == path[k - 1].relation and path[k].forward != path[k - 1].forward
    ]


def unasked_back(
    path: RelationPath,
    cues: Mapping[str, tuple[float, int]],
    doers: Mapping[str, Collection[str]],
    turns: tuple[Collection[str], Callable[[Hop], Collection[str]]] | None = None,
) -> bool:
    """Whether the path walks straight back along a hop (:func:`coming_back`) that the question does
    not ask for: a second naming of the relation asks for it (``cues``: relation -> (namings, _));
    on the way, not at the end, so does an agent noun naming it (``doers``: relation -> the lemmas
    of the agent nouns naming it): "films for the *director* of X" turns at the director. A noun
    that heads a node type's name (``turns``: those heads, and the heads of the types a hop
    reaches) asks for a turn only at a node of its type: "who chairs the *department* that offers
    X" turns at the department's school, so the walk out and back to another department is unasked."""
    heads, reached = turns or ((), lambda hop: ())

    def asks_turn(k: int) -> bool:
        return any(w not in heads or w in reached(path[k - 1]) for w in doers.get(path[k].relation, ()))

    return any(
        cues.get(path[k].relation, (0.0, 0))[0] < 2 and (k == len(path) - 1 or not asks_turn(k))
        for k in coming_back(path)
    )


def without_back(path: RelationPath, k: int) -> RelationPath:
    """``path`` without its walk out and straight back at hop ``k`` (:func:`coming_back`): the
    direct path through the node the detour left from and came back to the type of."""
    return path[: k - 1] + path[k + 1 :]


def answer_verb_relations(
    tokens: list[tuple[str, str]],
    here: int | None,
    strong: dict[str, list[int]],
    described: Mapping[str, list[int]] | None = None,
) -> frozenset[str]:
    """The relations the verb right after the asked noun (auxiliaries aside) names: "which company
    *was distributing* X" says what the answer does (``DISTRIBUTED_BY``), the noun only what kind
    of thing it is. ``described``: positions of the namings by description words, which count when
    the verb follows the noun directly ("which company *built* X": "designed and built by"); after
    an auxiliary the noun need not be the doer ("which properties *are insured*")."""
    if here is None:
        return frozenset()
    named = {
        r
        for r, pos in strong.items()
        if any({t for t, _ in tokens[here + 1 : i]} <= _AUXILIARIES for i in pos if i > here)
    }
    named.update(r for r, pos in (described or {}).items() if here + 1 in pos)
    return frozenset(named)
