"""The MCP Inspector CLI (npm) drives `cef serve mcp` over stdio: scripts/inspector-check.sh."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "inspector-check.sh"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
]


def run(env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}
    )


def test_inspector_lists_and_calls_tools() -> None:
    done = run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tools/list OK" in done.stdout and "retrieve_knowledge" in done.stdout
    assert "tools/call search_memory OK" in done.stdout


def test_inspector_check_fails_when_the_server_does() -> None:
    done = run({"CEF": "/bin/false"})
    assert done.returncode != 0
    assert "tools/list failed" in done.stderr
