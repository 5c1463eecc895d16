"""One reading of the speaker a question names, for the dialogue stage and the relevance credit alike:
every word of a speaker's name or its first word ("Alice" names "Alice Moss")."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

import cef
from cef import GraphQuery
from cef.memory.conversation import Conversation, Session, Turn, ingest_conversation
from cef.retrieve.dialoguequestion import named_speaker

SPEAKERS = ["Alice Moss", "Bob Lee"]


@pytest.mark.parametrize(
    ("question", "speaker"),
    [
        ("What did Alice paint last summer?", "Alice Moss"),
        ("What did alice moss paint?", "Alice Moss"),
        ("Where is Bob's new studio?", "Bob Lee"),
        ("What did Alice and Bob paint?", None),  # two speakers: not one
        ("What did they paint?", None),
        ("What did Alicia paint?", None),  # a word, not a prefix
    ],
)
def test_a_speaker_is_named_by_the_first_word_or_every_word_of_the_name(
    question: str, speaker: str | None
) -> None:
    assert named_speaker(question, SPEAKERS) == speaker


def _talk() -> Conversation:
    conv = Conversation("studio")
    sess = Session("D1", datetime.fromisoformat("2024-05-01T10:00:00+00:00"))
    lines = [
        ("Bob Lee", "I painted a portrait of my neighbour, oil paint on a big canvas."),
        ("Alice Moss", "Lovely. I painted a harbour at dawn, small canvas, watercolour paint."),
        ("Bob Lee", "The portrait canvas took me weeks of paint and patience."),
        ("Alice Moss", "Mine was quick."),
    ]
    for j, (who, text) in enumerate(lines, 1):
        sess.turns.append(Turn(f"studio/D1:{j}", who, text))
    conv.sessions.append(sess)
    return conv


def test_the_dialogue_stage_reads_a_speaker_named_by_first_name(tmp_path: Path) -> None:
    """A question about "Alice" is about Alice Moss: the dialogue stage weighs her turns and says so."""
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_conversation(kb, _talk(), scope="studio", enricher=None)
        res = kb.retrieve(
            GraphQuery(query="What did Alice paint on canvas?", scope="studio", top_k=4, min_results=1)
        )
        notes = {r.chunk.metadata.get("speaker"): r.explanation.notes for r in res.results}
        assert "the question names the speaker Alice Moss" in notes["Alice Moss"]
        assert not any("names the speaker" in n for n in notes["Bob Lee"])
        assert res.results[0].chunk.id == "studio/D1:2", [r.chunk.id for r in res.results]
