"""The seven validation criteria of the universal memory design, with the real embedding model.

1. same method call for every domain; 2. domain specifics only from extensions;
3. multi-hop traversal (patient → prescription → medication → interactions);
4. current vs historical answers; 5. confidence and conflicts surfaced;
6. token limits honoured; 7. no leakage between domains' scopes, and no core
code per domain.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

import cef
from cef.context.tokens import make_token_counter
from cef.memory import (
    NodeKind,
    RetrievalConstraints,
    SemanticMemory,
    SemanticMemoryExtension,
    TemporalConstraint,
)
from cef.memory.dataset import load_dataset
from tests.support.examples import EXTENSION_DIR, example_extension

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "memory"
NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
CASES = {
    "rpg": "What does Raven know about the missing artifact, and can she be trusted?",
    "pharma": "What medications is patient 12345 currently taking, and are there any interactions I should be aware of?",
    "fitness": "How has my bench press progressed this month, and what should I do next workout?",
    "education": "What concepts is this student ready to learn next, and what misconceptions should I address first?",
}


class RecipeExtension(SemanticMemoryExtension):
    """A sixth domain, defined here only: the core never heard of recipes."""

    name = "recipes"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type("recipe", NodeKind.INSTANCE, {"minutes": "int"}, required=["minutes"])
        reg.register_node_type("ingredient", NodeKind.CLASS)
        reg.register_edge_type(
            "uses_ingredient", ["recipe"], ["ingredient"], {"grams": "int"}, inverse="used_in"
        )
        reg.register_vocabulary("recipes", synonyms={"recipe": ["dish", "meal idea"]})


RECIPES = {
    "scope": "kitchen:home",
    "nodes": [
        {"id": "r-risotto", "type": "recipe", "name": "Mushroom risotto", "properties": {"minutes": 40}},
        {"id": "r-pesto", "type": "recipe", "name": "Pesto pasta", "properties": {"minutes": 15}},
        {"id": "i-rice", "type": "ingredient", "name": "Arborio rice"},
        {"id": "i-basil", "type": "ingredient", "name": "Basil"},
    ],
    "edges": [
        {
            "source": "r-risotto",
            "relation": "uses_ingredient",
            "target": "i-rice",
            "properties": {"grams": 320},
        },
        {
            "source": "r-pesto",
            "relation": "uses_ingredient",
            "target": "i-basil",
            "properties": {"grams": 50},
        },
    ],
    "observations": [{"text": "Pesto pasta is a family favourite", "source": "user_stated"}],
}

CHAIN = {  # prescriptions only: the interactions are three hops from the patient
    "scope": "pharma:chain",
    "nodes": [
        {"id": "pc-patient", "type": "patient", "name": "Patient 777", "properties": {"mrn": "777"}},
        {
            "id": "pc-rx",
            "type": "prescription",
            "name": "Clopidogrel 75 mg daily",
            "properties": {"dosage": "75 mg"},
        },
        {"id": "pc-clop", "type": "medication", "name": "Clopidogrel", "scope": None},
        {"id": "pc-omep", "type": "medication", "name": "Omeprazole", "scope": None},
    ],
    "edges": [
        {"source": "pc-patient", "relation": "has_prescription", "target": "pc-rx", "valid_from": "-50d"},
        {"source": "pc-rx", "relation": "prescription_of", "target": "pc-clop", "valid_from": "-50d"},
        {
            "source": "pc-clop",
            "relation": "interacts_with",
            "target": "pc-omep",
            "properties": {"severity": "moderate", "effect": "omeprazole reduces clopidogrel activation"},
            "scope": None,
        },
    ],
}


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[SemanticMemory]:
    kb = cef.open(tmp_path_factory.mktemp("validation") / "memory.db", embedder=embedder)
    m = SemanticMemory(kb, clock=lambda: NOW, owns_kb=True)
    for domain in CASES:
        m.register_extension(example_extension(domain))
        load_dataset(m, EXAMPLES / f"{domain}.yaml")
    m.register_extension(RecipeExtension())
    load_dataset(m, RECIPES)
    load_dataset(m, CHAIN)
    yield m
    m.close()


def scope_of(domain: str) -> str:
    return str(yaml.safe_load((EXAMPLES / f"{domain}.yaml").read_text())["scope"])


def test_1_same_method_call(memory: SemanticMemory) -> None:
    calls = [(q, scope_of(d)) for d, q in CASES.items()] + [("Which dish uses basil?", "kitchen:home")]
    for query, scope in calls:
        bundle = memory.retrieve_context(query, RetrievalConstraints(scope=scope))
        assert bundle.core_facts and bundle.to_text().startswith("# Context"), query
    recipe = memory.retrieve_context("Which dish uses basil?", scope="kitchen:home")
    assert recipe.core_facts[0].name in ("Basil", "Pesto pasta")
    assert "Pesto pasta" in {f.name for f in recipe.facts()}
    assert [b.statement for b in recipe.beliefs] == ["Pesto pasta is a family favourite"]


def _code_words(source: str) -> str:
    """Identifiers and string literals of a module, without docstrings and comments (the code itself)."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            words.append(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.append(node.value)
    return " ".join(words).lower()


def test_2_and_7_domain_specifics_come_only_from_extensions() -> None:
    """The core memory code (not its docs) names no domain: no type of any example extension."""
    core = ROOT / "cef" / "memory"
    words = {
        "patient",
        "medication",
        "prescription",
        "npc",
        "plot_thread",
        "workout",
        "exercise",
        "student",
        "concept",
        "misconception",
        "recipe",
        "httpx",
    }
    for path in core.glob("*.py"):
        code = _code_words(path.read_text())
        found = {w for w in words if re.search(rf"\b{w}s?\b", code)}
        assert not found, f"{path.name} names domain terms {sorted(found)}"
    # and the sanity check of the check: an extension module does name its domain
    assert re.search(r"\bpatient\b", _code_words((EXTENSION_DIR / "pharma.py").read_text()))


def test_3_multi_hop_traversal(memory: SemanticMemory) -> None:
    # one anchor (the patient, named in the question): everything else is reached by walking
    bundle = memory.retrieve_context(
        "What is patient 777 taking and does anything interact with it?", scope="pharma:chain", max_anchors=1
    )
    assert bundle.core_facts[0].name == "Patient 777"
    omeprazole = next(f for f in bundle.facts() if f.name == "Omeprazole")
    assert omeprazole.depth == 3
    assert omeprazole.path == (
        "Patient 777 -has_prescription-> Clopidogrel 75 mg daily -prescription_of-> Clopidogrel -interacts_with-> Omeprazole"
    )
    relations = {(r.source_name, r.relation, r.target_name) for f in bundle.facts() for r in f.relations}
    assert ("Clopidogrel", "interacts_with", "Omeprazole") in relations
    # a depth limit stops the walk before the interaction
    shallow = memory.retrieve_context(
        "What is patient 777 taking?", scope="pharma:chain", max_depth=2, max_anchors=1
    )
    assert "Omeprazole" not in {f.name for f in shallow.facts()}


def test_4_current_versus_historical(memory: SemanticMemory) -> None:
    query = "What is patient 12345 taking?"

    def prescriptions(**kw: Any) -> set[str]:
        b = memory.retrieve_context(query, scope=scope_of("pharma"), **kw)
        patient = next(f for f in b.facts() if f.node_id == "patient-12345")
        return {r.target_name for r in patient.relations if r.relation == "has_prescription"}

    now = prescriptions()
    assert "Lisinopril 10 mg daily" not in now and "Amiodarone 200 mg daily" in now
    sixty_days_ago = prescriptions(temporal=TemporalConstraint.at(NOW - timedelta(days=60)))
    assert "Lisinopril 10 mg daily" in sixty_days_ago and "Amiodarone 200 mg daily" not in sixty_days_ago
    assert "Lisinopril 10 mg daily" in prescriptions(temporal=TemporalConstraint(mode="history"))
    # the question's own words set the time too
    b = memory.retrieve_context("What was patient 12345 taking as of 2025-04-01?", scope=scope_of("pharma"))
    assert b.temporal is not None and b.temporal.mode == "as_of"


def test_5_confidence_and_conflicts(memory: SemanticMemory) -> None:
    b = memory.retrieve_context(CASES["rpg"], scope=scope_of("rpg"))
    (conflict,) = b.conflicts
    assert conflict.statement == "Raven is trustworthy" and 0.0 < conflict.confidence < 0.5
    assert {o.source_type for o in conflict.supporting} == {"user_stated"}
    assert {o.source_type for o in conflict.contradicting} == {"observed"}
    assert all(x.confidence >= 0.5 for x in b.beliefs)
    pharma = memory.retrieve_context(CASES["pharma"], scope=scope_of("pharma"))
    assert [(x.statement, x.confidence) for x in pharma.beliefs] == [
        ("Patient 12345 reported taking OTC ibuprofen", 0.7)
    ]


@pytest.mark.parametrize("budget", [200, 800, 2500])
def test_6_token_limits(memory: SemanticMemory, budget: int) -> None:
    counter = make_token_counter("cl100k")
    for domain, query in CASES.items():
        b = memory.retrieve_context(query, scope=scope_of(domain), max_tokens=budget)
        for fmt in ("markdown", "yaml", "json", "plain"):
            assert counter.count(b.to_text(fmt)) <= budget, (domain, fmt)
        assert b.core_facts, domain  # the most relevant fact survives even a small budget


def test_7_no_leakage_between_scopes(memory: SemanticMemory) -> None:
    scopes = {d: scope_of(d) for d in CASES} | {"recipes": "kitchen:home", "chain": "pharma:chain"}
    owners: dict[str, str | None] = {n.id: n.scope for n in memory.kb.store.iter_nodes()}
    for query in [
        *CASES.values(),
        "Which dish uses basil?",
        "Can Raven be trusted?",
        "what is new this week?",
    ]:
        for scope in scopes.values():
            b = memory.retrieve_context(query, scope=scope, max_tokens=20_000)
            seen = b.node_ids()
            foreign = {i for i in seen if owners.get(i) not in (None, scope)}
            assert not foreign, (query, scope, sorted(foreign)[:5])
            for c in b.conflicts:
                assert owners[c.belief_id] == scope
