"""Long commands report progress by records on a pipe (plain lines), not by files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cef
from bench.harness.passages import run_questions
from cef.model import SearchStrategy
from tests.conftest import clinical_batch

CEF = str(Path(sys.executable).parent / "cef")
pytestmark = pytest.mark.slow


def cef_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CEF_PROGRESS_INTERVAL": "0"}
    env.pop("CEF_PROGRESS", None)
    return subprocess.run(
        [CEF, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def counts(stderr: str, what: str) -> list[tuple[int, int]]:
    return [
        (int(done.replace(",", "")), int(total.replace(",", "")))
        for done, total in re.findall(rf"^{re.escape(what)}: ([\d,]+)/([\d,]+)", stderr, re.M)
    ]


def test_ingest_of_one_jsonl_file_counts_its_passages(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w") as f:
        for i in range(600):
            f.write(
                json.dumps(
                    {"id": f"p{i}", "title": f"Town {i % 40}", "text": f"Town {i % 40} lies in Norway."}
                )
                + "\n"
            )
    r = cef_cli("ingest", str(corpus), "--db", "kb.db", "--embedder", "none", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    seen = counts(r.stderr, "extracting entities (passages)")
    assert len(seen) >= 3, r.stderr  # several steps, not one line at the end
    assert all(total == 600 for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == 600
    assert "(files)" not in r.stderr  # one file: its records are counted, never 0/1
    assert re.search(r"passages\): 600/600 \(100%\) · [\d,.]+/s · done in", r.stderr)


def test_export_and_import_count_records(tmp_path: Path) -> None:
    batch = clinical_batch()
    with cef.open(tmp_path / "src.db", embedder=None) as kb:
        kb.index_batch(batch)
    out = cef_cli("export", "--db", "src.db", "--out", "dump.jsonl", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    n = len(batch.nodes)
    assert counts(out.stderr, "exporting nodes")[-1] == (n, n)
    assert counts(out.stderr, "exporting chunks")[-1] == (len(batch.chunks), len(batch.chunks))
    back = cef_cli("import", "dump.jsonl", "--db", "dst.db", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    assert counts(back.stderr, "importing nodes")[-1] == (n, n), back.stderr


def test_bench_answers_report_progress_per_question(clinical_kb: cef.KnowledgeBase) -> None:
    seen: list[tuple[str, int, int]] = []
    rows = [{"id": str(i), "question": q} for i, q in enumerate(["warfarin", "metformin", "John Miller"])]
    lines = run_questions(clinical_kb, rows, SearchStrategy.BM25, top_k=3, progress=lambda *a: seen.append(a))
    assert len(lines) == 3
    assert seen == [("answering (bm25)", 1, 3), ("answering (bm25)", 2, 3), ("answering (bm25)", 3, 3)]
