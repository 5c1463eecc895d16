"""The ``cef`` process ends without the interpreter's teardown, yet with all its output and its exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cef
from tests.conftest import clinical_batch

QUESTION = "Which medications interact with warfarin?"


def _cef(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cef.cli", *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_a_long_answer_is_printed_whole_and_the_code_is_zero(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    r = _cef("query", QUESTION, "--db", str(db), "--embedder", "none", "--format", "json", "--top-k", "50")
    assert r.returncode == 0, r.stderr
    result = cef.SearchResult.model_validate_json(r.stdout)  # the whole document reached the pipe
    assert result.results and "warfarin" in r.stdout.lower()


def test_a_failed_command_keeps_its_exit_code_and_message(tmp_path: Path) -> None:
    r = _cef("query", QUESTION, "--db", str(tmp_path / "missing.db"))
    assert r.returncode == 2
    assert "missing.db" in r.stderr
    assert not (tmp_path / "missing.db").exists()
