"""Query understanding: names, synonyms, self references, type and relation hints, intent."""

from __future__ import annotations

from cef.memory import SemanticMemory
from cef.memory.understand import understand_query

from .conftest import NOW, load_example


def test_synonyms_map_to_canonical_terms_and_types(memory: SemanticMemory) -> None:
    scope = load_example(memory, "pharma")
    u = understand_query(memory, "Which drugs does client 12345 take?", scope, NOW)
    assert u.rewritten is not None and "patient 12345" in u.rewritten
    assert [e.node_ids for e in u.entities if e.how == "synonym"] == [["patient-12345"]]
    assert set(u.type_hints) >= {"medication", "patient"}
    bundle = memory.retrieve_context("Which drugs does client 12345 take?", scope=scope)
    assert bundle.core_facts[0].node_id == "patient-12345"


def test_relation_hints_and_intent(memory: SemanticMemory) -> None:
    scope = load_example(memory, "rpg")
    u = understand_query(
        memory, "What does Raven know about the missing artifact, and can she be trusted?", scope, NOW
    )
    assert u.relation_hints["trusts"] == 1.0 and u.relation_hints["knows_about"] > 0
    assert "verify" in u.intent
    names = {e.text for e in u.entities}
    assert {"Raven", "The Missing Artifact"} <= names
    assert understand_query(memory, "How many quests are open?", scope, NOW).intent[0] == "count"
    assert "plot_thread" in understand_query(memory, "How many quests are open?", scope, NOW).type_hints


def test_self_references(memory: SemanticMemory) -> None:
    scope = load_example(memory, "education")
    u = understand_query(memory, "What concepts is this student ready to learn next?", scope, NOW)
    assert any(e.how == "self" and e.node_ids == [memory.self_id(scope)] for e in u.entities)
    assert "recommend" in u.intent and "concept" in u.type_hints
    # "this lesson" does not name the student
    u = understand_query(memory, "What was covered in this lesson?", scope, NOW)
    assert not any(e.how == "self" for e in u.entities)


def test_names_are_found_even_when_many_nodes_share_them(memory: SemanticMemory) -> None:
    """'Raven' occurs in most node names of the RPG example; name lookup must not depend on word rarity."""
    scope = load_example(memory, "rpg")
    found = memory.names_in_text("tell me about raven", scope)
    assert [(node_id, name) for node_id, name, _, _ in found] == [("npc-raven", "Raven")]
    assert memory.resolve_name("the missing artifact", scope) == "plot-artifact"
    assert memory.resolve_name("Raven", "another-scope") is None


def test_class_extensions_hint_their_class(memory: SemanticMemory) -> None:
    scope = load_example(memory, "pharma")
    u = understand_query(memory, "Is metformin safe with kidney disease?", scope, NOW)
    assert u.type_hints == ["medication"]
