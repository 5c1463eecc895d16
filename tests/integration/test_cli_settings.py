"""Every front door: a missing store is an error, settings resolve the same way, exit codes are stable.

Settings come from options, then ``CEF_*`` variables, then ``cef.toml`` (one
loader, :func:`cef.config.load_config`); each test points one setting at a
knowledge base (or at a bogus embedder) through one source and checks that
each command honours it. A read of a knowledge base that does not exist exits
2, names the path and how to create it, and creates nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner, Result

import cef
from cef.cli import app
from cef.config import load_config
from cef.errors import StoreNotFoundError
from tests.conftest import CLINICAL, clinical_batch

CEF = str(Path(sys.executable).parent / "cef")

#: every read command, with the arguments it needs besides the store
READ_COMMANDS: dict[str, list[str]] = {
    "query": ["query", "warfarin"],
    "context": ["context", "warfarin"],
    "stats": ["stats", "--json"],
    "export": ["export", "--out", "out.jsonl", "--no-progress"],
    "ask": ["ask", "warfarin"],
    "memory context": ["memory", "context", "warfarin"],
    "serve http": ["serve", "http"],
    "serve mcp": ["serve", "mcp"],
}
#: commands that never embed (no --embedder option)
NO_EMBEDDER = {"stats", "export"}


def read_args(command: str, *extra: str) -> list[str]:
    """The command line of a read command, with ``--embedder none`` where it takes one."""
    return [*READ_COMMANDS[command], *extra, *([] if command in NO_EMBEDDER else ["--embedder", "none"])]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No CEF_* variable from the outside; the working directory is an empty folder."""
    for key in [k for k in os.environ if k.upper().startswith("CEF_")]:
        monkeypatch.delenv(key)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield work


@pytest.fixture
def kb1(clean_env: Path) -> Path:
    """A clinical knowledge base (no embeddings) at work/kb1.db."""
    path = clean_env / "kb1.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    return path


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# ------------------------------------------------------------------ missing stores
@pytest.mark.parametrize("command", list(READ_COMMANDS))
def test_a_read_command_refuses_a_missing_store_and_creates_nothing(command: str, clean_env: Path) -> None:
    before = tree(clean_env)
    res = run(*read_args(command, "--db", "missing/dir/k.db"))
    assert res.exit_code == 2, res.output
    err = " ".join(res.stderr.split())
    assert "'missing/dir/k.db' does not exist" in err and "cef ingest FILES --db missing/dir/k.db" in err
    assert "set by --db" in err and "Traceback" not in res.output
    assert tree(clean_env) == before  # no folder, no empty database


def test_the_default_store_is_not_created_by_a_read(clean_env: Path) -> None:
    res = run("query", "warfarin", "--embedder", "none")
    assert (
        res.exit_code == 2
        and "'cef.db' does not exist" in res.stderr
        and "the default location" in res.stderr
    )
    assert tree(clean_env) == []


def test_a_folder_is_not_a_store(clean_env: Path) -> None:
    (clean_env / "dir.db").mkdir()
    res = run("stats", "--db", "dir.db")
    assert res.exit_code == 2 and "a folder, not a SQLite file" in res.stderr


def test_library_read_open_refuses_a_missing_store(clean_env: Path) -> None:
    with pytest.raises(StoreNotFoundError, match=r"missing/k\.db"):
        cef.open(clean_env / "missing" / "k.db", embedder=None, create=False)
    assert tree(clean_env) == []
    with cef.open(clean_env / "made" / "k.db", embedder=None) as kb:  # writes still create
        kb.index_batch(clinical_batch())
    with cef.open(clean_env / "made" / "k.db", embedder=None, create=False) as kb:
        assert kb.stats()["nodes"] > 0


def test_writes_create_the_store(clean_env: Path) -> None:
    res = run(
        "ingest", str(CLINICAL), "--db", "new/kb.db", "--embedder", "none", "--no-extract", "--no-progress"
    )
    assert res.exit_code == 0, res.output
    assert (clean_env / "new" / "kb.db").is_file()
    assert run("init", "--db", "other.db", "--embedder", "none").exit_code == 0
    assert (clean_env / "other.db").is_file()
    stats = run("stats", "--db", "new/kb.db", "--json")
    assert stats.exit_code == 0 and json.loads(stats.stdout)["nodes"] > 0


# ------------------------------------------------------------------ usage errors and exit codes
@pytest.mark.parametrize(
    "args",
    [
        ["query", ""],
        ["query", "   "],
        ["context", ""],
        ["context", "warfarin", " "],
        ["ask", ""],
        ["memory", "context", ""],
    ],
)
def test_an_empty_query_is_a_usage_error(args: list[str], kb1: Path) -> None:
    res = run(*args, "--db", str(kb1), "--embedder", "none")
    assert res.exit_code == 2, res.output
    assert "is empty" in res.output and "Traceback" not in res.output
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit)


def test_ingest_failure_exit_code_is_the_same_on_every_run(clean_env: Path) -> None:
    docs = clean_env / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Warfarin\n\nWarfarin thins the blood.\n")
    (docs / "bad.yaml").write_text("nodes: [\n")
    args = ["ingest", str(docs), "--db", "kb.db", "--embedder", "none", "--no-extract", "--no-progress"]
    first, second = run(*args), run(*args)
    assert (first.exit_code, second.exit_code) == (1, 1), (first.output, second.output)
    assert "bad.yaml" in first.stderr and "bad.yaml" in second.stderr


def test_help_documents_the_exit_codes() -> None:
    text = " ".join(run("--help").stdout.split())
    assert "0 ok" in text and "1 the work failed" in text and "2 usage or input error" in text


# ------------------------------------------------------------------ settings, one loader
def _node_count(res: Result) -> int:
    assert res.exit_code == 0, res.output
    return int(json.loads(res.stdout)["nodes"])


SOURCES = {
    "cef.toml": ({}, '[cef.store]\nurl = "kb1.db"\n'),
    "CEF_STORE__URL": ({"CEF_STORE__URL": "kb1.db"}, None),
    "CEF_DB": ({"CEF_DB": "kb1.db"}, None),
    "CEF_CONFIG": ({"CEF_CONFIG": "conf/other.toml"}, None),
}


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("command", ["query", "context", "stats", "export", "ask", "memory context"])
def test_every_command_honours_the_store_setting(
    source: str, command: str, kb1: Path, clean_env: Path
) -> None:
    env, toml = SOURCES[source]
    if toml:
        (clean_env / "cef.toml").write_text(toml)
    if source == "CEF_CONFIG":
        (clean_env / "conf").mkdir()
        (clean_env / "conf" / "other.toml").write_text(f'[cef.store]\nurl = "{kb1}"\n')
    res = run(*read_args(command), env=env)
    assert res.exit_code == 0, res.output
    if command == "stats":
        assert json.loads(res.stdout)["nodes"] == len(clinical_batch().nodes)
    elif command == "export":
        assert len((clean_env / "out.jsonl").read_text().splitlines()) > len(clinical_batch().nodes)
    else:
        assert "warfarin" in res.stdout.lower()
    assert not (clean_env / "cef.db").exists()


@pytest.mark.parametrize("how", ["env", "toml"])
@pytest.mark.parametrize("command", ["query", "context", "ask", "memory context", "ingest"])
def test_every_command_honours_the_embedder_setting(
    how: str, command: str, kb1: Path, clean_env: Path
) -> None:
    """A bogus provider must fail each command that embeds: the proof that it read the setting."""
    env = {"CEF_EMBEDDER": "bogus"} if how == "env" else {}
    if how == "toml":
        (clean_env / "cef.toml").write_text('[cef.embedder]\nprovider = "bogus"\n')
    args = READ_COMMANDS.get(command) or ["ingest", str(CLINICAL), "--no-extract", "--no-progress"]
    res = run(*args, "--db", str(kb1), env=env)
    assert res.exit_code == 2, res.output
    assert "unknown embedding provider 'bogus'" in res.stderr
    fixed = run(*args, "--db", str(kb1), "--embedder", "none", env=env)  # the option wins
    assert fixed.exit_code == 0, fixed.output


def test_precedence_and_sources_are_shown_by_cef_config(clean_env: Path) -> None:
    (clean_env / "cef.toml").write_text(
        '[cef.store]\nurl = "file.db"\n[cef.embedder]\nprovider = "none"\n[cef.server]\nport = 9001\nmax_depth = 4\n'
    )
    env = {"CEF_STORE__URL": "env.db", "CEF_PORT": "9002", "CEF_GRAPH__PASSWORD": "s3cret-pw"}
    res = run("config", "--json", env=env)
    assert res.exit_code == 0, res.output
    rows = {r["key"]: (r["value"], r["source"]) for r in json.loads(res.stdout)}
    assert rows["store.url"] == ("env.db", "$CEF_STORE__URL")
    assert rows["embedder.provider"] == ("none", "cef.toml")
    assert rows["server.port"] == (9002, "$CEF_PORT")
    assert rows["server.max_depth"] == (4, "cef.toml")
    assert rows["server.max_limit"] == (100, "default")
    assert rows["graph.password"] == ("********", "$CEF_GRAPH__PASSWORD") and "s3cret" not in res.stdout
    flagged = json.loads(run("config", "--json", "--db", "flag.db", env=env).stdout)
    assert {r["key"]: (r["value"], r["source"]) for r in flagged}["store.url"] == ("flag.db", "--db")
    explicit = run("--config", "nope.toml", "stats")
    assert (
        explicit.exit_code == 2 and "'nope.toml'" in explicit.stderr and "does not exist" in explicit.stderr
    )
    bad = run("config", env={"CEF_PORT": "seventy"})
    assert bad.exit_code == 2 and "port" in bad.stderr and "Traceback" not in bad.output


def test_load_config_reports_sources(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env / "cef.toml").write_text('store = "short.db"\n[vectors]\nbackend = "memory"\n')
    monkeypatch.setenv("CEF_EMBEDDER", "none")
    cfg = load_config(flags={"tokenizer": "--tokenizer"}, tokenizer={"name": "cl100k"})
    assert cfg.store.url == "short.db" and cfg.sources["store.url"] == "cef.toml"
    assert cfg.sources["vectors.backend"] == "cef.toml" and cfg.sources["vectors.url"] == "default"
    assert cfg.sources["embedder.provider"] == "$CEF_EMBEDDER"
    assert cfg.sources["tokenizer.name"] == "--tokenizer"


# ------------------------------------------------------------------ the servers read the same settings
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_serve_http_honours_cef_toml_and_env(kb1: Path, clean_env: Path) -> None:
    port = _free_port()
    (clean_env / "cef.toml").write_text(f'[cef.store]\nurl = "kb1.db"\n[cef.server]\nport = {port}\n')
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("CEF_")}
    env["CEF_EMBEDDER"] = "none"
    log = clean_env / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen([CEF, "serve", "http"], cwd=clean_env, env=env, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).json()
                if health.get("status") == "ready":
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert health["loaded"]["embedder"] == "none"
        schema = httpx.get(f"http://127.0.0.1:{port}/api/v1/schema", timeout=30).json()
        assert sum(t["count"] for t in schema["node_types"]) == len(clinical_batch().nodes)
        assert not (clean_env / "cef.db").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.slow
def test_serve_mcp_honours_cef_toml(kb1: Path, clean_env: Path) -> None:
    (clean_env / "cef.toml").write_text('[cef.store]\nurl = "kb1.db"\n[cef.embedder]\nprovider = "none"\n')
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("CEF_")}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "get_graph_schema", "arguments": {}}},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [CEF, "serve", "mcp"],
        cwd=clean_env,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        answers: dict[int, dict[str, object]] = {}
        for msg in messages:
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()
            if "id" in msg:
                while int(msg["id"]) not in answers:  # type: ignore[call-overload]
                    line = proc.stdout.readline()
                    assert line, "the MCP server closed its output"
                    reply = json.loads(line)
                    if "id" in reply:
                        answers[int(reply["id"])] = reply
        result = answers[2]["result"]
        assert isinstance(result, dict) and not result.get("isError"), result
        counts = result["structuredContent"]["node_types"]
        assert sum(t["count"] for t in counts) == len(clinical_batch().nodes)
        assert not (clean_env / "cef.db").exists()
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=20)
        proc.stdout.close()
