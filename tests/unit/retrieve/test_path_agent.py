"""Agent nouns on generated graphs with random names (issue 23, item 5): an asked noun in the form
of an agent noun ("the *actors* in X") names the relation whose name or description holds it or its
verb, and the path ends at that relation's doer, not one hop short of it (another person) nor one
past it. Each property also fails with the rule switched off (``agent_noun=0``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cef.retrieve.pathagent import AGENT_ENDINGS, agent_noun
from tests.unit.retrieve.test_path_properties import PROPERTY, best, distinct, graph, proper


@PROPERTY
@given(names=distinct(10), ending=st.sampled_from(["er", "or", "ist"]))
def test_an_agent_noun_in_a_description_names_the_last_hop(names: list[str], ending: str) -> None:
    # anchor -r_lead-> a person (one hop); anchor -r_has-> a role -r_doer-> a person (described by the
    # agent noun); that person -r_on-> a group (one hop past the doer). Every person has one label.
    r_lead, r_has, r_doer, r_on, x1, x2, verb, label, role, group = names
    noun = verb + ending
    anchor, lead, role_node, doer = proper(x1, x2), proper(x2, x1), proper(role, x1), proper(verb, x2)
    group_node = proper(group, x2)
    nodes = [
        (anchor, label.capitalize()),
        (lead, "Person"),
        (role_node, role.capitalize()),
        (doer, "Person"),
        (group_node, group.capitalize()),
    ]
    edges = [
        (anchor, r_lead, lead),
        (anchor, r_has, role_node),
        (role_node, r_doer, doer),
        (doer, r_on, group_node),
    ]
    descriptions = {r_doer: f"a {role} is taken on by a {noun}", r_lead: f"a {label} is led by a person"}
    question = f"Who are the {noun}s in {anchor}?"
    with graph([r_lead, r_has, r_doer, r_on], nodes, edges, descriptions=descriptions) as kb:
        path, answers = best(kb, question)
        assert path == [r_has, r_doer] and answers[:1] == [doer]
        # mutation: without the agent-noun rule the one-hop path to the other person wins
        path, _ = best(kb, question, agent_noun=0.0)
        assert path != [r_has, r_doer]


@given(base=distinct(1), ending=st.sampled_from(AGENT_ENDINGS), plural=st.booleans())
def test_a_word_with_an_agent_ending_after_a_base_is_an_agent_noun(
    base: list[str], ending: str, plural: bool
) -> None:
    word = base[0] + ending + ("s" if plural else "")
    assert agent_noun(word, word)


def test_short_words_and_words_without_an_agent_ending_are_not_agent_nouns() -> None:
    for word in ("her", "for", "ant", "tree", "fees", "film", "series", "company", "plant"):
        assert not agent_noun(word, word), word
    for word, lemma in (
        ("actors", "actor"),
        ("director", "director"),
        ("novelist", "novelist"),
        ("employee", "employee"),
    ):
        assert agent_noun(word, lemma), word


@PROPERTY
@given(names=distinct(9))
def test_a_modifier_naming_a_relation_asks_for_its_doer_not_one_hop_past(names: list[str]) -> None:
    # anchor -r_do-> two doers -r_in-> two places whose names end in the asked noun: the noun fits the
    # places' type by their members' names, the modifier names r_do ("which <r_do> <noun>s")
    r_do, r_in, x1, x2, noun, label, doer_label, place_label, y = names
    anchor = proper(x1, x2)
    doers = [proper(y, x1), proper(y, x2)]
    places = [proper(x1, noun), proper(x2, noun)]
    nodes = [
        (anchor, label.capitalize()),
        *((d, doer_label.capitalize()) for d in doers),
        *((p, place_label.capitalize()) for p in places),
    ]
    edges = [(anchor, r_do, d) for d in doers] + [(d, r_in, p) for d, p in zip(doers, places, strict=True)]
    question = f"Which {r_do} {noun}s worked on {anchor}?"
    with graph([r_do, r_in], nodes, edges) as kb:
        path, answers = best(kb, question)
        assert path == [r_do] and set(answers[:2]) == set(doers)
        # mutation: without the rule the asked noun's fit with the places' names walks one hop past
        path, _ = best(kb, question, agent_noun=0.0)
        assert path == [r_do, r_in]
