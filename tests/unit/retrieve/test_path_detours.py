"""A detour out along a relation and straight back to another node of the type it left (issue 23,
twelfth stop): a noun that heads a node type's name asks for a turn only at a node of that type,
and an unasked detour scores below the direct path it leaves out. Generated graphs with made-up
names; each property also fails with its rule replaced by the behaviour before it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cef.retrieve import pathcues, pathscore, pathwalkon
from cef.retrieve.pathcues import coming_back, without_back
from cef.retrieve.pathwalkon import detours, no_detours, revisits, walked_past
from cef.retrieve.pathwords import Hop, RelationPath
from tests.unit.retrieve.test_path_properties import PROPERTY, best, distinct, graph, proper


def _any_agent_noun_turns(path: RelationPath, cues: object, doers: object, turns: object = None) -> bool:
    """The rule before: an agent-noun form naming the relation asks for the turn wherever it is."""
    return pathcues.unasked_back(path, cues, doers)  # type: ignore[arg-type]


@PROPERTY
@given(names=distinct(8))
def test_a_type_noun_does_not_ask_for_a_turn_at_another_type(names: list[str]) -> None:
    # course -r_off-> its group (a type whose head word has an agent noun's form, "-ment" like
    # "department") -<GROUP>_OF-> a site <-<GROUP>_OF- another group; each group -r_chair-> a person.
    # "Who <r_chair> the <group> that <r_off> X?": the group word names <GROUP>_OF, yet the turn at
    # the site is no node of its type: the walk to the other group's chair is unasked
    r_off, r_chair, x1, x2, stem, slabel, y, z = names
    noun = stem + "ment"
    r_of = f"{noun.upper()}_OF"
    course, site = proper(x1, x2), proper(y, x1)
    groups, chairs = [proper(z, x1), proper(z, x2)], [proper(y, x2), proper(z, y)]
    nodes = [
        (course, "Course"),
        (site, slabel.capitalize()),
        *((g, noun.capitalize()) for g in groups),
        *((p, "Person") for p in chairs),
    ]
    edges = [(course, r_off, groups[0]), *((g, r_of, site) for g in groups)]
    edges += [(g, r_chair, p) for g, p in zip(groups, chairs, strict=True)]
    question = f"Who {r_chair} the {noun} that {r_off} {course}?"
    with graph([r_off, r_of, r_chair], nodes, edges) as kb:
        path, answers = best(kb, question)
        assert path == [r_off, r_chair] and answers[:1] == [chairs[0]]
        # mutation: the agent-noun form asks for the turn wherever the path turns, and the
        # detour is not held below the direct path
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(pathwalkon, "unasked_back", _any_agent_noun_turns)
            mp.setattr(pathscore, "hold_below", lambda scored, *held: scored)
            path, _ = best(kb, question)
        assert path == [r_off, r_of, r_of, r_chair]


_RELATIONS = st.sampled_from(["R_A", "R_B", "R_C", "R_D"])
_HOPS = st.builds(Hop, _RELATIONS, st.booleans())


@st.composite
def _detour_and_direct(draw: st.DrawFn) -> tuple[RelationPath, RelationPath]:
    before = tuple(draw(st.lists(_HOPS, max_size=2)))
    after = tuple(draw(st.lists(_HOPS, max_size=2)))
    out = draw(_HOPS)
    direct = before + after
    return (*before, out, Hop(out.relation, not out.forward), *after), direct


@PROPERTY
@given(
    pair=_detour_and_direct(),
    scores=st.tuples(st.floats(-5, 5), st.floats(-5, 5), st.floats(-5, 5)),
    asked=st.booleans(),
)
def test_an_unasked_detour_scores_below_the_direct_path(
    pair: tuple[RelationPath, RelationPath], scores: tuple[float, float, float], asked: bool
) -> None:
    detour, direct = pair
    other = (Hop("R_OTHER", True),)
    scored = [(scores[0], detour), (scores[1], direct), (scores[2], other)]
    if not direct:
        scored = [scored[0], scored[2]]
    got = dict((p, s) for s, p in no_detours(scored, detours(set() if asked else {detour})))
    assert got[other] == scores[2]  # no detour: untouched
    if asked or not direct:  # an asked detour, or none to fall back to, keeps its score
        assert got[detour] == scores[0]
    else:
        assert got[detour] < got[direct] and got[direct] == scores[1]
        assert any(without_back(detour, k) == direct for k in coming_back(detour))


_WORDS = st.frozensets(st.integers(0, 9), max_size=3)


@PROPERTY
@given(
    first=_HOPS,
    last=_HOPS,
    words=st.tuples(_WORDS, _WORDS),
    fits=st.tuples(st.floats(0, 1), st.floats(0, 1)),
    own=_WORDS,
)
def test_a_hop_past_a_better_fitting_path_with_no_word_of_its_own_is_walked_past(
    first: Hop,
    last: Hop,
    words: tuple[frozenset[int], frozenset[int]],
    fits: tuple[float, float],
    own: frozenset[int],
) -> None:
    # a shorter path and one hop more: held below it exactly when the shorter end fits better and
    # every word naming the last hop names the shorter path or is one of the asked noun's modifiers
    short, long = (first,), (first, last)
    namings = {first.relation: [(1.0, words[0])]}
    namings.setdefault(last.relation, []).append((1.0, words[1]))
    got = walked_past({short: fits[0], long: fits[1]}, namings, own)
    named = frozenset().union(*(w for _, w in namings[first.relation]))
    last_words = frozenset().union(*(w for _, w in namings[last.relation]))
    expected = fits[0] > fits[1] and last_words <= named | own
    assert (long in got) == expected
    # the shorter path ends at a type the question mentions: it passes that on the way
    on_way = (frozenset({"zorp"}), lambda hop: frozenset({"zorp"}) if hop == first else frozenset())
    assert long not in walked_past({short: fits[0], long: fits[1]}, namings, own, on_way)
    if expected and last_words - named:
        # mutation: the asked noun's modifiers read as words of the last hop's own
        assert long not in walked_past({short: fits[0], long: fits[1]}, namings, frozenset())


@PROPERTY
@given(loop_words=_WORDS, rest_words=_WORDS, own=_WORDS)
def test_a_loop_back_to_a_type_with_no_word_of_its_own_is_cut_out(
    loop_words: frozenset[int], rest_words: frozenset[int], own: frozenset[int]
) -> None:
    # anchor (type 0) -R_A-> type 1 -R_B-> type 2 -R_C-> type 1 -R_D-> type 3: the loop R_B > R_C
    # leaves type 1 and comes back; cut out when its words all name R_A / R_D or are modifiers
    path = (Hop("R_A", True), Hop("R_B", True), Hop("R_C", True), Hop("R_D", True))
    types = {1: (1,), 2: (2,), 3: (1,), 4: (3,)}

    def ends(p: RelationPath, start: int | None) -> tuple[int, ...]:
        return types[len(p)]

    namings = {"R_B": [(1.0, loop_words)], "R_A": [(1.0, rest_words)]}
    got = revisits([path], (0, ends), namings, own)
    cut = (Hop("R_A", True), Hop("R_D", True))
    assert (cut in got.get(path, [])) == (loop_words <= rest_words | own)
    # mutation: every type the same (one label for all nodes): no loop leaves its type
    assert not revisits([path], (0, lambda p, start: (0,)), namings, own)
