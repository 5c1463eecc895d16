"""What a question asks for (issue 23, tenth wave, p23d), on generated words: a participle right
after the copula is no asked noun, "whose" asks for a person past the owned thing, a mention that
ends in a type's head word opens the asked noun, and a type's very head word names it before a type
that only shares its stem."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cef.retrieve.pathasked import AskedFor, asked_for, heads_asked

#: made-up stems (no English word is needed: the rules read word forms and positions only)
_STEMS = st.text(alphabet="bdfgklmnprtvz", min_size=4, max_size=8).map(lambda s: s + "a")


def _same(word: str) -> str:
    return word


@settings(max_examples=40, deadline=None)
@given(
    stem=_STEMS,
    prep=st.sampled_from(["at", "in", "by", "with", "from"]),
    ending=st.sampled_from(["ed", "ing"]),
)
def test_a_participle_after_the_copula_is_no_asked_noun(stem: str, prep: str, ending: str) -> None:
    # "who is <stem>ed at X": the question word alone says what is asked
    tokens = [("who", "who"), ("is", "be"), (stem + ending, stem), (prep, prep), ("the", "the"), ("x", "x")]
    got = asked_for(tokens, 5, _same)
    assert got is not None and got.at is None and got.lemmas == frozenset({"person"})
    # a noun there (its own lemma, "who is the <stem> at X") is still what is asked
    noun = [("who", "who"), ("is", "be"), ("the", "the"), (stem, stem), (prep, prep), ("x", "x")]
    got = asked_for(noun, 5, _same)
    assert got is not None and got.at == 3


@settings(max_examples=40, deadline=None)
@given(owned=_STEMS, verb=_STEMS)
def test_whose_asks_for_a_person_not_the_owned_thing(owned: str, verb: str) -> None:
    # "whose <owned>s were <verb>ed by X": the owner, not the owned thing
    tokens = [
        ("whose", "whose"),
        (owned + "s", owned),
        ("were", "be"),
        (verb + "ed", verb),
        ("by", "by"),
        ("x", "x"),
    ]
    got = asked_for(tokens, 5, _same)
    assert got == AskedFor("person", frozenset({"person"}), None, wh=0)


@settings(max_examples=40, deadline=None)
@given(modifier=_STEMS, head=_STEMS)
def test_a_mention_ending_in_a_type_head_opens_the_asked_noun(modifier: str, head: str) -> None:
    # "who's the <modifier> <head> looking into X", the two words also a mention of a named thing
    tokens = [("who's", "who"), ("the", "the"), (modifier, modifier), (head, head), ("looking", "look"),
              ("into", "into"), ("x", "x")]  # fmt: skip
    got = asked_for(tokens, 6, _same, others=frozenset({2, 3}), types=frozenset({head}))
    assert got is not None and got.at == 3 and head in got.lemmas
    # no type is headed by the mention's last word: it stays another named thing
    got = asked_for(tokens, 6, _same, others=frozenset({2, 3}), types=frozenset({modifier + "o"}))
    assert got is not None and got.at is None


@settings(max_examples=40, deadline=None)
@given(stem=_STEMS, modifier=_STEMS)
def test_the_very_head_word_names_its_type(stem: str, modifier: str) -> None:
    asked = AskedFor(f"person {stem}or", frozenset({stem + "or"}), 3)
    assert heads_asked(asked, f"{modifier.capitalize()}{stem.capitalize()}or", _same)
    assert not heads_asked(asked, f"{modifier.capitalize()}{stem.capitalize()}ion", _same)  # a shared stem
    assert not heads_asked(
        AskedFor("person", frozenset({"person"}), None), "Person", _same
    )  # a question word
