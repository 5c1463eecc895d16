"""A second round reads the words of the turns found first: evidence that shares no word with the
question is found through the evidence that does."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import cef
from cef import GraphQuery
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation


def _talk() -> Conversation:
    """Anna says she reads books (session 1) and, later, talks of one book by its title only."""
    said = [
        ["I read books, my favourite novel: The Alchemist.", "Nice."],
        ["We went to the beach with the kids.", "Sounds lovely."],
        ["Finished The Alchemist again, what a journey.", "Wow, again?"],
    ]
    conv = Conversation("talk")
    for n, (lines, day) in enumerate(zip(said, ["2023-03-04", "2023-04-15", "2023-05-20"], strict=True), 1):
        sess = Session(f"D{n}", datetime.fromisoformat(day + "T10:00:00+00:00"))
        for j, text in enumerate(lines, 1):
            sess.turns.append(Turn(f"talk/D{n}:{j}", ("Anna", "Ben")[(j - 1) % 2], text))
        conv.sessions.append(sess)
    return conv


def _ranked(kb: cef.KnowledgeBase, question: str, dialogue: dict[str, float] | None = None) -> list[str]:
    options = {"dialogue": dialogue} if dialogue is not None else {}
    res = kb.retrieve(GraphQuery(query=question, scope="talk", top_k=5, options=options))
    return [r.chunk.id for r in res.results]


def test_a_question_about_several_occasions_finds_the_turn_naming_what_the_first_found(
    tmp_path: Path,
) -> None:
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, _talk(), scope="talk", enricher=None)
        question = "What books has Anna read?"
        found = _ranked(kb, question)  # the default reads the first round's words ("alchemist")
        assert found[0] == "talk/D1:1"
        assert "talk/D3:1" in found
        assert "talk/D3:1" not in _ranked(kb, question, {"several_feedback": 0.0})


def test_the_first_rounds_best_turn_stays_first_for_other_questions(tmp_path: Path) -> None:
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, _talk(), scope="talk", enricher=None)
        question = "What is Anna's favourite novel?"
        plain = _ranked(kb, question)
        fed = _ranked(kb, question, {"feedback": 5.0})
        assert fed[0] == plain[0] == "talk/D1:1"
        assert "talk/D3:1" in fed
