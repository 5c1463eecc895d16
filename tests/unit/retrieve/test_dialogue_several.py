"""Questions about several occasions in a conversation: read by general English, answered across sessions."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

import cef
from cef import GraphQuery
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation
from cef.retrieve.dialoguequestion import asks_several


@pytest.mark.parametrize(
    "question",
    [
        "What books has Anna read?",
        "Where has Anna gone hiking?",
        "Where have they camped this year?",
        "How many times has Ben been to the coast?",
        "What do Anna and Ben both enjoy?",
        "Which European cities has Anna visited?",
        "What types of bread have they baked?",
        "What recipes has Ben tried?",
    ],
)
def test_questions_about_several_occasions(question: str) -> None:
    assert asks_several(question)


@pytest.mark.parametrize(
    "question",
    [
        "What pet does Anna have?",  # "have" is the main verb
        "What did Ben have for dinner?",
        "What does Anna have to finish first?",
        "What motivates Anna to keep running?",  # a verb in -s, not a plural
        "When did Ben go to the coast?",
        "Why did Anna quit her job?",
        "What is Ben's favourite book?",
        "",
    ],
)
def test_questions_about_one_occasion(question: str) -> None:
    assert not asks_several(question)


def _talk() -> Conversation:
    """Hiking said three times in the first session, once in each of two later ones."""
    days = ["2023-03-04", "2023-04-15", "2023-05-20"]
    lines = [
        [
            "We went hiking on the ridge trail on Sunday, a long hike.",
            "The ridge trail hike sounds steep, was the hiking hard?",
            "The hike was hard, hiking uphill for hours on that trail.",
            "I should try hiking that trail someday.",
        ],
        ["Work has been busy lately.", "I went hiking by the lake shore last weekend.", "Nice."],
        ["My sister visited.", "Then we went hiking in the pine forest.", "Lovely."],
    ]
    conv = Conversation("walks")
    for n, (said, day) in enumerate(zip(lines, days, strict=True), 1):
        sess = Session(f"D{n}", datetime.fromisoformat(day + "T10:00:00+00:00"))
        for j, text in enumerate(said, 1):
            sess.turns.append(Turn(f"walks/D{n}:{j}", ("Anna", "Ben")[(j - 1) % 2], text))
        conv.sessions.append(sess)
    return conv


def _sessions(kb: cef.KnowledgeBase, question: str, options: dict[str, object] | None = None) -> list[str]:
    res = kb.retrieve(
        GraphQuery(query=question, scope="walks", top_k=3, min_results=1, options=options or {})
    )
    return [r.chunk.id.rsplit(":", 1)[0] for r in res.results]


def test_a_question_about_several_occasions_ranks_turns_of_several_sessions(tmp_path: Path) -> None:
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, _talk(), scope="walks", enricher=None)
        several = _sessions(kb, "Where have they gone hiking?")
        assert len(set(several)) >= 2, several
        # without the diversity and with the session prior of a one-occasion question: one session
        alike = _sessions(
            kb,
            "Where have they gone hiking?",
            {"dialogue": {"several_diversity": 1.0, "several_session": 0.5}},
        )
        assert len(set(alike)) == 1, alike
