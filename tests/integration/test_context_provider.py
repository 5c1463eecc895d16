"""Multi-query context assembly with the real embedding model on the clinical example."""

from __future__ import annotations

import json

import pytest
import yaml

import cef
from cef.context import ContextFormat, ContextProvider, ContextRequest, QuerySpec, RankingStrategy
from cef.context.cuts import TRUNCATION_MARKER
from cef.context.tokens import make_token_counter

QUERIES = [
    "Which medications interact with warfarin?",
    "How is chronic kidney disease managed with diabetes?",
    "Who treats atrial fibrillation?",
]


@pytest.mark.parametrize("tokenizer", ["cl100k", "wordpiece"])
@pytest.mark.parametrize("fmt", list(ContextFormat))
@pytest.mark.parametrize("budget", [200, 400, 1500])
def test_budget_holds_for_every_format_and_tokenizer(
    clinical_embedded: cef.KnowledgeBase, tokenizer: str, fmt: ContextFormat, budget: int
) -> None:
    provider = ContextProvider(clinical_embedded, tokenizer)
    response = provider.provide_context(ContextRequest.of(*QUERIES, token_budget=budget, format=fmt))
    counter = make_token_counter(tokenizer)
    assert counter.count(response.context) == response.total_tokens <= budget
    assert response.metadata["tokenizer"] == counter.name
    if budget == 200:
        assert response.truncated
    for c in response.chunks:
        assert c.content == c.chunk.content or (c.truncated and c.content.endswith(TRUNCATION_MARKER))
    if fmt is ContextFormat.JSON:
        meta = json.loads(response.context)["meta"]
        assert (meta["total_tokens"], meta["token_budget"], meta["truncated"]) == (
            response.total_tokens,
            budget,
            response.truncated,
        )
    if fmt is ContextFormat.YAML:
        data = yaml.safe_load(response.context)
        assert [c["id"] for c in data["chunks"]] == [c.chunk.id for c in response.chunks]


def test_answers_every_query_and_explains_chunks(clinical_embedded: cef.KnowledgeBase) -> None:
    provider = ContextProvider(clinical_embedded, "cl100k")
    response = provider.provide_context(ContextRequest.of(*QUERIES, token_budget=3000))
    found = {q for c in response.chunks for q in c.queries}
    assert found == {1, 2, 3}
    ids = [c.chunk.id for c in response.chunks]
    assert "drug-warfarin-interactions" in ids and "note-lucas-1" in ids
    assert len(ids) == len(set(ids))
    assert response.reasoning.anchors and response.reasoning.paths
    assert any(a.id == "med-warfarin" for a in response.reasoning.anchors)
    assert all(c.explanation.strategy for c in response.chunks)
    assert response.metadata["queries_processed"] == 3
    assert response.duration_ms >= response.metadata["assembly_ms"]


def test_ranking_strategies_change_the_order(clinical_embedded: cef.KnowledgeBase) -> None:
    provider = ContextProvider(clinical_embedded, "cl100k")
    request = ContextRequest.of(*QUERIES, token_budget=4000, include_paths=False)
    results, _ = provider.retrieve(request)
    orders = {}
    for strategy in RankingStrategy:
        response = provider.assemble(request.model_copy(update={"ranking": strategy}), results)
        orders[strategy] = [c.chunk.id for c in response.chunks]
    assert sorted(orders[RankingStrategy.SCORE]) == sorted(orders[RankingStrategy.ROUND_ROBIN])
    scores = [c.score for c in provider.assemble(request, results).chunks]
    assert scores == sorted(scores, reverse=True)
    # round robin: the first chunk of each query's own ranking comes first
    tops = [r.results[0].chunk.id for r in results if r is not None and r.results]
    assert orders[RankingStrategy.ROUND_ROBIN][: len(set(tops))] == list(dict.fromkeys(tops))
    by_query = orders[RankingStrategy.QUERY_ORDER]
    first_query = [r.chunk.id for r in results[0].results] if results[0] is not None else []
    assert by_query[: len(first_query)] == first_query


def test_start_node_and_depth_steer_a_query(clinical_embedded: cef.KnowledgeBase) -> None:
    provider = ContextProvider(clinical_embedded, "cl100k")
    response = provider.provide_context(
        ContextRequest(
            queries=[QuerySpec(query="current treatment", start_node="pat-amira", depth=1)], token_budget=2000
        )
    )
    anchors = response.metadata["per_query"][0]["anchors"]
    assert anchors[0]["node_id"] == "pat-amira"
    ids = {c.chunk.id for c in response.chunks}
    assert {"note-amira-1", "note-amira-2"} <= ids
    assert "Amira Haddad" in response.context
