"""The REST API through a real HTTP server (uvicorn on a free loopback port), driven with httpx."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pytest
import uvicorn

import cef
from cef import Chunk
from cef.server.http import create_app
from cef.server.service import load_context_support
from cef.server.settings import ServerSettings
from tests.unit.server.test_service import slow_graph_exploration

READ_KEY = "reader-key-0123"
WRITE_KEY = "writer-key-0123"
CEF = str(Path(sys.executable).parent / "cef")


class LiveServer:
    """uvicorn serving ``app`` in a thread on 127.0.0.1 and a free port."""

    def __init__(self, app: Any) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


Serve = Callable[..., httpx.Client]


@pytest.fixture
def serve(clinical_kb: cef.KnowledgeBase) -> Iterator[Serve]:
    """serve(**settings) -> an httpx client for the REST API over the clinical example."""
    servers: list[LiveServer] = []
    clients: list[httpx.Client] = []

    def start(kb: cef.KnowledgeBase | None = None, **settings: Any) -> httpx.Client:
        server = LiveServer(create_app(kb or clinical_kb, ServerSettings(**settings)))
        servers.append(server)
        client = httpx.Client(base_url=server.url, timeout=30)
        clients.append(client)
        return client

    yield start
    for c in clients:
        c.close()
    for s in servers:
        s.close()


def error(r: httpx.Response, status: int, kind: str) -> str:
    """Assert a JSON error of this status and kind; return its message."""
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    data = r.json()
    assert data["error"] == kind, data
    assert isinstance(data["message"], str) and data["message"]
    return str(data["message"])


KEYS = {READ_KEY: "read", WRITE_KEY: "write"}
NODE = {"id": "pat-new", "label": "Patient", "properties": {"name": "Nina Berg"}}


def test_auth_scopes(serve: Serve) -> None:
    api = serve(api_keys=KEYS)
    assert api.get("/health").json()["auth"] is True  # liveness needs no key
    assert "/api/v1/search" in api.get("/openapi.json").json()["paths"]
    search = {"query": "warfarin"}
    assert "missing API key" in error(api.post("/api/v1/search", json=search), 401, "unauthorized")
    assert "unknown API key" in error(
        api.post("/api/v1/search", json=search, headers={"X-API-Key": "reader-key-0124"}), 401, "unauthorized"
    )
    read = {"X-API-Key": READ_KEY}
    assert api.post("/api/v1/search", json=search, headers=read).status_code == 200
    assert api.get("/api/v1/nodes/pat-john", headers=read).status_code == 200
    message = error(api.post("/api/v1/nodes", json=NODE, headers=read), 403, "forbidden")
    assert "write scope" in message
    error(api.delete("/api/v1/nodes/pat-john", headers=read), 403, "forbidden")
    assert api.get("/api/v1/nodes/pat-new", headers=read).status_code == 404  # nothing was written
    write = {"X-API-Key": WRITE_KEY}
    assert api.post("/api/v1/nodes", json=NODE, headers=write).status_code == 201
    assert api.post("/api/v1/search", json=search, headers=write).status_code == 200  # write implies read
    spec = api.get("/openapi.json").json()
    assert spec["components"]["securitySchemes"]["APIKeyHeader"]["name"] == "X-API-Key"


def test_limits_and_bad_requests_are_4xx_with_a_message(serve: Serve) -> None:
    api = serve(max_depth=2, max_query_length=50, max_limit=20)
    # the limits are in the OpenAPI schemas, and requests beyond them are refused
    spec = api.get("/openapi.json").json()["components"]["schemas"]
    search_schema = next(v for k, v in spec.items() if k.endswith("SearchMemoryInput"))
    assert search_schema["properties"]["limit"]["maximum"] == 20
    assert search_schema["properties"]["query"]["maxLength"] == 50
    msg = error(
        api.post("/api/v1/search", json={"query": "warfarin", "graph_depth": 3}), 422, "validation_error"
    )
    assert "body.graph_depth: Input should be less than or equal to 2" in msg
    msg = error(api.post("/api/v1/search", json={"query": "warfarin", "limit": 21}), 422, "validation_error")
    assert "body.limit" in msg
    error(api.post("/api/v1/search", json={"query": "warfarin", "limit": 0}), 422, "validation_error")
    msg = error(api.post("/api/v1/search", json={"query": "w" * 51}), 422, "validation_error")
    assert "at most 50 characters" in msg
    error(api.post("/api/v1/search", json={"query": ""}), 422, "validation_error")
    bad_json = api.post("/api/v1/search", content=b"{not json", headers={"content-type": "application/json"})
    error(bad_json, 422, "validation_error")
    deep = {"query": "x", "traversal": {"depth": 3}}
    assert "body.traversal.depth" in error(api.post("/api/v1/retrieve", json=deep), 422, "validation_error")
    error(api.post("/api/v1/retrieve", json={"query": "x", "top_k": 21}), 422, "validation_error")
    unknown = {"query": "x", "traversal": {"relation_types": ["NOPE"]}}
    assert "unknown relation type 'NOPE'" in error(
        api.post("/api/v1/retrieve", json=unknown), 409, "unknown_relation_type"
    )
    details = api.post("/api/v1/retrieve", json={"query": 5, "surprise": True}).json()["details"]
    assert {d["field"] for d in details} == {"body.query", "body.surprise"}
    error(api.get("/api/v1/nowhere"), 404, "not_found")
    error(api.put("/api/v1/search", json={}), 405, "method_not_allowed")


def test_search_and_retrieve(serve: Serve) -> None:
    api = serve()
    r = api.post("/api/v1/search", json={"query": "Which medications interact with warfarin?", "limit": 10})
    assert r.status_code == 200
    data = r.json()
    assert data["success"] and data["results_count"] == 10 and data["exploration_depth"] == 2
    summary = data["exploration_summary"]
    assert summary["graph_enabled"] and summary["anchors"][0]["node_id"] == "med-warfarin"
    assert summary["relationships_traversed"] > 0 and summary["chunks_combined"] >= 5
    assert any((h["path"] or "").startswith("Warfarin -[INTERACTS_WITH]-> ") for h in data["results"])
    assert {"Amiodarone", "Ibuprofen"} & {e["text"] for e in data["related_entities"]}
    assert data["suggested_queries"]
    seed_spelling = api.post(
        "/api/v1/search", json={"query": "warfarin", "exploration_depth": 0, "tags": "a,b"}
    )
    assert seed_spelling.json()["exploration_depth"] == 0

    q = {
        "query": "What does John have?",
        "targets": [{"description": "John Miller", "type_hint": "Patient"}],
        "traversal": {"relation_types": ["HAS_CONDITION"], "depth": 1},
        "top_k": 5,
    }
    result = api.post("/api/v1/retrieve", json=q).json()
    assert result["strategy"] == "auto"
    assert {n["id"] for n in result["reasoning_context"]["related_nodes"]} == {
        "cond-afib",
        "cond-osteoarthritis",
    }

    schema = api.get("/api/v1/schema").json()
    assert {"Patient", "Medication"} <= {n["label"] for n in schema["node_types"]}


def test_crud(serve: Serve) -> None:
    api = serve()
    assert api.post("/api/v1/nodes", json=NODE).status_code == 201
    assert "duplicate node id 'pat-new'" in error(api.post("/api/v1/nodes", json=NODE), 409, "duplicate_id")
    patched = api.patch("/api/v1/nodes/pat-new", json={"properties": {"age": 41}})
    assert patched.json()["properties"] == {"name": "Nina Berg", "age": 41}
    assert [n["id"] for n in api.get("/api/v1/nodes", params={"label": "Patient"}).json()].count(
        "pat-new"
    ) == 1

    edge = {"id": "e-new", "relation_type": "HAS_CONDITION", "source": "pat-new", "target": "cond-t2d"}
    assert api.post("/api/v1/edges", json=edge).status_code == 201
    assert api.patch("/api/v1/edges/e-new", json={"confidence": 0.5}).json()["confidence"] == 0.5
    assert api.get("/api/v1/edges/e-new").json()["source"] == "pat-new"
    bad_window = {"valid_from": "2024-01-01T00:00:00Z", "valid_to": "2020-01-01T00:00:00Z"}
    assert "before valid_from" in error(
        api.patch("/api/v1/edges/e-new", json=bad_window), 409, "inverted_window"
    )
    missing_end = {**edge, "id": "e-bad", "target": "nobody"}
    assert "'nobody'" in error(api.post("/api/v1/edges", json=missing_end), 409, "missing_node")
    # a window that is fine alone but inverted against the stored edge conflicts with its state
    assert api.patch("/api/v1/edges/e-new", json={"valid_from": "2024-01-01T00:00:00Z"}).status_code == 200
    early_end = {"valid_to": "2020-01-01T00:00:00Z"}
    assert "before valid_from" in error(api.patch("/api/v1/edges/e-new", json=early_end), 409, "conflict")

    chunk = {"id": "c-new", "content": "Nina Berg was diagnosed with type 2 diabetes.", "node_id": "pat-new"}
    assert api.post("/api/v1/chunks", json=chunk).status_code == 201
    renamed = api.patch("/api/v1/chunks/c-new", json={"content": "Nina Berg has well controlled diabetes."})
    assert renamed.json()["content"].endswith("well controlled diabetes.")
    assert api.get("/api/v1/chunks/c-new").json()["node_id"] == "pat-new"
    found = api.post(
        "/api/v1/search", json={"query": "well controlled diabetes", "enable_graph": False}
    ).json()
    assert found["results"][0]["chunk_id"] == "c-new"

    gone = api.delete("/api/v1/nodes/pat-new").json()
    assert (gone["nodes"], gone["edges"], gone["chunks"]) == (1, 1, 1)
    for path in ("/api/v1/nodes/pat-new", "/api/v1/edges/e-new", "/api/v1/chunks/c-new"):
        assert "does not exist" in error(api.get(path), 404, "not_found")
    error(api.delete("/api/v1/chunks/c-new"), 404, "not_found")
    error(api.patch("/api/v1/nodes/pat-new", json={}), 404, "not_found")


@pytest.mark.parametrize("record_id", ["%F0%90%8C%A7", "50%", "a/b", "\U00010327", "x y+z"])
def test_ids_with_url_characters_are_addressed_by_their_percent_encoding(
    serve: Serve, record_id: str
) -> None:
    """An id is stored as given; a path names it by its percent-encoding, so "%F0%90%8C%A7" and "𐌧" differ."""
    api = serve(api_keys=KEYS)
    auth = {"X-API-Key": WRITE_KEY}
    chunk = {"id": record_id, "content": "a note with an unusual id", "node_id": "doc-chen"}
    created = api.post("/api/v1/chunks", json=chunk, headers=auth)
    assert created.status_code == 201 and created.json()["id"] == record_id
    path = "/api/v1/chunks/" + quote(record_id, safe="")
    assert api.get(path, headers=auth).json()["id"] == record_id
    decoded = unquote(record_id)
    if decoded != record_id:  # the path the id reads as when sent unencoded names another record
        error(api.get("/api/v1/chunks/" + quote(decoded, safe=""), headers=auth), 404, "not_found")
    assert api.delete(path, headers=auth).status_code == 200
    error(api.get(path, headers=auth), 404, "not_found")


def test_node_ids_with_slashes_reach_every_node_route(serve: Serve) -> None:
    """``cef ingest notes/`` names documents "doc:sub/a.md": each node route takes such an id."""
    api = serve(api_keys=KEYS)
    auth = {"X-API-Key": WRITE_KEY}
    node = {"id": "doc:sub/a.md", "label": "Document", "properties": {"title": "a"}}
    assert api.post("/api/v1/nodes", json=node, headers=auth).status_code == 201
    edge = {"id": "e/1", "relation_type": "DESCRIBES", "source": "doc:sub/a.md", "target": "cond-t2d"}
    assert api.post("/api/v1/edges", json=edge, headers=auth).status_code == 201
    chunk = {"id": "doc:sub/a.md#0", "content": "Notes on type 2 diabetes.", "node_id": "doc:sub/a.md"}
    assert api.post("/api/v1/chunks", json=chunk, headers=auth).status_code == 201
    path = "/api/v1/nodes/" + quote("doc:sub/a.md", safe="")
    assert api.get(path, headers=auth).json()["id"] == "doc:sub/a.md"
    assert (
        api.patch(path, json={"properties": {"title": "b"}}, headers=auth).json()["properties"]["title"]
        == "b"
    )
    view = api.get(path + "/neighbors", headers=auth).json()
    assert {"doc:sub/a.md", "cond-t2d"} <= {n["id"] for n in view["nodes"]}, view
    assert [c["id"] for c in api.get(path + "/chunks", headers=auth).json()] == ["doc:sub/a.md#0"]
    assert api.get("/api/v1/edges/" + quote("e/1", safe=""), headers=auth).json()["source"] == "doc:sub/a.md"
    refused = api.post(path, json={}, headers=auth)
    error(refused, 405, "method_not_allowed")
    assert refused.headers["allow"] == "DELETE, GET, PATCH"
    assert api.delete(path, headers=auth).json()["nodes"] == 1
    error(api.get(path + "/neighbors", headers=auth), 404, "not_found")


def test_search_cache_is_invalidated_by_every_write(serve: Serve, clinical_kb: cef.KnowledgeBase) -> None:
    api = serve()
    body = {"query": "metformin kidney function", "enable_graph": False, "limit": 10}

    def search() -> dict[str, Any]:
        r = api.post("/api/v1/search", json=body)
        assert r.status_code == 200
        return r.json()

    def ids(data: dict[str, Any]) -> set[str]:
        return {h["chunk_id"] for h in data["results"]}

    assert search()["cached"] is False
    assert search()["cached"] is True

    chunk = {"id": "api-1", "content": "Metformin and kidney function: check eGFR yearly."}
    assert api.post("/api/v1/chunks", json=chunk).status_code == 201
    after_api = search()
    assert after_api["cached"] is False and "api-1" in ids(after_api)
    assert search()["cached"] is True

    clinical_kb.index_chunk(Chunk(id="lib-1", content="Metformin kidney function guidance from the library."))
    after_lib = search()
    assert after_lib["cached"] is False and "lib-1" in ids(after_lib)
    assert search()["cached"] is True

    path = str(clinical_kb.store.path)  # type: ignore[attr-defined]
    code = (
        "import sys, cef\n"
        "with cef.open(sys.argv[1], embedder=None) as kb:\n"
        "    kb.index_chunk(cef.Chunk(id='proc-1', content='Metformin kidney function note from another process.'))\n"
    )
    subprocess.run([sys.executable, "-c", code, path], check=True, timeout=60)
    after_proc = search()
    assert after_proc["cached"] is False and "proc-1" in ids(after_proc)


def test_graph_time_limit_falls_back_to_vector_search(serve: Serve, clinical_kb: cef.KnowledgeBase) -> None:
    api = serve(graph_timeout_ms=1000, cache_ttl_seconds=0)
    with slow_graph_exploration(clinical_kb, 2.5):  # a graph exploration that takes 2.5 s
        r = api.post("/api/v1/search", json={"query": "Which medications interact with warfarin?"})
        result = api.post("/api/v1/retrieve", json={"query": "warfarin interactions"}).json()
    assert r.status_code == 200
    summary = r.json()["exploration_summary"]
    assert summary["timed_out"] is True
    assert summary["strategy"] in ("vector", "bm25") and summary["fallback"] == summary["strategy"]
    assert "1000 ms time limit" in summary["fallbacks"][0]
    assert r.json()["results"]
    assert result["metadata"]["timed_out"] is True and result["strategy"] in ("vector", "bm25")

    normal = api.post("/api/v1/search", json={"query": "Which medications interact with warfarin?"}).json()
    assert normal["exploration_summary"]["timed_out"] is False
    assert normal["exploration_summary"]["strategy"] == "auto"


def test_context_endpoint(serve: Serve) -> None:
    api = serve()
    request = {"queries": ["warfarin interactions", "type 2 diabetes"], "token_budget": 400}
    r = api.post("/api/v1/context", json=request)
    if load_context_support() is None:
        error(r, 404, "not_found")
        assert api.get("/health").json()["provide_context"] is False
        return
    assert r.status_code == 200, r.text
    assert api.get("/health").json()["provide_context"] is True
    assert "/api/v1/context" in api.get("/openapi.json").json()["paths"]


@pytest.mark.slow
def test_semantic_search_with_the_real_model(clinical_embedded: cef.KnowledgeBase) -> None:
    # (not the `serve` fixture: clinical_kb and clinical_embedded share a file name in tmp_path)
    server = LiveServer(create_app(clinical_embedded, ServerSettings()))
    try:
        data = httpx.post(
            f"{server.url}/api/v1/search",
            json={"query": "blood thinner that raises bleeding risk", "enable_graph": False, "limit": 3},
            timeout=30,
        ).json()
    finally:
        server.close()
    assert data["exploration_summary"]["strategy"] == "vector"
    top = data["results"][0]
    assert top["vector_similarity"] is not None and top["vector_similarity"] > 0.3
    assert "arfarin" in top["chunk_text"] or "anticoagula" in top["chunk_text"].lower()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_cef_serve_http_reads_settings_from_the_environment(
    tmp_path: Path, clinical_kb: cef.KnowledgeBase
) -> None:
    port = free_port()
    env = {**os.environ, "CEF_API_KEYS": f"{READ_KEY}:read", "CEF_MAX_DEPTH": "1"}
    db = str(clinical_kb.store.path)  # type: ignore[attr-defined]
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [CEF, "serve", "http", "--db", db, "--embedder", "none", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=out,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        with httpx.Client(base_url=url, headers={"X-API-Key": READ_KEY}) as api:
            assert api.post("/api/v1/search", json={"query": "warfarin", "graph_depth": 1}).status_code == 200
            error(
                api.post("/api/v1/search", json={"query": "warfarin", "graph_depth": 2}),
                422,
                "validation_error",
            )
        error(httpx.post(f"{url}/api/v1/search", json={"query": "w"}), 401, "unauthorized")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "WARNING: no API keys" not in log.read_text()


def test_cef_serve_http_warns_when_open(tmp_path: Path) -> None:
    port = free_port()
    cef.open(tmp_path / "kb.db", embedder=None).close()  # serve reads an existing knowledge base
    env = {k: v for k, v in os.environ.items() if k != "CEF_API_KEYS"}
    proc = subprocess.Popen(
        [CEF, "serve", "http", "--db", str(tmp_path / "kb.db"), "--embedder", "none", "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert "WARNING: no API keys configured" in first
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_answer_route(serve: Serve) -> None:
    api = serve(llm="mock")
    r = api.post("/api/v1/answer", json={"question": "Which medications interact with warfarin?", "top_k": 3})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["answer"].startswith("[mock]") and len(data["sources"]) == 3
    # the mock quotes the passage sentence closest to the question and cites that passage
    sources = [s["id"] for s in data["sources"]]
    assert data["query"]["top_k"] == 3 and len(data["citations"]) == 1 and data["citations"][0] in sources
    assert data["citations"][0] in data["answer"]
    bad = api.post("/api/v1/answer", json={"question": "x", "top_k": 500})
    assert bad.status_code == 422, bad.text
    without = serve().post("/api/v1/answer", json={"question": "warfarin"}).json()
    assert without["answer"] is None and without["context"]
