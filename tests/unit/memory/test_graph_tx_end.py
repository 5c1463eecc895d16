"""The graph index honours transaction-time ends (``superseded_at``) of superseded edge versions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import cef
from cef import Batch, Edge, Node, RelationType
from cef.graph.filter import SUPERSEDED_AT, tx_end_ts
from cef.graph.index import GraphIndex

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def reachable(g: GraphIndex, known_at: datetime | None, valid_at: datetime | None = None) -> set[str]:
    flt = g.edge_filter(known_at=known_at, valid_at=valid_at)
    edges, _, _, _ = g.step(np.array([g.pos("a")]), flt)
    return {g.edge_ids[int(e)] for e in edges}


def test_tx_end_values() -> None:
    assert tx_end_ts(None) == float("inf")
    assert tx_end_ts("not a date") == float("inf")
    assert tx_end_ts(True) == float("inf")
    assert tx_end_ts(day(3).isoformat()) == day(3).timestamp()
    assert tx_end_ts("2025-01-04T00:00:00") == day(3).timestamp()  # naive means UTC
    assert tx_end_ts(day(3).timestamp()) == day(3).timestamp()


def test_superseded_version_seen_only_as_known_before_supersession() -> None:
    g = GraphIndex()
    g.set_relation_types([RelationType(name="takes")])
    g.add_nodes([Node(id="a", label="x"), Node(id="b", label="y")])
    v1 = Edge(id="v1", relation_type="takes", source="a", target="b", recorded_at=day(0), valid_from=day(0))
    g.add_edges([v1])
    assert reachable(g, None) == {"v1"}
    # learned on day 10 that it ended on day 5 (retroactive): v1 superseded, v2 closed
    g.update_edges([v1.model_copy(update={"properties": {SUPERSEDED_AT: day(10).isoformat()}})])
    v2 = v1.model_copy(update={"id": "v2", "valid_to": day(5), "recorded_at": day(10)})
    g.add_edges([v2])
    assert reachable(g, None) == {"v2"}  # current knowledge
    assert reachable(g, None, valid_at=day(7)) == set()  # what we now know about day 7
    assert reachable(g, day(7), valid_at=day(7)) == {"v1"}  # what we knew on day 7 about day 7
    assert reachable(g, day(10), valid_at=day(7)) == set()
    assert reachable(g, day(11), valid_at=day(3)) == {"v2"}
    assert reachable(g, day(-1)) == set()  # nothing was known before day 0


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.one_of(st.none(), st.integers(0, 30)), st.booleans()),
        min_size=1,
        max_size=25,
    ),
    st.one_of(st.none(), st.integers(-2, 35)),
)
def test_known_at_matches_definition(specs: list[tuple[int, int | None, bool]], t: int | None) -> None:
    """An edge is followed iff recorded_at <= T < superseded_at (T given) or it is not superseded (no T)."""
    g = GraphIndex()
    g.set_relation_types([RelationType(name="r")])
    g.add_nodes([Node(id="a", label="x"), Node(id="b", label="y")])
    expected: set[str] = set()
    for i, (rec, end_offset, as_update) in enumerate(specs):
        props = {SUPERSEDED_AT: day(rec + end_offset).isoformat()} if end_offset is not None else {}
        e = Edge(id=f"e{i}", relation_type="r", source="a", target="b", recorded_at=day(rec))
        if as_update:  # superseded after it was added, as the memory layer does
            g.add_edges([e])
            g.update_edges([e.model_copy(update={"properties": props})])
        else:
            g.add_edges([e.model_copy(update={"properties": props})])
        end = day(rec + end_offset) if end_offset is not None else None
        known = t is not None and day(rec) <= day(t) and (end is None or day(t) < end)
        if known or (t is None and end is None):
            expected.add(e.id)
    assert reachable(g, day(t) if t is not None else None) == expected


def test_superseded_at_survives_reopen(tmp_path: Path) -> None:
    """The store hands superseded_at back on open, so a fresh process filters the same way."""
    path = tmp_path / "kb.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(
            Batch(
                relation_types=[RelationType(name="takes")],
                nodes=[Node(id="a", label="x"), Node(id="b", label="y")],
                edges=[
                    Edge(
                        id="v1",
                        relation_type="takes",
                        source="a",
                        target="b",
                        recorded_at=day(0),
                        properties={SUPERSEDED_AT: day(10).isoformat()},
                    ),
                    Edge(
                        id="v2",
                        relation_type="takes",
                        source="a",
                        target="b",
                        recorded_at=day(10),
                        valid_to=day(5),
                    ),
                ],
            )
        )
        before = (reachable(kb.state.graph, None), reachable(kb.state.graph, day(7)))
    with cef.open(path, embedder=None) as kb:
        after = (reachable(kb.state.graph, None), reachable(kb.state.graph, day(7)))
    assert before == after == ({"v2"}, {"v1"})
