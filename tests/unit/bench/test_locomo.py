"""The LoCoMo harness: scores per category and session Hit@1, on a tiny conversation file end to end."""

from __future__ import annotations

import json
from pathlib import Path

from bench.harness.locomo import build_memory, run_questions, score, session_of
from bench.harness.passages import RunLine
from cef import SearchStrategy


def test_session_hit_and_categories() -> None:
    questions = [
        {"id": "a", "category": "single-hop", "supporting_ids": ["c/D1:2"]},
        {"id": "b", "category": "multi-hop", "supporting_ids": ["c/D1:1", "c/D3:4"]},
    ]
    lines = [RunLine("a", ["c/D1:5", "c/D1:2"], 1.0), RunLine("b", ["c/D2:1", "c/D3:4"], 3.0)]
    s = score(lines, questions)
    assert s.overall["session_hit@1"] == 50.0
    assert s.categories["single-hop"]["recall@5"] == 100.0
    assert s.categories["multi-hop"]["recall@5"] == 50.0
    assert session_of("conv-26/D12:3") == "conv-26/D12"


def test_each_conversation_in_its_own_scope(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {
            "id": f"{c}/D1:{i}",
            "conversation": c,
            "session": 1,
            "date": "2023-05-08T13:56:00",
            "speaker": s,
            "text": t,
        }
        for c, turns in (
            ("c1", [("Ann", "I bought a red kayak yesterday."), ("Ben", "Nice, where will you paddle?")]),
            ("c2", [("Cid", "I bought a red kayak too!"), ("Dee", "Everyone has kayaks now.")]),
        )
        for i, (s, t) in enumerate(turns, 1)
    ]
    corpus.write_text("\n".join(json.dumps(r) for r in rows))
    kb, ingests = build_memory(corpus, tmp_path / "kb.db", embedder=None)
    try:
        assert [(x.scope, x.turns) for x in ingests] == [("c1", 2), ("c2", 2)]
        qs = [
            {
                "id": "q",
                "conversation": "c2",
                "question": "Who bought a red kayak?",
                "supporting_ids": ["c2/D1:1"],
            }
        ]
        lines = run_questions(kb, qs, SearchStrategy.AUTO)
        assert lines[0].ranked[0] == "c2/D1:1"
        assert all(t.startswith("c2/") for t in lines[0].ranked)
    finally:
        kb.close()
