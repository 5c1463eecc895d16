"""A fresh ``cef serve http`` with the real embedding model answers its first searches as it answers later ones.

The first requests arrive while the server is still loading (``/health`` says
"starting"); they wait for the warm-up, and the model load never counts
against the graph exploration time limit, so no answer falls back to vector
search and the first 10 answers equal the next 10 (strategy and chunks).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

CEF = str(Path(sys.executable).parent / "cef")
QUERIES = [
    "Which medications interact with warfarin?",
    "What treats atrial fibrillation?",
    "kidney function and metformin",
    "bleeding risk of anticoagulants",
    "Who is the cardiologist?",
    "NSAID contraindications",
    "blood pressure medication",
    "diabetes treatment",
    "aspirin and ibuprofen",
    "patient with heart failure",
]

pytestmark = pytest.mark.slow


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answer(api: httpx.Client, query: str) -> tuple[Any, ...]:
    r = api.post("/api/v1/search", json={"query": query, "limit": 5})
    assert r.status_code == 200, r.text
    body = r.json()
    summary = body["exploration_summary"]
    return (summary["strategy"], summary["timed_out"], tuple(h["chunk_id"] for h in body["results"]))


def test_first_searches_equal_later_ones(clinical_db_embedded: Path, tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    shutil.copy(clinical_db_embedded, db)
    port = _port()
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("CEF_")}
    env.update(CEF_CACHE_TTL_SECONDS="0", HF_HUB_OFFLINE="1")
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [CEF, "serve", "http", "--db", str(db), "--port", str(port)], env=env, stdout=out, stderr=out
        )
    url = f"http://127.0.0.1:{port}"
    try:
        statuses = []
        deadline = time.monotonic() + 180
        while True:  # the first request goes in as soon as the port answers, warm or not
            try:
                statuses.append(httpx.get(f"{url}/health", timeout=5).json()["status"])
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        with httpx.Client(base_url=url, timeout=300) as api:
            first = [_answer(api, q) for q in QUERIES]
            health = api.get("/health").json()
            later = [_answer(api, q) for q in QUERIES]
        assert health["status"] == "ready" and health["loaded"]["embedder"] != "none", health
        assert not any(timed_out for _, timed_out, _ in first), first
        assert first == later
        print(
            f"cold start: first health {statuses[0]!r}, warm-up {health['loaded']['seconds']} s, 10 + 10 equal"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
