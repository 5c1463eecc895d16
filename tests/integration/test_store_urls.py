"""Store URLs and files, as a reliability probe found them: ``--db sqlite:///abs/kb.db`` wrote to
``./sqlite:/abs/kb.db``, and ``cef stats`` on a 0-byte file wrote a schema into it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CEF = str(Path(sys.executable).parent / "cef")


def cef(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CEF, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
        env={**os.environ, "CEF_PROGRESS": "off", **(env or {})},
    )  # fmt: skip


def test_a_sqlite_url_means_the_same_path_on_the_option_and_the_variable(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = tmp_path / "kbs" / "kb.db"
    target.parent.mkdir()
    made = cef("init", "--db", f"sqlite://{target}", "--embedder", "none", cwd=work)
    assert made.returncode == 0, made.stderr
    assert target.is_file() and list(work.iterdir()) == []  # nothing under ./sqlite:
    via_env = cef("stats", cwd=work, env={"CEF_STORE__URL": f"sqlite://{target}"})
    via_opt = cef("stats", "--db", f"sqlite://{target}", cwd=work)
    assert via_env.returncode == via_opt.returncode == 0, via_env.stderr + via_opt.stderr
    assert list(work.iterdir()) == []


def test_a_read_never_writes_into_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for command in (["stats"], ["query", "warfarin"], ["export", "--out", str(tmp_path / "x.jsonl")]):
        r = cef(*command, "--db", str(empty), cwd=tmp_path)
        assert r.returncode == 2, (command, r.stdout, r.stderr)
        assert "empty" in r.stderr and "Traceback" not in r.stderr
        assert empty.stat().st_size == 0
