"""Bi-temporal facts: current state, as known at T, changed since T; supersession keeps history."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cef
from cef import Node
from cef.errors import NotFoundError, ValidationError
from cef.memory import NodeKind, RetrievalConstraints, SemanticMemory, TemporalConstraint
from cef.memory.temporal import parse_temporal_hints
from cef.model import Batch, Edge

from .conftest import NOW, Clock


def day(n: float) -> datetime:
    return NOW + timedelta(days=n)


def setup_patient(memory: SemanticMemory) -> None:
    reg = memory.registry
    reg.register_node_type("patient", NodeKind.INSTANCE)
    reg.register_node_type("medication", NodeKind.CLASS)
    reg.register_edge_type("takes", source_types=["patient"], target_types=["medication"])
    memory.kb.index_batch(
        Batch(
            nodes=[
                Node(id="pat", label="patient", properties={"name": "Pat Doe"}),
                *(
                    Node(id=m, label="medication", properties={"name": m.title()})
                    for m in ("warfarin", "metformin", "aspirin")
                ),
            ]
        )
    )


def taking(memory: SemanticMemory, temporal: TemporalConstraint | None = None) -> set[str]:
    bundle = memory.retrieve_context(
        "what does Pat Doe take",
        RetrievalConstraints(temporal=temporal, max_depth=1, include_temporal_context=False),
    )
    return {f.node_id for f in bundle.facts()} - {"pat"}


def test_supersede_closes_validity_and_keeps_what_we_knew(memory: SemanticMemory, clock: Clock) -> None:
    setup_patient(memory)
    e = memory.assert_fact("pat", "takes", "metformin", valid_from=day(-100), at=day(-100))
    memory.assert_fact("pat", "takes", "warfarin", valid_from=day(-50), at=day(-50))
    # learned on day -5 that metformin had been stopped on day -30 (retroactive)
    result = memory.supersede(e.id, valid_to=day(-30), at=day(-5))
    assert result.closed.valid_to == day(-30) and result.closed.recorded_at == day(-5)
    assert taking(memory) == {"warfarin"}  # current state
    assert taking(memory, TemporalConstraint.at(day(-10))) == {
        "metformin",
        "warfarin",
    }  # what we knew on day -10
    assert taking(memory, TemporalConstraint.at(day(-60))) == {"metformin"}
    assert taking(memory, TemporalConstraint.at(day(-200))) == set()
    assert taking(memory, TemporalConstraint(mode="history")) == {"metformin", "warfarin"}
    # nothing was deleted: both versions are in the store
    stored = memory.kb.store.get_edges([e.id, result.closed.id])
    assert len(stored) == 2 and "superseded_at" in stored[0].properties
    with pytest.raises(ValidationError, match="already superseded"):
        memory.supersede(e.id)
    with pytest.raises(ValidationError, match="already closed"):
        memory.supersede(result.closed.id, valid_to=day(-20))
    with pytest.raises(NotFoundError):
        memory.supersede("nope")


def test_replacement_is_valid_from_the_closing_time(memory: SemanticMemory) -> None:
    setup_patient(memory)
    e = memory.assert_fact(
        "pat", "takes", "warfarin", properties={"dose": "5 mg"}, valid_from=day(-40), at=day(-40)
    )
    new = Edge(relation_type="takes", source="pat", target="warfarin", properties={"dose": "2 mg"})
    result = memory.supersede(e.id, valid_to=day(-3), at=day(-3), replacement=new)
    assert result.replacement is not None and result.replacement.valid_from == day(-3)
    now = memory.retrieve_context("what does Pat Doe take", max_depth=1)
    doses = [r.properties.get("dose") for f in now.facts() for r in f.relations if r.relation == "takes"]
    assert doses == ["2 mg"]
    then = memory.retrieve_context(
        "what does Pat Doe take", max_depth=1, temporal=TemporalConstraint.at(day(-10))
    )
    assert [r.properties.get("dose") for f in then.facts() for r in f.relations if r.relation == "takes"] == [
        "5 mg"
    ]


def test_changed_since(memory: SemanticMemory) -> None:
    setup_patient(memory)
    old = memory.assert_fact("pat", "takes", "metformin", valid_from=day(-100), at=day(-100))
    memory.assert_fact("pat", "takes", "warfarin", valid_from=day(-7), at=day(-7))
    memory.supersede(old.id, valid_to=day(-2), at=day(-2))
    changes = memory.changed_since(day(-10))
    assert [(c.kind, c.target) for c in changes] == [("ended", "metformin"), ("added", "warfarin")]
    assert memory.changed_since(day(-10), until=day(-5))[0].target == "warfarin"
    assert memory.changed_since(day(-1)) == []
    bundle = memory.retrieve_context("what changed for Pat Doe since 2025-06-08")
    assert bundle.temporal is not None and bundle.temporal.since == datetime(2025, 6, 8, tzinfo=UTC)
    assert [(c.kind, c.target_name) for c in bundle.temporal.changes] == [
        ("ended", "Metformin"),
        ("added", "Warfarin"),
    ]


def test_temporal_hints() -> None:
    h = parse_temporal_hints("what did we know as of 2025-03-01?", NOW)
    assert h.mode == "as_of" and h.as_of == datetime(2025, 3, 1, tzinfo=UTC)
    h = parse_temporal_hints("what was she taking in March 2025", NOW)
    assert (
        h.mode == "as_of"
        and h.as_of is not None
        and h.as_of.day == 31
        and h.since == datetime(2025, 3, 1, tzinfo=UTC)
    )
    h = parse_temporal_hints("how has my bench press progressed this month", NOW)
    assert h.mode == "history" and h.since == datetime(2025, 6, 1, tzinfo=UTC)
    assert parse_temporal_hints("what changed in the last 2 weeks", NOW).since == NOW - timedelta(days=14)
    assert parse_temporal_hints("since 2025-06-01 what is new", NOW).since == datetime(2025, 6, 1, tzinfo=UTC)
    h = parse_temporal_hints("what is she currently taking", NOW)
    assert h.mode == "current" and h.since is None
    assert parse_temporal_hints("tell me about Raven", NOW).phrases == []


def test_temporal_constraint_validation() -> None:
    with pytest.raises(ValueError, match="needs an as_of"):
        TemporalConstraint(mode="as_of")
    with pytest.raises(ValueError, match="before since"):
        TemporalConstraint(since=day(0), until=day(-1))
    assert TemporalConstraint(as_of=datetime(2025, 1, 1)).mode == "as_of"  # naive means UTC


# ------------------------------------------------------------ property: as-of equals a replay
EVENTS = st.lists(
    st.tuples(st.integers(0, 3), st.booleans(), st.integers(-30, 30)),  # fact, open/close, valid-time offset
    min_size=1,
    max_size=14,
)


@settings(max_examples=25, deadline=None)
@given(EVENTS, st.lists(st.tuples(st.integers(-5, 60), st.integers(-40, 70)), min_size=1, max_size=6))
def test_as_of_queries_equal_a_replay_of_what_was_known(
    events: list[tuple[int, bool, int]], queries: list[tuple[int, int]]
) -> None:
    """Facts opened and closed over time: a query "valid at V as known at K" sees exactly the
    facts a replay of the events recorded by K says are valid at V (current: K = infinity)."""
    with tempfile.TemporaryDirectory() as d:
        clock = Clock(NOW)
        kb = cef.open(Path(d) / "m.db", embedder=None)
        memory = SemanticMemory(kb, clock=clock, extractor=None, owns_kb=True)
        try:
            memory.kb.index_batch(
                Batch(nodes=[Node(id="a", label="x"), *(Node(id=f"b{i}", label="y") for i in range(4))])
            )
            memory.registry.register_edge_type("r")
            open_edge: dict[int, tuple[str, int]] = {}  # fact -> (edge id, valid_from)
            history: list[tuple[int, int, int, int | None]] = []  # (recorded, fact, valid_from, valid_to)
            for step, (fact, is_open, offset) in enumerate(events):
                rec = step * 3  # record times strictly increase
                if is_open and fact not in open_edge:
                    e = memory.assert_fact("a", "r", f"b{fact}", valid_from=day(rec + offset), at=day(rec))
                    open_edge[fact] = (e.id, rec + offset)
                    history.append((rec, fact, rec + offset, None))
                elif not is_open and fact in open_edge:
                    eid, vf = open_edge.pop(fact)
                    memory.supersede(eid, valid_to=day(rec + offset), at=day(rec))
                    history.append((rec, fact, vf, max(rec + offset, vf)))
            g = memory.kb.state.graph
            checks: list[tuple[int | None, int]] = [*queries, (None, 10), (None, 45)]
            for known, valid in checks:
                known_intervals: dict[int, list[tuple[int, int | None]]] = {}
                for rec, fact, vf, vt in history:
                    if known is not None and rec > known:
                        continue
                    spans = known_intervals.setdefault(fact, [])
                    if vt is not None and spans and spans[-1] == (vf, None):
                        spans[-1] = (vf, vt)  # the open interval was closed
                    else:
                        spans.append((vf, vt))
                expected = {
                    f"b{f}"
                    for f, spans in known_intervals.items()
                    if any(vf <= valid and (vt is None or valid < vt) for vf, vt in spans)
                }
                flt = g.edge_filter(valid_at=day(valid), known_at=day(known) if known is not None else None)
                _, _, targets, _ = g.step(np.array([g.pos("a")]), flt)
                assert {g.node_ids[int(t)] for t in targets} == expected, (known, valid, history)
        finally:
            memory.close()
