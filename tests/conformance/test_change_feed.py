"""Another handle (another process) sees every committed write through the change feed."""

from __future__ import annotations

from cef import Batch, Chunk, Edge, Node

from . import data
from .backends import Deployment


def test_second_handle_sees_commits(deployment: Deployment) -> None:
    writer = deployment.open()
    writer.index_batch(data.batch())
    reader = deployment.open_again(writer)
    emb = deployment.embedder
    assert reader.stats()["nodes"] == 8
    seq0 = reader.store.current_seq()
    dv0 = reader.store.data_version()

    writer.index_batch(
        Batch(
            nodes=[Node(id="n1", label="New", properties={"name": "Newcomer"})],
            edges=[Edge(id="e-n1a", relation_type="LINKS", source="n1", target="a")],
            chunks=[Chunk(id="ch-n1", content="brand new zebra paragraph", node_id="n1")],
        )
    )
    writer.delete_node("h")
    writer.update_node("b", {"name": "Metformin XR"})
    assert reader.store.data_version() != dv0

    with reader.state.reading():
        assert reader.state.seq == writer.state.seq
    assert sorted(n.id for n in reader.get_neighbors("n1")) == ["a"]
    assert reader.find_node("h") is None
    assert reader.find_node("b").properties["name"] == "Metformin XR"  # type: ignore[union-attr]
    hits = reader.state.chunk_vectors.search(emb.embed_query("brand new zebra paragraph"), 1)
    assert hits[0][0] == "ch-n1"
    assert [h.id for h in reader.store.search_text("chunk", "zebra", 5)] == ["ch-n1"]
    assert ("n1", 1, ["e-n1a"]) in deployment.graph(reader).neighbourhood(["a"], 1, None, 50)

    new_seq, changes = reader.store.changes_since(seq0)
    assert new_seq == reader.store.current_seq() > seq0
    assert [c.seq for c in changes] == list(range(seq0 + 1, new_seq + 1))
    kinds = {(c.kind, c.op) for c in changes}
    assert {("node", "insert_range"), ("edge", "insert_range"), ("chunk", "insert_range")} <= kinds
    assert {("node", "delete"), ("edge", "delete"), ("node", "upsert")} <= kinds
    ranges = [c for c in changes if c.op == "insert_range" and c.kind == "chunk"]
    assert reader.store.ids_in_range("chunk", ranges[0].rid_from or 0, ranges[0].rid_to or 0) == ["ch-n1"]
    assert reader.store.changes_since(new_seq) == (new_seq, [])


def test_reader_writes_after_catching_up(deployment: Deployment) -> None:
    a = deployment.open()
    a.index_batch(data.batch())
    b = deployment.open_again(a)
    a.index_batch(Batch(nodes=[Node(id="from-a", label="X")]))
    b.index_batch(
        Batch(
            nodes=[Node(id="from-b", label="X")],
            edges=[Edge(id="e-ab2", relation_type="LINKS", source="from-a", target="from-b")],
        )
    )
    for kb in (a, b):
        assert sorted(n.id for n in kb.get_neighbors("from-a")) == ["from-b"]
        assert kb.stats()["nodes"] == 10
    assert a.state.seq == b.state.seq == a.store.current_seq()
