"""The README's demo, seen in the browser: `cef ingest` the clinical example, `cef serve http`, ask its question."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CLINICAL

pytestmark = pytest.mark.slow

CEF = str(Path(sys.executable).parent / "cef")
QUESTION = "Which drugs interact with the medication John Miller takes?"
READ_KEY = "reader-key-0123"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`cef serve http` (a real process) over the clinical example ingested by `cef ingest`, with a read key."""
    folder = tmp_path_factory.mktemp("demo")
    db = folder / "demo.db"
    ingest = subprocess.run(
        [CEF, "ingest", str(CLINICAL), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert ingest.returncode == 0, ingest.stderr
    port = free_port()
    env = {**os.environ, "CEF_API_KEYS": f"{READ_KEY}:read"}
    log = folder / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [CEF, "serve", "http", "--db", str(db), "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"cef serve http did not start: {log.read_text()}"
        time.sleep(0.3)
    assert "explorer at /" in log.read_text()
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_the_readme_question_in_the_explorer(page: Any, served: str) -> None:
    page.goto(served + "/")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('API key')")
    page.fill("#api-key", READ_KEY)
    page.click("#key-apply")
    page.wait_for_selector("#schema-body table")
    page.fill("#q", QUESTION)
    page.click("#search")
    page.wait_for_function("() => window.cefExplorer.cy && window.cefExplorer.cy.nodes().length > 0")
    nodes, edges = page.evaluate(
        "() => [window.cefExplorer.cy.nodes().length, window.cefExplorer.cy.edges().length]"
    )
    assert nodes >= 4 and edges >= 3
    drawn = page.evaluate("() => window.cefExplorer.cy.nodes().map(n => n.id())")
    assert "pat-john" in drawn and "med-warfarin" in drawn
    text = page.inner_text("#results")
    assert "Warfarin" in text or "warfarin" in text
    assert page.console_errors == []
