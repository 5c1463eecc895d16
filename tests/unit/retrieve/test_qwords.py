"""One matcher decides which question words name relations and types (paths, memory, context)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cef.retrieve import pathwords, qwords


@pytest.mark.parametrize(
    ("word", "name_word"),
    [
        ("medications", "medication"),
        ("interactions", "interacts"),
        ("trusted", "trusts"),
        ("actors", "acted"),
        ("writer", "written"),
        ("screenwriter", "written"),
        ("co-wrote", "written"),
        ("directed", "directed"),
    ],
)
def test_a_question_word_names_a_relation_or_type_word(word: str, name_word: str) -> None:
    assert qwords.names(word, name_word)


@pytest.mark.parametrize(
    ("word", "name_word"), [("relies", "release"), ("runs", "runbook"), ("plan", "plant")]
)
def test_a_shared_first_syllable_is_not_a_naming(word: str, name_word: str) -> None:
    assert not qwords.names(word, name_word)


def test_types_and_relations() -> None:
    assert qwords.names_type(["which", "search", "indexes"], "SearchIndex")
    assert not qwords.names_type(["which", "indexes"], "SearchIndex")
    assert qwords.relation_share(["what", "was", "prescribed"], "PRESCRIBED_FOR") == 1.0
    assert qwords.relation_share(["who", "treats"], "interacts_with") == 0.0


def test_the_path_scorer_uses_this_matcher() -> None:
    assert pathwords.stem_match is qwords.stem_match
    assert pathwords.relation_words is qwords.relation_words


@given(st.text(alphabet="abcdefgo-", min_size=1, max_size=12))
def test_a_word_names_itself(word: str) -> None:
    assert qwords.names(word, word)
