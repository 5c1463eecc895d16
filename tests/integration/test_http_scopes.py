"""API keys bound to data scopes: a tenant's key neither reads nor writes outside its scopes, on every route."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import tests.integration.test_http_api as http_api
from cef.server.settings import ApiKey, ServerSettings, parse_api_keys
from tests.integration.test_http_api import Serve, error

serve = http_api.serve  # the live-server fixture

ADMIN = "admin-key-0123"
KEYS = {
    ADMIN: "write",
    "a-reader-0123": "read@tenant-a",
    "a-writer-0123": "write@tenant-a",
    "ab-reader-0123": "read@tenant-a|tenant-b",
}


def h(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


@pytest.fixture
def api(serve: Serve) -> httpx.Client:
    client = serve(api_keys=KEYS, cache_ttl_seconds=0)
    for tenant in ("a", "b"):
        scope = f"tenant-{tenant}"
        node = {
            "id": f"doc-{tenant}",
            "label": "Document",
            "properties": {"name": f"Ledger {tenant}"},
            "scope": scope,
        }
        assert client.post("/api/v1/nodes", json=node, headers=h(ADMIN)).status_code == 201
        chunk = {
            "id": f"chunk-{tenant}",
            "content": f"Zephyrine ledger of tenant {tenant}: the quarterly zephyrine balance.",
            "node_id": f"doc-{tenant}",
            "scope": scope,
        }
        assert client.post("/api/v1/chunks", json=chunk, headers=h(ADMIN)).status_code == 201
        edge = {"id": f"edge-{tenant}", "relation_type": "DESCRIBES", "source": f"doc-{tenant}",
                "target": "med-warfarin", "scope": scope}  # fmt: skip
        r = client.post("/api/v1/edges", json=edge, headers=h(ADMIN))
        assert r.status_code == 201, r.text
    return client


def chunk_ids(body: dict[str, Any]) -> set[str]:
    return {r["chunk_id"] for r in body["results"]}


def test_reads_by_id_outside_the_scopes_are_404(api: httpx.Client) -> None:
    key = h("a-reader-0123")
    assert api.get("/api/v1/nodes/doc-a", headers=key).status_code == 200
    assert api.get("/api/v1/nodes/med-warfarin", headers=key).status_code == 200  # shared (unscoped)
    for path in ("/api/v1/nodes/doc-b", "/api/v1/chunks/chunk-b", "/api/v1/edges/edge-b"):
        error(api.get(path, headers=key), 404, "not_found")
    assert api.get("/api/v1/chunks/chunk-a", headers=key).status_code == 200
    assert api.get("/api/v1/edges/edge-a", headers=key).status_code == 200
    listed = {n["id"] for n in api.get("/api/v1/nodes", params={"label": "Document"}, headers=key).json()}
    assert listed == {"doc-a"}
    assert api.get("/api/v1/nodes/doc-b", headers=h(ADMIN)).status_code == 200  # an unscoped key sees all


def test_search_retrieve_and_context_are_filtered(api: httpx.Client) -> None:
    key = h("a-reader-0123")
    admin = h(ADMIN)
    everything = api.post("/api/v1/search", json={"query": "zephyrine ledger balance"}, headers=admin).json()
    assert {"chunk-a", "chunk-b"} <= chunk_ids(everything)
    mine = api.post("/api/v1/search", json={"query": "zephyrine ledger balance"}, headers=key).json()
    assert "chunk-a" in chunk_ids(mine) and "chunk-b" not in chunk_ids(mine)
    error(
        api.post("/api/v1/search", json={"query": "zephyrine", "scope": "tenant-b"}, headers=key),
        403,
        "forbidden",
    )
    got = api.post(
        "/api/v1/retrieve", json={"query": "zephyrine ledger balance", "top_k": 10}, headers=key
    ).json()
    ids = {r["chunk"]["id"] for r in got["results"]}
    assert "chunk-a" in ids and "chunk-b" not in ids
    error(
        api.post("/api/v1/retrieve", json={"query": "zephyrine", "scope": "tenant-b"}, headers=key),
        403,
        "forbidden",
    )
    ctx = api.post("/api/v1/context", json={"queries": ["zephyrine ledger balance"]}, headers=key)
    assert ctx.status_code == 200 and "tenant a" in ctx.text and "tenant b" not in ctx.text
    error(
        api.post("/api/v1/context", json={"queries": ["x"], "scope": "tenant-b"}, headers=key),
        403,
        "forbidden",
    )
    multi = h("ab-reader-0123")
    msg = error(api.post("/api/v1/search", json={"query": "zephyrine"}, headers=multi), 403, "forbidden")
    assert "name one" in msg
    both = api.post(
        "/api/v1/search", json={"query": "zephyrine ledger", "scope": "tenant-b"}, headers=multi
    ).json()
    assert "chunk-b" in chunk_ids(both) and "chunk-a" not in chunk_ids(both)


def test_writes_stay_inside_the_scopes(api: httpx.Client) -> None:
    key = h("a-writer-0123")
    made = api.post("/api/v1/nodes", json={"id": "tenant-a:doc-a2", "label": "Document"}, headers=key)
    assert made.status_code == 201 and made.json()["scope"] == "tenant-a"
    # an id outside the key's namespace is refused whether or not it exists (no existence oracle)
    for ident in ("doc-a3", "doc-b", "tenant-b:doc-x"):
        msg = error(api.post("/api/v1/nodes", json={"id": ident, "label": "Document"}, headers=key), 422,
                    "validation_error")  # fmt: skip
        assert "tenant-a:" in msg
    node_b = {"id": "doc-x", "label": "Document", "scope": "tenant-b"}
    error(api.post("/api/v1/nodes", json=node_b, headers=key), 403, "forbidden")
    chunk_b = {"id": "c-x", "content": "x", "scope": "tenant-b"}
    error(api.post("/api/v1/chunks", json=chunk_b, headers=key), 403, "forbidden")
    error(api.patch("/api/v1/nodes/doc-b", json={"properties": {"x": 1}}, headers=key), 404, "not_found")
    error(api.delete("/api/v1/nodes/doc-b", headers=key), 404, "not_found")
    error(api.patch("/api/v1/chunks/chunk-b", json={"content": "mine"}, headers=key), 404, "not_found")
    error(api.delete("/api/v1/chunks/chunk-b", headers=key), 404, "not_found")
    error(api.patch("/api/v1/edges/edge-b", json={"confidence": 0.1}, headers=key), 404, "not_found")
    error(api.delete("/api/v1/edges/edge-b", headers=key), 404, "not_found")
    error(
        api.patch("/api/v1/nodes/med-warfarin", json={"properties": {"x": 1}}, headers=key), 403, "forbidden"
    )
    assert api.get("/api/v1/chunks/chunk-b", headers=h(ADMIN)).json()["content"].startswith("Zephyrine")
    assert api.patch("/api/v1/chunks/chunk-a", json={"content": "mine"}, headers=key).status_code == 200
    assert api.delete("/api/v1/edges/edge-a", headers=key).status_code == 200
    error(
        api.post("/api/v1/nodes", json={"id": "n-r", "label": "Document"}, headers=h("a-reader-0123")),
        403,
        "forbidden",
    )


def test_key_syntax() -> None:
    keys = parse_api_keys("plain-key-1:read, tenant-key-1:write@tenant-a|tenant-b")
    assert keys["plain-key-1"] == ApiKey(access="read")
    assert keys["tenant-key-1"] == ApiKey(access="write", scopes=("tenant-a", "tenant-b"))
    json_keys = parse_api_keys('{"k-json-0001": {"access": "read", "scopes": ["pharma:rep-7"]}}')
    assert json_keys["k-json-0001"].scopes == ("pharma:rep-7",)
    with pytest.raises(ValueError, match="read@scope1"):
        parse_api_keys("bad-key-0001:admin")
    with pytest.raises(ValueError, match="scopes"):
        ServerSettings(api_keys="bad-key-0001:read@")


def test_mcp_tools_apply_the_key_scopes(clinical_kb: Any) -> None:
    """The MCP server passes the caller's key to CefService.call_tool; every tool applies it."""
    import anyio

    from cef.errors import NotFoundError
    from cef.server.auth import ForbiddenError
    from cef.server.service import CefService

    svc = CefService(clinical_kb, ServerSettings(cache_ttl_seconds=0))
    admin, tenant_a = ApiKey(access="write"), ApiKey(access="write", scopes=("tenant-a",))

    async def main() -> None:
        for tenant in ("a", "b"):
            node = {"id": f"doc-{tenant}", "label": "Document", "scope": f"tenant-{tenant}"}
            await svc.call_tool("index_nodes", {"nodes": [node]}, writable=True, grant=admin)
            chunk = {"id": f"chunk-{tenant}", "content": f"Zephyrine ledger {tenant}", "node_id": f"doc-{tenant}",
                     "scope": f"tenant-{tenant}"}  # fmt: skip
            await svc.call_tool("index_chunks", {"chunks": [chunk]}, writable=True, grant=admin)
        found = await svc.call_tool(
            "search_memory", {"query": "zephyrine ledger"}, writable=True, grant=tenant_a
        )
        ids = {h.chunk_id for h in found.results}  # type: ignore[attr-defined]
        assert "chunk-a" in ids and "chunk-b" not in ids
        got = await svc.call_tool(
            "retrieve_knowledge", {"query": "zephyrine ledger"}, writable=True, grant=tenant_a
        )
        assert {r.chunk.id for r in got.results} == {"chunk-a"}  # type: ignore[attr-defined]
        ctx = await svc.call_tool(
            "retrieve_context", {"textQuery": "zephyrine ledger"}, writable=True, grant=tenant_a
        )
        assert {h.chunk_id for h in ctx.results} == {"chunk-a"}  # type: ignore[attr-defined]
        with pytest.raises(ForbiddenError):
            await svc.call_tool(
                "search_memory", {"query": "x", "scope": "tenant-b"}, writable=True, grant=tenant_a
            )
        with pytest.raises(ForbiddenError):
            bad = {"nodes": [{"id": "x", "label": "Document", "scope": "tenant-b"}]}
            await svc.call_tool("index_nodes", bad, writable=True, grant=tenant_a)
        with pytest.raises(NotFoundError):
            await svc.call_tool("delete_node", {"node_id": "doc-b"}, writable=True, grant=tenant_a)
        made = {"nodes": [{"id": "tenant-a:doc-a2", "label": "Document"}]}
        await svc.call_tool("index_nodes", made, writable=True, grant=tenant_a)
        node = clinical_kb.find_node("tenant-a:doc-a2")
        assert node is not None and node.scope == "tenant-a"

    anyio.run(main)
