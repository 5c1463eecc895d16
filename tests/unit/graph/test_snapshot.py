"""Graph snapshots: a round trip keeps the index, and the engine uses one only when it is current."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cef
from cef import Batch, Edge, Node, RelationType
from cef.engine.state import EngineState
from cef.graph.index import GraphIndex
from cef.graph.snapshot import SnapshotError, read_header, read_snapshot, write_snapshot

RELS = [
    RelationType(name="R0"),
    RelationType(name="R1", inverse="R1_INV"),
    RelationType(name="R2", bidirectional=True),
]


def _graph(
    n: int, edges: list[tuple[int, int, str, float]], dead_nodes: set[int], dead_edges: set[int]
) -> GraphIndex:
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label=f"L{i % 3}", scope="s" if i % 4 == 0 else None) for i in range(n)])
    for k, (s, t, r, c) in enumerate(edges):
        props = {"superseded_at": 1000.0 + k} if k % 6 == 5 else {}
        g.add_edges(
            [
                Edge(
                    id=f"e{k}",
                    relation_type=r,
                    source=f"n{s}",
                    target=f"n{t}",
                    confidence=c,
                    properties=props,
                )
            ]
        )
    g.remove_edges(
        [f"e{k}" for k in dead_edges]
        + [f"e{k}" for k, (s, t, _, _) in enumerate(edges) if s in dead_nodes or t in dead_nodes]
    )
    g.remove_nodes([f"n{i}" for i in dead_nodes])
    return g


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(1, 25))
    m = draw(st.integers(0, 60))
    edges = [
        (
            draw(st.integers(0, n - 1)),
            draw(st.integers(0, n - 1)),
            draw(st.sampled_from(["R0", "R1", "R2"])),
            draw(st.floats(0.05, 1.0)),
        )
        for _ in range(m)
    ]
    dead_nodes = draw(st.sets(st.integers(0, n - 1), max_size=n // 3))
    dead_edges = draw(st.sets(st.integers(0, max(m - 1, 0)), max_size=m // 3)) if m else set()
    return n, edges, dead_nodes, dead_edges


def _reach(g: GraphIndex, start: str, direction: str) -> dict[str, int]:
    p = g.pos(start)
    if p is None:
        return {}
    exp = g.expand([p], 3, g.edge_filter(direction=direction), max_nodes=1000)
    return {g.node_ids[n]: d for n, d in zip(exp.nodes.tolist(), exp.depth.tolist(), strict=True)}


@settings(max_examples=40, deadline=None)
@given(graphs(), st.sampled_from(["out", "in", "both"]))
def test_snapshot_round_trip_keeps_every_node_edge_and_walk(tmp_path_factory, data, direction) -> None:  # type: ignore[no-untyped-def]
    n, edges, dead_nodes, dead_edges = data
    g = _graph(n, edges, dead_nodes, dead_edges)
    path = tmp_path_factory.mktemp("snap") / "g"
    write_snapshot(g, path, {"seq": 7, "instance": "x"})
    h, head = read_snapshot(path)
    h.set_relation_types(RELS)
    assert head["seq"] == 7 and head["instance"] == "x"
    assert (h.node_count, h.edge_count) == (g.node_count, g.edge_count)
    assert {i for i in h._node_pos} == {i for i in g._node_pos}
    assert h._edge_pos_map is None  # edge ids -> positions: made on first use, not by every open
    assert h._edge_pos == g._edge_pos
    for name in (
        "e_src",
        "e_dst",
        "e_rel",
        "e_conf",
        "e_tx_end",
        "e_scope",
        "e_alive",
        "node_label",
        "node_alive",
    ):
        assert np.array_equal(getattr(h, name).view, getattr(g, name).view), name
    for i in range(n):
        assert _reach(h, f"n{i}", direction) == _reach(g, f"n{i}", direction)
    # the loaded index keeps working incrementally
    if h.node_count >= 1:
        first = next(iter(h._node_pos))
        h.add_nodes([Node(id="new", label="L0")])
        h.add_edges([Edge(id="e-new", relation_type="R0", source=first, target="new")])
        assert "new" in _reach(h, first, "out")


def test_unreadable_or_foreign_format_snapshot_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "g"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(SnapshotError, match="unreadable graph snapshot"):
        read_header(bad)
    with pytest.raises(SnapshotError, match="NUL"):
        g = GraphIndex()
        g.add_nodes([Node(id="a\x00b", label="L")])
        write_snapshot(g, tmp_path / "h", {})
    assert not (tmp_path / "h").exists()
    assert not list(tmp_path.glob("h.*.tmp"))  # the temporary file is removed too


# ----------------------------------------------------------------------------- engine


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshot every graph (the default only snapshots graphs of 200K+ items)."""
    monkeypatch.setattr(EngineState, "SNAPSHOT_MIN_ITEMS", 1)
    monkeypatch.setattr(EngineState, "SNAPSHOT_REWRITE_SHARE", 0.0)


def _fill(db: Path, start: int, count: int) -> None:
    with cef.open(db, embedder=None) as kb:
        if not kb.state.graph.rel_types:
            kb.index_batch(Batch(relation_types=RELS))
        nodes = [Node(id=f"n{i}", label="T") for i in range(start, start + count)]
        edges = [
            Edge(id=f"e{i}", relation_type="R0", source=f"n{i}", target=f"n{i + 1}")
            for i in range(start, start + count - 1)
        ]
        kb.index_batch(Batch(nodes=nodes, edges=edges))


def _chain(kb: cef.KnowledgeBase, start: str) -> set[str]:
    g = kb.state.graph
    exp = g.expand([g.pos(start)], 100, g.edge_filter(direction="out"), max_nodes=10_000)  # type: ignore[list-item]
    return {g.node_ids[p] for p in exp.nodes.tolist()}


def test_engine_writes_snapshot_and_opens_from_it(tmp_path: Path, small_threshold: None) -> None:
    db = tmp_path / "kb.db"
    _fill(db, 0, 50)
    snap = Path(str(db) + "-graph")
    assert snap.exists(), "closing a changed graph writes its snapshot"
    with cef.open(db, embedder=None) as kb:
        assert kb.state.loaded_from_snapshot and kb.state._snapshot_seq == kb.state.seq  # nothing to replay
        assert len(_chain(kb, "n0")) == 50


def test_commits_after_the_snapshot_are_replayed(
    tmp_path: Path, small_threshold: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "kb.db"
    _fill(db, 0, 20)
    snap = Path(str(db) + "-graph")
    before = read_header(snap)["seq"]
    monkeypatch.setattr(EngineState, "SNAPSHOT_MIN_ITEMS", 10**9)  # the next writer leaves the snapshot alone
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(
            Batch(
                nodes=[Node(id="x", label="T")],
                edges=[Edge(id="ex", relation_type="R0", source="n19", target="x")],
            )
        )
        kb.delete_edge("e5")
    assert read_header(snap)["seq"] == before
    with cef.open(db, embedder=None) as kb:
        assert kb.state.loaded_from_snapshot and kb.state._snapshot_seq == before < kb.state.seq
        assert _chain(kb, "n6") == {f"n{i}" for i in range(6, 20)} | {"x"}
        assert "n6" not in _chain(kb, "n0")


def test_snapshot_of_another_database_is_ignored(
    tmp_path: Path, small_threshold: None, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _fill(a, 0, 30)
    _fill(b, 100, 5)
    shutil.copy(str(a) + "-graph", str(b) + "-graph")
    with caplog.at_level(logging.INFO), cef.open(b, embedder=None) as kb:
        assert not kb.state.loaded_from_snapshot
        assert kb.state.graph.node_count == 5 and kb.state.graph.pos("n0") is None
    assert "another database" in caplog.text


def test_snapshot_newer_than_the_store_is_ignored(tmp_path: Path, small_threshold: None) -> None:
    db = tmp_path / "kb.db"
    _fill(db, 0, 10)
    backup = tmp_path / "backup.db"
    with cef.open(db, embedder=None) as kb:
        kb.state.store._conn.execute(f"VACUUM INTO '{backup}'")  # type: ignore[attr-defined]
    _fill(db, 10, 10)  # the snapshot now reflects 20 nodes
    shutil.copy(str(db) + "-graph", str(backup) + "-graph")  # restoring an older copy of the same database
    with cef.open(backup, embedder=None) as kb:
        assert kb.state.graph.node_count == 10 and kb.state.graph.pos("n15") is None


def test_corrupt_or_mismatched_snapshot_falls_back_to_the_store(
    tmp_path: Path, small_threshold: None, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "kb.db"
    _fill(db, 0, 10)
    snap = Path(str(db) + "-graph")
    # a change written behind the engine's back (no change-feed entry): the counts no longer match
    con = sqlite3.connect(db)
    con.execute("DELETE FROM edges WHERE id='e3'")
    con.commit()
    con.close()
    with caplog.at_level(logging.WARNING), cef.open(db, embedder=None) as kb:
        assert kb.state.graph.edge_count == 8 and kb.state.graph.edge_pos("e3") is None
    assert "does not match the store" in caplog.text
    snap.write_bytes(b"\x00garbage")
    caplog.clear()
    with caplog.at_level(logging.WARNING), cef.open(db, embedder=None) as kb:
        assert kb.state.graph.edge_count == 8
    assert "ignoring graph snapshot" in caplog.text


def test_full_reindex_rebuilds_from_the_store_not_the_snapshot(tmp_path: Path, small_threshold: None) -> None:
    db = tmp_path / "kb.db"
    _fill(db, 0, 10)
    snap = Path(str(db) + "-graph")
    head = read_header(snap)
    # a snapshot that passes every check (same database, seq and counts) but is wrong: edges reversed
    wrong = GraphIndex()
    wrong.set_relation_types(RELS)
    wrong.add_nodes([Node(id=f"n{i}", label="T") for i in range(10)])
    wrong.add_edges(
        [Edge(id=f"e{i}", relation_type="R0", source=f"n{i + 1}", target=f"n{i}") for i in range(9)]
    )
    write_snapshot(wrong, snap, {"seq": head["seq"], "instance": head["instance"]})
    with cef.open(db, embedder=None) as kb:
        assert kb.state.loaded_from_snapshot and _chain(kb, "n0") == {"n0"}
        kb.full_reindex()
        assert not kb.state.loaded_from_snapshot
        assert _chain(kb, "n0") == {f"n{i}" for i in range(10)}
    assert read_header(snap)["seq"] == head["seq"]  # and the snapshot is the store's again
    with cef.open(db, embedder=None) as kb:
        assert kb.state.loaded_from_snapshot and _chain(kb, "n0") == {f"n{i}" for i in range(10)}
