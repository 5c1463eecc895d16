"""Questions that ask when: read by general English, answered by the turn that says when."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

import cef
from cef import GraphQuery
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation
from cef.retrieve.dialoguequestion import asks_ahead, asks_when


@pytest.mark.parametrize(
    "question",
    [
        "When did Anna go to the pottery class?",
        "Anna baked bread, and when did she sell it?",
        "What year did Ben move to the coast?",
        "Which month did they adopt the dog?",
        "How long ago did Anna start running?",
    ],
)
def test_questions_that_ask_when(question: str) -> None:
    assert asks_when(question)


@pytest.mark.parametrize(
    "question",
    [
        "What did Anna make at the pottery class?",
        "Where did Ben go when he was young?",  # "when" opens no clause asking it
        "How long is the trail?",
        "",
    ],
)
def test_questions_that_do_not(question: str) -> None:
    assert not asks_when(question)


def _talk() -> Conversation:
    """The pottery class talked about twice; the second time, in a longer turn, Anna says when she went."""
    days = ["2023-03-04", "2023-04-15"]
    lines = [
        ["I love my pottery class.", "Sounds fun."],
        [
            "Work has been busy.",
            "Sorry to hear.",
            "I went to my pottery class yesterday.",
            "A pottery class, fun.",
        ],
    ]
    conv = Conversation("clay")
    for n, (said, day) in enumerate(zip(lines, days, strict=True), 1):
        sess = Session(f"D{n}", datetime.fromisoformat(day + "T10:00:00+00:00"))
        for j, text in enumerate(said, 1):
            sess.turns.append(Turn(f"clay/D{n}:{j}", ("Anna", "Ben")[(j - 1) % 2], text))
        conv.sessions.append(sess)
    return conv


def _top(kb: cef.KnowledgeBase, question: str, options: dict[str, object] | None = None) -> str:
    res = kb.retrieve(GraphQuery(query=question, scope="clay", top_k=3, min_results=1, options=options or {}))
    return res.results[0].chunk.id


def test_the_turn_that_says_when_comes_first(tmp_path: Path) -> None:
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, _talk(), scope="clay", enricher=None)
        assert _top(kb, "When did Anna go to the pottery class?") == "clay/D2:3"
        # without the weight, the shorter turn about the class wins
        assert _top(kb, "When did Anna go to the pottery class?", {"dialogue": {"when": 0.0}}) == "clay/D1:1"


@pytest.mark.parametrize(
    ("question", "ahead"),
    [
        ("When did Anna go to the pottery class?", False),
        ("When will Anna go to the pottery class?", True),
        ("When is Ben going to sell the bread?", True),
        ("When does Anna plan to move?", True),
    ],
)
def test_questions_about_plans(question: str, ahead: bool) -> None:
    assert asks_ahead(question) is ahead


def test_a_plan_does_not_answer_when_it_happened(tmp_path: Path) -> None:
    """Anna says in March she will go next month, and in April that she went last week."""
    conv = Conversation("plans")
    said = [("2023-03-04", "Going to a pottery class next month."), ("2023-04-20", "Work.")]
    said += [
        (
            "2023-04-27",
            "Busy days at work and home, but I went to a pottery class last week with my sister, fun.",
        )
    ]
    for n, (day, text) in enumerate(said, 1):
        sess = Session(f"D{n}", datetime.fromisoformat(day + "T10:00:00+00:00"))
        sess.turns.append(Turn(f"plans/D{n}:1", "Anna", text))
        conv.sessions.append(sess)
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, conv, scope="plans", enricher=None)

        def top(question: str, options: dict[str, object] | None = None) -> str:
            res = kb.retrieve(
                GraphQuery(query=question, scope="plans", top_k=3, min_results=1, options=options or {})
            )
            return res.results[0].chunk.id

        assert top("When did Anna go to a pottery class?") == "plans/D3:1"
        assert top("When will Anna go to a pottery class?") == "plans/D1:1"
        # a plan weighed as much as what happened: the shorter turn wins
        assert top("When did Anna go to a pottery class?", {"dialogue": {"when_other": 0.5}}) == "plans/D1:1"
