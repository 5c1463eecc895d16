"""Axioms and claims stored in the graph, and the entity relevance ranker (no model)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import cef
from cef import Batch, Edge, Node
from cef.context.graph_provider import EntityRelevanceRanker, query_terms
from cef.context.rules import (
    ABOUT,
    APPLIES_TO,
    AXIOM_LABEL,
    CLAIMS,
    NODE_TYPE_LABEL,
    add_axiom,
    add_claim,
    find_axioms,
    find_claims,
    type_node_id,
)
from cef.errors import MissingNodeError, ValidationError
from cef.graph.filter import SUPERSEDED_AT

RULES = Path(__file__).resolve().parents[3] / "examples" / "clinical" / "rules.yaml"


def load_rules(kb: cef.KnowledgeBase) -> None:
    kb.index_batch(Batch.model_validate(yaml.safe_load(RULES.read_text())))


def test_add_axiom_writes_the_rule_into_the_graph(clinical_kb: cef.KnowledgeBase) -> None:
    axiom = add_axiom(
        clinical_kb, "Medication", "Check renal dosing for every medication.", severity="should"
    )
    assert (
        axiom.label == AXIOM_LABEL and axiom.properties["rule"] == "Check renal dosing for every medication."
    )
    tnode = clinical_kb.find_node(type_node_id("Medication"))
    assert tnode is not None and tnode.label == NODE_TYPE_LABEL and tnode.name == "Medication"
    targets = [n.id for n in clinical_kb.get_neighbors(axiom.id, [APPLIES_TO], "out")]
    assert targets == ["type:Medication"]
    # a second axiom on the same type reuses the type node and the relation types
    second = add_axiom(
        clinical_kb, "Medication", "Record the brand.", applies_to=["med-warfarin"], name="Brand"
    )
    assert sorted(n.id for n in clinical_kb.get_neighbors(second.id, [APPLIES_TO], "out")) == [
        "med-warfarin",
        "type:Medication",
    ]
    assert len(clinical_kb.find_nodes_by_label(NODE_TYPE_LABEL)) == 1


def test_add_axiom_and_add_claim_refuse_bad_input_and_write_nothing(clinical_kb: cef.KnowledgeBase) -> None:
    before = clinical_kb.stats()
    with pytest.raises(ValidationError, match="rule_text"):
        add_axiom(clinical_kb, "Medication", "  ")
    with pytest.raises(ValidationError, match="node_type"):
        add_axiom(clinical_kb, None, "A rule about nothing.")
    with pytest.raises(MissingNodeError, match="no-such-node"):
        add_axiom(clinical_kb, "Medication", "A rule.", applies_to=["no-such-node"])
    with pytest.raises(ValidationError, match="at least one entity"):
        add_claim(clinical_kb, "A claim.", [])
    with pytest.raises(ValidationError, match="confidence"):
        add_claim(clinical_kb, "A claim.", "med-warfarin", confidence=1.5)
    with pytest.raises(MissingNodeError, match="no-such-doc"):
        add_claim(clinical_kb, "A claim.", "med-warfarin", source="no-such-doc")
    after = clinical_kb.stats()
    assert (after["nodes"], after["edges"]) == (before["nodes"], before["edges"])


def test_add_claim_links_entities_and_source(clinical_kb: cef.KnowledgeBase) -> None:
    claim = add_claim(
        clinical_kb,
        "Apixaban needs no INR monitoring.",
        ["med-apixaban", "med-warfarin"],
        source="doc-guideline-af",
        confidence=0.7,
    )
    about = sorted(n.id for n in clinical_kb.get_neighbors(claim.id, [ABOUT], "out"))
    assert about == ["med-apixaban", "med-warfarin"]
    assert [n.id for n in clinical_kb.get_neighbors(claim.id, [CLAIMS], "in")] == ["doc-guideline-af"]
    (match,) = find_claims(clinical_kb, ["med-apixaban"])
    assert match.claim.id == claim.id and match.confidence == 0.7
    assert match.source == "Anticoagulation in atrial fibrillation"
    assert sorted(match.about) == ["Apixaban", "Warfarin"]


def test_axioms_apply_through_type_node_and_structural_parents(clinical_kb: cef.KnowledgeBase) -> None:
    load_rules(clinical_kb)
    warfarin = clinical_kb.find_node("med-warfarin")
    lucas = clinical_kb.find_node("pat-lucas")
    assert warfarin is not None and lucas is not None
    found = {m.axiom.id: m for m in find_axioms(clinical_kb, [warfarin])}
    # Medication type rule, and the anticoagulant rule through Warfarin IS_A Anticoagulant
    assert set(found) == {"axiom-check-interactions", "axiom-anticoagulant-bleeding"}
    assert found["axiom-anticoagulant-bleeding"].via == ["Anticoagulant"]
    assert found["axiom-check-interactions"].via == ["Medication"]
    assert [m.axiom.id for m in find_axioms(clinical_kb, [lucas])] == ["axiom-current-treatment"]
    ibuprofen = clinical_kb.find_node("med-ibuprofen")
    assert ibuprofen is not None
    assert [m.axiom.id for m in find_axioms(clinical_kb, [ibuprofen])] == ["axiom-check-interactions"]


def test_claims_per_entity_limit_and_order(clinical_kb: cef.KnowledgeBase) -> None:
    load_rules(clinical_kb)
    matches = find_claims(clinical_kb, ["cond-t2d"], per_entity=1)
    assert [m.claim.id for m in matches] == ["claim-metformin-first-line"]  # 0.95 beats 0.8
    both = find_claims(clinical_kb, ["cond-t2d", "cond-ckd"])
    assert [m.claim.id for m in both] == ["claim-metformin-first-line", "claim-kidney-review"]
    assert both[1].entity_ids == ["cond-t2d", "cond-ckd"]
    assert find_claims(clinical_kb, ["pat-john"]) == []


def test_rules_and_claims_walk_current_knowledge_inside_the_scope(clinical_kb: cef.KnowledgeBase) -> None:
    """A superseded edge version is history, another scope's edge or entity is not ours: the rule
    lookups walk the graph index's one edge filter, like the context provider."""
    axiom = add_axiom(clinical_kb, None, "Monitor bleeding.", applies_to=["med-warfarin"])
    claim = add_claim(clinical_kb, "Warfarin interacts with many drugs.", "med-warfarin")
    clinical_kb.index_batch(
        Batch(
            nodes=[
                Node(id="med-other-ward", label="Medication", properties={"name": "Heparin"}, scope="ward-b")
            ],
            edges=[
                # what we once knew: the axiom also applied to apixaban (superseded since)
                Edge(
                    relation_type=APPLIES_TO,
                    source=axiom.id,
                    target="med-apixaban",
                    properties={SUPERSEDED_AT: "2020-01-01T00:00:00+00:00"},
                ),
                # only true in ward B
                Edge(relation_type=APPLIES_TO, source=axiom.id, target="med-ibuprofen", scope="ward-b"),
                Edge(relation_type=ABOUT, source=claim.id, target="med-other-ward"),
            ],
        )
    )
    apixaban, ibuprofen = clinical_kb.find_node("med-apixaban"), clinical_kb.find_node("med-ibuprofen")
    assert apixaban is not None and ibuprofen is not None
    assert axiom.id not in {m.axiom.id for m in find_axioms(clinical_kb, [apixaban])}
    assert axiom.id not in {m.axiom.id for m in find_axioms(clinical_kb, [ibuprofen], scope="ward-a")}
    assert axiom.id in {m.axiom.id for m in find_axioms(clinical_kb, [ibuprofen], scope="ward-b")}
    (in_a,) = find_claims(clinical_kb, ["med-warfarin"], scope="ward-a")
    assert in_a.about == ["Warfarin"]  # Heparin lives in ward B
    (in_b,) = find_claims(clinical_kb, ["med-warfarin"], scope="ward-b")
    assert sorted(in_b.about) == ["Heparin", "Warfarin"]


# ------------------------------------------------------------------- ranker
def node(id: str, label: str, name: str, **props: object) -> Node:
    return Node(id=id, label=label, properties={"name": name, **props})


def test_query_terms() -> None:
    assert query_terms("Which medications interact with warfarin?") == ["medications", "interact", "warfarin"]
    assert query_terms("the a of") == []


def test_ranker_orders_by_name_then_type_then_properties() -> None:
    nodes = [
        node("d1", "Medication", "Ibuprofen", note="raises warfarin levels"),
        node("d2", "Medication", "Warfarin"),
        node("d3", "Condition", "Atrial fibrillation"),
        node("d4", "DrugClass", "Anticoagulant"),
    ]
    ranked = EntityRelevanceRanker().rank("Which medications interact with warfarin?", nodes)
    assert [r.node.id for r in ranked] == ["d2", "d1", "d3", "d4"]
    top = ranked[0]
    assert top.matched_terms == ["medications", "warfarin"]
    assert top.score == pytest.approx((1.0 + 0.5) / 3)  # name match + type match, over 3 terms
    assert ranked[1].score == pytest.approx((0.5 + 0.3) / 3)  # type + property ("raises warfarin levels")
    assert ranked[2].score == 0.0 and ranked[2].matched_terms == []
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_ranker_adds_vector_similarity_above_a_floor() -> None:
    nodes = [node("a", "Thing", "Alpha"), node("b", "Thing", "Beta"), node("c", "Thing", "Gamma")]
    ranker = EntityRelevanceRanker(vector_weight=1.0, vector_floor=0.2)
    ranked = ranker.rank("unrelated words", nodes, {"a": 0.1, "b": 0.6, "c": 1.0})
    assert [r.node.id for r in ranked] == ["c", "b", "a"]
    assert ranked[0].vector_score == pytest.approx(1.0)
    assert ranked[1].vector_score == pytest.approx(0.5)
    assert ranked[2].score == 0.0  # below the floor counts for nothing


def test_ranker_matches_aliases_and_plurals() -> None:
    afib = node("c", "Condition", "Atrial fibrillation", aliases=["AFib"])
    (r,) = EntityRelevanceRanker().rank("afib conditions", [afib])
    assert r.matched_terms == ["afib", "conditions"]
