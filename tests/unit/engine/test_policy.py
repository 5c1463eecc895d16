"""The engine's rules for a query from any door (cef/engine/policy.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cef import GraphQuery, SearchStrategy
from cef.engine.policy import QueryPolicy, search_query

limits = st.none() | st.integers(1, 600_000)


@given(limit=limits, own=limits, top_k=st.integers(1, 1000))
def test_bound_sets_the_limit_only_where_the_query_has_none(
    limit: int | None, own: int | None, top_k: int
) -> None:
    q = GraphQuery(query="q", deadline_ms=own, top_k=top_k)
    got = QueryPolicy(time_limit_ms=limit).bound(q)
    assert got.deadline_ms == (own if own is not None else limit)
    assert got.model_dump(exclude={"deadline_ms"}) == q.model_dump(exclude={"deadline_ms"})


def test_no_limit_is_none_and_a_bad_one_is_refused() -> None:
    assert QueryPolicy.limited(0).time_limit_ms is None
    assert QueryPolicy.limited(None).time_limit_ms is None
    with pytest.raises(ValueError, match="time_limit_ms"):
        QueryPolicy(time_limit_ms=0)


@given(top_k=st.integers(1, 1000), depth=st.integers(0, 10), graph=st.booleans())
def test_a_search_explores_the_graph_only_when_asked_and_deep(top_k: int, depth: int, graph: bool) -> None:
    q = search_query("q", top_k=top_k, depth=depth, graph=graph)
    explores = graph and depth > 0
    assert q.strategy is (SearchStrategy.AUTO if explores else SearchStrategy.VECTOR)
    assert q.min_results == min(3, top_k)  # the model's default, never above top_k
    assert q.traversal.depth == depth
