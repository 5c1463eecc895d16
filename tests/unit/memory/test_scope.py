"""Scopes: a scoped query never sees another scope's nodes, edges, chunks or beliefs."""

from __future__ import annotations

import json

import pytest

from cef import Chunk, GraphQuery, Node, SearchStrategy
from cef.memory import NodeKind, SemanticMemory
from cef.model import Batch, Edge


@pytest.fixture
def two_users(memory: SemanticMemory) -> SemanticMemory:
    reg = memory.registry
    reg.register_node_type("person", NodeKind.INSTANCE)
    reg.register_node_type("topic", NodeKind.CLASS)
    reg.register_edge_type("likes")
    nodes, edges, chunks = [], [], []
    for user, secret in (("u1", "sailing"), ("u2", "falconry")):
        nodes += [
            Node(id=f"{user}-me", label="person", properties={"name": "Sam"}, scope=user),
            Node(id=f"{user}-hobby", label="topic", properties={"name": f"Weekend {secret}"}, scope=user),
        ]
        edges.append(Edge(relation_type="likes", source=f"{user}-me", target=f"{user}-hobby", scope=user))
        chunks.append(
            Chunk(
                id=f"{user}-note",
                content=f"Sam loves weekend {secret} trips",
                node_id=f"{user}-hobby",
                scope=user,
            )
        )
    # shared, unscoped reference data every scope may see
    nodes.append(Node(id="topic-hobbies", label="topic", properties={"name": "Weekend hobbies"}))
    edges += [
        Edge(relation_type="related_to", source=f"{u}-hobby", target="topic-hobbies", scope=u)
        for u in ("u1", "u2")
    ]
    # a cross-scope edge (a bad write) must not become a bridge
    edges.append(Edge(relation_type="related_to", source="u1-hobby", target="u2-hobby", scope="u2"))
    memory.kb.index_batch(Batch(nodes=nodes, edges=edges, chunks=chunks))
    memory.observe("Sam dislikes early mornings", "user_stated", scope="u1", subject="u1-me")
    memory.observe("Sam dislikes crowds", "user_stated", scope="u2", subject="u2-me")
    return memory


def mentioned(bundle_text: str) -> tuple[bool, bool]:
    return (
        "sailing" in bundle_text or "mornings" in bundle_text,
        "falconry" in bundle_text or "crowds" in bundle_text,
    )


@pytest.mark.parametrize("scope", ["u1", "u2"])
@pytest.mark.parametrize(
    "query",
    [
        "What does Sam like?",
        "weekend falconry trips",
        "weekend sailing trips",
        "Weekend hobbies",
        "what does Sam dislike",
    ],
)
def test_no_leak_between_scopes(two_users: SemanticMemory, scope: str, query: str) -> None:
    bundle = two_users.retrieve_context(query, scope=scope, max_depth=4)
    ids = bundle.node_ids()
    other = "u2" if scope == "u1" else "u1"
    assert not any(i.startswith(other) for i in ids), ids
    for fmt in ("markdown", "json"):
        text = bundle.to_text(fmt)
        body = (
            json.dumps({k: v for k, v in json.loads(text).items() if k != "meta"}) if fmt == "json" else text
        )
        body = "\n".join(
            line for line in body.splitlines() if not line.startswith("Query:")
        )  # the question itself
        own, foreign = mentioned(body)
        assert not foreign if scope == "u1" else not own
    for change in bundle.temporal.changes if bundle.temporal else []:
        assert "falconry" not in change.target_name if scope == "u1" else "sailing" not in change.target_name


def test_scope_sees_its_own_and_shared_data(two_users: SemanticMemory) -> None:
    bundle = two_users.retrieve_context("What does Sam like?", scope="u1", max_depth=3)
    ids = bundle.node_ids()
    assert {"u1-me", "u1-hobby", "topic-hobbies"} <= ids
    assert any("mornings" in b.statement for b in bundle.beliefs)
    assert any(f.excerpt and "sailing" in f.excerpt for f in bundle.facts())
    # without a scope every scope is visible
    everything = two_users.retrieve_context("What does Sam like?", max_depth=3).node_ids()
    assert {"u1-me", "u2-me"} <= everything


def test_engine_search_paths_honour_scope(two_users: SemanticMemory) -> None:
    """The engine's own retrieval (graph, BM25, hybrid) with a scope: no other scope's chunks."""
    kb = two_users.kb
    for strategy in (SearchStrategy.AUTO, SearchStrategy.BM25, SearchStrategy.HYBRID):
        result = kb.retrieve(GraphQuery(query="weekend falconry trips Sam", scope="u1", strategy=strategy))
        assert all(r.chunk.scope in (None, "u1") for r in result.results), strategy
        if result.reasoning_context is not None:
            seen = [
                n.id for n in [*result.reasoning_context.root_nodes, *result.reasoning_context.related_nodes]
            ]
            assert not any(i.startswith("u2") for i in seen)
    assert all(r.chunk.scope == "u1" for r in kb.full_text_search("weekend trips", scope="u1"))


def test_the_memory_anchors_on_the_engines_anchor_stage(two_users: SemanticMemory) -> None:
    """The memory's anchors are the engine's anchor stage on what its understanding read: the named
    node by name, the scope's passages lending theirs, another scope's never."""
    import time

    from cef.retrieve.anchors import AnchorRequest, anchor_stage
    from cef.retrieve.context import QueryContext

    query = "What does Sam like about weekend sailing trips?"
    bundle = two_users.retrieve_context(query, scope="u1", max_depth=2)
    got = [(a["node_id"], a["how"]) for a in bundle.understanding["anchors"]]
    kb = two_users.kb
    qc = QueryContext(state=kb.state, query=GraphQuery(query=query, scope="u1"), started=time.perf_counter())
    with kb.state.reading():
        entities = bundle.understanding["queries"][0]["entities"]
        named = [(i, 1.0, e["how"]) for e in entities if e["how"] == "name" for i in e["nodes"]]
        want = [(a.node_id, a.how) for a in anchor_stage(qc, AnchorRequest(named=named, drop_ended=True))]
    assert got == want
    assert {("u1-me", "name"), ("u1-hobby", "name")} <= set(got)
    assert not any(i.startswith("u2") for i, _ in got)
