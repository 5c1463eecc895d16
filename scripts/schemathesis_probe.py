"""schemathesis against the REST API as a stranger would run it: no project hooks, the real embedder.

Serves the clinical example with the default embedder and a write key, runs ``st run --checks all``
over all four phases with no hooks and no project settings file, and prints the case count, the
failures schemathesis reports and the 5xx the server answered (counted at the server).

    python scripts/schemathesis_probe.py --max-examples 150 --seed 1
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KEY = "probe-writer-key-0001"


class Count5xx:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.errors: collections.Counter[tuple[str, str]] = collections.Counter()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def counted(message: Any) -> None:
            if (  # /health's 503 while the server warms up is its contract, not an error
                message["type"] == "http.response.start"
                and int(message["status"]) >= 500
                and scope["path"] != "/health"
            ):
                self.errors[(scope["method"], scope["path"])] += 1
            await send(message)

        await self.app(scope, receive, counted if scope["type"] == "http" else send)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-examples", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument(
        "--log", type=Path, help="write schemathesis's whole report here (default: print its end)"
    )
    args = ap.parse_args()

    import cef
    from cef.server.http import create_app
    from cef.server.settings import ServerSettings
    from tests.conftest import clinical_batch
    from tests.integration.test_http_api import LiveServer

    with tempfile.TemporaryDirectory() as tmp:
        kb = cef.open(Path(tmp) / "clinical.db")  # the default embedder
        kb.index_batch(clinical_batch())
        app = Count5xx(create_app(kb, ServerSettings(api_keys={KEY: "write"}, graph_timeout_ms=5000)))
        server = LiveServer(app)
        try:
            while httpx.get(f"{server.url}/health", timeout=120).status_code != 200:
                time.sleep(0.2)
            t0 = time.perf_counter()
            run = subprocess.run(
                [str(Path(sys.executable).parent / "st"), "run", f"{server.url}/openapi.json",
                 "--header", f"X-API-Key: {KEY}", "--checks", "all",
                 "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", str(args.max_examples),
                 "--seed", str(args.seed), "--workers", str(args.workers), "--generation-database", "none",
                 "--request-timeout", "60", "--continue-on-failure", "--no-color"],
                capture_output=True, text=True, cwd=tmp, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
            )  # fmt: skip
            out = run.stdout
            if args.log is not None:
                args.log.write_text(out)
            print(out[-6000:])
            cases = re.search(r"(\d+) generated, (\d+) passed", out)
            print(f"exit {run.returncode}; {time.perf_counter() - t0:.0f} s")
            print(f"cases: {cases.group(0) if cases else '?'}; server 5xx: {dict(app.errors) or 0}")
            return 0 if run.returncode == 0 and not app.errors else 1
        finally:
            server.close()
            kb.close()


if __name__ == "__main__":
    raise SystemExit(main())
