"""The multi-query context provider: dedupe, ranking strategies, budget, errors (clinical example, no model)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef import Chunk, Explanation, GraphPath, RankedChunk, SearchResult, SearchStrategy
from cef.context import (
    BudgetTooSmallError,
    ContextFormat,
    ContextProvider,
    ContextRequest,
    QuerySpec,
    RankingStrategy,
)
from cef.context.provider import dedupe_chunks, rank_chunks
from cef.context.request import MIN_TOKEN_BUDGET
from cef.context.tokens import make_token_counter
from tests.conftest import clinical_batch


def rc(chunk_id: str, score: float, content: str | None = None, path: GraphPath | None = None) -> RankedChunk:
    return RankedChunk(
        chunk=Chunk(id=chunk_id, content=content or f"Text of {chunk_id}."),
        score=score,
        explanation=Explanation(strategy=SearchStrategy.VECTOR, path=path),
    )


def result(query: str, hits: list[RankedChunk]) -> SearchResult:
    return SearchResult(query=query, results=hits, strategy=SearchStrategy.VECTOR)


# ------------------------------------------------------------ dedupe / rank
hit_lists = st.lists(
    st.lists(
        st.tuples(st.sampled_from("abcdefgh"), st.floats(min_value=-5, max_value=5, allow_nan=False)),
        max_size=8,
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(lists=hit_lists)
def test_dedupe_keeps_the_best_score_and_every_query(lists: list[list[tuple[str, float]]]) -> None:
    results = [[rc(cid, s) for cid, s in hits] for hits in lists]
    merged = dedupe_chunks(results)
    ids = {cid for hits in lists for cid, _ in hits}
    assert sorted(m.id for m in merged) == sorted(ids)
    for m in merged:
        scores = [s for hits in lists for cid, s in hits if cid == m.id]
        assert m.score == max(scores)
        assert m.queries == sorted({qi for qi, hits in enumerate(lists) if any(c == m.id for c, _ in hits)})
        assert any(c == m.id and s == m.score for c, s in lists[m.query])
    for strategy in RankingStrategy:
        ranked = rank_chunks(merged, strategy)
        assert sorted(m.id for m in ranked) == sorted(ids)  # a permutation: nothing lost, nothing twice
    by_score = [m.score for m in rank_chunks(merged, RankingStrategy.SCORE)]
    assert by_score == sorted(by_score, reverse=True)


def test_ranking_strategies() -> None:
    merged = dedupe_chunks(
        [
            [rc("a1", 0.9), rc("a2", 0.8), rc("shared", 0.3)],
            [rc("b1", 0.5), rc("shared", 0.7), rc("b2", 0.4)],
        ]
    )
    order = {s: [m.id for m in rank_chunks(merged, s)] for s in RankingStrategy}
    assert order[RankingStrategy.SCORE] == ["a1", "a2", "shared", "b1", "b2"]
    assert order[RankingStrategy.ROUND_ROBIN] == ["a1", "b1", "a2", "shared", "b2"]
    assert order[RankingStrategy.QUERY_ORDER] == ["a1", "a2", "shared", "b1", "b2"]
    assert order[RankingStrategy.RECIPROCAL_RANK][0] == "shared"  # found by both queries


# ---------------------------------------------------------------- assemble
@pytest.fixture(scope="module")
def empty_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    with cef.open(tmp_path_factory.mktemp("ctx") / "kb.db", embedder=None) as k:
        yield k


words = st.sampled_from(
    [
        "Warfarin",
        "raises",
        "the",
        "INR.",
        "Dr.",
        "Chen",
        "agrees!",
        "Kidney",
        "function",
        "matters?",
        "東京",
        "🙂",
    ]
)
contents = st.lists(words, min_size=1, max_size=80).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lists=st.lists(
        st.lists(st.tuples(st.integers(0, 12), st.floats(0, 1), contents), max_size=6), min_size=1, max_size=4
    ),
    budget=st.integers(min_value=MIN_TOKEN_BUDGET, max_value=900),
    fmt=st.sampled_from(list(ContextFormat)),
    ranking=st.sampled_from(list(RankingStrategy)),
)
def test_assembled_context_never_exceeds_the_budget(
    empty_kb: cef.KnowledgeBase,
    lists: list[list[tuple[int, float, str]]],
    budget: int,
    fmt: ContextFormat,
    ranking: RankingStrategy,
) -> None:
    counter = make_token_counter("cl100k")
    provider = ContextProvider(empty_kb, counter)
    content_of: dict[str, str] = {}
    results = []
    for qi, hits in enumerate(lists):
        ranked = []
        for n, score, text in hits:
            content_of.setdefault(f"c{n}", text)  # one content per chunk id, whatever query finds it
            ranked.append(rc(f"c{n}", score, content_of[f"c{n}"]))
        results.append(result(f"query {qi}", ranked))
    request = ContextRequest.of(
        *[f"query {i}" for i in range(len(lists))], token_budget=budget, format=fmt, ranking=ranking
    )
    try:
        response = provider.assemble(request, results)
    except BudgetTooSmallError as exc:  # the format's empty frame (with every query) alone is larger
        assert exc.needed > budget
        return
    assert counter.count(response.context) == response.total_tokens <= budget
    assert response.token_budget == budget
    ids = [c.chunk.id for c in response.chunks]
    assert len(ids) == len(set(ids))  # deduplicated
    unique = {f"c{n}" for hits in lists for n, _, _ in hits}
    assert response.truncated == (len(ids) < len(unique) or any(c.truncated for c in response.chunks))
    for c in response.chunks:
        best = max(s for hits in lists for n, s, _ in hits if f"c{n}" == c.chunk.id)
        assert c.score == best
        assert c.content == content_of[c.chunk.id] or c.truncated


def test_reasoning_is_reserved_and_chunks_fill_the_rest(empty_kb: cef.KnowledgeBase) -> None:
    counter = make_token_counter("cl100k")
    path = GraphPath(
        node_ids=["med-warfarin", "cond-afib"],
        relation_types=["TREATS"],
        node_names=["Warfarin", "Atrial fibrillation"],
    )
    hits = [
        rc(f"c{i}", 1 - i / 10, "Warfarin raises the INR. " * 8, path if i == 0 else None) for i in range(8)
    ]
    request = ContextRequest.of("warfarin", token_budget=300, reserve_reasoning_tokens=60)
    response = ContextProvider(empty_kb, counter).assemble(request, [result("warfarin", hits)])
    assert response.reasoning.paths and response.reasoning.paths[0].text == path.describe()
    assert "## Graph paths" in response.context and response.total_tokens <= 300
    assert response.metadata["chunks_selected"] == len(response.chunks) >= 2
    no_paths = ContextProvider(empty_kb, counter).assemble(
        request.model_copy(update={"include_paths": False}), [result("warfarin", hits)]
    )
    assert no_paths.reasoning.paths == [] and "Graph paths" not in no_paths.context
    assert len(no_paths.chunks) >= len(response.chunks)


# ----------------------------------------------------- provide_context (clinical)
def test_provide_context_on_the_clinical_example(clinical_kb: cef.KnowledgeBase) -> None:
    provider = ContextProvider(clinical_kb, "cl100k")
    request = ContextRequest.of(
        "Which medications interact with warfarin?",
        QuerySpec(query="warfarin bleeding risk", start_node="med-warfarin", depth=1),
        token_budget=700,
        format=ContextFormat.JSON,
    )
    response = provider.provide_context(request)
    data = json.loads(response.context)
    assert data["meta"]["total_tokens"] == response.total_tokens <= 700
    assert data["meta"]["token_budget"] == 700
    ids = [c["id"] for c in data["chunks"]]
    assert "drug-warfarin-interactions" in ids
    assert len(ids) == len(set(ids))
    # a chunk both queries found is listed once, with both query numbers
    assert any(c["queries"] == [1, 2] for c in data["chunks"])
    anchors = response.metadata["per_query"][1]["anchors"]
    assert anchors[0]["node_id"] == "med-warfarin" and anchors[0]["how"] == "id"
    meta = response.metadata
    assert meta["queries_processed"] == 2 and meta["chunks_selected"] == len(response.chunks)
    assert meta["chunks_retrieved"] >= meta["unique_chunks"] >= meta["chunks_selected"]
    assert 0 < meta["token_utilization"] <= 1 and meta["strategies_used"]
    assert response.to_prompt_context() == response.context
    assert response.to_prompt_context("plain").startswith("CONTEXT\n")


def test_unknown_start_node_is_reported_and_the_query_still_runs(clinical_kb: cef.KnowledgeBase) -> None:
    response = ContextProvider(clinical_kb, "cl100k").provide_context(
        ContextRequest(
            queries=[QuerySpec(query="metformin kidney", start_node="no-such-node")], token_budget=400
        )
    )
    assert response.warnings == ["query 1: start node 'no-such-node' does not exist; searched without it"]
    assert response.chunks


def test_no_match_gives_an_empty_context_with_a_reason(clinical_kb: cef.KnowledgeBase) -> None:
    response = ContextProvider(clinical_kb, "cl100k").provide_context(
        ContextRequest.of("zzqx wvvk", token_budget=200, format=ContextFormat.JSON)
    )
    assert response.is_empty and response.chunks == []
    assert response.reason is not None and "no match" in response.reason
    assert json.loads(response.context)["chunks"] == []  # still a valid document
    assert response.truncated is False


def test_unavailable_store_gives_an_empty_context_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
        other = sqlite3.connect(path)
        other.execute("DROP TABLE chunk_fts")
        other.execute("DROP TABLE node_fts")
        other.commit()
        other.close()
        response = ContextProvider(kb, "cl100k").provide_context(
            ContextRequest.of("warfarin", "metformin", token_budget=300)
        )
    assert response.is_empty
    assert response.reason == "the knowledge base is unavailable"
    assert len(response.warnings) == 2 and all("unavailable" in w for w in response.warnings)
    assert response.metadata["queries_processed"] == 0


def test_request_validation() -> None:
    parse = ContextRequest.model_validate
    assert parse({"queries": "one"}).queries == [QuerySpec(query="one")]
    assert parse({"queries": ["a", {"query": "b", "depth": 1}]}).queries[1].depth == 1
    assert ContextRequest.of("a", QuerySpec(query="b", top_k=3)).queries[1].top_k == 3
    # a reserve over the budget is the whole budget (stated in the schema, not a hidden cross-field rule)
    assert (
        ContextRequest.of("a", token_budget=200, reserve_reasoning_tokens=201).reserve_reasoning_tokens == 200
    )
    with pytest.raises(pydantic.ValidationError):
        parse({"queries": []})
    with pytest.raises(pydantic.ValidationError):
        ContextRequest.of("a", token_budget=0)
    with pytest.raises(pydantic.ValidationError):
        parse({"queries": [{"query": "a", "depth": 11}]})
    with pytest.raises(pydantic.ValidationError):
        parse({"queries": ["a"], "format": "html"})
    assert ContextRequest.of("a", token_budget=1000).reasoning_reserve == 200
    assert ContextRequest.of("a", include_paths=False).reasoning_reserve == 0


def test_counter_by_name_and_unknown_names(empty_kb: cef.KnowledgeBase) -> None:
    assert ContextProvider(empty_kb, "wordpiece").counter.name.startswith("wordpiece")
    assert ContextProvider(empty_kb).counter.name == "tiktoken(cl100k_base)"
    with pytest.raises(cef.CefError, match="unknown token counter"):
        ContextProvider(empty_kb, "no-such-tokenizer")
