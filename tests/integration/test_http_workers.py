"""``cef serve http --workers 2``: two processes answer on one port; a write made through either is
one transaction, and every later read — whichever process answers it — sees it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

import cef
from tests.conftest import clinical_batch

CEF = str(Path(sys.executable).parent / "cef")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> tuple[str, subprocess.Popen[bytes], Path]:
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    port = _port()
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("CEF_")}
    env.update(CEF_CACHE_TTL_SECONDS="300", CEF_EMBEDDER="none")
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [CEF, "serve", "http", "--db", str(db), "--port", str(port), "--workers", "2", "--writable"],
            env=env,
            stdout=out,
            stderr=out,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return url, proc, log


def _workers(proc: subprocess.Popen[bytes]) -> set[int]:
    """The server's worker processes: children of the uvicorn supervisor (Linux ``/proc``)."""
    kids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == proc.pid:
                kids.add(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return kids


def test_writes_through_either_process_are_seen_by_every_later_read(
    served: tuple[str, subprocess.Popen[bytes], Path],
) -> None:
    url, proc, log = served
    try:
        assert len(_workers(proc)) >= 2, log.read_text()
        question = {"query": "Which medications interact with warfarin?", "limit": 5}
        fresh = httpx.Limits(max_keepalive_connections=0)  # a connection per request: both processes answer
        with httpx.Client(base_url=url, timeout=60, limits=fresh) as api:
            before = api.post("/api/v1/search", json=question).json()
            assert before["results_count"] > 0

            def write(i: int) -> int:
                node = {"id": f"drug-new-{i}", "label": "Medication", "properties": {"name": f"Newdrug {i}"}}
                return api.post("/api/v1/nodes", json=node).status_code

            with ThreadPoolExecutor(4) as pool:  # writes land on both processes, at the same time
                assert list(pool.map(write, range(12))) == [201] * 12
            for _ in range(20):  # reads land on both processes too
                for i in range(12):
                    r = api.get(f"/api/v1/nodes/drug-new-{i}")
                    assert r.status_code == 200, (i, r.text)
                names = {n["id"] for n in api.get("/api/v1/nodes", params={"label": "Medication"}).json()}
                assert {f"drug-new-{i}" for i in range(12)} <= names
            after = api.post("/api/v1/search", json={"query": "Newdrug 7", "limit": 5}).json()
            assert after["success"]
        with cef.open(Path(str(log).replace("server.log", "kb.db")), embedder=None) as kb:
            assert all(kb.find_node(f"drug-new-{i}") is not None for i in range(12))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode is not None
