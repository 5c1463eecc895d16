"""The graph strategies fall back along their chains: GRAPH/PPR → VECTOR → BM25."""

from __future__ import annotations

import cef
from cef import GraphQuery, SearchStrategy
from cef.retrieve.presets import DEFAULT_CHAIN, GRAPH_FIRST, PPR_DEFAULT


def test_chains_are_registered(text_kb: cef.KnowledgeBase) -> None:
    reg = text_kb.strategies
    assert (
        reg.chain(SearchStrategy.PPR)
        == PPR_DEFAULT.chain
        == [
            SearchStrategy.PPR,
            SearchStrategy.VECTOR,
            SearchStrategy.BM25,
        ]
    )
    assert reg.chain(SearchStrategy.GRAPH) == GRAPH_FIRST.chain
    assert reg.chain(SearchStrategy.AUTO) == DEFAULT_CHAIN
    # they link the question themselves: no anchor resolution before them
    assert not reg.needs_graph(SearchStrategy.PPR)
    assert not reg.needs_graph(SearchStrategy.GRAPH)
    assert reg.needs_graph(SearchStrategy.HYBRID)


def test_graph_falls_back_to_vector_when_no_entity_is_named(text_kb: cef.KnowledgeBase) -> None:
    res = text_kb.retrieve(
        GraphQuery(query="a spice made from dried peppers", strategy=SearchStrategy.GRAPH, top_k=3)
    )
    assert res.strategy is SearchStrategy.VECTOR
    assert res.fallbacks and res.fallbacks[0].startswith("graph: 0 result(s)")
    assert res.results[0].chunk.id == "paprika"
    assert "graph: the question names no entity of the graph" in res.metadata["notes"]


def test_ppr_and_graph_fall_back_to_bm25_without_vectors(text_kb_plain: cef.KnowledgeBase) -> None:
    for strategy in (SearchStrategy.PPR, SearchStrategy.GRAPH):
        res = text_kb_plain.retrieve(
            GraphQuery(query="spice made from dried peppers", strategy=strategy, top_k=3, min_results=1)
        )
        assert res.strategy is SearchStrategy.BM25, strategy
        assert [f.split(":")[0] for f in res.fallbacks] == [strategy.value, "vector"]
        assert res.results[0].chunk.id == "paprika"


def test_ppr_without_vectors_still_ranks_from_entities(text_kb_plain: cef.KnowledgeBase) -> None:
    res = text_kb_plain.retrieve(
        GraphQuery(query="Where was Elena Varga born?", strategy=SearchStrategy.PPR, top_k=3)
    )
    assert res.strategy is SearchStrategy.PPR
    assert res.results[0].chunk.id == "varga"
    assert res.results[0].explanation.vector_score is None


def test_ppr_is_skipped_where_no_text_became_a_graph(clinical_embedded: cef.KnowledgeBase) -> None:
    """No MENTIONS edges: PPR does not apply, so it is not a failed attempt — the chain goes on."""
    res = clinical_embedded.retrieve(
        GraphQuery(query="blood thinner that needs no INR checks", strategy=SearchStrategy.PPR, top_k=3)
    )
    assert res.strategy is SearchStrategy.VECTOR
    assert res.fallbacks == []
    assert res.results[0].chunk.id == "drug-apixaban"
    auto = clinical_embedded.retrieve(GraphQuery(query="blood thinner that needs no INR checks", top_k=3))
    assert auto.strategy is SearchStrategy.AUTO
    assert "ppr" not in auto.metadata["route"]["sources"]  # no text graph: PPR does not apply
    assert "vector" in auto.metadata["route"]["sources"]
    assert auto.results[0].chunk.id == "drug-apixaban"


def test_auto_uses_ppr_on_text(text_kb: cef.KnowledgeBase) -> None:
    from tests.unit.retrieve.corpus import GOLD, QUESTION

    res = text_kb.retrieve(GraphQuery(query=QUESTION, top_k=5))
    assert res.strategy is SearchStrategy.AUTO
    assert "ppr" in res.metadata["route"]["sources"]
    assert set(GOLD) <= {r.chunk.id for r in res.results[:2]}
    assert all("ppr" in r.explanation.shares for r in res.results[:2])
    # no hint: HYBRID's anchor resolution and traversal do not run; the anchors are PPR's entities
    assert [a["how"] for a in res.metadata["anchors"]] == ["entity"]
    assert res.reasoning_context is not None and res.reasoning_context.metadata["strategy"] == "ppr"


def test_each_knowledge_base_owns_its_strategies(
    text_kb: cef.KnowledgeBase, text_kb_plain: cef.KnowledgeBase
) -> None:
    """A strategy registered on one knowledge base runs there and nowhere else."""
    from cef.model import RankedChunk

    calls: list[str] = []

    def nothing(qc: object) -> list[RankedChunk]:
        calls.append("custom")
        return []

    text_kb.strategies.register(
        SearchStrategy.GRAPH, nothing, [SearchStrategy.GRAPH, SearchStrategy.BM25], graph=False
    )
    res = text_kb.retrieve(GraphQuery(query="paprika", strategy=SearchStrategy.GRAPH, top_k=3, min_results=1))
    assert calls == ["custom"]
    assert res.strategy is SearchStrategy.BM25
    assert res.fallbacks == ["graph: 0 result(s) < min_results 1"]
    text_kb_plain.retrieve(GraphQuery(query="paprika", strategy=SearchStrategy.GRAPH, top_k=3))
    assert calls == ["custom"]  # the other knowledge base still runs the built-in graph strategy
    assert text_kb_plain.strategies.chain(SearchStrategy.GRAPH) == GRAPH_FIRST.chain


def test_default_chain_must_not_be_empty(text_kb: cef.KnowledgeBase) -> None:
    import pytest

    with pytest.raises(ValueError, match="at least one strategy"):
        text_kb.strategies.set_default_chain([])


def test_the_template_runs_each_strategys_stages_once(text_kb: cef.KnowledgeBase) -> None:
    """The registry says what runs before each strategy; the template names no strategy."""
    from cef.model import RankedChunk
    from cef.retrieve.context import QueryContext
    from cef.retrieve.strategies import ANCHORS, PATH_VECTORS, Stage

    reg = text_kb.strategies
    assert reg.stages(SearchStrategy.HYBRID) == (ANCHORS,)
    assert PATH_VECTORS in reg.stages(SearchStrategy.AUTO) and PATH_VECTORS in reg.stages(
        SearchStrategy.PATHS
    )
    ran: list[str] = []

    def mark(qc: QueryContext) -> None:
        ran.append(qc.query.query)

    def one(qc: QueryContext) -> list[RankedChunk]:
        return []

    stage = Stage("mark", mark)
    reg.register(
        SearchStrategy.GRAPH, one, [SearchStrategy.GRAPH, SearchStrategy.PPR], graph=False, stages=[stage]
    )
    reg.register(SearchStrategy.PPR, one, graph=False, stages=[stage])
    res = text_kb.retrieve(GraphQuery(query="paprika", strategy=SearchStrategy.GRAPH, min_results=1))
    assert ran == ["paprika"]  # asked for by both strategies of the chain, run once
    assert res.fallbacks == ["graph: 0 result(s) < min_results 1", "ppr: 0 result(s) < min_results 1"]
    plan = reg.plan(GraphQuery(query="x", strategy=SearchStrategy.GRAPH))
    assert [s for s, _ in plan] == [SearchStrategy.GRAPH, SearchStrategy.PPR]
