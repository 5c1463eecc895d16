"""The MCP server as a subprocess, driven by the official MCP client over stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import cef
from cef import Node
from tests.conftest import clinical_batch

CEF = str(Path(sys.executable).parent / "cef")
TRANSPORTS = ["stdio", "http"]

pytestmark = pytest.mark.slow  # each test starts a server process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def clinical_db(tmp_path: Path) -> Path:
    path = tmp_path / "clinical.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    return path


class Client:
    """A connected ClientSession plus the notifications it received."""

    def __init__(self, session: ClientSession, inbox: list[Any], init: types.InitializeResult) -> None:
        self.session = session
        self.inbox = inbox
        self.init = init

    def tool_list_changes(self) -> int:
        return sum(isinstance(m, types.ToolListChangedNotification) for m in self.inbox)

    async def wait_for_change(self, count: int, timeout: float = 10.0) -> None:
        with anyio.fail_after(timeout):
            while self.tool_list_changes() < count:
                await anyio.sleep(0.02)

    async def call(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        return await self.session.call_tool(name, args)

    async def ok(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(name, args)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    async def descriptions(self) -> dict[str, str]:
        return {t.name: t.description or "" for t in (await self.session.list_tools()).tools}


@asynccontextmanager
async def connect(
    transport: str,
    db: Path,
    log: Path,
    *,
    writable: bool = False,
    env: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    args = [
        "serve",
        "mcp",
        "--db",
        str(db),
        "--embedder",
        "none",
        "--writable" if writable else "--read-only",
    ]
    env = {**os.environ, "CEF_SCHEMA_POLL_SECONDS": "0.2", **(env or {})}
    inbox: list[Any] = []

    async def collect(message: Any) -> None:
        inbox.append(message)

    with log.open("a") as errlog:
        if transport == "stdio":
            params = StdioServerParameters(command=CEF, args=args, env=env)
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=collect) as session,
            ):
                yield Client(session, inbox, await session.initialize())
            return
        port = free_port()
        proc = subprocess.Popen(
            [CEF, *args, "--transport", "http", "--port", str(port)], env=env, stdout=errlog, stderr=errlog
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    assert proc.poll() is None, log.read_text()
                    assert time.monotonic() < deadline, "the MCP HTTP server did not start"
                    await anyio.sleep(0.1)
            async with (
                create_mcp_http_client(headers=headers) as http,
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write),
                ClientSession(read, write, message_handler=collect) as session,
            ):
                yield Client(session, inbox, await session.initialize())
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture
def run(clinical_db: Path, tmp_path: Path) -> Iterator[Callable[..., None]]:
    """run(transport, test, writable=False): connect a client and run ``await test(client)``."""
    log = tmp_path / "server.log"

    def runner(
        transport: str, test: Callable[[Client], Awaitable[None]], *, writable: bool = False, **kw: Any
    ) -> None:
        async def main() -> None:
            async with connect(transport, clinical_db, log, writable=writable, **kw) as client:
                await test(client)

        try:
            anyio.run(main)
        except BaseException:
            print(log.read_text() if log.exists() else "(no server log)")
            raise

    yield runner


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tools_are_listed_with_the_live_schema(run: Callable[..., None], transport: str) -> None:
    async def test(c: Client) -> None:
        assert c.init.capabilities.tools is not None and c.init.capabilities.tools.list_changed
        tools = {t.name: t for t in (await c.session.list_tools()).tools}
        assert {"retrieve_knowledge", "retrieve_context", "search_memory", "get_graph_schema"} <= set(tools)
        assert not {"index_nodes", "index_edges", "index_chunks", "delete_node"} & set(tools)
        rk = tools["retrieve_knowledge"]
        assert "GRAPH SCHEMA" in (rk.description or "")
        assert "HAS_CONDITION [ASSOCIATION]: Patient → Condition" in (rk.description or "")
        assert '"type_hint": "Patient"' in (rk.description or "")  # a worked example from the data
        # the server's limits are in the schemas (default max_depth 3, max_limit 100)
        assert rk.input_schema["properties"]["traversal"]["properties"]["depth"]["maximum"] == 3
        assert rk.input_schema["properties"]["top_k"]["maximum"] == 100
        assert tools["retrieve_context"].input_schema["required"] == ["textQuery"]
        assert tools["get_graph_schema"].annotations is not None
        assert tools["get_graph_schema"].annotations.read_only_hint

    run(transport, test)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_read_tool_answers(run: Callable[..., None], transport: str) -> None:
    async def test(c: Client) -> None:
        rk = await c.ok(
            "retrieve_knowledge",
            {
                "query": "Which medications interact with warfarin?",
                "targets": [{"description": "Warfarin", "type_hint": "Medication"}],
                "traversal": {"relation_types": ["INTERACTS_WITH"], "depth": 1},
                "top_k": 5,
            },
        )
        found = {r["chunk"]["id"] for r in rk["results"]}
        assert {"drug-amiodarone", "drug-ibuprofen"} <= found
        assert rk["strategy"] == "auto" and rk["metadata"]["route"]["hints"] == ["targets", "relation_types"]
        paths = [r["explanation"]["path"] for r in rk["results"] if r["explanation"]["path"]]
        assert any(p["relation_types"] == ["INTERACTS_WITH"] for p in paths)

        rc = await c.ok(
            "retrieve_context",
            {
                "textQuery": "What conditions does John have?",
                "graphHints": {
                    "entityLabel": "Patient",
                    "entityProperty": "name",
                    "entityValue": "John Miller",
                    "traverseRelations": ["HAS_CONDITION"],
                    "depth": 1,
                },
            },
        )
        assert [a["node_id"] for a in rc["exploration_summary"]["anchors"]] == ["pat-john"]
        assert {e["text"] for e in rc["related_entities"]} == {"Atrial fibrillation", "Osteoarthritis"}

        sm = await c.ok("search_memory", {"query": "warfarin interactions", "limit": 3, "graph_depth": 1})
        assert sm["success"] and sm["results_count"] == 3 and sm["exploration_depth"] == 1
        assert set(sm) >= {"exploration_summary", "related_entities", "suggested_queries"}
        assert sm["suggested_queries"]

        schema = await c.ok("get_graph_schema", {})
        labels = {n["label"]: n for n in schema["node_types"]}
        assert labels["Patient"]["count"] == 3
        rel = {r["name"]: r for r in schema["relation_types"]}
        assert rel["TREATS"]["semantics"] == "ASSOCIATION"

        tools = await c.descriptions()
        if "provide_context" in tools:
            pc = await c.ok(
                "provide_context", {"queries": ["warfarin interactions", "diabetes"], "token_budget": 400}
            )
            assert pc, "provide_context returned nothing"

    run(transport, test)


def test_answer_question_uses_the_servers_llm(run: Callable[..., None]) -> None:
    async def test(c: Client) -> None:
        tools = await c.descriptions()
        assert "answer_question" in tools and "CEF_LLM" in tools["answer_question"]
        got = await c.ok(
            "answer_question", {"question": "Which medications interact with warfarin?", "top_k": 3}
        )
        assert got["answer"].startswith("[mock] ") and len(got["sources"]) == 3
        assert got["question"] == "Which medications interact with warfarin?"

    run("stdio", test, env={"CEF_LLM": "mock"})


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_mistakes_are_tool_errors_and_the_session_survives(run: Callable[..., None], transport: str) -> None:
    async def test(c: Client) -> None:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("retrieve_knowledge", {}, "query: Field required"),
            (
                "retrieve_knowledge",
                {"query": "x", "traversal": {"depth": 4}},
                "traversal.depth: Input should be less than or equal to 3",
            ),
            (
                "retrieve_knowledge",
                {"query": "x", "traversal": {"relation_types": ["NOPE"]}},
                "unknown relation type 'NOPE'",
            ),
            (
                "search_memory",
                {"query": "x", "limit": 0},
                "limit: Input should be greater than or equal to 1",
            ),
            (
                "retrieve_context",
                {"textQuery": "x", "graphHints": {"entityLabel": "Robot"}},
                "graphHints.entityProperty",
            ),
            ("index_nodes", {"nodes": [{"label": "X"}]}, "start the server with --writable"),
            ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
        ]
        for name, args, expected in cases:
            result = await c.call(name, args)
            assert result.is_error, (name, args)
            text = result.content[0].text if isinstance(result.content[0], types.TextContent) else ""
            assert expected in text, (name, text)
        assert (await c.ok("get_graph_schema", {}))["node_types"]

    run(transport, test)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_write_that_changes_the_schema_sends_list_changed(run: Callable[..., None], transport: str) -> None:
    async def test(c: Client) -> None:
        tools = await c.descriptions()
        assert "index_nodes" in tools and "Robot" not in tools["retrieve_knowledge"]

        await c.ok(
            "index_chunks",
            {"chunks": [{"id": "c1", "content": "more on warfarin", "node_id": "med-warfarin"}]},
        )
        await anyio.sleep(0.5)
        assert c.tool_list_changes() == 0  # chunks do not change the schema

        nodes = [{"id": "r2", "label": "Robot", "properties": {"name": "R2-D2", "model": "astromech"}}]
        done = await c.ok("index_nodes", {"nodes": nodes})
        assert done["nodes"] == 1
        await c.wait_for_change(1)
        tools = await c.descriptions()
        assert "- Robot: name, model" in tools["retrieve_knowledge"]
        assert "Robot" in tools["index_nodes"]

        await c.ok(
            "index_edges",
            {
                "relation_types": [{"name": "REPAIRS", "description": "a robot repairs a thing"}],
                "edges": [{"relation_type": "REPAIRS", "source": "r2", "target": "med-warfarin"}],
            },
        )
        await c.wait_for_change(2)
        assert "REPAIRS [ASSOCIATION]: Robot → Medication" in (await c.descriptions())["retrieve_knowledge"]

        gone = await c.ok("delete_node", {"node_id": "r2"})
        assert (gone["nodes"], gone["edges"]) == (1, 1)
        await c.wait_for_change(3)
        assert "Robot" not in (await c.descriptions())["retrieve_knowledge"]
        missing = await c.call("delete_node", {"node_id": "r2"})
        assert missing.is_error

    run(transport, test, writable=True)


def test_writes_by_another_process_are_noticed(run: Callable[..., None], clinical_db: Path) -> None:
    async def test(c: Client) -> None:
        def write() -> None:  # this test process is "another process" for the server
            with cef.open(clinical_db, embedder=None) as kb:
                kb.index_node(Node(id="lab-1", label="LabResult", properties={"name": "INR 3.2"}))

        await anyio.to_thread.run_sync(write)
        await c.wait_for_change(1)
        assert "LabResult" in (await c.descriptions())["retrieve_knowledge"]

    run("stdio", test)


def test_cef_tools_prints_what_the_server_lists(run: Callable[..., None], clinical_db: Path) -> None:
    printed = subprocess.run(
        [CEF, "tools", "--format", "mcp", "--db", str(clinical_db), "--writable"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    expected = json.loads(printed.stdout)

    async def test(c: Client) -> None:
        listed = [
            t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in (await c.session.list_tools()).tools
        ]
        assert [t["name"] for t in listed] == [t["name"] for t in expected]
        for got, want in zip(listed, expected, strict=True):
            assert got["description"] == want["description"]
            assert got["inputSchema"] == want["inputSchema"]
            assert got["annotations"] == want["annotations"]

    run("stdio", test, writable=True)


MCP_KEYS = {"CEF_API_KEYS": "mcp-reader-key:read,mcp-writer-key:write"}


def test_http_api_keys_guard_the_endpoint_and_the_write_tools(run: Callable[..., None]) -> None:
    async def as_reader(c: Client) -> None:
        assert (await c.ok("search_memory", {"query": "warfarin"}))["results"]
        denied = await c.call("index_nodes", {"nodes": [{"id": "x1", "label": "X"}]})
        assert denied.is_error
        text = denied.content[0].text if isinstance(denied.content[0], types.TextContent) else ""
        assert "write scope" in text

    async def as_writer(c: Client) -> None:
        assert (await c.ok("index_nodes", {"nodes": [{"id": "x1", "label": "X"}]}))["nodes"] == 1

    run("http", as_reader, writable=True, env=MCP_KEYS, headers={"X-API-Key": "mcp-reader-key"})
    run("http", as_writer, writable=True, env=MCP_KEYS, headers={"X-API-Key": "mcp-writer-key"})


def test_http_without_a_key_is_refused(tmp_path: Path, clinical_db: Path) -> None:
    port = free_port()
    env = {**os.environ, **MCP_KEYS}
    with (tmp_path / "server.log").open("w") as out:
        proc = subprocess.Popen(
            [CEF, "serve", "mcp", "--db", str(clinical_db), "--embedder", "none", "--transport", "http",
             "--port", str(port)],
            env=env, stdout=out, stderr=out,
        )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        assert r.status_code == 401
        assert r.json()["error"] == "unauthorized" and "X-API-Key" in r.json()["message"]
        wrong = httpx.post(url, json={}, headers={"X-API-Key": "mcp-reader-kez"}, timeout=5)
        assert wrong.status_code == 401 and wrong.json()["message"] == "unknown API key"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_modern_protocol_client_listens_for_tool_changes(
    transport: str, clinical_db: Path, tmp_path: Path
) -> None:
    """mcp.Client negotiates the 2026-07-28 protocol (server/discover) and subscribes with subscriptions/listen."""
    args = ["serve", "mcp", "--db", str(clinical_db), "--embedder", "none", "--writable"]
    proc: subprocess.Popen[bytes] | None = None
    if transport == "stdio":
        target: Any = StdioServerParameters(command=CEF, args=args, env=dict(os.environ))
    else:
        port = free_port()
        proc = subprocess.Popen(
            [CEF, *args, "--transport", "http", "--port", str(port)], stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        target = f"http://127.0.0.1:{port}/mcp"

    async def main() -> None:
        async with mcp.Client(target) as client:
            assert client.session.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as sub:
                assert sub.honored.tools_list_changed
                result = await client.call_tool("index_nodes", {"nodes": [{"id": "z1", "label": "Zebra"}]})
                assert not result.is_error
                with anyio.fail_after(10):
                    async for event in sub:
                        assert type(event).__name__ == "ToolsListChanged"
                        break
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "- Zebra" in (tools["retrieve_knowledge"].description or "")

    try:
        anyio.run(main)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
