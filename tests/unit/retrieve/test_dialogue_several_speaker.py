"""A question about several occasions of one person: the places below its best turn go to that
person's own turns, not to the other speaker's replies (``DialogueSettings.several_speaker``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import cef
from cef import GraphQuery
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation


def _talk() -> Conversation:
    """Anna names two books she read, in two sessions; Ben talks about books he reads a lot."""
    sessions = [
        ("2023-03-04", [("Anna", "I read a book about whales, loved it."), ("Ben", "Nice.")]),
        (
            "2023-04-15",
            [
                ("Ben", "Work is busy."),
                ("Anna", "Same here."),
                ("Ben", "I read books at night, so many books, books are my thing."),
                ("Anna", "Cool."),
            ],
        ),
        (
            "2023-05-20",
            [
                ("Ben", "How was your week?"),
                (
                    "Anna",
                    "Quiet. After the garden work and the long walks, I finally read a novel about Paris.",
                ),
            ],
        ),
    ]
    conv = Conversation("books")
    for n, (day, said) in enumerate(sessions, 1):
        sess = Session(f"D{n}", datetime.fromisoformat(day + "T10:00:00+00:00"))
        for j, (who, text) in enumerate(said, 1):
            sess.turns.append(Turn(f"books/D{n}:{j}", who, text))
        conv.sessions.append(sess)
    return conv


def _ranked(kb: cef.KnowledgeBase, weight: float | None) -> list[str]:
    options = {} if weight is None else {"dialogue": {"several_speaker": weight}}
    res = kb.retrieve(
        GraphQuery(query="What books has Anna read?", scope="books", top_k=3, min_results=1, options=options)
    )
    return [r.chunk.id for r in res.results]


def test_the_named_speakers_turns_fill_the_places_below_the_best(tmp_path: Path) -> None:
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, _talk(), scope="books", enricher=None)
        without = _ranked(kb, 0.0)
        with_default = _ranked(kb, None)
        assert without[2] == "books/D2:3"  # Ben's talk of books, by the question's words
        assert "books/D3:2" not in without
        # the best turns kept (the first is Anna's reply to Ben's books), then Anna's other book
        assert with_default == [*without[:2], "books/D3:2"]
