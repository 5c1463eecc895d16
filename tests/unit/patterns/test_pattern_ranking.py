"""Ranking strategies order paths as documented; centrality is cached per graph generation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from cef.graph.index import GraphIndex
from cef.model import Edge
from cef.patterns import GraphPattern, InMemoryNodeLookup, PatternExecutor, QueryCombinator, RankingStrategy

from .conftest import NODES

# edge weight x confidence products along HAS_CONDITION then TREATED_BY:
# ann-ra-mtx 2*.9*3 = 5.4, bob-ra-mtx 1*.5*3 = 1.5, cat-dia-ins 1, ann-ra-pred 2*.9*.5 = .9, bob-ra-pred .25
TWO_HOPS = {
    "start": {"label": "Patient"},
    "steps": [{"relation_type": "HAS_CONDITION"}, {"relation_type": "TREATED_BY"}],
}
TAKES = {
    "start": {"label": "Patient"},
    "steps": [{"relation_type": "TAKES"}],
}  # bob-mtx .8, ann-pred .7, cat-ins 1
SIM = {"mtx": 0.1, "pred": 0.9, "ins": 0.5}


def pairs(result: Any) -> list[tuple[str, str]]:
    return [(p.start_node_id, p.end_node_id) for p in result.paths]


def similarity_for(graph: GraphIndex) -> Any:
    table = np.zeros(len(graph.node_ids))
    for nid, s in SIM.items():
        table[graph.pos(nid)] = s
    return lambda positions: table[positions]


def test_edge_weight_orders_by_product_of_weight_and_confidence(executor: PatternExecutor) -> None:
    result = executor.execute(GraphPattern.model_validate({**TWO_HOPS, "ranking": "EDGE_WEIGHT"}))
    assert pairs(result) == [("ann", "mtx"), ("bob", "mtx"), ("cat", "ins"), ("ann", "pred"), ("bob", "pred")]
    assert [round(p.score, 4) for p in result.paths] == [5.4, 1.5, 1.0, 0.9, 0.25]
    assert result.paths[0].properties["confidence_product"] == pytest.approx(0.9)
    assert "ranked by EDGE_WEIGHT" in result.paths[0].explanation


def test_path_length_puts_shorter_paths_first(executor: PatternExecutor) -> None:
    comb = QueryCombinator.model_validate(
        {"type": "UNION", "patterns": [TWO_HOPS, TAKES], "ranking": "PATH_LENGTH"}
    )
    result = executor.execute_combinator(comb)
    assert [p.length for p in result.paths] == [1, 1, 1, 2, 2, 2, 2, 2]
    assert result.paths[0].score == pytest.approx(0.5) and result.paths[-1].score == pytest.approx(1 / 3)


def test_node_centrality_prefers_paths_through_hubs(executor: PatternExecutor) -> None:
    # degree: RA 4 (the maximum), Diabetes 2, each drug 2
    pattern = {
        "start": {"label": "Drug"},
        "steps": [{"relation_type": "TREATS"}],
        "ranking": "NODE_CENTRALITY",
    }
    result = executor.execute(GraphPattern.model_validate(pattern))
    assert pairs(result) == [("mtx", "ra"), ("pred", "ra"), ("ins", "dia")]
    assert [p.score for p in result.paths] == pytest.approx([0.75, 0.75, 0.5])


def test_pagerank_centrality_agrees_on_the_hub(graph: GraphIndex) -> None:
    ex = PatternExecutor(graph, InMemoryNodeLookup(graph, NODES), centrality="pagerank")
    pattern = {
        "start": {"label": "Drug"},
        "steps": [{"relation_type": "TREATS"}],
        "ranking": "NODE_CENTRALITY",
    }
    result = ex.execute(GraphPattern.model_validate(pattern))
    assert pairs(result)[-1] == ("ins", "dia")
    assert result.paths[0].score > result.paths[-1].score


def test_centrality_is_cached_per_graph_generation(graph: GraphIndex) -> None:
    ex = PatternExecutor(graph, InMemoryNodeLookup(graph, NODES))
    pattern = GraphPattern.model_validate({**TAKES, "ranking": "NODE_CENTRALITY"})
    ex.execute(pattern)
    ex.execute(pattern)
    assert ex.centrality.computations == 1
    before = ex.execute(pattern).paths
    # make Methotrexate a hub: centrality must be recomputed and the order change
    graph.add_edges([Edge(id=f"x{i}", relation_type="TAKES", source="house", target="mtx") for i in range(5)])
    after = ex.execute(pattern).paths
    assert ex.centrality.computations == 2
    assert before[0].end_node_id != "mtx" and after[0].end_node_id == "mtx"


def test_semantic_score_ranks_by_similarity_to_the_query(
    graph: GraphIndex, executor: PatternExecutor
) -> None:
    pattern = GraphPattern.model_validate({**TAKES, "ranking": "SEMANTIC_SCORE"})
    result = executor.execute(pattern, similarity=similarity_for(graph))
    assert [p.end_node_id for p in result.paths] == ["pred", "ins", "mtx"]
    assert [p.score for p in result.paths] == pytest.approx([0.45, 0.25, 0.05])  # mean over the path's nodes


class FakeVectors:
    """Unit vectors: drugs along their similarity to the x axis."""

    def __init__(self) -> None:
        self.calls = 0

    def similarities(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        self.calls += 1
        assert np.allclose(vector, [1.0, 0.0])
        return np.array([SIM.get(i, 0.0) for i in ids])


def test_semantic_score_from_embed_query_and_node_vectors(graph: GraphIndex) -> None:
    asked: list[str] = []

    def embed(text: str) -> np.ndarray:
        asked.append(text)
        return np.array([1.0, 0.0])

    vectors = FakeVectors()
    ex = PatternExecutor(graph, InMemoryNodeLookup(graph, NODES), embed_query=embed, node_vectors=vectors)
    pattern = GraphPattern.model_validate(
        {**TAKES, "ranking": "SEMANTIC_SCORE", "semantic_query": "steroids"}
    )
    result = ex.execute(pattern, query_text="ignored: the pattern has its own")
    assert asked == ["steroids"] and vectors.calls == 1  # every node asked for once, in one call
    assert result.paths[0].end_node_id == "pred"
    assert (
        ex.execute(pattern.model_copy(update={"semantic_query": None}), query_text="q").paths[0].end_node_id
        == "pred"
    )


def test_semantic_score_without_a_query_falls_back_with_a_warning(executor: PatternExecutor) -> None:
    result = executor.execute(GraphPattern.model_validate({**TAKES, "ranking": "SEMANTIC_SCORE"}))
    assert result.ranking is RankingStrategy.HYBRID
    assert any("SEMANTIC_SCORE needs" in w for w in result.warnings)
    assert len(result.paths) == 3


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ({"edge_weight": 1, "path_length": 0, "node_centrality": 0, "semantic": 0}, ["ins", "mtx", "pred"]),
        ({"edge_weight": 0, "path_length": 0, "node_centrality": 0, "semantic": 1}, ["pred", "ins", "mtx"]),
        # edge (min-max): mtx .33, pred 0, ins 1; semantic: mtx 0, pred 1, ins .5
        ({"edge_weight": 1, "path_length": 0, "node_centrality": 0, "semantic": 1}, ["ins", "pred", "mtx"]),
        ({"edge_weight": 1, "path_length": 0, "node_centrality": 0, "semantic": 3}, ["pred", "ins", "mtx"]),
    ],
)
def test_hybrid_weights_are_configurable(
    graph: GraphIndex, executor: PatternExecutor, weights: dict[str, float], expected: list[str]
) -> None:
    pattern = GraphPattern.model_validate({**TAKES, "ranking": "HYBRID", "hybrid_weights": weights})
    result = executor.execute(pattern, similarity=similarity_for(graph))
    assert [p.end_node_id for p in result.paths] == expected
    assert ("semantic" in result.paths[0].score_components) == (weights["semantic"] > 0)


def test_hybrid_score_is_the_weighted_mean_of_scaled_components(
    graph: GraphIndex, executor: PatternExecutor
) -> None:
    weights = {"edge_weight": 1, "path_length": 0, "node_centrality": 0, "semantic": 3}
    pattern = GraphPattern.model_validate({**TAKES, "hybrid_weights": weights})
    scores = {
        p.end_node_id: p.score for p in executor.execute(pattern, similarity=similarity_for(graph)).paths
    }
    edge = {"mtx": (0.8 - 0.7) / 0.3, "pred": 0.0, "ins": 1.0}
    sem = {"mtx": 0.0, "pred": 1.0, "ins": 0.5}
    for n in scores:
        assert scores[n] == pytest.approx((edge[n] + 3 * sem[n]) / 4, abs=1e-6)


def test_ties_keep_discovery_order_and_results_are_deterministic(executor: PatternExecutor) -> None:
    pattern = GraphPattern.model_validate({**TWO_HOPS, "ranking": "PATH_LENGTH"})
    first = executor.execute(pattern)
    assert pairs(first) == [("ann", "mtx"), ("ann", "pred"), ("bob", "mtx"), ("bob", "pred"), ("cat", "ins")]
    again = executor.execute(pattern)
    assert [p.model_dump() for p in again.paths] == [p.model_dump() for p in first.paths]
