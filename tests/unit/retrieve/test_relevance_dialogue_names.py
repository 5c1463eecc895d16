"""A name asked of a conversation ("What is the name of Gina's store?", "What is Jon's studio
*called*?") is shown only by a name beside the asked noun: not the hearer's ("Hey Jon, my clothing
store ...", "I told Jon my store ..." in a reply to Jon), nor a turn's first word ("Opening my store
..."). Names and shops are made up."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

import cef
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation
from cef.model import Chunk, Explanation, RankedChunk, SearchStrategy
from cef.retrieve.askedkinds import NAMED, asked_terms, named_nouns
from cef.retrieve.credit import credited_text, people, unframed
from cef.retrieve.english import name_shown
from tests.conftest import nothing_matched

#: Zora's answer to Tam's question, per session; Zora's store is never named in ``_UNNAMED``
_UNNAMED = [
    "Hey Tam, my online clothing store has been a roller coaster but rewarding.",  # a greeting's name
    "I told Tam my clothing store would open in May.",  # the name of the speaker replied to
    "Opening my clothing store was the hardest thing I have done.",  # a turn's first word
    "Searching for a clothing store location took months.",
]
_NAMED = [*_UNNAMED, "My clothing store, Velquora, opened its doors today!"]


def _conversation(lines: list[str]) -> Conversation:
    conv = Conversation("shop")
    for n, zora in enumerate(lines, 1):
        sess = Session(f"D{n}", datetime.fromisoformat(f"2023-0{n}-08T10:00:00+00:00"))
        sess.turns.append(Turn(f"shop/D{n}:1", "Tam", "How is the shop going?"))
        sess.turns.append(Turn(f"shop/D{n}:2", "Zora", zora))
        conv.sessions.append(sess)
    return conv


@pytest.fixture(scope="module")
def kbs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, cef.KnowledgeBase]]:
    """One knowledge base per unnamed line (alone, so the best turn is that line), and one with all."""
    root = tmp_path_factory.mktemp("dialogue-names")
    out = {}
    for name, lines in [*((str(n), [line]) for n, line in enumerate(_UNNAMED)), ("named", _NAMED)]:
        kb = cef.open(root / f"{name}.db")
        ingest_conversation(kb, _conversation(lines), scope="shop")
        out[name] = kb
    yield out
    for kb in out.values():
        kb.close()


def _nothing(kb: cef.KnowledgeBase, question: str, top_k: int = 10) -> bool:
    return nothing_matched(kb, cef.GraphQuery(query=question, scope="shop", top_k=top_k))


@pytest.mark.parametrize(
    "question", ["What is the name of Zora's clothing store?", "What is Zora's clothing store called?"]
)
@pytest.mark.parametrize("line", range(len(_UNNAMED)))
def test_a_store_no_turn_names_is_not_answered(
    kbs: dict[str, cef.KnowledgeBase], question: str, line: int
) -> None:
    # the hearer's name ("Hey Tam, my ... store", "I told Tam my ... store": Tam speaks in no result,
    # Zora replies to Tam) and a turn's first word ("Opening", "Searching") stand by the asked noun
    # but are no name of it
    assert _nothing(kbs[str(line)], question, top_k=1) is True


@pytest.mark.parametrize(
    "question", ["What is the name of Zora's clothing store?", "What is Zora's clothing store called?"]
)
def test_a_store_a_turn_names_is_answered(kbs: dict[str, cef.KnowledgeBase], question: str) -> None:
    assert _nothing(kbs["named"], question) is False  # "My clothing store, Velquora, opened ..."


def test_a_greeted_name_is_no_name_shown() -> None:
    shown = name_shown(["What is the name of Zora's store?"], ["store"])
    assert not shown.search("Hey Tam, my store is busy.")
    assert not shown.search("Thanks Tam, the store is busy.")
    assert shown.search("They met Tam at the store.")  # "They" is no greeting
    assert shown.search("My store, Velquora, is busy.")
    anywhere = name_shown(["Who did Zora meet?"])  # no asked noun: any name inside a sentence
    assert not anywhere.search("Oh, hey Tam, good to see you.")
    assert not anywhere.search("Oh, Hey Tam, good to see you.")
    assert anywhere.search("Oh, they met Tam there.")


def test_called_and_named_ask_a_name() -> None:
    assert named_nouns("What is Jon's dance studio called?") == ["dance", "studio"]
    assert named_nouns("What was his dog named?") == ["dog"]
    assert NAMED in asked_terms("What's the research boat called?", set(), 3)[1]
    assert NAMED not in asked_terms("Who called Jon yesterday?", set(), 3)[1]
    assert NAMED not in asked_terms("What is it called when you sneeze?", set(), 3)[1]


def _turn(chunk_id: str, speaker: str, content: str) -> RankedChunk:
    chunk = Chunk(id=chunk_id, content=content, metadata={"speaker": speaker, "text": content.split("\n")[0]})
    return RankedChunk(chunk=chunk, score=1.0, explanation=Explanation(strategy=SearchStrategy.BM25))


def test_the_people_of_a_dialogue_include_whom_a_turn_replies_to() -> None:
    results = [_turn("t1", "Zora", "Hey Tam, my store is busy.\n(in reply to Tam: How is the store?)")]
    assert people(results) == ["Zora", "Tam"]
    assert people([_turn("t2", "Zora", "Busy day.")]) == ["Zora"]


def test_a_credited_turn_keeps_its_first_word_at_a_sentence_start() -> None:
    text = "Opening my store was hard."
    chunk = Chunk(id="t1", content=text, metadata={"speaker": "Zora", "text": text})
    got = credited_text(chunk, "Zora")
    assert got is not None
    assert got[0] == "Zora. Opening my store was hard."


def test_a_turn_framing_opens_a_sentence() -> None:
    chunk = Chunk(
        id="t1",
        content="Zora (8 January 2023): Heard of that store!\n(in reply to Tam: Velquora is great.)",
        metadata={"speaker": "Zora"},
    )
    assert (
        unframed(chunk)
        == "Zora (8 January 2023). Heard of that store!\n(in reply to Tam. Velquora is great.)"
    )
    plain = Chunk(id="t2", content="Postmortem INC-1: every call failed.")
    assert unframed(plain) == plain.content  # no dialogue turn: as it is


def test_a_question_naming_both_speakers_is_not_answered_by_a_turn_s_first_word(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # a question naming both speakers credits neither: the turn's text is read with its framing,
    # where "Heard" follows "Zora (date): " and "Sure" follows "(in reply to Tam: "
    conv = Conversation("shop")
    sess = Session("D1", datetime.fromisoformat("2023-01-08T10:00:00+00:00"))
    sess.turns.append(Turn("shop/D1:1", "Tam", "Sure thing, I love that clothing store series of pop-ups."))
    sess.turns.append(Turn("shop/D1:2", "Zora", "Heard of that clothing store! Thanks for the tip."))
    conv.sessions.append(sess)
    with cef.open(tmp_path_factory.mktemp("framing") / "kb.db") as kb:
        ingest_conversation(kb, conv, scope="shop")
        assert _nothing(kb, "What is the name of the clothing store Tam recommended to Zora?") is True
