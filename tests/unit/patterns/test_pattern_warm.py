"""One-time loading (the embedding model) never counts against a pattern's time limit; a time-out is a warning."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cef.graph.index import GraphIndex
from cef.patterns import GraphPattern, InMemoryNodeLookup, PatternExecutor

from .conftest import NODES, random_graph
from .test_pattern_limits import FIVE_HOPS_ANYWHERE, big_executor

TWO_HOPS = {
    "start": {"label": "Patient"},
    "steps": [{"relation_type": "HAS_CONDITION"}, {"relation_type": "TREATED_BY"}],
    "ranking": "SEMANTIC_SCORE",
    "semantic_query": "blood thinner",
    "time_limit_ms": 1000,
}


class Clock:
    """A fake clock: only the slow model load moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Vectors:
    def similarities(self, vector: np.ndarray, ids: Sequence[str]) -> list[float]:
        return [0.5] * len(ids)


def test_loading_the_model_does_not_count_against_the_time_limit(graph: GraphIndex) -> None:
    clock = Clock()
    loads: list[str] = []

    def embed_query(text: str) -> np.ndarray:
        loads.append(text)
        clock.now += 4.2  # the first call loads the model: 4.2 s, past the 1,000 ms limit
        return np.ones(4, dtype=np.float32)

    ex = PatternExecutor(
        graph, InMemoryNodeLookup(graph, NODES), embed_query=embed_query, node_vectors=Vectors(), clock=clock
    )
    result = ex.execute(GraphPattern.model_validate(TWO_HOPS))
    assert loads == ["blood thinner"]
    assert not result.timed_out and result.paths, result
    assert result.ranking.value == "SEMANTIC_SCORE"
    assert not any("time limit" in w for w in result.warnings)


def test_a_time_out_is_always_a_visible_warning() -> None:
    graph = random_graph(5_000, 60_000)
    result = big_executor(graph).execute(
        GraphPattern.model_validate({**FIVE_HOPS_ANYWHERE, "time_limit_ms": 1})
    )
    assert result.timed_out
    assert any("time limit reached" in w and "path(s) found so far" in w for w in result.warnings)
