"""GRAPH (seed 001's graph-first pipeline) on the text corpus and on the curated clinical graph."""

from __future__ import annotations

import pytest

import cef
from cef import GraphQuery, SearchStrategy
from cef.schema.textgraph import CO_OCCURS_WITH, entity_id, passage_id
from tests.unit.retrieve.corpus import QUESTION


def test_graph_first_reaches_the_composer_through_cooccurrence(text_kb: cef.KnowledgeBase) -> None:
    res = text_kb.retrieve(GraphQuery(query=QUESTION, strategy=SearchStrategy.GRAPH, top_k=5))
    assert res.strategy is SearchStrategy.GRAPH
    ids = [r.chunk.id for r in res.results]
    assert ids[:2] == ["tides", "varga"]
    varga = res.results[1].explanation
    assert varga.strategy is SearchStrategy.GRAPH
    assert varga.path is not None
    assert varga.path.node_ids == [
        entity_id("symphony of tides"),
        entity_id("elena varga"),
        passage_id("varga"),
    ]
    assert varga.path.relation_types == [CO_OCCURS_WITH, "MENTIONED_IN"]
    assert varga.path.node_names[1] == "Elena Varga"
    assert varga.anchors == [entity_id("symphony of tides")]
    assert varga.graph_score is not None and varga.graph_score > 0
    assert varga.vector_score is not None and "Elena Varga" in varga.entities
    assert varga.rank_sources["graph"] <= 3
    # seed §7 pieces: the query's entities, related entities with scores, the expanded query
    assert res.metadata["query_entities"][0]["name"] == "Symphony of Tides"
    related = res.metadata["related_entities"]
    assert related[0]["node_id"] == entity_id("elena varga") and related[0]["score"] > 0
    assert res.enhanced_query is not None and "Elena Varga" in res.enhanced_query
    assert res.metadata["graph"]["chunks_from_graph"] >= 2


def test_graph_first_fusion_and_weights_are_options(text_kb: cef.KnowledgeBase) -> None:
    graph_only = text_kb.retrieve(
        GraphQuery(
            query=QUESTION,
            strategy=SearchStrategy.GRAPH,
            top_k=3,
            options={"vector_weight": 0.0, "graph_weight": 1.0},
        )
    )
    assert [r.score for r in graph_only.results] == pytest.approx(
        [r.explanation.graph_score for r in graph_only.results], abs=1e-5
    )
    assert graph_only.results[0].score == 1.0
    rrf = text_kb.retrieve(
        GraphQuery(
            query=QUESTION, strategy=SearchStrategy.GRAPH, top_k=3, options={"graph_first": {"fusion": "rrf"}}
        )
    )
    assert rrf.results[0].score < 0.1  # reciprocal-rank scores, not weighted similarities
    assert {"vector", "graph"} <= set(rrf.results[0].explanation.rank_sources)
    no_cooc = text_kb.retrieve(
        GraphQuery(
            query=QUESTION,
            strategy=SearchStrategy.GRAPH,
            top_k=5,
            options={"cooccurrence": False, "expand_query": False},
        )
    )
    assert no_cooc.metadata["related_entities"] == []
    assert no_cooc.enhanced_query is None


def test_graph_first_on_a_curated_graph(clinical_embedded: cef.KnowledgeBase) -> None:
    """No text was enriched: the question's names match nodes and the traversal follows domain relations."""
    res = clinical_embedded.retrieve(
        GraphQuery(
            query="What interacts with Warfarin?",
            strategy=SearchStrategy.GRAPH,
            top_k=5,
            options={"depth": 1, "relation_types": ["INTERACTS_WITH"]},
        )
    )
    assert res.strategy is SearchStrategy.GRAPH
    assert res.metadata["query_entities"][0]["node_id"] == "med-warfarin"
    related = {r["node_id"] for r in res.metadata["related_entities"]}
    assert related == {"med-ibuprofen", "med-amiodarone"}
    linked = {r.chunk.node_id for r in res.results if r.explanation.graph_score}
    assert "med-warfarin" in linked and linked & {"med-ibuprofen", "med-amiodarone"}
    interaction = next(r for r in res.results if r.chunk.node_id == "med-amiodarone")
    assert interaction.explanation.path is not None
    assert interaction.explanation.path.relation_types == ["INTERACTS_WITH"]
    assert res.reasoning_context is not None and res.reasoning_context.root_nodes[0].id == "med-warfarin"
