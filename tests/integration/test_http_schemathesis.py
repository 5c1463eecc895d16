"""schemathesis against the real REST API: every check, every phase, seeded and bounded.

``st run --checks all`` (server errors, status codes, content types, headers,
response bodies, Allow on 405, auth, schema-violating requests accepted,
schema-valid requests rejected, ...) over every operation, in all four phases
(examples, coverage, fuzzing, stateful), with a fixed seed and at least 1,000
generated cases; 0 failures. The stateful phase follows the OpenAPI links
from ``POST /api/v1/{nodes,edges,chunks}``: the test counts, at the server,
that created edges and chunks were really read, patched and deleted.

``tests/support/schemathesis_hooks.py`` points positive edge/chunk bodies at
existing nodes and relation types and applies the rules the schema states in
words; ``tests/support/schemathesis.toml`` allows no exception: a schema-valid
request is never refused (graph patterns included, on ``POST /api/v1/retrieve``
and ``POST /api/v1/explore``).
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import cef
from cef.server.http import create_app
from cef.server.settings import ServerSettings
from tests.conftest import ROOT, clinical_batch
from tests.integration.test_http_api import LiveServer

BIN = Path(sys.executable).parent
WRITE_KEY = "schemathesis-writer-key"
SEED = 20261125
MIN_CASES = 1000

pytestmark = pytest.mark.slow


class CountRoutes:
    """ASGI middleware: how often each (method, route template, status) was answered."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.counts: collections.Counter[tuple[str, str, int]] = collections.Counter()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = re.sub(r"^(/api/v1/(nodes|edges|chunks))/[^/]+$", r"\1/{id}", scope["path"])

        async def counted(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.counts[(scope["method"], path, int(message["status"]))] += 1
            await send(message)

        await self.app(scope, receive, counted)


def test_schemathesis_all_checks_all_phases_zero_failures(tmp_path: Path) -> None:
    st = BIN / "st"
    assert st.exists(), "schemathesis is not installed: pip install -e '.[dev]'"
    kb = cef.open(tmp_path / "clinical.db", embedder=None)
    kb.index_batch(clinical_batch())
    settings = ServerSettings(api_keys={WRITE_KEY: "write"}, graph_timeout_ms=2000)
    app = CountRoutes(create_app(kb, settings))
    server = LiveServer(app)
    try:
        deadline = time.monotonic() + 120
        while httpx.get(f"{server.url}/health", timeout=60).status_code != 200:  # 503 while warming up
            assert time.monotonic() < deadline, "the server did not become ready"
            time.sleep(0.1)
        app.counts.clear()
        env = {
            **os.environ,
            "NO_COLOR": "1",
            "PYTHONPATH": str(ROOT),
            "SCHEMATHESIS_HOOKS": "tests.support.schemathesis_hooks",
        }
        run = subprocess.run(
            [
                str(st), "--config-file", str(ROOT / "tests" / "support" / "schemathesis.toml"),
                "run", f"{server.url}/openapi.json",
                "--header", f"X-API-Key: {WRITE_KEY}",
                "--checks", "all",
                "--phases", "examples,coverage,fuzzing,stateful",
                "--max-examples", "40",
                "--seed", str(SEED),
                "--workers", "1",  # one: stateful scenarios of two workers delete what the other made
                "--generation-database", "none",
                "--request-timeout", "30",
                "--continue-on-failure",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=tmp_path,
            env=env,
        )  # fmt: skip
        out = run.stdout
        assert run.returncode == 0, out[-8000:] + run.stderr[-2000:]
        operations = sum(len(ops) for ops in httpx.get(f"{server.url}/openapi.json").json()["paths"].values())
        tested = re.search(r"Tested: (\d+)", out)
        assert tested is not None and int(tested.group(1)) == operations, out[-3000:]
        cases = re.search(r"(\d+) generated, (\d+) passed", out)
        assert cases is not None and int(cases.group(1)) >= MIN_CASES, out[-3000:]
        assert int(cases.group(1)) == int(cases.group(2)), out[-3000:]
        assert re.search(r"✅\s+Stateful", out) and "Failures" not in out, out[-3000:]
        links = re.search(r"API Links:\s+(\d+) covered", out)
        assert links is not None and int(links.group(1)) > 0, out[-3000:]
        counts = app.counts
        for kind in ("edges", "chunks", "nodes"):
            assert counts[("POST", f"/api/v1/{kind}", 201)] > 0, (kind, counts)
            for method in ("GET", "PATCH", "DELETE"):
                assert counts[(method, f"/api/v1/{kind}/{{id}}", 200)] > 0, (kind, method, counts)
        server_errors = {k: n for k, n in counts.items() if k[2] >= 500}
        assert not server_errors, server_errors
        print(
            f"schemathesis: {cases.group(1)} cases, {operations} operations, {links.group(1)} links covered"
        )
    finally:
        server.close()
        kb.close()
