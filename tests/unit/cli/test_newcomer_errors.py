"""What a first-day user runs into: one-line errors with the documented exit code, help that prints
every bracket, unsupported files said, no empty store left by a typo, a README example that runs twice."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

import cef
from cef.cli import app

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
runner = CliRunner()


def _cef(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real process: what the user sees on stderr, and its exit code."""
    return subprocess.run(
        [sys.executable, "-m", "cef.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )


def _one_line_error(r: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(
    "command",
    [
        ["stats"],
        ["query", "anything", "--embedder", "none"],
        ["ingest", str(ROOT / "examples/clinical/graph.yaml"), "--embedder", "none"],
    ],
)
def test_a_file_that_is_not_a_knowledge_base(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("hello, not a database\n")
    r = _cef(*command, "--db", str(db))
    _one_line_error(r, 2, "notes.txt", "is not a cef knowledge base")
    assert db.read_text() == "hello, not a database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # no -wal / -shm beside it


def test_another_applications_sqlite_database_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE people(name TEXT)")
    r = _cef("ingest", str(ROOT / "examples/clinical/graph.yaml"), "--db", str(db), "--embedder", "none")
    _one_line_error(r, 2, "app.db", "other tables: people")
    with sqlite3.connect(db) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert tables == ["people"]


def test_a_missing_input_file_creates_no_store(tmp_path: Path) -> None:
    r = _cef("ingest", str(tmp_path / "nope.md"), "--db", str(tmp_path / "kb.db"), "--embedder", "none")
    assert r.returncode == 2
    assert "nope.md" in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_unsupported_file_is_reported_and_counted(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "report.docx").write_bytes(b"PK\x03\x04")
    (folder / "note.md").write_text("# Note\n\nWarfarin needs INR checks.\n")
    r = runner.invoke(
        app,
        ["ingest", str(folder), "--db", str(tmp_path / "kb.db"), "--embedder", "none", "--no-extract"],
        env={"COLUMNS": "200"},
    )
    assert r.exit_code == 0, r.output
    assert "1 skipped (unsupported)" in r.output
    assert "skipped: report.docx: no parser reads this kind of file" in r.output


def _all_help_texts() -> list[tuple[list[str], str]]:
    """(the command's words, a help text) of the app, every command and every parameter."""
    out: list[tuple[list[str], str]] = []

    def walk(cmd: object, words: list[str]) -> None:
        out.append((words, getattr(cmd, "help", None) or ""))
        out.extend((words, getattr(param, "help", None) or "") for param in getattr(cmd, "params", []))
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, [*words, name])

    walk(get_command(app), [])
    return out


def test_help_prints_every_bracket() -> None:
    bracketed = [(words, m) for words, text in _all_help_texts() for m in re.findall(r"\[[^\]\s]+\]", text)]
    assert ([], "[cef.store]") not in bracketed and any(m == "[cef.store]" for _, m in bracketed)
    for words, token in bracketed:
        r = runner.invoke(app, [*words, "--help"], env={"COLUMNS": "300"})
        assert r.exit_code == 0, r.output
        flat = " ".join(r.output.split())
        assert token in flat, f"{token} is missing from `cef {' '.join(words)} --help`"


def test_help_says_what_creates_a_knowledge_base() -> None:
    r = runner.invoke(app, ["init", "--help"], env={"COLUMNS": "200"})
    flat = " ".join(r.output.split())
    assert "query create" not in flat
    assert "ingest creates one too" in flat
    r = runner.invoke(app, ["query", "--help"], env={"COLUMNS": "200"})
    assert "else [cef.store] url in cef.toml" in " ".join(r.output.split())


def test_the_readme_python_example_runs_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "cef.open(" in b][:1]
    code = block.replace('cef.open("kb.db")', 'cef.open("kb.db", embedder=None)')
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        exec(compile(code, "README.md", "exec"), {})
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        assert kb.stats()["nodes"] == 2
