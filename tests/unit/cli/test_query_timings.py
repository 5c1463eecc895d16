"""`cef query --timings` (or CEF_TIMINGS=1) prints where the time went to stderr, and only then."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cef
from cef.cli import app
from tests.conftest import clinical_batch

QUESTION = "Which medications interact with warfarin?"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "kb.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    return path


@pytest.mark.parametrize("how", ["flag", "env"])
def test_timings_go_to_stderr(db: Path, how: str) -> None:
    args = ["query", QUESTION, "--db", str(db), "--embedder", "none"]
    r = CliRunner().invoke(
        app, [*args, "--timings"] if how == "flag" else args, env={"CEF_TIMINGS": "1"} if how == "env" else {}
    )
    assert r.exit_code == 0, r.output
    assert "timings" not in r.stdout and "warfarin" in r.stdout.lower()
    rows = dict(re.findall(r"^  (.+?)\s+(\d+\.\d{3})$", r.stderr, re.M))
    for phase in ("open the knowledge base", "retrieve (without the model loads below)", "render"):
        assert phase in rows
    total = float(rows["total (process start to now)"])
    assert total >= sum(float(v) for k, v in rows.items() if not k.startswith(("total", "start-up")))


def test_no_timings_unless_asked(db: Path) -> None:
    r = CliRunner().invoke(
        app, ["query", QUESTION, "--db", str(db), "--embedder", "none"], env={"CEF_TIMINGS": ""}
    )
    assert r.exit_code == 0, r.output
    assert "timings" not in r.stderr
