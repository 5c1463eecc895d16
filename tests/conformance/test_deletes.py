"""Deletes cascade the same way everywhere: records, full text, vectors and traversal."""

from __future__ import annotations

import pytest

from cef.errors import NotFoundError, ValidationError

from . import data
from .backends import Deployment


def test_delete_node_cascades(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    res = kb.delete_node("c")
    assert (res.nodes, res.edges, res.chunks) == (1, 3, 1)
    store = kb.store
    assert store.existing_ids("node", ["c"]) == set()
    assert store.existing_ids("edge", ["e-bc", "e-cd", "e-ec"]) == set()
    assert store.existing_ids("chunk", ["ch-c"]) == set()
    assert store.counts() == {"nodes": 7, "edges": 4, "chunks": 6, "relation_types": 3}
    assert "ch-c" not in [h.id for h in store.search_text("chunk", "headache aspirin", 10)]
    assert "c" not in [h.id for h in store.search_text("node", "aspirin", 10)]
    emb = deployment.embedder
    assert "ch-c" not in [
        i for i, _ in kb.state.chunk_vectors.search(emb.embed_query(data.TEXTS["ch-c"]), 10)
    ]
    assert "c" not in [i for i, _ in kb.state.node_vectors.search(emb.embed_query("Drug: Aspirin"), 10)]
    assert len(kb.state.chunk_vectors) == 6 and len(kb.state.node_vectors) == 7
    assert float(kb.state.chunk_vectors.similarities(emb.embed_query("aspirin"), ["ch-c"])[0]) == 0.0
    graph = deployment.graph(kb)
    reached = {n for n, _, _ in graph.neighbourhood(["b"], 5, None, 100)}
    assert reached == {"b", "a", "e", "f", "g"} - {"g"}
    assert graph.shortest_path("b", "d", 5) is None
    assert graph.neighbourhood(["c"], 2, None, 100) == []


def test_delete_without_cascade_is_refused(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    with pytest.raises(ValidationError, match="edge"):
        kb.delete_node("a", cascade=False)
    assert kb.store.existing_ids("node", ["a"]) == {"a"}
    kb.delete_node("g", cascade=True)
    kb.delete_node("h", cascade=True)
    assert kb.store.existing_ids("node", ["g", "h"]) == set()


def test_delete_edge_and_chunk(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    kb.delete_edge("e-ab")
    kb.delete_chunk("ch-d")
    assert kb.store.existing_ids("edge", ["e-ab"]) == set()
    assert kb.store.existing_ids("chunk", ["ch-d"]) == set()
    graph = deployment.graph(kb)
    assert graph.shortest_path("a", "b", 5) == ["e-ae", "e-ec", "e-bc"]
    assert "ch-d" not in [h.id for h in kb.store.search_text("chunk", "anticoagulant", 10)]
    top = kb.state.chunk_vectors.search(deployment.embedder.embed_query(data.TEXTS["ch-d"]), 3)
    assert "ch-d" not in [i for i, _ in top]
    with pytest.raises(NotFoundError):
        kb.delete_edge("e-ab")
    with pytest.raises(NotFoundError):
        kb.delete_chunk("ch-d")
    with pytest.raises(NotFoundError):
        kb.delete_node("nobody")
