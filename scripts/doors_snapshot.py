"""Every question of examples/clinical and examples/services through the four doors, for a before/after diff.

Ingests each example with ``cef ingest`` into a temporary file, then asks each question through
the Python API (``kb.retrieve``), the CLI (``cef query --format json`` and the text output), REST
(``POST /api/v1/retrieve`` and ``/api/v1/search``) and MCP (``retrieve_knowledge`` and
``search_memory`` through the server's tool dispatch), with the default embedder and no time limit,
and writes one line per (example, door, question) with timestamps and timings removed.

    PYTHONHASHSEED=0 python scripts/doors_snapshot.py before.tsv      # on the old code
    PYTHONHASHSEED=0 python scripts/doors_snapshot.py after.tsv       # on the new code
    python scripts/doors_snapshot.py --compare before.tsv after.tsv

(a fixed hash seed: set iteration order otherwise moves the sixth decimal of a few sums.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: keys whose values change from run to run
VOLATILE = {"created", "updated", "duration_ms", "elapsed_ms", "processing_time_ms"}


def scrub(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: scrub(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [scrub(v) for v in x]
    if isinstance(x, str):
        return re.sub(r"\d+(\.\d+)? ?ms\b", "<ms>", x)
    return x


def snapshot(out: Path) -> int:
    import yaml
    from starlette.testclient import TestClient
    from typer.testing import CliRunner

    import cef
    from cef.cli import app
    from cef.model import GraphQuery
    from cef.server.http import create_app
    from cef.server.service import CefService
    from cef.server.settings import ServerSettings

    runner = CliRunner()
    lines: list[str] = []
    for name in ("clinical", "services"):
        example = ROOT / "examples" / name
        questions = yaml.safe_load((example / "questions.yaml").read_text())["questions"]
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "kb.db")
            got = runner.invoke(app, ["ingest", str(example / "graph.yaml"), "--db", db])
            assert got.exit_code == 0, got.output
            kb = cef.open(db)
            settings = ServerSettings(graph_timeout_ms=0, cache_ttl_seconds=0)
            svc = CefService(kb, settings, context=False)
            client = TestClient(create_app(kb, settings, service=svc))
            for q in questions:
                body: dict[str, Any] = {"query": q["question"]}
                args = ["query", q["question"], "--db", db]
                if q.get("as_of"):
                    body["as_of"] = f"{q['as_of']}T00:00:00+00:00"
                    args += ["--as-of", body["as_of"]]
                search = {"query": q["question"], "limit": 5}
                cli_json = runner.invoke(app, [*args, "--format", "json"])
                cli_text = runner.invoke(app, args)
                assert cli_json.exit_code == 0 and cli_text.exit_code == 0, cli_json.output
                rest = client.post("/api/v1/retrieve", json=body)
                rest_search = client.post("/api/v1/search", json=search)
                assert rest.status_code == 200 and rest_search.status_code == 200, rest.text
                outputs = {
                    "python": kb.retrieve(GraphQuery(**body)).model_dump(mode="json"),
                    "cli-json": json.loads(cli_json.stdout),
                    "cli-text": cli_text.stdout,
                    "rest": rest.json(),
                    "rest-search": rest_search.json(),
                    "mcp": asyncio.run(svc.call_tool("retrieve_knowledge", body, writable=False)),
                    "mcp-search": asyncio.run(svc.call_tool("search_memory", search, writable=False)),
                }
                for door, value in outputs.items():
                    plain = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
                    lines.append(f"{name}\t{door}\t{q['id']}\t{json.dumps(scrub(plain))}")
            client.close()
            svc.close()
            kb.close()
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} outputs written to {out}")
    return 0


def compare(before: Path, after: Path) -> int:
    def load(path: Path) -> dict[tuple[str, ...], str]:
        rows = (line.split("\t", 3) for line in path.read_text().splitlines())
        return {(ex, door, qid): js for ex, door, qid, js in rows}

    a, b = load(before), load(after)
    if a.keys() != b.keys():
        print(f"different outputs: {len(a.keys() - b.keys())} gone, {len(b.keys() - a.keys())} new")
        return 1
    raw = [k for k in a if a[k] != b[k]]
    content = [k for k in raw if json.loads(a[k]) != json.loads(b[k])]
    print(
        f"{len(a)} outputs ({len({k[1] for k in a})} doors): {len(raw)} differ byte for byte, {len(content)} in content"
    )
    for k in raw[:20]:
        print("  ", *k)
    return 1 if raw else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="OUT.tsv, or BEFORE.tsv AFTER.tsv with --compare")
    parser.add_argument("--compare", action="store_true", help="diff two snapshots")
    ns = parser.parse_args()
    if ns.compare:
        if len(ns.paths) != 2:
            parser.error("--compare takes BEFORE.tsv AFTER.tsv")
        return compare(*ns.paths)
    if len(ns.paths) != 1:
        parser.error("give one output file")
    return snapshot(ns.paths[0])


if __name__ == "__main__":
    sys.exit(main())
