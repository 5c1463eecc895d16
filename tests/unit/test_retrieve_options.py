"""``kb.retrieve(GraphQuery, top_k=..., ...)`` applies the keywords (options used to be dropped silently)."""

from __future__ import annotations

import pydantic
import pytest

import cef
from cef import GraphQuery, SearchStrategy


def test_options_override_a_graph_query(clinical_kb: cef.KnowledgeBase) -> None:
    q = GraphQuery(query="warfarin interactions", top_k=10)
    got = clinical_kb.retrieve(q, top_k=2, strategy=SearchStrategy.BM25)
    assert len(got.results) == 2 and got.strategy is SearchStrategy.BM25
    assert q.top_k == 10  # the caller's query is not changed
    with pytest.raises(TypeError):
        clinical_kb.retrieve(q, no_such_field=1)  # type: ignore[call-arg]  # explicit keywords only
    with pytest.raises(pydantic.ValidationError):
        clinical_kb.retrieve(q, top_k=0)


def test_the_keywords_are_graph_query_fields() -> None:
    """Each keyword of ``retrieve`` is a GraphQuery field (its defaults and checks live there, once)."""
    import inspect

    keywords = [
        p.name
        for p in inspect.signature(cef.KnowledgeBase.retrieve).parameters.values()
        if p.kind is p.KEYWORD_ONLY
    ]
    assert keywords and set(keywords) <= set(GraphQuery.model_fields)


def test_keywords_build_the_query_from_a_question(clinical_kb: cef.KnowledgeBase) -> None:
    got = clinical_kb.retrieve(
        "warfarin interactions", top_k=1, strategy="bm25", tags=["nope"], min_results=0
    )
    assert got.strategy is SearchStrategy.BM25 and got.results == []  # no chunk carries the tag
