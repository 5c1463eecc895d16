"""Observations reconciled into beliefs; confidence from credibility and agreement; usage feedback."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cef import Node
from cef.errors import NotFoundError, ValidationError
from cef.memory import NodeKind, Observation, ObservationSource, SemanticMemory, SourceType
from cef.memory.beliefs import Usage, combine_confidence, importance, parse_claim
from cef.model import Batch, Edge
from cef.text import stem

from .conftest import NOW, Clock


@pytest.fixture
def world(memory: SemanticMemory) -> SemanticMemory:
    memory.registry.register_node_type("npc", NodeKind.INSTANCE)
    memory.kb.index_node(Node(id="raven", label="npc", properties={"name": "Raven"}, scope="g1"))
    return memory


def belief(memory: SemanticMemory, belief_id: str) -> dict[str, Any]:
    return memory.kb.store.get_nodes([belief_id])[0].properties


def test_claims() -> None:
    c = parse_claim("Raven is not trustworthy", (0, 5))
    assert (c.key, c.negated, c.functional) == (stem("trustworthy"), True, False)
    assert parse_claim("Raven is trustworthy", (0, 5)).key == c.key
    c = parse_claim("Raven's disposition is hostile", (0, 5))
    assert (c.key, c.value, c.functional) == (f"attr:{stem('disposition')}", "hostile", True)
    c = parse_claim("Patient 12345 no longer takes ibuprofen", (0, 13))
    assert c.negated and c.change and c.key == parse_claim("Patient 12345 takes ibuprofen", (0, 13)).key
    assert parse_claim("Raven can't be trusted", (0, 5)).negated
    assert not parse_claim("Raven can be trusted", (0, 5)).negated


def test_confidence_combines_credibility_and_agreement() -> None:
    assert combine_confidence([0.7]) == pytest.approx(0.7)
    assert combine_confidence([0.7, 0.7]) == pytest.approx(0.8448, abs=1e-4)
    assert combine_confidence([0.7], [0.9]) == pytest.approx(0.2059, abs=1e-4)
    assert combine_confidence([0.5, 0.5]) == pytest.approx(0.5)  # uninformative sources add nothing


@given(
    st.lists(st.floats(0.0, 1.0), max_size=6), st.lists(st.floats(0.0, 1.0), max_size=6), st.floats(0.5, 0.99)
)
def test_confidence_is_monotone(support: list[float], contra: list[float], extra: float) -> None:
    base = combine_confidence(support, contra)
    assert 0.0 <= base <= 1.0
    assert combine_confidence([*support, extra], contra) >= base
    assert combine_confidence(support, [*contra, extra]) <= base


def test_create_reinforce_contradict(world: SemanticMemory, clock: Clock) -> None:
    r1 = world.observe("Raven is trustworthy", "user_stated", scope="g1")
    assert (r1.action, r1.subject_id, r1.confidence) == ("created", "raven", pytest.approx(0.7))
    clock.advance(hours=1)
    r2 = world.observe("Raven is trustworthy", "user_stated", scope="g1", source_id="player:bram")
    assert (
        r2.action == "reinforced"
        and r2.belief_id == r1.belief_id
        and r2.confidence == pytest.approx(0.8448, abs=1e-4)
    )
    clock.advance(hours=1)
    r3 = world.observe("Raven is not trustworthy", "observed", scope="g1", credibility=0.95)
    assert r3.action == "contradicted" and r3.contradicted == [r1.belief_id]
    props = belief(world, r1.belief_id)
    assert props["status"] == "contested" and props["contradicted_by"] == [r3.observation_id]
    assert props["confidence"] == pytest.approx(combine_confidence([0.7, 0.7], [0.95]))
    # the bundle surfaces the conflict with both sides, even below the confidence threshold
    bundle = world.retrieve_context("Can Raven be trusted?", scope="g1")
    assert not bundle.beliefs
    (conflict,) = bundle.conflicts
    assert conflict.belief_id == r1.belief_id and len(conflict.supporting) == 2
    assert (
        conflict.contradicting[0].source_type == "observed" and conflict.contradicting[0].credibility == 0.95
    )
    low = world.retrieve_context("Can Raven be trusted?", scope="g1", confidence_threshold=0.1)
    assert [b.belief_id for b in low.beliefs] == [r1.belief_id]
    # observations are stored as immutable records linked to what they support or contradict
    obs = world.kb.store.get_nodes([r3.observation_id])[0]
    assert obs.label == "observation" and obs.properties["source_type"] == "observed"


def test_a_credible_change_supersedes(world: SemanticMemory, clock: Clock) -> None:
    r1 = world.observe("Raven's disposition is friendly", "user_stated", scope="g1")
    clock.advance(days=2)
    r2 = world.observe("Raven's disposition is hostile", "observed", scope="g1")
    assert r2.action == "superseded" and r2.superseded == [r1.belief_id] and r2.belief_id != r1.belief_id
    assert belief(world, r1.belief_id)["status"] == "superseded"
    now = world.retrieve_context("what is Raven like", scope="g1")
    assert [b.statement for b in now.beliefs] == ["Raven's disposition is hostile"]
    before = world.retrieve_context(
        "what is Raven like", scope="g1", temporal={"as_of": NOW.replace(hour=18)}
    )
    assert [b.statement for b in before.beliefs] == ["Raven's disposition is friendly"]


def test_a_weak_change_only_contradicts(world: SemanticMemory) -> None:
    r1 = world.observe("Raven guards the north gate", "observed", scope="g1")
    r2 = world.observe("Raven no longer guards the north gate", "inferred", scope="g1", credibility=0.55)
    assert r2.action == "contradicted" and r2.belief_id == r1.belief_id


def test_subjects(world: SemanticMemory) -> None:
    me = world.observe("I prefer morning sessions", "user_stated", scope="g1")
    assert me.subject_id == world.self_id("g1") and world.kb.find_node(me.subject_id) is not None
    named = world.observe("The tower is haunted", "observed", subject="Old Tower", scope="g1")
    node = world.kb.find_node(named.subject_id)
    assert node is not None and node.name == "Old Tower" and node.scope == "g1"
    # a name from another scope is not this scope's subject
    other = world.observe("Raven is tall", "observed", scope="g2")
    assert other.subject_id != "raven"


def test_bad_observations_write_nothing(world: SemanticMemory) -> None:
    before = world.kb.store.counts()
    with pytest.raises(ValidationError):
        world.observe("   ", "user_stated")
    with pytest.raises(ValidationError, match="'gossip' is not a valid SourceType"):
        world.observe("Raven is tall", "gossip")
    with pytest.raises(ValueError, match="less than or equal to 1"):
        Observation.model_validate({"text": "x", "source": {"type": "observed", "credibility": 2}})
    assert world.kb.store.counts() == before
    r = world.update("Raven is tall", ObservationSource(type=SourceType.OBSERVED))
    assert r.action == "created" and world.kb.store.counts()["nodes"] > before["nodes"]


def test_feedback_feeds_importance_and_ranking(memory: SemanticMemory) -> None:
    memory.registry.register_node_type("tool", NodeKind.INSTANCE)
    memory.registry.register_edge_type("uses")

    memory.kb.index_batch(
        Batch(
            nodes=[
                Node(id="shop", label="tool", properties={"name": "Workshop"}),
                Node(id="saw", label="tool", properties={"name": "Saw"}),
                Node(id="drill", label="tool", properties={"name": "Drill"}),
            ],
            edges=[Edge(relation_type="uses", source="shop", target=t) for t in ("saw", "drill")],
        )
    )

    def order() -> list[str]:
        return [
            f.node_id
            for f in memory.retrieve_context("what is in the Workshop").facts()
            if f.node_id != "shop"
        ]

    assert order() == ["drill", "saw"]  # equal scores: by id
    memory.record_feedback("drill", "wrong", count=4)
    memory.record_feedback("saw", "helpful", count=2)
    assert order() == ["saw", "drill"]
    usage = Usage.of(memory.kb.find_node("drill").properties)  # type: ignore[union-attr]
    assert usage == Usage(used=0, helpful=0, wrong=4)
    bundle = memory.retrieve_context("what is in the Workshop", record_usage=True)
    assert Usage.of(memory.kb.find_node("saw").properties).used == 1  # type: ignore[union-attr]
    assert bundle.facts()
    with pytest.raises(NotFoundError):
        memory.record_feedback(["saw", "ghost"], "helpful")
    with pytest.raises(ValidationError):
        memory.record_feedback("saw", "great")  # type: ignore[arg-type]


def test_importance_formula() -> None:
    fresh = importance({}, NOW, NOW)
    assert fresh == pytest.approx(0.5)
    assert (
        importance({"usage": {"helpful": 5}}, NOW, NOW)
        > fresh
        > importance({"usage": {"wrong": 5}}, NOW, NOW)
    )
    month_old = importance({}, NOW.replace(month=5, day=21), NOW)
    assert month_old == pytest.approx(0.3 + 0.2 * 0.5, abs=1e-6)
    assert not math.isnan(importance({"usage": "garbage"}, None, NOW))
