"""Property-based run of schemathesis against the REST API's OpenAPI spec.

Checks that no request gets a 5xx and every response conforms to the spec
(status codes, content types, headers, bodies, Allow on 405, auth enforced).
Not checked: ``negative_data_rejection`` (pydantic's lax mode accepts e.g. 0
for a boolean, by design) and ``positive_data_acceptance`` (schema-valid
requests the engine refuses on meaning: an unknown relation type, a missing
node, a node with edges deleted without cascade).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import cef
from tests.conftest import clinical_batch

BIN = Path(sys.executable).parent
WRITE_KEY = "schemathesis-writer-key"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (BIN / "st").exists() and shutil.which("st") is None, reason="schemathesis not installed"
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_schemathesis_finds_no_server_error_and_no_spec_violation(tmp_path: Path) -> None:
    db = tmp_path / "clinical.db"
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    port = free_port()
    env = {**os.environ, "CEF_API_KEYS": f"{WRITE_KEY}:write", "CEF_GRAPH_TIMEOUT_MS": "2000"}
    log = tmp_path / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(BIN / "cef"), "serve", "http", "--db", str(db), "--embedder", "none", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=out,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        st = str(BIN / "st") if (BIN / "st").exists() else "st"
        run = subprocess.run(
            [
                st, "run", f"{url}/openapi.json",
                "--header", f"X-API-Key: {WRITE_KEY}",
                "--checks", "all",
                "--exclude-checks", "negative_data_rejection,positive_data_acceptance",
                "--max-examples", "25",
                "--workers", "2",
                "--generation-database", "none",
                "--request-timeout", "20",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=240,
            cwd=tmp_path,
            env={**os.environ, "NO_COLOR": "1"},
        )  # fmt: skip
        assert run.returncode == 0, (
            run.stdout[-6000:] + run.stderr[-2000:] + "\nserver log:\n" + log.read_text()[-3000:]
        )
        operations = sum(len(ops) for ops in httpx.get(f"{url}/openapi.json").json()["paths"].values())
        tested = re.search(r"Tested: (\d+)", run.stdout)
        assert tested is not None and int(tested.group(1)) == operations, run.stdout[-3000:]
        assert "Traceback" not in log.read_text()
    finally:
        server.terminate()
        server.wait(timeout=10)
