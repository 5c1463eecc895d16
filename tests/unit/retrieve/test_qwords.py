"""One matcher decides which question words name relations and types (paths, memory, context)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cef
from cef import Batch, Node
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


def test_the_graph_context_provider_takes_a_type_named_by_the_one_matcher(kb: cef.KnowledgeBase) -> None:
    """The provider adds every node of a type the question names, named as the path scorer names
    relation words: "lab tests" names ``LabTest``; "state" does not name ``Statement`` (it is a
    prefix of it, which the provider's own matcher counted as a naming)."""
    from cef.context import GraphContextProvider, KnowledgeContextOptions

    kb.index_batch(
        Batch(
            nodes=[
                Node(id="t1", label="LabTest", properties={"name": "CBC panel"}),
                Node(id="t2", label="LabTest", properties={"name": "lipid panel"}),
                Node(id="s1", label="Statement", properties={"name": "invoice 42"}),
            ]
        )
    )
    provider = GraphContextProvider(kb, "cl100k")
    opts = KnowledgeContextOptions(max_tokens=800)
    assert {e.id for e in provider.get_context("Which lab tests exist?", opts).entities} == {"t1", "t2"}
    assert not provider.get_context("Which state is it in?", opts).entities
