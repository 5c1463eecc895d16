"""Schema discovery for keys bound to scopes: tenant A's key cannot learn a label, property name, relation
type or count that exists only in tenant B (REST, the explorer's schema route, MCP over HTTP).

Two tenants share one knowledge base with the clinical example as shared (unscoped) data. Tenant B alone
has ``Invoice`` nodes (property ``iban``), the relation ``BILLS`` and ``Shipment`` nodes; both tenants
have ``Ledger`` nodes (A: 1, B: 3).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import cef
import tests.integration.test_http_api as http_api
from cef.model import Batch, Chunk, Edge, Node, RelationType
from cef.schema.discovery import discover_schema
from tests.conftest import clinical_batch
from tests.integration.test_http_api import Serve, error

serve = http_api.serve  # the live-server fixture

ADMIN = "admin-key-0123"
A_READER = "a-reader-0123"
AB_READER = "ab-reader-0123"
KEYS = {ADMIN: "write", A_READER: "read@tenant-a", AB_READER: "read@tenant-a|tenant-b"}
#: strings that exist only in tenant B's records: none may reach tenant A
B_ONLY = ("Invoice", "iban", "BILLS", "Shipment", "Acme Freight", "INV-0042")


def tenant_batch() -> Batch:
    a, b = "tenant-a", "tenant-b"
    return Batch(
        relation_types=[
            RelationType(name="BILLS", description="an invoice bills a shipment"),
            RelationType(name="FILED_UNDER"),
        ],
        nodes=[
            Node(id="doc-a", label="Ledger", properties={"name": "Ledger A", "pages": 3}, scope=a),
            *(Node(id=f"doc-b{i}", label="Ledger", properties={"name": f"Ledger B{i}"}, scope=b) for i in range(3)),
            Node(id="inv-b", label="Invoice", properties={"name": "INV-0042", "iban": "DE00"}, scope=b),
            Node(id="ship-b", label="Shipment", properties={"name": "Acme Freight"}, scope=b),
        ],
        edges=[
            Edge(id="e-a", relation_type="FILED_UNDER", source="doc-a", target="med-warfarin", scope=a),
            Edge(id="e-b", relation_type="FILED_UNDER", source="doc-b0", target="med-warfarin", scope=b),
            Edge(id="e-bill", relation_type="BILLS", source="inv-b", target="ship-b", scope=b),
        ],
        chunks=[
            Chunk(id="c-a", content="Zephyrine ledger of tenant a.", node_id="doc-a", scope=a),
            Chunk(id="c-b", content="Zephyrine invoice INV-0042 of tenant b.", node_id="inv-b", scope=b),
        ],
    )  # fmt: skip


def leaks(text: str) -> list[str]:
    return [s for s in B_ONLY if s in text]


def h(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


@pytest.fixture
def api(serve: Serve, clinical_kb: cef.KnowledgeBase) -> httpx.Client:
    clinical_kb.index_batch(tenant_batch())
    return serve(api_keys=KEYS, cache_ttl_seconds=0)


def counts(schema: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    return (
        {n["label"]: n["count"] for n in schema["node_types"]},
        {r["name"]: r["count"] for r in schema["relation_types"]},
    )


def test_rest_schema_of_a_scoped_key_shows_only_its_scopes_and_shared_records(api: httpx.Client) -> None:
    everything = api.get("/api/v1/schema", headers=h(ADMIN))
    labels, relations = counts(everything.json())
    assert labels["Ledger"] == 4 and labels["Invoice"] == 1 and relations["BILLS"] == 1
    assert len(leaks(everything.text)) >= 4  # the unscoped key sees tenant B's schema

    mine = api.get("/api/v1/schema", headers=h(A_READER))
    assert mine.status_code == 200
    assert leaks(mine.text) == [], mine.text
    labels, relations = counts(mine.json())
    assert labels["Ledger"] == 1  # tenant A's one Document, not B's three
    assert labels["Patient"] == counts(everything.json())[0]["Patient"]  # shared records count in full
    assert relations["FILED_UNDER"] == 1  # e-a only
    documents = next(n for n in mine.json()["node_types"] if n["label"] == "Ledger")
    assert set(documents["properties"]) == {"name", "pages"} and documents["examples"] == ["Ledger A"]
    describes = next(r for r in mine.json()["relation_types"] if r["name"] == "FILED_UNDER")
    assert describes["endpoints"] == [{"source": "Ledger", "target": "Medication", "count": 1}]


def test_a_key_over_every_scope_sees_the_whole_schema(
    api: httpx.Client, clinical_kb: cef.KnowledgeBase
) -> None:
    everything = counts(api.get("/api/v1/schema", headers=h(ADMIN)).json())
    both = counts(api.get("/api/v1/schema", headers=h(AB_READER)).json())
    assert both[0] == everything[0]
    used = {r.name for r in discover_schema(clinical_kb).relation_types if r.count}
    assert both[1] == {name: n for name, n in everything[1].items() if name in used}
    full = discover_schema(clinical_kb)
    scoped = discover_schema(clinical_kb, scopes=["tenant-a", "tenant-b"])
    assert {r.name: r.endpoints for r in scoped.relation_types} == {
        r.name: r.endpoints for r in full.relation_types if r.count
    }


def test_context_hints_and_patterns_do_not_reveal_the_other_tenant(api: httpx.Client) -> None:
    key = h(A_READER)
    pattern = {"pattern_id": "p", "start": {"label": "Invoice"}, "steps": [{"relation_type": "BILLS"}]}
    got = api.post("/api/v1/retrieve", json={"query": "zephyrine", "patterns": [pattern]}, headers=key)
    assert got.status_code == 200, got.text
    # tenant B's label and relation are "not in the graph" for tenant A, as a name nobody uses would be
    notes = " ".join(got.json()["metadata"]["notes"])
    assert "['Invoice'] not in the graph" in notes and "['BILLS'] not in the graph" in notes, notes
    assert set(leaks(got.text)) <= {"Invoice", "BILLS"} and "inv-b" not in got.text, got.text  # only the echo
    bogus = {"pattern_id": "q", "start": {"label": "Nothing"}, "steps": [{}]}
    got = api.post("/api/v1/retrieve", json={"query": "zephyrine", "patterns": [bogus]}, headers=key)
    assert got.status_code == 200 and leaks(got.text) == [], got.text
    walk = {"pattern_id": "w", "start": {"label": "Ledger"}, "steps": [{"relation_type": "FILED_UNDER"}]}
    got = api.post("/api/v1/retrieve", json={"query": "ledger", "patterns": [walk]}, headers=key).json()
    starts = {p["node_ids"][0] for p in got["reasoning_context"]["matched_paths"]}
    assert starts == {"doc-a"}  # the pattern walks tenant A's and shared records only
    admin = api.post(
        "/api/v1/retrieve", json={"query": "ledger", "patterns": [walk]}, headers=h(ADMIN)
    ).json()
    assert {p["node_ids"][0] for p in admin["reasoning_context"]["matched_paths"]} == {"doc-a", "doc-b0"}
    other = {**walk, "scope": "tenant-b"}
    error(
        api.post("/api/v1/retrieve", json={"query": "x", "patterns": [other]}, headers=key), 403, "forbidden"
    )


def test_retrieve_context_hints_name_only_visible_node_types(clinical_kb: cef.KnowledgeBase) -> None:
    from cef.errors import ValidationError
    from cef.server.service import CefService
    from cef.server.settings import ApiKey, ServerSettings

    clinical_kb.index_batch(tenant_batch())
    svc = CefService(clinical_kb, ServerSettings(cache_ttl_seconds=0), context=False)
    tenant_a, admin = ApiKey(access="read", scopes=("tenant-a",)), ApiKey(access="read")
    hinted = {"textQuery": "zephyrine", "graphHints": {"entityLabel": "Invoice", "entityProperty": "name",
                                                      "entityValue": "INV-0042"}}  # fmt: skip

    async def main() -> None:
        with pytest.raises(ValidationError) as refused:  # Invoice exists, but not for tenant A
            await svc.call_tool("retrieve_context", hinted, writable=False, grant=tenant_a)
        assert "Ledger" in str(refused.value) and "Shipment" not in str(refused.value)
        found = await svc.call_tool("retrieve_context", hinted, writable=False, grant=admin)
        assert "c-b" in {r.chunk_id for r in found.results}  # type: ignore[attr-defined]

    try:
        anyio.run(main)
    finally:
        svc.close()


# ------------------------------------------------------------------ MCP over streamable HTTP
CEF = str(Path(sys.executable).parent / "cef")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_mcp_schema_tool_and_tool_descriptions_are_scoped(tmp_path: Path) -> None:
    db = tmp_path / "tenants.db"
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(clinical_batch())
        kb.index_batch(tenant_batch())
    port = free_port()
    env = {**os.environ, "CEF_API_KEYS": ",".join(f"{k}:{v}" for k, v in KEYS.items())}
    log = tmp_path / "mcp.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [CEF, "serve", "mcp", "--db", str(db), "--embedder", "none", "--read-only",
             "--transport", "http", "--port", str(port)],
            env=env, stdout=out, stderr=out,
        )  # fmt: skip

    async def as_key(key: str) -> tuple[str, str, dict[str, Any]]:
        async with (
            create_mcp_http_client(headers=h(key)) as http,
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = json.dumps([t.model_dump(mode="json") for t in (await session.list_tools()).tools])
            result = await session.call_tool("get_graph_schema", {})
            assert not result.is_error, result.content
            text = result.content[0].text if isinstance(result.content[0], types.TextContent) else ""
            assert isinstance(result.structured_content, dict)
            return listed, text, result.structured_content

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        listed, text, schema = anyio.run(as_key, A_READER)
        assert leaks(listed) == [], leaks(listed)
        assert leaks(text) == [], text
        labels, relations = counts(schema)
        assert labels["Ledger"] == 1 and "Patient" in labels and "FILED_UNDER" in relations
        assert "Patient" in listed  # the descriptions still carry the (shared) schema
        listed, text, schema = anyio.run(as_key, ADMIN)
        assert {"Invoice", "BILLS"} <= set(leaks(listed)) and counts(schema)[0]["Ledger"] == 4
    except BaseException:
        print(log.read_text())
        raise
    finally:
        proc.terminate()
        proc.wait(timeout=10)
