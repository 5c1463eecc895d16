"""Who a dialogue turn speaks about: a question crediting one speaker with the other's words matches nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cef
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation
from cef.model import Chunk
from cef.retrieve.credit import FIRST_PERSON, SECOND_PERSON, addresses_hearer, credited_text, named_speaker

PETS = [
    ["Hi Bob! I adopted a puppy yesterday, a beagle named Biscuit.", "A beagle! What colour is he?"],
    ["He is brown and white. Do you have any pets?", "No pets for me, I am learning the cello instead."],
    ["The cello sounds lovely, how long have you played?", "Two months. My teacher is called Ms Varga."],
]


def _conversation() -> Conversation:
    conv = Conversation("pets")
    for n, said in enumerate(PETS, 1):
        sess = Session(f"D{n}", datetime.fromisoformat(f"2023-0{n}-08T10:00:00+00:00"))
        for j, text in enumerate(said, 1):
            sess.turns.append(Turn(f"pets/D{n}:{j}", ("Alice", "Bob")[(j - 1) % 2], text))
        conv.sessions.append(sess)
    return conv


@pytest.fixture(scope="module")
def pets_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    kb = cef.open(tmp_path_factory.mktemp("credit") / "kb.db")
    ingest_conversation(kb, _conversation(), scope="pets")
    yield kb
    kb.close()


def _ask(kb: cef.KnowledgeBase, question: str, **relevance: object) -> dict[str, object]:
    query = cef.GraphQuery(query=question, scope="pets", top_k=10, options={"relevance": relevance})
    verdict = kb.retrieve(query).metadata["relevance"]
    assert isinstance(verdict, dict)
    return verdict


def test_a_question_crediting_the_other_speaker_matches_nothing(pets_kb: cef.KnowledgeBase) -> None:
    assert _ask(pets_kb, "What is the name of Alice's puppy?")["nothing_matched"] is False
    assert _ask(pets_kb, "Who is Bob's teacher?")["nothing_matched"] is False
    # Alice adopted the puppy and Bob has the teacher: each question credits the other speaker
    assert _ask(pets_kb, "What is the name of Bob's puppy?")["nothing_matched"] is True
    assert _ask(pets_kb, "Who is Alice's teacher?")["nothing_matched"] is True
    # without the rule, the words are found and the question is answered
    assert (
        _ask(pets_kb, "What is the name of Bob's puppy?", credit_speakers=False)["nothing_matched"] is False
    )


def _turn(speaker: str, text: str, replied: tuple[str, str] | None = None) -> Chunk:
    content = f"{speaker} (8 May 2023): {text}"
    if replied is not None:
        content += f"\n(in reply to {replied[0]}: {replied[1]})"
    return Chunk(id="t", content=content, metadata={"speaker": speaker, "text": text, "kind": "turn"})


def test_what_a_turn_says_of_a_speaker() -> None:
    chunk = _turn(
        "Melanie",
        "Your guinea pig is adorable! I love my cats.",
        ("Caroline", "Oscar is my guinea pig. How are your pets?"),
    )
    said, rest = credited_text(chunk, "Melanie") or ("", "")
    assert "I love my cats." in said and "How are your pets?" in said  # hers, and asked of her
    assert "Oscar is my guinea pig." in rest  # Caroline's own
    assert "Your guinea pig is adorable!" not in said + rest  # Melanie speaks of her hearer: left out
    said, rest = credited_text(chunk, "Caroline") or ("", "")
    assert "Oscar is my guinea pig." in said and "Your guinea pig is adorable!" in said
    assert "I love my cats." in rest
    # a greeting calls the hearer; it does not speak of them
    said, _ = credited_text(_turn("Bob", "Hi Alice! I bought a boat."), "Alice") or ("", "")
    assert said == ""
    said, _ = credited_text(_turn("Bob", "Alice's boat is red."), "Alice") or ("", "")
    assert "Alice's boat" in said
    assert credited_text(Chunk(id="c", content="a note"), "Alice") is None  # no turn: not judged


def test_the_speaker_a_question_names() -> None:
    from cef.model import Explanation, RankedChunk, SearchStrategy

    turns = [
        RankedChunk(chunk=_turn(s, "hello"), score=1.0, explanation=Explanation(strategy=SearchStrategy.AUTO))
        for s in ("Alice Moss", "Bob")
    ]
    assert named_speaker("What did Alice's dog eat?", turns) == "Alice Moss"
    assert named_speaker("What did Alice and Bob eat?", turns) is None  # both: not one speaker
    assert named_speaker("What did the dog eat?", turns) is None


_WORDS = st.sampled_from(["the", "boat", "red", "sailed", "we", "i", "my", "you", "your", "cat", "Bob", "Hi"])
_TEXT = st.lists(st.lists(_WORDS, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=4).map(
    lambda ss: ". ".join(ss) + "."
)


@settings(max_examples=200, deadline=None)
@given(own=_TEXT, replied=_TEXT)
def test_credit_loses_no_sentence_and_keeps_the_speakers_own_words(own: str, replied: str) -> None:
    chunk = _turn("Alice", own, ("Bob", replied))
    said, rest = credited_text(chunk, "Alice") or ("", "")
    for sentence in own.split(". "):  # what she said is hers, but for what she says of her hearer
        mine = sentence.rstrip(".") in said
        assert mine or addresses_hearer(sentence)
    for sentence in replied.split(". "):
        assert sentence.rstrip(".") in said or sentence.rstrip(".") in rest  # nothing lost
    # of someone neither speaking nor named, nothing is said (the hearers are Alice and Bob)
    said, _ = credited_text(chunk, "Carol") or ("", "")
    assert said == ""
    # Bob's sentences that address Alice ("you", not "I") are said of her
    for sentence in replied.split(". "):
        words = set(sentence.lower().rstrip(".").split())
        if words & SECOND_PERSON and not words & FIRST_PERSON:
            assert sentence.rstrip(".") in (credited_text(chunk, "Alice") or ("", ""))[0]
