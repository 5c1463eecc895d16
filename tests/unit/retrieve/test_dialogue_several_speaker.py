"""A question about several occasions of one person: the places below its best turn go to that
person's own turns, not to the other speaker's replies (``DialogueSettings.several_speaker``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import cef
from cef import GraphQuery
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation
from cef.retrieve.dialogue import _speaker_below_best


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


@given(
    st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1e6), st.booleans()), min_size=1, max_size=40
    ).filter(lambda rows: len({s for s, _ in rows}) == len(rows)),
    st.floats(min_value=0.0, max_value=10.0),
)
def test_the_best_stays_first_and_each_side_keeps_its_order(
    rows: list[tuple[float, bool]], weight: float
) -> None:
    scored = np.asarray([s for s, _ in rows], dtype=np.float64)
    speaker = np.asarray([b for _, b in rows], dtype=bool)
    out = _speaker_below_best(scored, speaker, weight)
    assert int(np.argmax(out)) == int(np.argmax(scored))
    best = int(np.argmax(scored))
    for side in (speaker, ~speaker):
        idx = [i for i in np.flatnonzero(side) if i != best]
        assert sorted(idx, key=lambda i: -scored[i]) == sorted(idx, key=lambda i: -out[i])
    # the named speaker's turns never lose ground to the other's
    for i in np.flatnonzero(speaker):
        for j in np.flatnonzero(~speaker):
            if i != best and j != best and scored[i] >= scored[j]:
                assert out[i] >= out[j]
