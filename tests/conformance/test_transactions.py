"""Every write is all or nothing, in the record store and in every index and mirror."""

from __future__ import annotations

import pytest

from cef import Batch, Chunk, Edge, Node
from cef.errors import DuplicateIdError
from cef.store.base import WriteSet

from . import data
from .backends import Deployment


def _snapshot(dep: Deployment, kb) -> tuple:  # type: ignore[no-untyped-def]
    store = kb.store
    graph = dep.graph(kb)
    return (
        store.counts(),
        store.current_seq(),
        len(kb.state.node_vectors),
        len(kb.state.chunk_vectors),
        graph.neighbourhood(["a"], 3, None, 100),
        [h.id for h in store.search_text("chunk", "fresh words", 10)],
    )


def test_failed_batch_leaves_no_trace(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    before = _snapshot(deployment, kb)
    bad = Batch(
        nodes=[Node(id="n1", label="New"), Node(id="n2", label="New")],
        edges=[Edge(id="e-n1a", relation_type="LINKS", source="n1", target="a")],
        chunks=[
            Chunk(id="ch-n1", content="fresh words", node_id="n1"),
            Chunk(id="ch-a", content="clash", node_id="n2"),
        ],
    )
    with pytest.raises(DuplicateIdError) as info:
        kb.index_batch(bad)
    assert info.value.kind == "chunk" and info.value.id == "ch-a"
    assert "ch-a" in str(info.value)
    assert _snapshot(deployment, kb) == before
    assert kb.store.existing_ids("node", ["n1", "n2"]) == set()
    assert kb.store.get_chunks(["ch-a"])[0].content == data.TEXTS["ch-a"]
    # the engine is still usable and consistent afterwards
    kb.index_batch(
        Batch(
            nodes=[Node(id="n1", label="New")],
            edges=[Edge(id="e-n1a", relation_type="LINKS", source="n1", target="a")],
        )
    )
    assert ("n1", 1, ["e-n1a"]) in deployment.graph(kb).neighbourhood(["a"], 1, None, 100)


def test_store_apply_is_one_transaction(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    store = kb.store
    seq = store.current_seq()
    writes = WriteSet(
        nodes=[Node(id="x1", label="X")],
        edges=[Edge(id="e-x1a", relation_type="LINKS", source="x1", target="a")],
        delete_chunks=["ch-b"],
        meta={"k": 1},
        chunks=[Chunk(id="ch-c", content="duplicate")],
    )
    with pytest.raises(DuplicateIdError):
        store.apply(writes)
    assert store.current_seq() == seq
    assert store.existing_ids("node", ["x1"]) == set()
    assert store.existing_ids("chunk", ["ch-b"]) == {"ch-b"}
    assert store.get_meta("k") is None
    before, after = store.apply(WriteSet(nodes=[Node(id="x1", label="X")], meta={"k": 1}))
    assert before == seq and after > before and store.current_seq() == after
    _, changes = store.changes_since(before)
    assert [(c.kind, c.op) for c in changes] == [("node", "insert_range"), ("meta", "upsert")]
    assert store.ids_in_range("node", changes[0].rid_from or 0, changes[0].rid_to or 0) == ["x1"]
