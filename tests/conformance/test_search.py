"""Vector and full-text search give the same answers on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from cef import Batch, GraphQuery, Node, SearchStrategy
from cef.errors import EmbeddingError

from . import data
from .backends import Deployment


def _exact(dep: Deployment, query: str, k: int) -> list[tuple[str, float]]:
    emb = dep.embedder
    ids = list(data.TEXTS)
    m = emb.embed([data.TEXTS[i] for i in ids])
    s = m @ emb.embed_query(query)
    order = sorted(range(len(ids)), key=lambda i: (-s[i], ids[i]))[:k]
    return [(ids[i], float(s[i])) for i in order]


@pytest.mark.parametrize(
    "query", ["bleeding risk", "aspirin headache", "diabetes", "quantum physics paragraph"]
)
def test_vector_search_matches_exact_cosine(deployment: Deployment, query: str) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    got = kb.state.chunk_vectors.search(deployment.embedder.embed_query(query), 4)
    want = _exact(deployment, query, 4)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-4)


def test_vector_search_filters_and_similarities(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    q = deployment.embedder.embed_query("bleeding risk")
    idx = kb.state.chunk_vectors
    got = idx.search(q, 10, allowed=["ch-b", "ch-d", "missing"])
    assert [i for i, _ in got] == ["ch-d", "ch-b"]
    assert idx.search(q, 10, allowed=[]) == []
    assert idx.search(q, 0) == []
    assert len(idx.search(q, 100)) == 7
    sims = idx.similarities(q, ["ch-d", "missing", "ch-a"])
    exact = dict(_exact(deployment, "bleeding risk", 7))
    assert sims.shape == (3,) and sims[1] == 0.0
    assert np.allclose(sims[[0, 2]], [exact["ch-d"], exact["ch-a"]], atol=1e-4)
    assert idx.similarities(q, []).shape == (0,)
    with pytest.raises(EmbeddingError):
        idx.search(np.ones(deployment.embedder.dim + 1, dtype=np.float32), 3)
    node_hits = kb.state.node_vectors.search(deployment.embedder.embed_query("Patient: John Miller"), 1)
    assert node_hits[0][0] == "e" and abs(node_hits[0][1] - 1.0) < 1e-4


def test_full_text_search(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    store = kb.store
    hits = store.search_text("chunk", "bleeding risk", 10)
    assert [h.id for h in hits][:2] in (["ch-a", "ch-d"], ["ch-d", "ch-a"])
    assert {h.id for h in hits} == {"ch-a", "ch-d"}
    assert all(h.score > 0 for h in hits)
    assert hits[0].score >= hits[-1].score
    # case and accents do not matter
    assert next(h.id for h in store.search_text("chunk", "interacts WARFARIN", 10)) == "ch-a"
    assert [h.id for h in store.search_text("chunk", "warfarin", 10, scope="s1")] == ["ch-a", "ch-g"] or [
        h.id for h in store.search_text("chunk", "warfarin", 10, scope="s1")
    ] == ["ch-g", "ch-a"]
    assert "ch-g" not in [h.id for h in store.search_text("chunk", "warfarin", 10, scope="other")]
    assert len(store.search_text("chunk", "aspirin bleeding diabetes", 2)) == 2
    assert store.search_text("chunk", "aspirin", 0) == []
    assert store.search_text("chunk", "   ", 5) == []
    assert store.search_text("chunk", "zzzunknownzzz", 5) == []
    # names and aliases of nodes
    assert [h.id for h in store.search_text("node", "coumadin", 5)] == ["a"]
    assert [h.id for h in store.search_text("node", "john", 5)] == ["e"]


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "'; DROP TABLE nodes; --",
        "a AND OR NOT",
        "warfarin*",
        "(x | !y) & z:*",
        "NEAR(a b)",
        "\\ % _ ?",
    ],
)
def test_full_text_queries_never_reach_a_query_language(deployment: Deployment, query: str) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    kb.store.search_text("chunk", query, 5)
    kb.store.search_text("node", query, 5)
    assert kb.store.counts()["nodes"] == 8


def test_retrieve_end_to_end(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    vec = kb.retrieve(
        GraphQuery(query="aspirin relieves headache pain", strategy=SearchStrategy.VECTOR, top_k=3)
    )
    assert vec.results[0].chunk.id == "ch-c"
    bm25 = kb.retrieve(GraphQuery(query="metformin", strategy=SearchStrategy.BM25, top_k=3))
    assert [r.chunk.id for r in bm25.results] == ["ch-b"]
    hybrid = kb.retrieve("What does John Miller have?")
    assert hybrid.results and "ch-e" in [r.chunk.id for r in hybrid.results]


def test_full_text_finds_a_node_by_its_naming_property_values(deployment: Deployment) -> None:
    """A brand or a code a node holds as a property value finds it like its name, on every backend:
    a lowercase word, a number, a date or a sentence does not; an update re-indexes the values."""
    kb = deployment.open()
    kb.index_batch(data.batch())
    kb.index_batch(
        Batch(
            nodes=[
                Node(
                    id="x",
                    label="Drug",
                    properties={
                        "name": "Apixaban",
                        "brand": "Eliquis",
                        "code": "ORD-1042",
                        "status": "marketed",
                        "note": "Taken twice a day with or without food, never doubled after a missed dose",
                    },
                )
            ]
        )
    )
    store = kb.store
    assert [h.id for h in store.search_text("node", "eliquis", 5)] == ["x"]
    assert [h.id for h in store.search_text("node", "ORD-1042", 5)] == ["x"]
    assert store.search_text("node", "marketed", 5) == []
    assert store.search_text("node", "doubled", 5) == []
    kb.update_node("x", {"brand": "Zentrix"})
    assert [h.id for h in store.search_text("node", "zentrix", 5)] == ["x"]
    assert store.search_text("node", "eliquis", 5) == []
