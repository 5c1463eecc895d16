"""Relevance: an absent common word counts once, an absent name twice (issue 27, wave 10).

A question about a named thing may say in its own words what the record says otherwise ("his
irregular *heartbeat*" where the record says atrial fibrillation): such a word is held nowhere and
counts 0 of what is asked, but it no longer scales the result down a second time, so the record that
holds the rest of what is asked answers. A name or a code the knowledge base lacks is not
paraphrased: it still counts twice, and a question whose every asked word is held nowhere still
matches nothing. The absent words are made up (generated), so no vocabulary of a data set decides."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from tests.conftest import clinical_batch

_CONSONANTS = "bdfgkmnprtvz"
_VOWELS = "aeiou"
#: a made-up word: consonant-vowel syllables ending in a consonant that no English adjective ending
#: ("-al", "-ic", "-ous", …) or inflection ("-s", "-ed") ends in
_WORD = st.builds(
    lambda syllables, last: "".join(c + v for c, v in syllables) + last,
    st.lists(st.tuples(st.sampled_from(_CONSONANTS), st.sampled_from(_VOWELS)), min_size=2, max_size=3),
    st.sampled_from("kmnprt"),
)


@pytest.fixture(scope="module")
def clinical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    with cef.open(tmp_path_factory.mktemp("clinical") / "kb.db", embedder=None) as kb:
        kb.index_batch(clinical_batch())
        yield kb


def _verdict(kb: cef.KnowledgeBase, question: str) -> dict[str, object]:
    verdict = kb.retrieve(question).metadata["relevance"]
    assert isinstance(verdict, dict)
    return verdict


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(said=_WORD)
def test_a_paraphrase_counts_once_a_name_twice(clinical: cef.KnowledgeBase, said: str) -> None:
    # a common word the knowledge base holds nowhere, beside words John Miller's record holds
    common = _verdict(clinical, f"What is John Miller taking for his {said} atrial fibrillation?")
    assert said in common["unknown"]  # type: ignore[operator]
    assert common["nothing_matched"] is False, common
    # the same word written as a name: a name the knowledge base lacks is not paraphrased
    name = _verdict(clinical, f"What is John Miller taking for his {said.title()} atrial fibrillation?")
    assert name["nothing_matched"] is True, name
    # every word asked about him held nowhere: nothing matched, whatever counts once
    lacking = _verdict(clinical, f"What is John Miller's {said}?")
    assert lacking["nothing_matched"] is True, lacking
