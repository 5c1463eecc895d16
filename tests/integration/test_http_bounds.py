"""The REST API's bounds: no request it can be sent stalls, recurses, or is judged before its key.

Each test here reproduces a defect a reliability probe found (it failed before the fix): nesting
500 deep was a 500 ``RecursionError``; a keyless write got a 422 naming the schema instead of 401;
10,000 targets ran 95 s past a 5 s limit; NaN vectors were stored and ranked; a wrong dimension was
422; a failed warm-up still reported ready.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import cef
from cef.server.http import create_app
from cef.server.service import CefService
from cef.server.settings import ServerSettings

WRITE = "bounds-writer-001"


class Raw(str):
    """JSON text sent as it is (Python's encoder cannot write what nests thousands deep)."""


def nested(depth: int) -> Raw:
    return Raw('{"a": ' * depth + "{}" + "}" * depth)


@pytest.fixture
def client(clinical_kb: cef.KnowledgeBase) -> Any:
    with TestClient(create_app(clinical_kb, ServerSettings(api_keys=f"{WRITE}:write"))) as c:
        yield c


def encode(body: Any) -> str:
    if isinstance(body, Raw):
        return body
    if isinstance(body, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {encode(v)}" for k, v in body.items()) + "}"
    return json.dumps(body)


def post(client: Any, path: str, body: Any, key: str | None = WRITE) -> Any:
    headers = {"content-type": "application/json", **({"X-API-Key": key} if key else {})}
    return client.post(path, content=encode(body), headers=headers)


@pytest.mark.parametrize("depth", [40, 500, 5000])
def test_deep_nesting_is_422_never_a_recursion(client: Any, depth: int) -> None:
    for path, body in (
        ("/api/v1/nodes", {"id": "deep", "label": "X", "properties": nested(depth)}),
        ("/api/v1/chunks", {"content": "x", "metadata": nested(depth)}),
        ("/api/v1/retrieve", {"query": "x", "options": nested(depth)}),
    ):
        r = post(client, path, body)
        assert r.status_code == 422, (path, r.status_code, r.text[:300])
        assert "nests deeper" in r.json()["message"] or "nests deeper" in r.text
    assert client.get("/api/v1/nodes/deep", headers={"X-API-Key": WRITE}).status_code == 404


def test_the_key_is_checked_before_the_body(client: Any) -> None:
    for body in ({"id": 5}, {"id": "x", "label": "X", "properties": nested(500)}, "not an object"):
        for key in (None, "unknown-key-0001"):
            r = post(client, "/api/v1/nodes", body, key)
            assert r.status_code == 401, (body, key, r.text)
            assert "label" not in r.text and "properties" not in r.text  # nothing of the schema


def test_list_sizes_are_bounded(client: Any) -> None:
    targets = [{"description": f"t{i}"} for i in range(10_000)]
    r = post(client, "/api/v1/retrieve", {"query": "warfarin", "targets": targets})
    assert r.status_code == 422 and "targets" in r.text
    r = post(client, "/api/v1/retrieve", {"query": "x", "traversal": {"relation_types": ["TREATS"] * 201}})
    assert r.status_code == 422
    ok = post(client, "/api/v1/retrieve", {"query": "warfarin", "targets": targets[:50], "top_k": 3})
    assert ok.status_code == 200


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e308"])
def test_vectors_must_be_finite(tmp_path: Path, embedder: Any, bad: str) -> None:
    with (
        cef.open(tmp_path / "kb.db", embedder=embedder) as kb,
        TestClient(create_app(kb, ServerSettings(api_keys=f"{WRITE}:write"))) as c,
    ):
        raw = (
            '{"id": "v1", "content": "vector test", "embedding": [' + ", ".join([bad] + ["0.1"] * 383) + "]}"
        )
        r = c.post(
            "/api/v1/chunks", content=raw, headers={"content-type": "application/json", "X-API-Key": WRITE}
        )
        assert r.status_code == 422, r.text
        assert kb.get_chunk("v1") is None
        wrong = post(c, "/api/v1/chunks", {"id": "v2", "content": "x", "embedding": [0.1] * 10})
        assert wrong.status_code == 409 and "384" in wrong.json()["message"]
        assert kb.get_chunk("v2") is None
        right = post(c, "/api/v1/chunks", {"id": "v3", "content": "x", "embedding": [0.1] * 384})
        assert right.status_code == 201
        hits = post(c, "/api/v1/retrieve", {"query": "vector test", "strategy": "vector"}).json()["results"]
        assert all(h["score"] is not None for h in hits)
        schema = c.get("/openapi.json").json()["components"]["schemas"]["Chunk-Input"]
        assert "finite" in schema["properties"]["embedding"]["description"]


def test_a_failed_warm_up_never_reports_ready(clinical_kb: cef.KnowledgeBase) -> None:
    svc = CefService(clinical_kb, ServerSettings())

    def broken() -> dict[str, Any]:
        raise RuntimeError("the model file is unreadable")

    svc._load = broken  # type: ignore[method-assign]
    with TestClient(create_app(clinical_kb, ServerSettings(), service=svc)) as c:
        for _ in range(200):
            health = c.get("/health")
            if health.json()["status"] != "starting":
                break
        assert health.status_code == 503
        assert health.json()["status"] == "failed" and "unreadable" in health.json()["loaded"]["error"]
        assert c.post("/api/v1/search", json={"query": "warfarin"}).status_code == 200  # reads still answer


def test_every_strategy_is_bounded_by_the_servers_time_limit_on_every_door(
    clinical_kb: cef.KnowledgeBase,
) -> None:
    """``strategy=paths`` (and every other) runs under the graph time limit: a REST or MCP query whose graph
    work outlasts it is answered by vector search and says so (it used to escape the limit)."""
    import time as _time

    import anyio

    from cef import SearchStrategy
    from cef.retrieve.search import hybrid_search
    from cef.retrieve.strategies import StrategyRegistry

    def slow(qc: Any) -> Any:  # graph work that checks its deadline as stages do, for at most 30 s
        until = _time.perf_counter() + 30
        while _time.perf_counter() < until:
            _time.sleep(0.02)
            qc.check_deadline("slow paths")
        return hybrid_search(qc)

    settings = ServerSettings(api_keys=f"{WRITE}:write", graph_timeout_ms=300, cache_ttl_seconds=0)
    svc = CefService(clinical_kb, settings)
    built_in = StrategyRegistry.default()
    for strategy in (SearchStrategy.PATHS, SearchStrategy.PATTERN, SearchStrategy.PPR):
        clinical_kb.strategies.register(strategy, slow, [strategy, SearchStrategy.BM25], graph=False)
        try:
            with TestClient(create_app(clinical_kb, settings, service=svc)) as c:
                r = post(c, "/api/v1/retrieve", {"query": "warfarin", "strategy": strategy.value})
                assert r.status_code == 200 and r.json()["metadata"].get("timed_out") is True, r.text[:300]
            tool = anyio.run(
                lambda s=strategy: svc.call_tool(
                    "retrieve_knowledge", {"query": "warfarin", "strategy": s.value}, writable=False
                )
            )
            assert tool.metadata.get("timed_out") is True  # type: ignore[attr-defined]
        finally:
            fn = built_in.function(strategy)
            assert fn is not None
            clinical_kb.strategies.register(
                strategy, fn, built_in.chain(strategy), graph=False, stages=built_in.stages(strategy)
            )


def test_a_read_key_on_every_write_route_is_403_before_its_body(clinical_kb: cef.KnowledgeBase) -> None:
    """Every route the OpenAPI spec lists that a read key may not use answers 403 to a read key,
    even with a body that is not valid: the key is judged before the body (it was a 422 first)."""
    reader = "bounds-reader-01"
    settings = ServerSettings(api_keys=f"{WRITE}:write,{reader}:read")
    with TestClient(create_app(clinical_kb, settings)) as c:
        spec = c.get("/openapi.json", headers={"X-API-Key": reader}).json()
        writes = [
            (
                method.upper(),
                path.replace("{node_id}", "pat-john").replace("{edge_id}", "e1").replace("{chunk_id}", "c1"),
            )
            for path, ops in spec["paths"].items()
            for method in ops
            if method in ("post", "patch", "delete")
            and path.rsplit("/", 1)[-1] not in {"search", "retrieve", "context", "answer", "explore"}
        ]
        assert len(writes) == 9, writes  # POST, PATCH and DELETE of nodes, edges and chunks
        for method, url in writes:
            r = c.request(method, url, content="[[[ not json", headers={"X-API-Key": reader})
            assert r.status_code == 403, (method, url, r.status_code, r.text)
        assert post(c, "/api/v1/search", {"query": "warfarin"}, key=reader).status_code == 200
