"""Tenants cannot see, touch or guess each other: every read route, tool and Python read, asked by one
tenant with the other's names, aliases and ids, answers without a trace of the other tenant.

Two tenants share the clinical example (shared, unscoped records). Each writes a secret medication
(a name, an alias, content), an edge from it to Warfarin, an edge between two *shared* nodes (visible
only to its own scope), chunks on its node and on shared Warfarin, and ingested text (entities and
MENTIONS edges, so PPR applies). Then tenant A asks with tenant B's words everywhere, and no response
may hold any of B's ids, names, aliases or words.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef import Batch, Chunk, Edge, GraphQuery, Node, ResolutionTarget, SearchStrategy, TraversalHint
from cef.engine.access import Access, TenantView
from cef.ingest.parsers.base import ParseOptions
from cef.ingest.pipeline import ingest_sources
from cef.model import RelationType
from cef.server.http import create_app
from cef.server.settings import ServerSettings
from tests.integration.test_http_api import LiveServer

pytestmark = pytest.mark.slow

ADMIN = "admin-key-000001"
A_READ, A_WRITE, B_WRITE = "tenA-reader-001", "tenA-writer-001", "tenB-writer-001"
KEYS = f"{ADMIN}:write,{A_READ}:read@tenant-a,{A_WRITE}:write@tenant-a,{B_WRITE}:write@tenant-b"

#: per tenant: (scope, secret name, alias, a word only its text uses)
TENANTS = {
    "a": ("tenant-a", "Zorbulinex", "ZRB-12", "glimmerfold"),
    "b": ("tenant-b", "Quibbletonol", "QBX-77", "snarkwhistle"),
}
#: per tenant: a naming property value (a brand: one of the node's names, Node.value_names)
BRANDS = {"a": "Zorbalux", "b": "Quibblaze"}


def secrets_of(t: str) -> list[str]:
    """What must never appear in another tenant's responses (ids, names, aliases, brands, words)."""
    scope, name, alias, word = TENANTS[t]
    ids = [f"{scope}:secret", f"{scope}:e1", f"{scope}:e2", f"{scope}:c1", f"{scope}:c2"]
    return [*ids, name, alias, BRANDS[t], word]


def tenant_batch(t: str) -> Batch:
    scope, name, alias, word = TENANTS[t]
    return Batch(
        nodes=[
            Node(
                id=f"{scope}:secret",
                label="Medication",
                properties={"name": name, "aliases": [alias], "brand": BRANDS[t]},
                content=f"{name} ({alias}) is an experimental {word} compound.",
                scope=scope,
            ),
        ],
        edges=[
            Edge(
                id=f"{scope}:e1",
                relation_type="INTERACTS_WITH",
                source=f"{scope}:secret",
                target="med-warfarin",
                scope=scope,
            ),
            Edge(
                id=f"{scope}:e2",
                relation_type="INTERACTS_WITH",
                source="med-warfarin",
                target="med-metformin",
                scope=scope,
            ),
        ],
        chunks=[
            Chunk(
                id=f"{scope}:c1",
                node_id=f"{scope}:secret",
                scope=scope,
                content=f"{name} ({alias}) caused liver failure in a {word} trial; it interacts with Warfarin.",
            ),
            Chunk(
                id=f"{scope}:c2",
                node_id="med-warfarin",
                scope=scope,
                content=f"Warfarin note: patients on {name} need {word} monitoring of the INR.",
            ),
        ],
    )


def build(path: Path, embedder: Any) -> None:
    from tests.conftest import clinical_batch

    with cef.open(path, embedder=embedder) as kb:
        kb.index_batch(clinical_batch())
        for t in TENANTS:
            kb.index_batch(tenant_batch(t))
            scope, name, alias, word = TENANTS[t]
            doc = path.parent / f"notes-{t}.jsonl"
            lines = [
                {
                    "id": f"{scope}:p1",
                    "title": f"{name} report",
                    "text": f"{name} was given to John Miller with Warfarin. The {word} panel found {alias}.",
                },
                {
                    "id": f"{scope}:p2",
                    "title": f"{name} trial",
                    "text": f"In Boston, {name} trial patients took Metformin and {alias}; {word} results.",
                },
            ]
            doc.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
            report = ingest_sources(kb, [str(doc)], options=ParseOptions(scope=scope))
            assert not report.failures, report.failures


@pytest.fixture(scope="module")
def tenant_db(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    path = tmp_path_factory.mktemp("tenants") / "kb.db"
    build(path, embedder)
    return path


@pytest.fixture
def kb(tenant_db: Path, tmp_path: Path, embedder: Any) -> Iterator[cef.KnowledgeBase]:
    copy = tmp_path / "kb.db"
    shutil.copy(tenant_db, copy)
    with cef.open(copy, embedder=embedder) as k:
        yield k


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings_in(v)]
    return []


def leaks(payload: Any, asked: Any = None, t: str = "b") -> list[str]:
    """The other tenant's secrets in ``payload``, but for echoes of the strings the caller sent
    (``asked``: a response may repeat the caller's own words; it may not add the other tenant's)."""
    text = payload if isinstance(payload, str) else json.dumps(payload, default=str)
    for q in sorted(strings_in(asked), key=len, reverse=True):
        if len(q) > 3:
            text = text.replace(q, "").replace(json.dumps(q)[1:-1], "")
    said = {w.lower() for q in strings_in(asked) for w in re.findall(r"[\w-]+", q)}  # words echoed back
    return [s for s in secrets_of(t) if s.lower() in text.lower() and s.lower() not in said]


#: what tenant A asks with tenant B's words
QUESTIONS = [
    "QBX-77 liver failure",
    "Which drugs interact with Quibbletonol?",
    "What does Quibblaze interact with?",
    "What interacts with Warfarin?",
    "Which medications interact with Metformin?",
    "snarkwhistle monitoring of the INR",
    "Which drugs interact with the medication John Miller takes?",
]


# ---------------------------------------------------------------------------------------------- Python
def test_python_reads_of_a_tenant_view_hold_nothing_of_the_other(kb: cef.KnowledgeBase) -> None:
    view = TenantView(kb, Access(("tenant-a",)))
    assert view.find_node("tenant-b:secret") is None and view.get_edge("tenant-b:e1") is None
    assert view.get_edge("tenant-b:e2") is None and view.get_chunk("tenant-b:c1") is None
    assert view.find_node("tenant-a:secret") is not None  # its own
    out: list[Any] = [
        view.get_nodes(["tenant-b:secret", "med-warfarin"]),
        view.get_chunks(["tenant-b:c1", "tenant-b:c2"]),
        view.chunk_ids_for_nodes(["med-warfarin", "tenant-b:secret"]),
        view.find_nodes_by_label("Medication"),
        view.find_nodes_by_property("name", "Quibbletonol"),
        view.edges_among(["med-warfarin", "med-metformin", "tenant-b:secret"]),
        view.extract_context("med-warfarin", 3),
        view.chunks_of("med-warfarin", 50),
    ]
    for item in out:
        dumped = item.model_dump(mode="json") if hasattr(item, "model_dump") else item
        if isinstance(item, list):
            dumped = [x.model_dump(mode="json") if hasattr(x, "model_dump") else x for x in item]
        assert not leaks(dumped), (leaks(dumped), dumped)
    for strategy in SearchStrategy:
        for q in QUESTIONS:
            got = view.retrieve(GraphQuery(query=q, strategy=strategy, top_k=20, min_results=0))
            assert not leaks(got.model_dump(mode="json"), q), (
                strategy,
                q,
                leaks(got.model_dump(mode="json"), q),
            )
    # and the engine's own retrieve with a scope is guarded the same way
    for strategy in SearchStrategy:
        got = kb.retrieve(GraphQuery(query=QUESTIONS[0], strategy=strategy, scope="tenant-a", min_results=0))
        assert not leaks(got.model_dump(mode="json"), QUESTIONS[0])
    # nor does it tell which of A's words another tenant's records hold (relevance's 'unknown' words)
    for word in ("QBX-77", "snarkwhistle", "Quibbletonol"):
        seen_by_a = view.retrieve(GraphQuery(query=f"{word} report", top_k=5)).metadata["relevance"]
        assert word.lower() in [u.lower() for u in seen_by_a["unknown"]], (word, seen_by_a)
        seen_by_b = TenantView(kb, Access(("tenant-b",))).retrieve(GraphQuery(query=f"{word} report"))
        assert word.lower() not in [u.lower() for u in seen_by_b.metadata["relevance"]["unknown"]]
    # tenant A does see its own secret by name
    mine = view.retrieve(GraphQuery(query="ZRB-12 liver failure", top_k=5))
    assert mine.results[0].chunk.id.startswith("tenant-a:")
    assert [e["node_id"] for e in mine.metadata["query_entities"]] == ["tenant-a:secret"]


def test_python_writes_across_tenants_are_refused_like_missing_ids(kb: cef.KnowledgeBase) -> None:
    from cef.errors import ConflictError, ForbiddenError, MissingNodeError, NotFoundError, ValidationError

    a = TenantView(kb, Access(("tenant-a",)))

    def message(fn: Any) -> str:
        with pytest.raises((ConflictError, NotFoundError, ValidationError, ForbiddenError)) as info:
            fn()
        return f"{type(info.value).__name__}: {info.value}"

    # an edge to B's node and to a node that does not exist: the same error, the same words
    hidden = message(
        lambda: a.index_edge(Edge(relation_type="TREATS", source="tenant-a:secret", target="tenant-b:secret"))
    )
    missing = message(
        lambda: a.index_edge(
            Edge(relation_type="TREATS", source="tenant-a:secret", target="tenant-b:nothing")
        )
    )

    def same(msg: str, ident: str) -> str:  # the message without the named id and the generated edge id
        return re.sub(r"tenant-a:[0-9a-f-]{36}", "ID", msg.replace(ident, "X"))

    assert same(hidden, "tenant-b:secret") == same(missing, "tenant-b:nothing")
    assert "MissingNodeError" in hidden
    with pytest.raises(MissingNodeError):
        a.index_chunk(Chunk(content="mine", node_id="tenant-b:secret"))
    # ids outside A's namespace are refused before any lookup, existing or not
    for ident in ("tenant-b:secret", "tenant-b:free", "secretB"):
        with pytest.raises(ValidationError, match="namespace"):
            a.index_node(Node(id=ident, label="Medication"))
    for fn in (
        lambda: a.update_node("tenant-b:secret", {"x": 1}),
        lambda: a.delete_node("tenant-b:secret"),
        lambda: a.delete_edge("tenant-b:e2"),
        lambda: a.delete_chunk("tenant-b:c2"),
        lambda: a.update_chunk("tenant-a:c1", node_id="tenant-b:secret"),
    ):
        assert "does not exist" in message(fn)
    # shared records are readable but not A's to change; relation types are shared
    with pytest.raises(ForbiddenError):
        a.update_node("med-warfarin", {"x": 1})
    with pytest.raises(ForbiddenError):
        a.index_batch(Batch(relation_types=[RelationType(name="TENANT_A_ONLY")]))
    # A's own writes work and get A's scope and namespace
    made = a.index_edge(
        Edge(relation_type="INTERACTS_WITH", source="tenant-a:secret", target="med-ibuprofen")
    )
    assert made.scope == "tenant-a" and made.id.startswith("tenant-a:")
    # B deleting its node never takes A's records; nothing of B's hung on A survives either
    b = TenantView(kb, Access(("tenant-b",)))
    b.delete_node("tenant-b:secret")
    assert kb.get_edge(made.id) is not None and kb.get_chunk("tenant-a:c2") is not None


def test_a_cascade_that_would_take_another_scopes_records_is_refused(kb: cef.KnowledgeBase) -> None:
    from cef.errors import ConflictError

    # written by an unscoped admin (tenants cannot): A's chunk on B's node
    kb.index_chunk(Chunk(id="admin-made", content="x", node_id="tenant-b:secret", scope="tenant-a"))
    with pytest.raises(ConflictError, match="does not own"):
        TenantView(kb, Access(("tenant-b",))).delete_node("tenant-b:secret")
    assert kb.get_chunk("admin-made") is not None and kb.find_node("tenant-b:secret") is not None


# ---------------------------------------------------------------------------------------------- REST
#: how each read route is asked; a read route missing here fails test_every_read_route_is_listed
B_IDS = {"node_id": "tenant-b:secret", "edge_id": "tenant-b:e2", "chunk_id": "tenant-b:c1"}
SHARED_IDS = {"node_id": "med-warfarin", "edge_id": None, "chunk_id": None}


def read_requests(method: str, path: str) -> list[dict[str, Any]]:
    """The requests tenant A sends to ``method path`` (B's ids in path parameters; B's words in bodies)."""
    params = [p for p in ("node_id", "edge_id", "chunk_id") if "{" + p + "}" in path]
    if params:
        reqs = [{"url": path.replace("{" + params[0] + "}", B_IDS[params[0]]), "status": 404}]
        shared = SHARED_IDS[params[0]]
        if shared is not None:
            reqs.append(
                {
                    "url": path.replace("{" + params[0] + "}", shared),
                    "status": 200,
                    "params": {"depth": 3} if path.endswith("neighbors") else {},
                }
            )
        return reqs
    if path.endswith("/nodes"):
        return [{"url": path, "params": {"label": "Medication"}, "status": 200}]
    if path.endswith("/schema"):
        return [{"url": path, "status": 200}]
    bodies: list[dict[str, Any]] = []
    for q in QUESTIONS:
        if path.endswith("/search"):
            bodies.append({"query": q, "limit": 20})
        elif path.endswith("/context"):
            bodies.append({"queries": [q, "Warfarin"], "token_budget": 4000})
        elif path.endswith("/answer"):
            bodies.append({"question": q})
        else:  # retrieve, explore
            bodies += [
                {"query": q, "strategy": s.value, "top_k": 20, "min_results": 0} for s in SearchStrategy
            ]
            bodies.append({"query": q, "targets": [{"description": "Quibbletonol"}], "top_k": 20})
    return [{"url": path, "json": b, "status": 200} for b in bodies]


@pytest.fixture
def rest(kb: cef.KnowledgeBase) -> Iterator[httpx.Client]:
    server = LiveServer(create_app(kb, ServerSettings(api_keys=KEYS, cache_ttl_seconds=0)))
    client = httpx.Client(base_url=server.url, timeout=60)
    yield client
    client.close()
    server.close()


#: the POST routes that read (every other POST, PATCH and DELETE writes)
READ_POSTS = {"search", "retrieve", "context", "answer", "explore"}


def read_routes(client: httpx.Client) -> list[tuple[str, str]]:
    """Every read route the API documents: its GETs and the POSTs that read."""
    spec = client.get("/openapi.json").json()
    return sorted(
        (method.upper(), path)
        for path, ops in spec["paths"].items()
        for method in ops
        if method == "get" or (method == "post" and path.rsplit("/", 1)[-1] in READ_POSTS)
    )


def test_every_read_route_answers_tenant_a_without_tenant_b(rest: httpx.Client) -> None:
    routes = read_routes(rest)
    assert {
        ("POST", "/api/v1/search"),
        ("POST", "/api/v1/retrieve"),
        ("POST", "/api/v1/explore"),
        ("GET", "/api/v1/nodes/{node_id}/neighbors"),
    } <= set(routes)
    headers = {"X-API-Key": A_READ}
    asked = 0
    for method, path in routes:
        if not path.startswith("/api/"):
            continue
        requests = read_requests(method, path)
        assert requests, f"{method} {path}: a read route this suite does not ask"
        for req in requests:
            r = rest.request(
                method, req["url"], params=req.get("params"), json=req.get("json"), headers=headers
            )
            assert r.status_code == req["status"], (method, req, r.status_code, r.text[:500])
            found = leaks(r.text, [req.get("json"), *req["url"].split("/")])  # echoes of what A sent
            assert not found, (method, req, found, r.text[:2000])
            asked += 1
    assert asked > 100
    # the same routes do show B's records to B (the secrets are findable: the check above means something)
    b = rest.post("/api/v1/search", json={"query": "QBX-77 liver failure"}, headers={"X-API-Key": B_WRITE})
    assert "tenant-b:c1" in b.text
    n = rest.get("/api/v1/nodes/med-warfarin/neighbors", headers={"X-API-Key": B_WRITE})
    assert "tenant-b:e2" in n.text and "Quibbletonol" in n.text


def test_rest_writes_across_tenants_answer_like_missing_ids(rest: httpx.Client) -> None:
    a = {"X-API-Key": A_WRITE}

    def err(r: httpx.Response) -> tuple[int, str]:
        return r.status_code, r.json()["error"]

    to_b = rest.post(
        "/api/v1/edges",
        json={"relation_type": "TREATS", "source": "tenant-a:secret", "target": "tenant-b:secret"},
        headers=a,
    )
    to_none = rest.post(
        "/api/v1/edges",
        json={"relation_type": "TREATS", "source": "tenant-a:secret", "target": "tenant-b:nothing"},
        headers=a,
    )
    assert err(to_b) == err(to_none) == (409, "missing_node")

    def same(msg: str, ident: str) -> str:
        return re.sub(r"tenant-a:[0-9a-f-]{36}", "ID", msg.replace(ident, "X"))

    assert same(to_b.json()["message"], "tenant-b:secret") == same(
        to_none.json()["message"], "tenant-b:nothing"
    )
    chunk = rest.post("/api/v1/chunks", json={"content": "mine", "node_id": "tenant-b:secret"}, headers=a)
    assert err(chunk) == (409, "missing_node")
    # re-linking A's own chunk: a node the body names is a missing reference (409), never "this chunk
    # is gone" (404), and a hidden node reads exactly like one that never existed
    relink = {
        ident: rest.patch("/api/v1/chunks/tenant-a:c1", json={"node_id": ident}, headers=a)
        for ident in ("tenant-b:secret", "tenant-b:nothing")
    }
    assert [err(r) for r in relink.values()] == [(409, "missing_node")] * 2, [r.text for r in relink.values()]
    assert same(relink["tenant-b:secret"].json()["message"], "tenant-b:secret") == same(
        relink["tenant-b:nothing"].json()["message"], "tenant-b:nothing"
    )
    assert rest.get("/api/v1/chunks/tenant-a:c1", headers=a).status_code == 200
    for ident in ("tenant-b:secret", "tenant-b:unused"):
        r = rest.post("/api/v1/nodes", json={"id": ident, "label": "Medication"}, headers=a)
        assert err(r) == (422, "validation_error")
    for method, url in (
        ("PATCH", "/api/v1/nodes/tenant-b:secret"),
        ("DELETE", "/api/v1/nodes/tenant-b:secret"),
        ("PATCH", "/api/v1/edges/tenant-b:e2"),
        ("DELETE", "/api/v1/edges/tenant-b:e2"),
        ("PATCH", "/api/v1/chunks/tenant-b:c2"),
        ("DELETE", "/api/v1/chunks/tenant-b:c2"),
    ):
        body = (
            {"confidence": 0.5}
            if "edges" in url
            else {"content": "x"}
            if "chunks" in url
            else {"properties": {}}
        )
        r = rest.request(method, url, json=body if method == "PATCH" else None, headers=a)
        assert err(r) == (404, "not_found"), (method, url, r.text)
    assert rest.get("/api/v1/nodes/tenant-b:secret", headers={"X-API-Key": B_WRITE}).status_code == 200


# ---------------------------------------------------------------------------------------------- MCP
def test_every_mcp_read_tool_answers_tenant_a_without_tenant_b(kb: cef.KnowledgeBase, tmp_path: Path) -> None:
    from tests.integration.test_mcp_server import connect

    path = tmp_path / "kb.db"
    kb.close()  # the server process opens the file
    log = tmp_path / "mcp.log"
    calls: dict[str, list[dict[str, Any]]] = {
        "retrieve_knowledge": [
            {"query": q, "strategy": s.value, "min_results": 0} for q in QUESTIONS for s in SearchStrategy
        ],
        "retrieve_context": [
            {"textQuery": q, "semanticKeywords": ["Quibbletonol", "QBX-77"]} for q in QUESTIONS
        ]
        + [
            {
                "textQuery": "interactions",
                "graphHints": {
                    "entityLabel": "Medication",
                    "entityProperty": "name",
                    "entityValue": "Quibbletonol",
                },
            }
        ],
        "search_memory": [{"query": q} for q in QUESTIONS],
        "provide_context": [{"queries": [q, "Warfarin"]} for q in QUESTIONS],
        "answer_question": [{"question": q} for q in QUESTIONS[:2]],
        "get_graph_schema": [{}],
    }

    async def check(c: Any) -> None:
        listed = {t.name for t in (await c.session.list_tools()).tools}
        reads = {n for n in listed if n not in {"index_nodes", "index_edges", "index_chunks", "delete_node"}}
        assert reads == set(calls), f"read tools this suite does not ask: {reads ^ set(calls)}"
        for name, arg_list in calls.items():
            for args in arg_list:
                result = await c.call(name, args)
                text = json.dumps(result.structured_content) + " ".join(
                    getattr(x, "text", "") for x in result.content
                )
                assert not leaks(text, args), (name, args, leaks(text, args), text[:1500])
        made = await c.call(
            "index_edges",
            {
                "edges": [
                    {"relation_type": "TREATS", "source": "tenant-a:secret", "target": "tenant-b:secret"}
                ]
            },
        )
        missing = await c.call(
            "index_edges",
            {
                "edges": [
                    {"relation_type": "TREATS", "source": "tenant-a:secret", "target": "tenant-b:nothing"}
                ]
            },
        )
        assert made.is_error and missing.is_error

        def same(msg: str, ident: str) -> str:
            return re.sub(r"tenant-a:[0-9a-f-]{36}", "ID", msg.replace(ident, "X"))

        assert same(made.content[0].text, "tenant-b:secret") == same(  # type: ignore[union-attr]
            missing.content[0].text,
            "tenant-b:nothing",  # type: ignore[union-attr]
        )

    async def main() -> None:
        env = {"CEF_API_KEYS": KEYS}
        async with connect("http", path, log, writable=True, env=env, headers={"X-API-Key": A_WRITE}) as c:
            await check(c)

    anyio.run(main)


# ---------------------------------------------------------------------------------------------- property
WORDS = st.sampled_from(["amber", "basil", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo"])


@st.composite
def scoped_graphs(draw: Any) -> tuple[list[Node], list[Edge], list[Chunk]]:
    n = draw(st.integers(3, 10))
    scopes = [draw(st.sampled_from(["tenant-a", "tenant-b", None])) for _ in range(n)]
    nodes = [
        Node(
            id=f"{s or 'shared'}:n{i}",
            label=draw(st.sampled_from(["Thing", "Place"])),
            properties={"name": f"{draw(WORDS)} {draw(WORDS)} {i}"},
            scope=s,
        )
        for i, s in enumerate(scopes)
    ]
    edges = []
    for j in range(draw(st.integers(0, 15))):
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if a == b:
            continue
        own = [s for s in (scopes[a], scopes[b]) if s is not None]
        if len(set(own)) > 1:
            continue  # no edge joins two tenants
        scope = own[0] if own else draw(st.sampled_from(["tenant-a", "tenant-b", None]))
        edges.append(
            Edge(
                id=f"{scope or 'shared'}:e{j}",
                relation_type="LINKS",
                source=nodes[a].id,
                target=nodes[b].id,
                scope=scope,
            )
        )
    chunks = []
    for k in range(draw(st.integers(1, 12))):
        i = draw(st.integers(0, n - 1))
        scope = scopes[i] or draw(st.sampled_from(["tenant-a", "tenant-b", None]))
        chunks.append(
            Chunk(
                id=f"{scope or 'shared'}:c{k}",
                node_id=nodes[i].id,
                scope=scope,
                content=f"{draw(WORDS)} {nodes[i].properties['name']} {draw(WORDS)}",
            )
        )
    return nodes, edges, chunks


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    graph=scoped_graphs(),
    words=st.lists(WORDS, min_size=1, max_size=3),
    strategy=st.sampled_from(list(SearchStrategy)),
)
def test_no_response_holds_an_out_of_scope_id(
    tmp_path_factory: pytest.TempPathFactory, graph: Any, words: list[str], strategy: SearchStrategy
) -> None:
    nodes, edges, chunks = graph
    path = tmp_path_factory.mktemp("prop") / "kb.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(
            Batch(
                relation_types=[RelationType(name="LINKS", inverse="LINKED_FROM")],
                nodes=nodes,
                edges=edges,
                chunks=chunks,
            )
        )
        view = TenantView(kb, Access(("tenant-a",)))
        q = GraphQuery(
            query=" ".join(words),
            strategy=strategy,
            top_k=50,
            min_results=0,
            targets=[ResolutionTarget(description=n.properties["name"]) for n in nodes[:2]],
            traversal=TraversalHint(depth=3),
        )
        outs: list[Any] = [view.retrieve(q)]
        for n in nodes:
            if view.find_node(n.id) is not None:
                outs.append(view.extract_context(n.id, 3))
                outs.append(view.chunks_of(n.id, 50))
        outs.append(view.edges_among([n.id for n in nodes]))
        text = json.dumps(
            [
                o.model_dump(mode="json")
                if hasattr(o, "model_dump")
                else [x.model_dump(mode="json") for x in o]
                for o in outs
            ]
        )
        assert "tenant-b:" not in text
