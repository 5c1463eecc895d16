"""REST contracts: strict types, 413 before parsing, offline /docs, warm start (/health starting → ready)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

import cef
import tests.integration.test_http_api as http_api
from cef.errors import ValidationError
from cef.server.http import create_app
from cef.server.service import CefService
from cef.server.settings import ServerSettings
from cef.server.tools import parse_tool_arguments, tool_spec
from tests.integration.test_http_api import LiveServer, Serve, error

serve = http_api.serve  # the live-server fixture

NODE = {"id": "pat-strict", "label": "Patient", "properties": {"name": "Strict"}}


# ------------------------------------------------------------------ strict request models
@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("patch", "/api/v1/nodes/pat-john", {"merge": 0}, "body.merge"),
        ("patch", "/api/v1/chunks/drug-warfarin-interactions", {"merge": 1}, "body.merge"),
        ("patch", "/api/v1/chunks/drug-warfarin-interactions", {"unlink": "false"}, "body.unlink"),
        ("post", "/api/v1/context", {"queries": ["warfarin"], "as_of": 0}, "body.as_of"),
        ("post", "/api/v1/search", {"query": "warfarin", "limit": "5"}, "body.limit"),
        ("post", "/api/v1/search", {"query": "warfarin", "limit": 2.5}, "body.limit"),
        ("post", "/api/v1/search", {"query": "warfarin", "enable_graph": 0}, "body.enable_graph"),
        ("post", "/api/v1/retrieve", {"query": "warfarin", "top_k": True}, "body.top_k"),
        ("patch", "/api/v1/edges/e-missing", {"valid_from": 0}, "body.valid_from"),
    ],
)
def test_wrong_json_types_are_refused_not_coerced(
    serve: Serve, method: str, path: str, body: dict[str, Any], field: str
) -> None:
    api = serve()
    message = error(getattr(api, method)(path, json=body), 422, "validation_error")
    assert field in message, message


def test_json_native_values_are_still_accepted(serve: Serve) -> None:
    api = serve()
    ok = api.post("/api/v1/context", json={"queries": ["warfarin"], "as_of": "2024-01-01T00:00:00Z"})
    assert ok.status_code == 200, ok.text
    assert (
        api.post("/api/v1/search", json={"query": "warfarin", "limit": 3, "enable_graph": False}).status_code
        == 200
    )
    patched = api.patch("/api/v1/nodes/pat-john", json={"properties": {"x": 1}, "merge": True})
    assert patched.status_code == 200 and patched.json()["properties"]["x"] == 1
    # a stated precedence instead of a hidden cross-field rule: graph_depth wins over its alias
    both = api.post("/api/v1/search", json={"query": "warfarin", "graph_depth": 1, "exploration_depth": 2})
    assert both.status_code == 200, both.text
    assert both.json()["exploration_depth"] == 1
    schema = api.get("/openapi.json").json()["components"]["schemas"]
    alias = next(s for name, s in schema.items() if "exploration_depth" in s.get("properties", {}))
    assert "graph_depth is used" in alias["properties"]["exploration_depth"]["description"]
    big = api.post(
        "/api/v1/context",
        json={"queries": ["warfarin"], "token_budget": 500, "reserve_reasoning_tokens": 900},
    )
    assert big.status_code == 200, big.text


def test_mcp_tool_arguments_are_strict_too() -> None:
    settings = ServerSettings()
    spec = tool_spec("search_memory")
    assert spec is not None
    with pytest.raises(ValidationError, match="enable_graph"):
        parse_tool_arguments(spec, {"query": "warfarin", "enable_graph": 0}, settings)
    with pytest.raises(ValidationError, match="limit"):
        parse_tool_arguments(spec, {"query": "warfarin", "limit": "5"}, settings)
    parsed = parse_tool_arguments(spec, {"query": "warfarin", "limit": 5, "tags": "a, b"}, settings)
    assert parsed.tag_list == ["a", "b"]


# ------------------------------------------------------------------ body size
def test_an_oversize_body_gets_413_before_it_is_read(serve: Serve) -> None:
    api = serve(max_body_bytes=4096)
    big = b'{"query": "' + b"w" * 10_000 + b'"}'
    r = api.post("/api/v1/search", content=big, headers={"content-type": "application/json"})
    message = error(r, 413, "payload_too_large")
    assert "4096 bytes" in message and "CEF_MAX_BODY_BYTES" in message

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while it arrives
        yield b'{"query": "'
        for _ in range(20):
            yield b"w" * 1000
        yield b'"}'

    r = api.post("/api/v1/search", content=chunks(), headers={"content-type": "application/json"})
    error(r, 413, "payload_too_large")
    assert api.post("/api/v1/search", json={"query": "warfarin"}).status_code == 200


def test_a_50_mb_body_is_refused_without_being_sent_whole(serve: Serve) -> None:
    """The server answers 413 on the headers; the client never has to push 50 MB through."""
    api = serve()
    port = int(str(api.base_url).rsplit(":", 1)[1].rstrip("/"))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/v1/nodes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 52428800\r\n\r\n" + b"[" * 1000
        )
        reply = sock.recv(4096).decode(errors="replace")
    assert reply.startswith("HTTP/1.1 413"), reply[:200]


# ------------------------------------------------------------------ docs offline
def test_docs_work_offline(serve: Serve) -> None:
    api = serve()
    html = api.get("/docs")
    assert html.status_code == 200
    assert "/docs/assets/swagger-ui-bundle.js" in html.text and "/docs/assets/swagger-ui.css" in html.text
    assert "cdn." not in html.text and "https://" not in html.text.replace("https://swagger.io", "")
    js = api.get("/docs/assets/swagger-ui-bundle.js")
    assert js.status_code == 200 and len(js.content) > 500_000 and "javascript" in js.headers["content-type"]
    assert api.get("/docs/assets/swagger-ui.css").status_code == 200
    error(api.get("/docs/assets/..%2Fhttp.py"), 404, "not_found")
    paths = api.get("/openapi.json").json()["paths"]
    assert not any(p.startswith("/docs") for p in paths)


# ------------------------------------------------------------------ warm start
class SlowStart(CefService):
    """The real service, whose one-time loading takes as long as the test says."""

    release = threading.Event()

    def _load(self) -> dict[str, Any]:
        loaded = super()._load()
        assert self.release.wait(30)
        return loaded


def test_health_says_starting_until_warm_and_loading_never_counts_against_the_time_limit(
    clinical_kb: cef.KnowledgeBase,
) -> None:
    settings = ServerSettings(graph_timeout_ms=300, cache_ttl_seconds=0)
    SlowStart.release.clear()
    server = LiveServer(create_app(clinical_kb, settings, service=SlowStart(clinical_kb, settings)))
    try:
        with httpx.Client(base_url=server.url, timeout=60) as api:
            starting = api.get("/health")
            assert starting.status_code == 503 and starting.json()["status"] == "starting"
            answers: list[httpx.Response] = []
            first = threading.Thread(
                target=lambda: answers.append(api.post("/api/v1/search", json={"query": "warfarin"}))
            )
            first.start()
            time.sleep(1.0)  # the first search waits for the warm-up: longer than its 300 ms limit
            assert not answers
            SlowStart.release.set()
            first.join(30)
            ready = api.get("/health").json()
            assert ready["status"] == "ready" and ready["loaded"]["nodes"] > 0
            assert ready["loaded"]["embedder"] == "none" and ready["loaded"]["seconds"] >= 1.0
            body = answers[0].json()
            assert answers[0].status_code == 200 and not body["exploration_summary"]["timed_out"], body
    finally:
        server.close()


def test_warm_up_runs_once_for_concurrent_callers(clinical_kb: cef.KnowledgeBase) -> None:
    calls: list[int] = []

    class Counting(CefService):
        def _load(self) -> dict[str, Any]:
            calls.append(1)
            time.sleep(0.2)
            return super()._load()

    svc = Counting(clinical_kb, ServerSettings())

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(svc.ensure_ready)
        assert svc.ready

    anyio.run(main)
    assert calls == [1] and svc.loaded["chunks"] > 0
