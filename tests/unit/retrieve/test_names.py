"""One name finder (:func:`cef.retrieve.names.name_finder`) for the route's anchors and the memory."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import cef
from cef import Batch, GraphQuery, Node
from cef.memory import SemanticMemory
from cef.retrieve.anchors import implicit_targets
from cef.retrieve.context import QueryContext
from cef.retrieve.names import name_finder

NOW = datetime(2025, 6, 20, tzinfo=UTC)


def _kb(path: Path) -> cef.KnowledgeBase:
    """'Raven' is a person and a word in every node name: a question about her feathers finds more
    than fifty feathers before her by BM25."""
    kb = cef.open(path, embedder=None)
    nodes = [Node(id="raven", label="person", properties={"name": "Raven"}, scope="u1")]
    nodes += [
        Node(id=f"item{i}", label="item", properties={"name": f"Raven feather {i}"}, scope="u1")
        for i in range(80)
    ]
    nodes.append(Node(id="kestrel", label="person", properties={"name": "Kestrel"}, scope="u2"))
    kb.index_batch(Batch(nodes=nodes))
    return kb


def _targets(kb: cef.KnowledgeBase, query: str, scope: str | None) -> list[str]:
    qc = QueryContext(
        state=kb.state, query=GraphQuery(query=query, scope=scope), started=time.perf_counter(), now=NOW
    )
    with kb.state.reading():
        return [t.description for t in implicit_targets(qc)]


def test_the_route_finds_a_name_many_nodes_share(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        assert _targets(kb, "what did raven say", "u1") == ["Raven"]
        assert "Raven" in _targets(kb, "which feather did raven lose", "u1")
        # seen from its scope only
        assert _targets(kb, "what did kestrel say", "u1") == []
        assert _targets(kb, "what did kestrel say", "u2") == ["Kestrel"]


def test_a_node_written_after_the_first_lookup_is_found(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        finder = name_finder(kb.state)
        assert finder.lookup("Osprey", "u1") == []
        kb.index_batch(
            Batch(nodes=[Node(id="osprey", label="person", properties={"name": "Osprey"}, scope="u1")])
        )
        assert finder.lookup("osprey", "u1") == ["osprey"]
        assert [f[0] for f in finder.find("ask Osprey", None)] == ["osprey"]
        assert _targets(kb, "ask osprey about the feathers", "u1") == ["Osprey"]


def test_the_memory_reads_the_engines_finder(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        memory = SemanticMemory(kb)
        try:
            assert memory.names is name_finder(kb.state)
            found = memory.names_in_text("what did raven say", "u1")
            assert [(node_id, name) for node_id, name, _, _ in found] == [("raven", "Raven")]
        finally:
            memory.close()
