"""The explorer's routes through a real HTTP server: the page and its files, explore, neighbours, chunks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

import cef
from cef.server.http import create_app
from cef.server.settings import ServerSettings
from tests.integration.test_http_api import READ_KEY, WRITE_KEY, LiveServer, error

QUESTION = "Which drugs interact with the medication John Miller takes?"


@pytest.fixture
def api(clinical_kb: cef.KnowledgeBase) -> Iterator[Callable[..., httpx.Client]]:
    servers: list[LiveServer] = []
    clients: list[httpx.Client] = []

    def start(**settings: Any) -> httpx.Client:
        server = LiveServer(create_app(clinical_kb, ServerSettings(**settings)))
        servers.append(server)
        clients.append(httpx.Client(base_url=server.url, timeout=30))
        return clients[-1]

    yield start
    for c in clients:
        c.close()
    for s in servers:
        s.close()


def test_the_page_and_its_files_are_served_without_a_key(api: Callable[..., httpx.Client]) -> None:
    client = api(api_keys={READ_KEY: "read"})
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/explorer/vendor/cytoscape.min.js" in page.text and "/explorer/explorer.js" in page.text
    for path in ("/explorer/explorer.js", "/explorer/graph.js", "/explorer/explorer.css"):
        assert client.get(path).status_code == 200, path
    lib = client.get("/explorer/vendor/cytoscape.min.js")
    assert lib.status_code == 200 and len(lib.content) > 100_000
    assert "MIT" in client.get(
        "/explorer/vendor/cytoscape.LICENSE"
    ).text or "Permission is hereby granted" in (client.get("/explorer/vendor/cytoscape.LICENSE").text)
    assert client.get("/explorer/nothing-here.js").status_code == 404
    # the data is not public
    error(client.get("/api/v1/nodes/pat-john/neighbors"), 401, "unauthorized")
    assert "/" not in client.get("/openapi.json").json()["paths"]


def test_explore_returns_the_result_and_the_subgraph_behind_it(api: Callable[..., httpx.Client]) -> None:
    client = api()
    r = client.post("/api/v1/explore", json={"query": QUESTION, "strategy": "paths", "top_k": 5})
    assert r.status_code == 200, r.text
    data = r.json()
    result, graph = data["result"], data["graph"]
    assert [n["node"]["id"] for n in result["nodes"]][:2] == ["med-ibuprofen", "med-amiodarone"]
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert "anchor" in nodes["pat-john"]["roles"]
    assert {"med-ibuprofen", "med-amiodarone"} <= {i for i, n in nodes.items() if "answer" in n["roles"]}
    assert nodes["med-ibuprofen"]["rank"] == 1
    relations = {(e["source"], e["relation"], e["target"]) for e in graph["edges"]}
    assert ("pat-john", "PRESCRIBED", "med-warfarin") in relations
    assert ("med-warfarin", "INTERACTS_WITH", "med-ibuprofen") in relations
    assert len({e["id"] for e in graph["edges"]}) == len(graph["edges"])  # each edge drawn once
    # every ranked chunk is drawn, linked to its node
    for hit in result["results"]:
        chunk = hit["chunk"]
        assert "chunk" in nodes[chunk["id"]]["roles"]
        if chunk["node_id"]:
            assert (chunk["node_id"], "HAS_CHUNK", chunk["id"]) in relations
    assert all(e["source"] in nodes and e["target"] in nodes for e in graph["edges"])
    assert any("INTERACTS_WITH" in p for p in graph["paths"])


def test_explore_applies_the_server_limits(api: Callable[..., httpx.Client]) -> None:
    client = api(max_depth=2)
    r = client.post("/api/v1/explore", json={"query": QUESTION, "traversal": {"depth": 3}})
    assert "traversal.depth" in error(r, 422, "validation_error")
    error(client.post("/api/v1/explore", json={"query": ""}), 422, "validation_error")


def test_neighbours_of_a_node(api: Callable[..., httpx.Client]) -> None:
    client = api()
    view = client.get("/api/v1/nodes/pat-john/neighbors").json()
    nodes = {n["id"]: n for n in view["nodes"]}
    assert nodes["pat-john"]["roles"] == ["center"]
    assert nodes["pat-john"]["properties"]["age"] == 67
    assert {"med-warfarin", "doc-chen", "cond-afib"} <= set(nodes)
    walked = [e for e in view["edges"] if e["kind"] == "edge"]
    assert walked and all("pat-john" in (e["source"], e["target"]) for e in walked)
    # edges between the neighbours are drawn too, as links
    links = {(e["source"], e["relation"], e["target"]) for e in view["edges"] if e["kind"] == "link"}
    assert ("med-warfarin", "TREATS", "cond-afib") in links
    assert all(e["source"] in nodes and e["target"] in nodes for e in view["edges"])
    assert nodes["pat-john"]["chunks"] >= 1
    deeper = client.get("/api/v1/nodes/pat-john/neighbors", params={"depth": 2}).json()
    assert len(deeper["nodes"]) > len(view["nodes"])
    only = client.get("/api/v1/nodes/pat-john/neighbors", params={"relation": "PRESCRIBED"}).json()
    assert {n["id"] for n in only["nodes"]} == {"pat-john", "med-warfarin"}
    small = client.get("/api/v1/nodes/pat-john/neighbors", params={"depth": 3, "limit": 3}).json()
    assert len(small["nodes"]) <= 3 and small["truncated"] is True


def test_neighbours_and_chunks_errors_are_4xx(api: Callable[..., httpx.Client]) -> None:
    client = api(max_depth=2)
    assert "no-such-node" in error(client.get("/api/v1/nodes/no-such-node/neighbors"), 404, "not_found")
    assert "no-such-node" in error(client.get("/api/v1/nodes/no-such-node/chunks"), 404, "not_found")
    deep = client.get("/api/v1/nodes/pat-john/neighbors", params={"depth": 3})
    assert deep.status_code == 200 and "(depth 2)" in deep.json()["title"]  # the server's max_depth
    error(client.get("/api/v1/nodes/pat-john/neighbors", params={"depth": 0}), 422, "validation_error")
    bad = client.get("/api/v1/nodes/pat-john/neighbors", params={"relation": "NOPE"})
    assert "PRESCRIBED" in error(bad, 409, "unknown_relation_type")  # the message lists the known ones


def test_chunks_of_a_node(api: Callable[..., httpx.Client]) -> None:
    client = api(api_keys={READ_KEY: "read", WRITE_KEY: "write"})
    r = client.get("/api/v1/nodes/pat-john/chunks", headers={"X-API-Key": READ_KEY})
    assert r.status_code == 200
    chunks = r.json()
    assert chunks and all(c["node_id"] == "pat-john" for c in chunks)
    one = client.get("/api/v1/nodes/pat-john/chunks", params={"limit": 1}, headers={"X-API-Key": READ_KEY})
    assert len(one.json()) == 1
    assert (
        client.get("/api/v1/nodes/med-amiodarone/chunks", headers={"X-API-Key": WRITE_KEY}).status_code == 200
    )


def test_edges_among_nodes(clinical_kb: cef.KnowledgeBase) -> None:
    found = {
        (e.source, e.relation_type, e.target)
        for e in clinical_kb.edges_among(["pat-john", "med-warfarin", "cond-afib"])
    }
    assert found == {
        ("pat-john", "PRESCRIBED", "med-warfarin"),
        ("pat-john", "HAS_CONDITION", "cond-afib"),
        ("med-warfarin", "TREATS", "cond-afib"),
    }
    assert clinical_kb.edges_among(["pat-john"]) == []
    assert clinical_kb.edges_among(["pat-john", "no-such-node"]) == []
    assert len(clinical_kb.edges_among(["pat-john", "med-warfarin", "cond-afib"], limit=1)) == 1
