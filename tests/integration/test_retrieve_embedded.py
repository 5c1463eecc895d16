"""Retrieval with the real offline embedding model on the clinical example."""

from __future__ import annotations

import numpy as np

import cef
from cef import GraphQuery, ResolutionTarget, SearchStrategy, TraversalHint


def test_vector_first_resolution_uses_meaning_and_type_hint(clinical_embedded: cef.KnowledgeBase) -> None:
    q = GraphQuery(
        query="what treats an irregular heartbeat?",
        targets=[ResolutionTarget(description="irregular heart rhythm disorder", type_hint="Condition")],
        traversal=TraversalHint(depth=1, relation_types=["TREATED_BY"]),
        top_k=5,
        min_results=2,
    )
    res = clinical_embedded.retrieve(q)
    assert res.metadata["anchors"][0]["node_id"] == "cond-afib"
    assert res.metadata["anchors"][0]["how"] == "vector"
    assert res.strategy is SearchStrategy.AUTO
    assert set(res.metadata["route"]["sources"]) <= {
        "paths",
        "path_context",
        "path_anchor",
        "hybrid",
    }  # the hint steers
    linked = {r.chunk.node_id for r in res.results}
    # only chunks of the reasoning context: atrial fibrillation and the drugs that treat it
    assert linked <= {"cond-afib", "med-warfarin", "med-apixaban", "med-amiodarone"}
    assert all(r.explanation.vector_score is not None for r in res.results)
    # the enhanced query carries graph keywords
    assert res.enhanced_query and "warfarin" in res.enhanced_query.lower()


def test_type_hint_excludes_other_labels(clinical_embedded: cef.KnowledgeBase) -> None:
    q = GraphQuery(query="warfarin", targets=[ResolutionTarget(description="warfarin", type_hint="Patient")])
    res = clinical_embedded.retrieve(q)
    assert all(a["node_id"].startswith("pat-") for a in res.metadata["anchors"])


def test_vector_and_bm25_search(clinical_embedded: cef.KnowledgeBase) -> None:
    hits = clinical_embedded.vector_search("blood thinner that needs no INR checks", 3)
    assert hits[0].chunk.id == "drug-apixaban"
    assert hits[0].score >= hits[1].score >= hits[2].score
    bm = clinical_embedded.full_text_search("lactic acidosis", 3)
    assert bm[0].chunk.id == "drug-metformin"


def test_update_node_reembeds_only_when_text_changes(clinical_embedded: cef.KnowledgeBase) -> None:
    before = clinical_embedded.state.node_vectors.get("med-apixaban")
    clinical_embedded.update_node("med-apixaban", {"brand": "Other"})  # name unchanged: same text
    same = clinical_embedded.state.node_vectors.get("med-apixaban")
    assert before is not None and same is not None and np.allclose(before, same)
    clinical_embedded.update_node("med-apixaban", content="A gardening tool for pruning roses")
    after = clinical_embedded.state.node_vectors.get("med-apixaban")
    assert after is not None and float(after @ before) < 0.5
    node = clinical_embedded.find_node("med-apixaban")
    assert node is not None and node.version == 3 and node.properties["brand"] == "Other"


def test_fallback_to_vector_when_no_anchor(clinical_embedded: cef.KnowledgeBase) -> None:
    res = clinical_embedded.retrieve(
        GraphQuery(query="kidney function and drug dosing", top_k=4, min_results=3)
    )
    # no node is named: the default route answers from the text sources
    assert res.strategy is SearchStrategy.AUTO
    assert "vector" in res.metadata["route"]["sources"]
    assert "cond-ckd-overview" in [r.chunk.id for r in res.results]


def test_reopen_keeps_vectors_and_rejects_other_model(clinical_db_embedded, embedder) -> None:  # type: ignore[no-untyped-def]
    with cef.open(clinical_db_embedded, embedder=embedder) as kb:
        assert len(kb.state.chunk_vectors) == 18
        assert len(kb.state.node_vectors) == 28

    class Other:
        name = "other-model"
        dim = 8

        def embed(self, texts):  # type: ignore[no-untyped-def]
            return np.ones((len(texts), 8), dtype=np.float32)

        def embed_query(self, text):  # type: ignore[no-untyped-def]
            return np.ones(8, dtype=np.float32)

    import pytest

    with pytest.raises(cef.errors.ConfigurationError, match=r"all-MiniLM|other-model"):
        cef.open(clinical_db_embedded, embedder=Other())  # type: ignore[arg-type]
