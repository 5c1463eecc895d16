"""Vouching: the embedder reads a question word no record holds as a thing a result is tied to."""

from __future__ import annotations

import cef
from cef.retrieve.vouch import phrases_of


def _nothing(kb: cef.KnowledgeBase, question: str, **relevance: float) -> bool:
    options = {"relevance": relevance} if relevance else {}
    verdict = kb.retrieve(cef.GraphQuery(query=question, options=options)).metadata["relevance"]
    return bool(verdict["nothing_matched"])


def test_a_word_and_its_neighbours_are_its_phrases() -> None:
    got = phrases_of("Which blood thinners are in the system?", ["thinners", "system"])
    assert got == {"thinners": ["thinners", "blood thinners"], "system": ["system"]}
    assert phrases_of("Why was Lucas taken off his diabetes tablets?", ["tablets"])["tablets"] == [
        "tablets",
        "diabetes tablets",
    ]
    assert phrases_of("no such word here", ["absent"]) == {"absent": ["absent"]}


def test_a_paraphrase_is_vouched_for_by_the_result_it_finds(clinical_embedded: cef.KnowledgeBase) -> None:
    # no record says "painkiller"; the results found are John's ibuprofen, which the embedder reads as one
    question = "Which painkiller was John taken off?"
    assert _nothing(clinical_embedded, question)  # off by default: nothing matched
    assert not _nothing(clinical_embedded, question, vouch=0.5)


def test_a_brand_held_as_a_property_value_needs_no_vouching(clinical_embedded: cef.KnowledgeBase) -> None:
    # "Zestril" is lisinopril's brand value, one of its names (Node.value_names): held, not vouched for
    assert not _nothing(clinical_embedded, "Which patient has a condition that Zestril is used for?")


def test_the_thing_a_question_names_vouches_for_nothing_asked_about_it(
    clinical_embedded: cef.KnowledgeBase,
) -> None:
    # John Miller's own record is close to "dentist" (a patient with doctors); what is asked about him is not him
    assert _nothing(clinical_embedded, "Who is John Miller's dentist?", vouch=0.5)
    assert _nothing(clinical_embedded, "What are the common side effects of omeprazole?", vouch=0.5)
