"""Two words a question says one after the other find the turn that says them so."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import cef
from cef import GraphQuery
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation


def _talk() -> Conversation:
    """Two sessions saying "support" and "group" as often and as long, together only in one."""
    said = [
        ["The group went to the park and I gave my support to the plan.", "Sounds fun."],
        ["Yesterday I went to the support group at the centre again.", "Good for you."],
    ]
    conv = Conversation("talk")
    for n, (lines, day) in enumerate(zip(said, ["2023-03-04", "2023-04-15"], strict=True), 1):
        sess = Session(f"D{n}", datetime.fromisoformat(day + "T10:00:00+00:00"))
        for j, text in enumerate(lines, 1):
            sess.turns.append(Turn(f"talk/D{n}:{j}", ("Anna", "Ben")[(j - 1) % 2], text))
        conv.sessions.append(sess)
    return conv


def _top(kb: cef.KnowledgeBase, phrase: float | None) -> str:
    options = {"dialogue": {"phrase": phrase}} if phrase is not None else {}
    res = kb.retrieve(
        GraphQuery(query="Who went to the support group?", scope="talk", top_k=2, options=options)
    )
    return res.results[0].chunk.id


def test_the_turn_saying_the_questions_words_together_comes_first(tmp_path: Path) -> None:
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, _talk(), scope="talk", enricher=None)
        assert _top(kb, None) == "talk/D2:1"  # the default weighs the pair
        assert _top(kb, 0.0) == "talk/D1:1"  # the words alone: the first of two alike turns


def test_a_pair_with_one_word_between_counts_too(tmp_path: Path) -> None:
    conv = Conversation("gap")
    said = [
        "Therapy was good and I gave support to the plan.",
        "I went to the support group for therapy again.",
    ]
    for n, (text, day) in enumerate(zip(said, ["2023-03-04", "2023-04-15"], strict=True), 1):
        sess = Session(f"D{n}", datetime.fromisoformat(day + "T10:00:00+00:00"))
        sess.turns.append(Turn(f"gap/D{n}:1", "Anna", text))
        conv.sessions.append(sess)
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, conv, scope="gap", enricher=None)

        def top(options: dict[str, object]) -> str:
            res = kb.retrieve(
                GraphQuery(query="Who had support therapy?", scope="gap", top_k=2, options=options)
            )
            return res.results[0].chunk.id

        assert top({}) == "gap/D2:1"  # "support group for therapy": the pair, one word between
        assert top({"dialogue": {"phrase": 0.0}}) == "gap/D1:1"
