"""Relevance reads a question's frame words as no things (issue 27, wave 12): an adverb in -ly on a
dictionary base ("*safely*") and the lower-case word after it ("safely *take*"), and a participle
after "be" / "been" / "being" ("be *put* on"), are the question's phrasing, not absent things; the
nouns around them still name things. The nouns are made up (generated), so no data set's vocabulary
decides."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import cef
from cef.extract.lemmas import known_word
from cef.retrieve.questionterms import adverb, read_terms
from cef.text import QUERY_STOP_WORDS
from tests.conftest import clinical_batch

_WORD = st.builds(
    lambda syllables, last: "".join(c + v for c, v in syllables) + last,
    st.lists(st.tuples(st.sampled_from("bdfgkmnprtvz"), st.sampled_from("aeiou")), min_size=2, max_size=3),
    st.sampled_from("kmnprt"),
).filter(lambda w: not known_word(w) and w not in QUERY_STOP_WORDS)  # made up: never "never" or "later"
#: general English adverbs in -ly on a dictionary base, and verbs
_ADVERBS = st.sampled_from(["safely", "quickly", "happily", "easily", "gently", "slowly"])
_VERBS = st.sampled_from(["take", "stop", "mix", "combine", "store", "inject"])


def _things(question: str) -> dict[str, bool]:
    return {t.form: t.names_thing for t in read_terms(question, set(), 3).values()}


@given(_WORD, _WORD, _ADVERBS, _VERBS)
def test_an_adverb_and_its_verb_name_no_thing(held: str, name: str, how: str, verb: str) -> None:
    assume(held != name)
    things = _things(f"Can someone on {held} {how} {verb} {name.capitalize()}?")
    assert things[how] is False and things[verb] is False
    assert things[held] is True and things[name] is True


@given(_WORD, _WORD, _ADVERBS)
def test_an_adverb_opening_a_noun_phrase_leaves_its_head_a_thing(noun: str, other: str, how: str) -> None:
    assume(noun != other)
    things = _things(f"What is the {how} {noun} of the {other}?")
    assert things[how] is False
    assert things[noun] is True and things[other] is True


@given(_WORD, _WORD)
def test_a_participle_after_be_names_no_thing(person: str, treatment: str) -> None:
    assume(person != treatment)
    things = _things(f"When should a {person} be put on {treatment}?")
    assert things["put"] is False
    assert things[treatment] is True


def test_adverbs_need_a_dictionary_base() -> None:
    assert adverb("safely") and adverb("happily")
    assert not adverb("family") and not adverb("supply") and not adverb("assembly")


@pytest.fixture(scope="module")
def clinical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    with cef.open(tmp_path_factory.mktemp("clinical") / "kb.db", embedder=None) as kb:
        kb.index_batch(clinical_batch())
        yield kb


def test_a_question_about_two_named_drugs_in_its_own_words_matches(clinical: cef.KnowledgeBase) -> None:
    verdict = clinical.retrieve("Can someone on warfarin safely take ibuprofen?").metadata["relevance"]
    assert verdict["nothing_matched"] is False


_THIRD_PERSON = st.sampled_from(["happens", "looks", "turns", "goes", "comes"])


@given(_WORD, _WORD, _THIRD_PERSON)
def test_a_verb_after_what_before_to_and_an_object_names_no_thing(held: str, name: str, verb: str) -> None:
    """ "What *happens* to the INR if ...": the word between "what" and "to" before a determiner or a
    name is a verb; "which drug to take" keeps its noun (an infinitive follows it)."""
    assume(held != name)
    things = _things(f"What {verb} to the {held} if {name.capitalize()} is added?")
    assert things[verb] is False and things[held] is True
    assert _things(f"Which {held} to take for {name}?")[held] is True


@given(_WORD, _WORD, st.sampled_from(["kind", "type", "sort"]), _THIRD_PERSON)
def test_a_verb_after_a_classified_noun_names_no_thing(noun: str, name: str, kind: str, verb: str) -> None:
    """ "What kind of specialist *looks* after Amira": the noun after "what kind of" heads the
    wh-phrase and the lower-case word after it, before a preposition, is its verb."""
    assume(noun != name)
    things = _things(f"What {kind} of {noun} {verb} after {name.capitalize()}?")
    assert things[verb] is False and things[noun] is True
