"""The anchor stage of a question a caller has read (:func:`cef.retrieve.anchors.anchor_stage`):
the memory's anchors, on the engine's stage."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

import cef
from cef import Batch, Chunk, Edge, GraphQuery, Node, RelationType
from cef.errors import ValidationError
from cef.model import ResolutionTarget
from cef.retrieve.anchors import AnchorRequest, anchor_stage, resolve_target
from cef.retrieve.anchorsettings import AnchorSettings
from cef.retrieve.context import QueryContext

NOW = datetime(2025, 6, 20, tzinfo=UTC)


def _kb(path: Path) -> cef.KnowledgeBase:
    kb = cef.open(path, embedder=None)
    nodes = [
        Node(id="sam", label="person", properties={"name": "Sam"}, scope="u1"),
        Node(id="kayak", label="boat", properties={"name": "Kayak"}, scope="u1"),
        Node(id="other", label="boat", properties={"name": "Dinghy"}, scope="u2"),
        Node(id="said", label="note", properties={"name": "Said"}, scope="u1"),
        Node(id="old", label="boat", properties={"name": "Old canoe"}, scope="u1"),
    ]
    edges = [
        Edge(id="e1", relation_type="OWNS", source="sam", target="kayak", scope="u1"),
        Edge(
            id="e2",
            relation_type="OWNS",
            source="sam",
            target="old",
            scope="u1",
            valid_to=datetime(2020, 1, 1, tzinfo=UTC),
        ),
    ]
    chunks = [
        Chunk(id="c1", content="Sam paddles the kayak on the lake", node_id="kayak", scope="u1"),
        Chunk(id="c2", content="Sam paddles a dinghy on the lake", node_id="other", scope="u2"),
        Chunk(id="c3", content="Sam once paddled the old canoe on the lake", node_id="old", scope="u1"),
        Chunk(id="c4", content="Sam said the lake was cold", node_id="said", scope="u1"),
    ]
    kb.index_batch(Batch(relation_types=[RelationType(name="OWNS")], nodes=nodes, edges=edges, chunks=chunks))
    return kb


def _anchors(kb: cef.KnowledgeBase, request: AnchorRequest, query: str = "who paddles on the lake") -> dict:
    qc = QueryContext(
        state=kb.state, query=GraphQuery(query=query, scope="u1"), started=time.perf_counter(), now=NOW
    )
    with kb.state.reading():
        got = anchor_stage(qc, request)
    assert qc.anchors == got
    assert [a.score for a in got] == sorted((a.score for a in got), reverse=True)
    return {a.node_id: (round(a.score, 3), a.how) for a in got}


def test_named_nodes_and_passages_anchor_inside_the_scope(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        got = _anchors(kb, AnchorRequest(named=[("sam", 1.0, "name"), ("other", 1.0, "name")]))
        assert got["sam"] == (1.0, "name")
        assert "other" not in got  # another scope's node, named or not, never anchors
        assert got["kayak"][1] == "passage" and 0 < got["kayak"][0] <= 0.5  # its chunk matched by words


def test_ended_nodes_and_records_of_what_was_said_anchor_only_when_named(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        is_note = AnchorRequest(named_only=lambda label: label == "note")
        got = _anchors(kb, is_note, "what did Sam say about the cold lake and the old canoe")
        assert "said" not in got and "old" not in got  # a note only by name; the canoe's fact ended
        kept = _anchors(
            kb,
            AnchorRequest(named=[("said", 1.0, "name")], named_only=is_note.named_only, drop_ended=False),
            "what did Sam say about the cold lake and the old canoe",
        )
        assert kept["said"] == (1.0, "name") and kept["old"][1] == "passage"  # history keeps it


def test_types_the_question_names_go_first_and_the_limit_holds(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        plain = _anchors(kb, AnchorRequest(named=[("sam", 0.9, "name"), ("kayak", 0.8, "name")]))
        typed = _anchors(
            kb,
            AnchorRequest(
                named=[("sam", 0.9, "name"), ("kayak", 0.8, "name")],
                type_hints=["boat"],
                is_a=lambda label, t: label == t,
                unnamed_type=0.5,
                limit=1,
            ),
        )
        assert list(plain)[:2] == ["sam", "kayak"]
        assert typed == {"kayak": (0.8, "name")}  # the person keeps half its score: the boat first


def _with_options(kb: cef.KnowledgeBase, options: dict) -> dict:
    qc = QueryContext(
        state=kb.state,
        query=GraphQuery(query="who paddles on the lake", scope="u1", options=options),
        started=time.perf_counter(),
        now=NOW,
    )
    with kb.state.reading():
        got = anchor_stage(qc, AnchorRequest(named=[("sam", 1.0, "name")]))
    return {a.node_id: (round(a.score, 3), a.how) for a in got}


def test_a_querys_anchor_settings_reach_the_stage_and_bad_ones_are_refused(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        default = _with_options(kb, {})
        assert default["kayak"] == (0.5, "passage")  # the best BM25 chunk keeps chunk_text_share 0.5
        halved = _with_options(kb, {"anchors": {"chunk_text_share": 0.25}})
        assert halved["kayak"] == (0.25, "passage")
        assert _with_options(kb, {"anchors": {"chunk_k": 0}}) == {"sam": (1.0, "name")}  # no passages asked
        with pytest.raises(ValidationError, match=r"options: question_k: .*greater than or equal to 0"):
            _with_options(kb, {"anchors": {"question_k": -1}})
        with pytest.raises(ValidationError, match="AnchorSettings"):
            _with_options(kb, {"anchors": 3})


def test_the_routes_target_resolution_reads_the_querys_fuzzy_threshold(tmp_path: Path) -> None:
    def found(kb: cef.KnowledgeBase, name: str, options: dict) -> list[str]:
        query = GraphQuery(query="x", scope="u1", options=options)
        qc = QueryContext(state=kb.state, query=query, started=time.perf_counter(), now=NOW)
        with kb.state.reading():
            return [a.node_id for a in resolve_target(qc, ResolutionTarget(description=name))]

    with _kb(tmp_path / "kb.db") as kb:
        assert found(kb, "Kayakk", {}) == ["kayak"]  # a near name, over the default 85
        assert found(kb, "Dingy canoe", {}) == []
        assert found(kb, "Dingy canoe", {"anchors": {"min_fuzzy": 60}}) == ["old"]


def test_every_anchor_setting_says_what_it_does_and_where_its_value_came_from() -> None:
    for name, field in AnchorSettings.model_fields.items():
        text = field.description or ""
        assert "; " in text and ("not fitted" in text or "bench/README" in text), name
