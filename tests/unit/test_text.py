"""cef.text: one tokenizer, one set of stop-word groups, one stemmer (Snowball English)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cef.text import (
    FUNCTION_WORDS,
    QUERY_STOP_WORDS,
    QUESTION_WORDS,
    REPORTING_WORDS,
    STOP_WORDS,
    stem,
    stem_phrase,
    terms,
    words,
)


def test_inflections_share_a_stem() -> None:
    assert stem("takes") == stem("taking") == stem("take")
    assert stem("medications") == stem("medication")
    assert stem("boxes") == stem("box") and stem("studies") == stem("study")
    assert stem("Raven's") == stem("raven") and stem("quests’") == stem("quest")
    assert stem_phrase("Side Effects") == "side effect"


def test_stop_word_groups() -> None:
    assert {"the", "of", "has", "they"} <= FUNCTION_WORDS
    assert QUESTION_WORDS <= STOP_WORDS <= QUERY_STOP_WORDS
    assert "says" in REPORTING_WORDS and "says" not in STOP_WORDS
    assert not {"name", "first", "patient"} & STOP_WORDS  # content words stay


def test_terms_are_content_stems_in_order() -> None:
    assert terms("Which medications does the patient take?") == ["medic", "patient", "take"]
    assert terms("show the first dose", QUERY_STOP_WORDS) == ["dose"]
    assert words("Don’t STOP-me now") == ["don't", "stop-me", "now"]


@given(st.text(alphabet="abcdefghij ’'-", max_size=40))
def test_terms_never_hold_stop_words_and_are_distinct(text: str) -> None:
    got = terms(text)
    assert len(got) == len(set(got))
    assert all(stem(w) in got for w in words(text) if w not in STOP_WORDS)
