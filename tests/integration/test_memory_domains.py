"""The five extension test cases of the universal memory design, with the real embedding model.

One memory holds all five domains, each in its own scope: an RPG campaign, a
software project (the installed ``httpx`` package's source, ingested with the
Python pipeline), a pharma field rep, a fitness coach and a tutor. Each case
asks the design's test query through the same call and checks the expected
retrieval it lists.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

import cef
from cef.memory import ContextBundle, Fact, RetrievalConstraints, SemanticMemory
from cef.memory.dataset import load_dataset
from tests.support.examples import DOMAINS, example_extension

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "memory"
NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)

QUERIES = {
    "rpg": "What does Raven know about the missing artifact, and can she be trusted?",
    "code": "How does the authentication system work and what files would I need to modify to add OAuth?",
    "pharma": "What medications is patient 12345 currently taking, and are there any interactions I should be aware of?",
    "fitness": "How has my bench press progressed this month, and what should I do next workout?",
    "education": "What concepts is this student ready to learn next, and what misconceptions should I address first?",
}
SCOPES = {
    "rpg": "rpg:campaign-1",
    "code": "code:httpx",
    "pharma": "pharma:rep-7",
    "fitness": "fitness:user-42",
    "education": "edu:student-maya",
}


@dataclass
class MutableClock:
    now: datetime = NOW

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def clock() -> MutableClock:
    return MutableClock()


@pytest.fixture(scope="module")
def memory(
    tmp_path_factory: pytest.TempPathFactory, embedder: Any, clock: MutableClock
) -> Iterator[SemanticMemory]:
    import httpx

    kb = cef.open(tmp_path_factory.mktemp("domains") / "memory.db", embedder=embedder)
    m = SemanticMemory(kb, clock=clock, owns_kb=True)
    for domain in ("rpg", "pharma", "fitness", "education"):
        m.register_extension(example_extension(domain))
        load_dataset(m, EXAMPLES / f"{domain}.yaml")
    m.register_extension(example_extension("code"))
    report = m.ingest_path(Path(httpx.__file__).parent, "python", scope=SCOPES["code"])
    assert report.documents >= 20 and not report.failures
    load_dataset(m, EXAMPLES / "code_annotations.yaml")
    yield m
    m.close()


def ask(memory: SemanticMemory, domain: str, **kw: object) -> ContextBundle:
    return memory.retrieve_context(QUERIES[domain], RetrievalConstraints(scope=SCOPES[domain], **kw))  # type: ignore[arg-type]


def fact(bundle: ContextBundle, name: str) -> Fact:
    found = [f for f in bundle.facts() if f.name == name]
    assert found, f"{name!r} not in {[f.name for f in bundle.facts()]}"
    return found[0]


def relations(f: Fact, relation: str, direction: str = "out") -> dict[str, dict[str, Any]]:
    """Relations of a fact by the other end's name: outgoing (``out``), incoming (``in``) or both."""
    out = {}
    for r in f.relations:
        if r.relation != relation:
            continue
        if r.source_id == f.node_id and direction in ("out", "both"):
            out[r.target_name] = r.properties
        elif r.target_id == f.node_id and direction in ("in", "both"):
            out[r.source_name] = r.properties
    return out


def test_same_call_for_every_domain(memory: SemanticMemory) -> None:
    shapes = set()
    for domain in QUERIES:
        bundle = ask(memory, domain)
        assert isinstance(bundle, ContextBundle) and bundle.core_facts, domain
        assert bundle.estimated_tokens <= 4000
        shapes.add(tuple(sorted(bundle.to_structured())))
    assert len(shapes) == 1  # one shape for every domain


def test_rpg_game_master(memory: SemanticMemory) -> None:
    b = ask(memory, "rpg")
    raven = fact(b, "Raven")
    assert b.core_facts[0].node_id == "npc-raven"
    assert (
        raven.type == "npc"
        and raven.properties["disposition"] == "secretive"
        and raven.properties["threat_level"] == 3
    )
    assert relations(raven, "trusts") == {"Aria": {"affinity": 7}, "Bram": {"affinity": 4}}  # Voss no longer
    assert set(relations(raven, "involved_in")) == {"The Missing Artifact", "The Guild War"}
    assert "Sunken Library" in relations(raven, "knows_about")["The Missing Artifact"]["detail"]
    recent = {(c.kind, c.target_name) for c in b.temporal.changes}  # type: ignore[union-attr]
    assert ("added", "Raven met a hooded buyer at the docks") in recent
    assert ("added", "Raven sold the temple map to the Thieves' Guild") in recent
    assert ("added", "Raven rescued Bram from the collapsed mine") not in recent  # months ago
    assert ("ended", "Captain Voss") in recent
    (conflict,) = [c for c in b.conflicts if c.statement == "Raven is trustworthy"]
    assert conflict.confidence < 0.5 and len(conflict.supporting) == 2
    assert [o.source_type for o in conflict.contradicting] == ["observed"]
    assert any(
        x.statement == "Raven's disposition is secretive" and x.confidence == pytest.approx(0.9)
        for x in b.beliefs
    )


def test_rpg_vector_anchor_without_names(memory: SemanticMemory) -> None:
    b = memory.retrieve_context("where is the stolen navigation relic now?", scope=SCOPES["rpg"])
    assert "Star Compass" in [f.name for f in b.core_facts]


def test_code_which_files_for_oauth(memory: SemanticMemory) -> None:
    b = ask(memory, "code")
    files = [f.name for f in b.facts() if f.type == "file"]
    assert files[0] == "httpx/_auth.py"
    assert "httpx/_client.py" in files[:4]
    auth_file = fact(b, "httpx/_auth.py")
    assert {"Auth", "BasicAuth", "DigestAuth"} <= set(relations(auth_file, "defines"))
    assert "httpx/_client.py" in relations(auth_file, "imports", "in")  # the import graph between them
    names = {f.name for f in b.facts()}
    assert "Auth" in names and {"BasicAuth", "DigestAuth"} & names
    assert {
        "Auth.auth_flow",
        "Auth.sync_auth_flow",
        "BaseClient._build_auth",
    } & names  # functions in the auth flow
    assert "Generator-based auth flow" in names  # the pattern used
    auth = fact(b, "Auth")
    assert auth.excerpt is not None and "authentication" in auth.excerpt.lower()


def test_code_recent_changes_to_auth_files(
    memory: SemanticMemory, clock: MutableClock, tmp_path: Path
) -> None:
    import httpx

    src = Path(httpx.__file__).parent / "_auth.py"
    copy = tmp_path / "httpx" / "_auth.py"
    copy.parent.mkdir()
    shutil.copy(src, copy)
    with copy.open("a") as f:
        f.write(
            '\n\nclass OAuth2Auth(Auth):\n    """OAuth 2 bearer tokens."""\n\n    def auth_flow(self, request):\n        yield request\n'
        )
    clock.now = NOW + timedelta(days=1)
    try:
        report = memory.ingest_path(copy, "python", scope=SCOPES["code"], root=tmp_path)
        assert report.documents == 1
        b = memory.retrieve_context("what changed recently in the authentication code?", scope=SCOPES["code"])
        changes = {(c.kind, c.relation, c.target_name) for c in b.temporal.changes}  # type: ignore[union-attr]
        assert ("added", "defines", "OAuth2Auth") in changes
        delta = {
            (c.kind, c.relation, c.source, c.target) for c in memory.changed_since(NOW, scope=SCOPES["code"])
        }
        assert (
            "added",
            "subclass_of",
            "py:class:httpx._auth.OAuth2Auth",
            "py:class:httpx._auth.Auth",
        ) in delta
        assert all(c.source.startswith("py:") for c in memory.changed_since(NOW, scope=SCOPES["code"]))
    finally:
        clock.now = NOW


def test_pharma_field_rep(memory: SemanticMemory) -> None:
    b = ask(memory, "pharma")
    patient = b.core_facts[0]
    assert patient.node_id == "patient-12345" and patient.properties["conditions"]
    assert set(relations(patient, "has_condition")) == {
        "Atrial fibrillation",
        "Type 2 diabetes",
        "Chronic kidney disease",
    }
    assert set(relations(patient, "has_prescription")) == {
        "Warfarin 5 mg daily",
        "Metformin 500 mg twice daily",
        "Amiodarone 200 mg daily",
    }  # active only: lisinopril ended
    assert "Lisinopril 10 mg daily" not in {f.name for f in b.facts()}
    assert fact(b, "Amiodarone 200 mg daily").properties["dosage"] == "200 mg"
    interactions = {
        frozenset((r.source_name, r.target_name)): r.properties
        for f in b.facts()
        for r in f.relations
        if r.relation == "interacts_with"
    }
    assert interactions[frozenset(("Warfarin", "Amiodarone"))]["severity"] == "major"
    assert frozenset(("Warfarin", "Ibuprofen")) in interactions
    assert fact(b, "INR 3.4").properties["value"] == 3.4
    assert any(r.relation == "contraindicated_for" for f in b.facts() for r in f.relations)
    (belief,) = [x for x in b.beliefs if "ibuprofen" in x.statement.lower()]
    assert belief.confidence == pytest.approx(0.7) and belief.sources == ["user_stated"]
    assert ("added", "Amiodarone 200 mg daily") in {(c.kind, c.target_name) for c in b.temporal.changes}  # type: ignore[union-attr]


def test_fitness_coach(memory: SemanticMemory) -> None:
    b = ask(memory, "fitness")
    names = {f.name for f in b.facts()}
    assert {"Alex", "Bench press", "Bench press 100 kg"} <= names
    june = {f"Bench press 1RM on 2025-06-{d}" for d in ("02", "09", "16")}
    assert june <= names
    assert (
        b.temporal is not None
        and b.temporal.mode == "history"
        and b.temporal.since == datetime(2025, 6, 1, tzinfo=UTC)
    )
    measured = {c.source_name for c in b.temporal.changes if c.relation == "measures"}
    assert measured == june  # this month's progression, not May's
    values = sorted(fact(b, n).properties["value"] for n in june)
    assert values == [82.5, 85.0, 87.5]
    alex = fact(b, "Alex")
    assert set(relations(alex, "prefers")) == {"Morning strength session", "Dips"}
    assert relations(alex, "avoids") == {"Deadlift": {"reason": "lower back pain"}}
    push_days = [n for n in names if n.startswith("Push day 2025-06")]
    assert len(push_days) == 3  # recent workouts with bench press
    assert {"Chest", "Back"} <= names  # muscle groups, including the one not trained this month


def test_educational_tutor(memory: SemanticMemory) -> None:
    b = ask(memory, "education")
    maya = b.core_facts[0]
    assert maya.name == "Maya"
    mastery = relations(maya, "understands")
    assert mastery["Fractions"]["mastery_level"] == 0.9 and set(mastery) == {
        "Fractions",
        "Decimals",
        "Negative numbers",
    }
    assert relations(maya, "struggles_with") == {"Ratios": {"attempts": 3}}
    active = {x.statement for x in b.beliefs if x.subject_name == "Maya"}
    assert active == {
        "Multiplying always makes a number bigger",
        "Ratios can be scaled by adding the same number to both parts",
    }  # the resolved decimal misconception is not the student's any more
    names = {f.name for f in b.facts()}
    assert {"Percentages", "Linear equations"} <= names  # unlocked by mastered prerequisites
    assert any(r.relation == "prerequisite_for" for f in b.facts() for r in f.relations)
    assert {"Ratios quiz", "Decimals quiz", "Visual learner", "Introduction to ratios"} <= names


def test_domains_are_scoped(memory: SemanticMemory) -> None:
    own_ids = {d: {f.node_id for f in ask(memory, d, max_tokens=20_000).facts()} for d in QUERIES}
    for domain, query in QUERIES.items():
        for other, scope in SCOPES.items():
            if other == domain:
                continue
            leaked = {f.node_id for f in memory.retrieve_context(query, scope=scope).facts()}
            scoped_nodes = {
                n.id for n in memory.kb.store.get_nodes(sorted(leaked)) if n.scope == SCOPES[domain]
            }
            assert not scoped_nodes, (domain, other, scoped_nodes)
        assert own_ids[domain]


def test_dataset_files_name_their_extension() -> None:
    for domain in ("rpg", "pharma", "fitness", "education", "code_annotations"):
        data = yaml.safe_load((EXAMPLES / f"{domain}.yaml").read_text())
        assert data["extension"] in DOMAINS and data["scope"] in SCOPES.values()
