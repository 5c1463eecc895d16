"""Graph navigation and retrieval on the clinical example (no embeddings: graph + BM25)."""

from __future__ import annotations

from datetime import UTC, datetime

import cef
from cef import GraphQuery, ResolutionTarget, SearchStrategy, TraversalHint


def ids(nodes: list[cef.Node]) -> set[str]:
    return {n.id for n in nodes}


def test_lookups(clinical_kb: cef.KnowledgeBase) -> None:
    assert clinical_kb.find_node("med-warfarin").name == "Warfarin"  # type: ignore[union-attr]
    assert clinical_kb.find_node("nope") is None
    assert ids(clinical_kb.find_nodes_by_label("Patient")) == {"pat-john", "pat-amira", "pat-lucas"}
    assert ids(clinical_kb.find_nodes_by_property("brand", "Eliquis")) == {"med-apixaban"}
    assert ids(clinical_kb.find_nodes_by_property("age", 67, label="Patient")) == {"pat-john"}
    assert clinical_kb.find_nodes_by_property("age", 67, label="Doctor") == []


def test_parents_children_siblings_follow_semantics(clinical_kb: cef.KnowledgeBase) -> None:
    # IS_A is CLASSIFICATION, child -> parent: the class is the parent
    assert ids(clinical_kb.get_parents("med-warfarin")) == {"class-anticoagulant"}
    assert ids(clinical_kb.get_children("class-anticoagulant")) == {"med-warfarin", "med-apixaban"}
    assert ids(clinical_kb.get_siblings("med-warfarin")) == {"med-apixaban"}
    # PART_OF is HIERARCHY: nephrology is part of cardiology in this toy graph
    assert ids(clinical_kb.get_parents("spec-nephrology")) == {"spec-cardiology"}
    assert clinical_kb.get_parents("pat-john") == []


def test_neighbors_with_relation_filter_and_bidirectional(clinical_kb: cef.KnowledgeBase) -> None:
    # INTERACTS_WITH is bidirectional: both ends see each other even with direction "out"
    assert ids(clinical_kb.get_neighbors("med-ibuprofen", ["INTERACTS_WITH"], direction="out")) == {
        "med-warfarin",
        "med-lisinopril",
    }
    assert ids(clinical_kb.get_neighbors("cond-afib", ["TREATED_BY"], direction="out")) == {
        "med-warfarin",
        "med-apixaban",
        "med-amiodarone",
    }


def test_current_state_hides_expired_edges(clinical_kb: cef.KnowledgeBase) -> None:
    # John's ibuprofen prescription ended in 2021: not a current neighbour
    current = ids(clinical_kb.get_neighbors("pat-john", ["PRESCRIBED"], direction="out"))
    assert current == {"med-warfarin"}


def test_weighted_shortest_path(clinical_kb: cef.KnowledgeBase) -> None:
    path = clinical_kb.find_path("pat-john", "med-amiodarone")
    assert path is not None
    assert path.node_ids[0] == "pat-john" and path.node_ids[-1] == "med-amiodarone"
    assert path.length == 2  # via warfarin (interaction) or via atrial fibrillation (treated by)
    assert path.node_ids[1] in {"med-warfarin", "cond-afib"}
    assert path.node_names[0] == "John Miller" and "John Miller" in path.describe()
    assert clinical_kb.find_path("pat-john", "pat-john").length == 0  # type: ignore[union-attr]


def test_extract_context_depth_and_groups(clinical_kb: cef.KnowledgeBase) -> None:
    ctx = clinical_kb.extract_context("med-warfarin", depth=1)
    related = ids(ctx.related_nodes)
    assert {"class-anticoagulant", "cond-afib", "med-ibuprofen", "med-amiodarone", "pat-john"} <= related
    assert all(p.length == 1 for p in ctx.paths)
    assert ctx.semantic_groups["classes"] == ["class-anticoagulant"]
    assert "warfarin" in ctx.context_keywords
    deeper = clinical_kb.extract_context("med-warfarin", depth=2)
    assert len(deeper.related_nodes) > len(ctx.related_nodes)
    assert max(p.length for p in deeper.paths) == 2
    only_class = clinical_kb.extract_context(
        "med-warfarin", depth=3, semantics=[cef.RelationSemantics.CLASSIFICATION]
    )
    assert ids(only_class.related_nodes) == {"class-anticoagulant", "med-apixaban"}


def test_retrieve_hybrid_from_named_target(clinical_kb: cef.KnowledgeBase) -> None:
    q = GraphQuery(
        query="what is John Miller taking and what does it interact with",
        targets=[ResolutionTarget(description="John Miller", type_hint="Patient")],
        traversal=TraversalHint(depth=2),
        top_k=5,
        min_results=2,
    )
    res = clinical_kb.retrieve(q)
    # the default route honours the hint: the anchored traversal and the typed paths run from it
    assert res.strategy is SearchStrategy.AUTO
    assert res.metadata["route"]["hints"] == ["targets"]
    assert {"hybrid", "paths"} <= set(res.metadata["route"]["sources"])
    assert res.metadata["anchors"][0]["node_id"] == "pat-john"
    got = [r.chunk.id for r in res.results]
    assert {"drug-ibuprofen", "drug-amiodarone"} <= set(got)  # what John's warfarin interacts with
    assert any("hybrid" in r.explanation.shares for r in res.results)
    graph = [r for r in res.results if {"hybrid", "paths", "path_context"} & set(r.explanation.shares)]
    assert len(graph) >= 3
    for r in graph:
        assert r.explanation.path is not None and r.explanation.path.node_ids[0] == "pat-john"
        assert r.explanation.graph_score is not None
        assert abs(sum(r.explanation.shares.values()) - 1.0) < 1e-3
    # the answer nodes: what John takes (now) and what that interacts with
    assert {"Ibuprofen", "Amiodarone"} <= {n.node.name for n in res.nodes}
    assert res.reasoning_context is not None and res.reasoning_context.root_nodes[0].id == "pat-john"


def test_auto_answers_by_bm25_when_nothing_else_applies(clinical_kb: cef.KnowledgeBase) -> None:
    res = clinical_kb.retrieve(GraphQuery(query="lactic acidosis eGFR", top_k=3, min_results=1))
    # no node is named in the question, and there are no vectors: only BM25 has something to say
    assert res.strategy is SearchStrategy.AUTO
    assert set(res.metadata["route"]["sources"]) == {"bm25"}
    assert res.results[0].chunk.id == "drug-metformin"
    assert res.results[0].explanation.bm25_score is not None
    assert res.results[0].explanation.shares == {"bm25": 1.0}
    # asked for explicitly, the old chain still falls back along hybrid -> vector -> bm25
    chained = clinical_kb.retrieve(
        GraphQuery(query="lactic acidosis eGFR", top_k=3, min_results=1, strategy=SearchStrategy.HYBRID)
    )
    assert chained.strategy is SearchStrategy.BM25
    assert chained.fallbacks and chained.fallbacks[0].startswith("hybrid")


def test_as_of_sees_past_state(clinical_kb: cef.KnowledgeBase) -> None:
    past = datetime(2019, 1, 1, tzinfo=UTC)
    q = GraphQuery(
        query="John Miller medications",
        targets=[ResolutionTarget(description="John Miller")],
        traversal=TraversalHint(depth=1, relation_types=["PRESCRIBED"]),
        as_of=past,
        min_results=1,
    )
    res = clinical_kb.retrieve(q)
    reached = ids(res.reasoning_context.related_nodes)  # type: ignore[union-attr]
    assert reached == {"med-ibuprofen"}


def test_weighted_path_prefers_strong_edges(kb: cef.KnowledgeBase) -> None:
    kb.initialize([], [cef.RelationType(name="ROAD")])
    kb.index_batch(
        cef.Batch(
            nodes=[cef.Node(id=x, label="City") for x in "abcd"],
            edges=[
                cef.Edge(relation_type="ROAD", source="a", target="d", weight=0.2),  # cost 5
                cef.Edge(relation_type="ROAD", source="a", target="b", weight=1.0),
                cef.Edge(relation_type="ROAD", source="b", target="c", weight=1.0),
                cef.Edge(relation_type="ROAD", source="c", target="d", weight=1.0),  # cost 3 in all
            ],
        )
    )
    weighted = kb.find_path("a", "d")
    assert weighted is not None and weighted.node_ids == ["a", "b", "c", "d"] and weighted.weight == 3.0
    hops = kb.find_path("a", "d", weighted=False)
    assert hops is not None and hops.node_ids == ["a", "d"]
    kb.index_node(cef.Node(id="island", label="City"))
    assert kb.find_path("a", "island") is None
