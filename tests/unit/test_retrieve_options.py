"""``kb.retrieve(GraphQuery, **options)`` applies the options (they used to be dropped silently)."""

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
    with pytest.raises(pydantic.ValidationError):
        clinical_kb.retrieve(q, no_such_field=1)
    with pytest.raises(pydantic.ValidationError):
        clinical_kb.retrieve(q, top_k=0)
