"""examples/frameworks runs end to end offline: a LangChain chain, and a LlamaIndex engine on `cef serve http`."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import cef
from tests.conftest import ROOT, clinical_batch

EXAMPLES = ROOT / "examples" / "frameworks"
CEF = str(Path(sys.executable).parent / "cef")
READ_KEY = "example-read-key-1"
INTERACTIONS = (
    "John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> Amiodarone",
    "John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> Ibuprofen",
)


def run_example(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def first_two(out: str) -> set[str]:
    """The chunk ids ranked 1 and 2, each answered by a path with score 1.000."""
    return set(re.findall(r"^[12]\. (\S+)  score 1\.000  strategy paths$", out, re.M))


def test_the_langchain_chain_answers_the_readme_question() -> None:
    done = run_example("langchain_chain.py", "--embedder", "none", "-k", "3")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("question: Which drugs interact with the medication John Miller takes?")
    assert first_two(out) == {"drug-amiodarone", "drug-ibuprofen"}  # the two answers (tied), either order
    for path in INTERACTIONS:
        assert f"   path: {path}" in out
    assert out.rstrip().endswith("answer: (the chat model's answer: swap FakeListChatModel for a real model)")


@pytest.fixture
def cef_server(tmp_path: Path) -> Iterator[str]:
    """`cef serve http` (the real command) over the clinical example, with one read key."""
    db = tmp_path / "clinical.db"
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [CEF, "serve", "http", "--db", str(db), "--embedder", "none", "--port", str(port)],
            env={**os.environ, "CEF_API_KEYS": f"{READ_KEY}:read"},
            stdout=out,
            stderr=out,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_the_llamaindex_engine_on_a_running_server(cef_server: str) -> None:
    done = run_example("llamaindex_engine.py", "--server", cef_server, "--api-key", READ_KEY, "-k", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert first_two(out) == {"drug-amiodarone", "drug-ibuprofen"}  # the two answers (tied), either order
    for path in INTERACTIONS:  # what the LLM read: each passage with its path
        assert f"path: {path}\n\n" in out
    assert "Query: Which drugs interact with the medication John Miller takes?" in out

    refused = run_example("llamaindex_engine.py", "--server", cef_server, "--api-key", "wrong-key")
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        f"error: the cef server at {cef_server} refused the API key (401 unauthorized"
    )
    assert refused.stdout == ""
