"""The default route on a curated graph: typed paths, valid time, hints, query-time anchors, rendering."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef import GraphQuery, ResolutionTarget, TraversalHint
from cef.model import SearchStrategy
from cef.patterns import Direction, GraphPattern, PatternStart, TraversalStep


def answers(res: cef.SearchResult) -> list[str]:
    return [n.node.name for n in res.nodes]


def test_the_readme_question_walks_prescribed_then_interacts(clinical_kb: cef.KnowledgeBase) -> None:
    res = clinical_kb.retrieve(
        GraphQuery(query="Which drugs interact with the medication John Miller takes?")
    )
    assert res.strategy is SearchStrategy.AUTO
    assert set(answers(res)[:2]) == {"Ibuprofen", "Amiodarone"}
    best = res.nodes[0].path
    assert best is not None and best.relation_types == ["PRESCRIBED", "INTERACTS_WITH"]
    assert best.describe().startswith("John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> ")
    top3 = {r.chunk.id for r in res.results[:3]}
    assert {"drug-ibuprofen", "drug-amiodarone"} <= top3
    for r in res.results[:3]:
        assert r.explanation.path is not None and r.explanation.path.node_ids[0] == "pat-john"
        assert r.explanation.shares and abs(sum(r.explanation.shares.values()) - 1) < 1e-3


def test_expired_edges_are_not_walked_unless_asked_as_of_then(clinical_kb: cef.KnowledgeBase) -> None:
    now = clinical_kb.retrieve(GraphQuery(query="What medication is John Miller prescribed?"))
    assert answers(now)[:1] == ["Warfarin"] and "Ibuprofen" not in answers(now)[:2]
    then = clinical_kb.retrieve(
        GraphQuery(query="What medication is John Miller prescribed?", as_of=datetime(2020, 1, 1, tzinfo=UTC))
    )
    assert answers(then)[:1] == ["Ibuprofen"] and "Warfarin" not in answers(then)[:2]
    assert then.metadata["route"]["hints"] == ["as_of"]


def test_backward_hops_read_right(clinical_kb: cef.KnowledgeBase) -> None:
    # PRESCRIBED has an inverse name: walked backwards it reads as PRESCRIBED_TO
    res = clinical_kb.retrieve(GraphQuery(query="Who is prescribed Warfarin?"))
    path = res.nodes[0].path
    assert answers(res)[0] == "John Miller" and path is not None
    assert path.describe() == "Warfarin -[PRESCRIBED_TO]-> John Miller" and not path.reversed
    # DESCRIBES has none: the arrow turns round instead
    res = clinical_kb.retrieve(GraphQuery(query="Which guideline describes atrial fibrillation?"))
    path = res.nodes[0].path
    assert answers(res)[0] == "Anticoagulation in atrial fibrillation" and path is not None
    assert path.reversed == [True]
    assert path.describe() == "Atrial fibrillation <-[DESCRIBES]- Anticoagulation in atrial fibrillation"


def test_hints_are_used_never_dropped(clinical_kb: cef.KnowledgeBase) -> None:
    q = GraphQuery(
        query="Who looks after him?",
        targets=[ResolutionTarget(description="John Miller", type_hint="Patient")],
        traversal=TraversalHint(relation_types=["TREATED_BY_DOCTOR"], depth=1),
    )
    res = clinical_kb.retrieve(q)
    assert res.metadata["route"]["hints"] == ["targets", "relation_types"]
    assert answers(res) == ["Dr. Maria Chen"]
    assert all(n.path is not None and n.path.relation_types == ["TREATED_BY_DOCTOR"] for n in res.nodes)
    assert res.metadata["anchors"][0]["node_id"] == "pat-john"


def test_misspelled_and_partial_names_still_anchor(clinical_kb: cef.KnowledgeBase) -> None:
    res = clinical_kb.retrieve(GraphQuery(query="What does warfarine interact with?"))
    assert res.metadata["paths"]["anchors"] == ["med-warfarin"]
    assert set(answers(res)[:2]) == {"Ibuprofen", "Amiodarone"}
    res = clinical_kb.retrieve(GraphQuery(query="Which patient does Dr. Chen care for?"))
    assert res.metadata["paths"]["anchors"] == ["doc-chen"]
    assert answers(res)[0] == "John Miller"
    target = clinical_kb.retrieve(
        GraphQuery(query="interactions", targets=[ResolutionTarget(description="warfarine")])
    )
    assert target.metadata["anchors"][0]["node_id"] == "med-warfarin"
    assert target.metadata["anchors"][0]["how"] == "fuzzy"


def test_a_target_that_matches_nothing_says_so(clinical_kb: cef.KnowledgeBase) -> None:
    res = clinical_kb.retrieve(
        GraphQuery(
            query="side effects",
            targets=[ResolutionTarget(description="Zorblaxitol", type_hint="Medication")],
        )
    )
    notes = res.metadata.get("notes", [])
    assert any("'Zorblaxitol' (type Medication) matched no node" in n for n in notes), notes


def test_patterns_see_the_present_unless_told_otherwise(clinical_kb: cef.KnowledgeBase) -> None:
    pattern = GraphPattern(
        start=PatternStart(node_ids=["pat-john"]),
        steps=[TraversalStep(relation_type="PRESCRIBED", direction=Direction.OUTGOING)],
    )
    now = clinical_kb.match_patterns(pattern)
    assert {p.end_node_id for p in now.paths} == {"med-warfarin"}
    then = clinical_kb.match_patterns(
        pattern.model_copy(update={"valid_at": datetime(2020, 1, 1, tzinfo=UTC)})
    )
    assert {p.end_node_id for p in then.paths} == {"med-ibuprofen"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=1, max_value=400))
def test_a_token_budget_is_never_exceeded(clinical_kb: cef.KnowledgeBase, budget: int) -> None:
    from cef.context.tokens import make_token_counter

    q = "Which drugs interact with the medication John Miller takes?"
    full = clinical_kb.retrieve(GraphQuery(query=q, top_k=10))
    cut = clinical_kb.retrieve(GraphQuery(query=q, top_k=10, max_token_budget=budget))
    count = make_token_counter().count
    assert sum(count(r.chunk.content) for r in cut.results) <= budget
    order = [r.chunk.id for r in full.results]
    kept = [r.chunk.id for r in cut.results]
    assert kept == [c for c in order if c in kept]  # the same ranking, some left out
    assert cut.metadata["token_budget"]["dropped"] == len(order) - len(kept)
