"""Writes round-trip exactly, in insertion order, with the same lookups on every backend."""

from __future__ import annotations

from cef import Batch, Chunk, Edge, Node
from cef.store.base import GraphStore, Mirror, RecordStore, VectorIndex

from . import data
from .backends import Deployment


def _dump(items: list[Node] | list[Edge] | list[Chunk]) -> list[str]:
    return [x.model_dump_json() for x in items]


def test_ports_and_capabilities(deployment: Deployment) -> None:
    kb = deployment.open()
    st = kb.state
    assert isinstance(st.store, RecordStore)
    assert isinstance(st.node_vectors, VectorIndex) and isinstance(st.chunk_vectors, VectorIndex)
    assert isinstance(deployment.graph(kb), GraphStore)
    for m in st.mirrors:
        assert isinstance(m, Mirror)
    caps = st.store.capabilities
    assert caps.native_vector_search == (getattr(st.store, "vector_store", None) is not None)
    assert caps.traversal_pushdown == isinstance(st.store, GraphStore)


def test_batch_round_trips_exactly(deployment: Deployment) -> None:
    kb = deployment.open()
    res = kb.index_batch(data.batch())
    assert (res.nodes, res.edges, res.chunks, res.relation_types) == (8, 7, 7, 3)
    store = kb.store
    nodes, edges, chunks = data.nodes(), data.edges(), data.chunks()
    assert _dump(store.get_nodes([n.id for n in nodes])) == _dump(nodes)
    assert _dump(store.get_edges([e.id for e in edges])) == _dump(edges)
    assert _dump(store.get_chunks([c.id for c in chunks])) == _dump(chunks)
    # scans come back in insertion order
    assert _dump(list(store.iter_nodes())) == _dump(nodes)
    assert _dump(list(store.iter_edges())) == _dump(edges)
    assert _dump(list(store.iter_chunks())) == _dump(chunks)
    assert [r[0] for r in store.iter_node_rows()] == [n.id for n in nodes]
    assert [r[:4] for r in store.iter_edge_rows()] == [
        (e.id, e.relation_type, e.source, e.target) for e in edges
    ]
    assert store.counts() == {"nodes": 8, "edges": 7, "chunks": 7, "relation_types": 3}
    assert sorted(r.model_dump_json() for r in store.relation_types()) == sorted(
        r.model_dump_json() for r in data.RELATIONS
    )
    # lookups by id keep the caller's order and skip unknown ids
    assert [n.id for n in store.get_nodes(["c", "missing", "a"])] == ["c", "a"]
    assert store.existing_ids("node", ["a", "zz", "h"]) == {"a", "h"}
    assert store.existing_ids("edge", ["e-ab", "nope"]) == {"e-ab"}
    assert store.existing_ids("chunk", ["ch-x"]) == {"ch-x"}
    assert store.existing_ids("relation_type", ["LINKS", "NOPE"]) == {"LINKS"}


def test_vectors_are_stored_with_records(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    emb = deployment.embedder
    vecs = kb.store.get_vectors("chunk", ["ch-a", "ch-b", "missing"])
    assert set(vecs) == {"ch-a", "ch-b"}
    assert (vecs["ch-a"] == emb.embed([data.TEXTS["ch-a"]])[0]).all()
    assert [i for i, _ in kb.store.iter_vectors("chunk")] == list(data.TEXTS)
    assert len(kb.state.chunk_vectors) == 7 and len(kb.state.node_vectors) == 8
    assert kb.store.get_meta("embedding.model") == emb.name
    assert kb.store.get_meta("embedding.dim") == emb.dim


def test_lookups(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    store = kb.store
    assert store.chunks_for_nodes(["a", "b", "f"]) == {"a": ["ch-a"], "b": ["ch-b"]}
    assert sorted(store.edges_for_nodes(["a"])) == ["e-ab", "e-ae", "e-fa"]
    assert [n.id for n in store.nodes_by_property("name", "Aspirin")] == ["c"]
    assert [n.id for n in store.nodes_by_property("dose_mg", 500)] == ["b"]
    assert [n.id for n in store.nodes_by_property("dose_mg", 100.5)] == ["c"]
    assert [n.id for n in store.nodes_by_property("active", True)] == ["a"]
    assert [
        n.id for n in store.nodes_by_property("meta", {"atc": "B01AA03", "tags": ["anticoagulant", "oral"]})
    ] == ["a"]
    assert store.nodes_by_property("name", "Aspirin", label="Condition") == []
    assert store.nodes_by_property("name", "nobody") == []
    assert dict(store.labels()) == {"Drug": 3, "Condition": 2, "Patient": 1, "Ward": 1, "Note": 1}
    assert store.property_names("Drug") == ["name", "aliases", "dose_mg", "active", "meta"]
    assert ("LINKS", "Drug", "Drug", 2) in store.relation_endpoints()
    assert sum(c for *_, c in store.relation_endpoints()) == 7


def test_meta_entries(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.indexer.upsert_batch(Batch(), meta={"ingest.b": {"hash": "x"}, "ingest.a": [1, 2], "other": "v"})
    assert kb.store.get_meta("ingest.a") == [1, 2]
    assert kb.store.meta_items("ingest.") == [("ingest.a", [1, 2]), ("ingest.b", {"hash": "x"})]
    kb.indexer.upsert_batch(Batch(), meta={"ingest.a": None})
    assert kb.store.get_meta("ingest.a") is None
    assert kb.store.meta_items("ingest.") == [("ingest.b", {"hash": "x"})]


def test_updates(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    new = kb.update_node("c", {"name": "Acetylsalicylic acid", "dose_mg": 75})
    assert new.version == 2
    got = kb.store.get_nodes(["c"])[0]
    assert got.properties == {"name": "Acetylsalicylic acid", "dose_mg": 75}
    assert [h.id for h in kb.store.search_text("node", "acetylsalicylic", 5)] == ["c"]
    assert kb.store.search_text("node", "aspirin", 5) == []
    # the node was re-embedded: its vector follows the new text
    sims = kb.state.node_vectors.similarities(
        deployment.embedder.embed_query("Drug: Acetylsalicylic acid"), ["c"]
    )
    assert abs(float(sims[0]) - 1.0) < 1e-4
    edge = data.edges()[1].model_copy(update={"weight": 4.0, "confidence": 0.25, "properties": {"k": "v"}})
    kb.indexer.update_edge(edge)
    assert kb.store.get_edges(["e-bc"])[0].model_dump_json() == edge.model_dump_json()
    assert next(r for r in kb.store.iter_edge_rows() if r[0] == "e-bc")[4:6] == (4.0, 0.25)


def test_upsert_batch_replaces_records(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    res = kb.indexer.upsert_batch(
        Batch(
            nodes=[
                Node(id="b", label="Drug", properties={"name": "Metformin XR"}),
                Node(id="z", label="Drug"),
            ],
            edges=[Edge(id="e-bz", relation_type="LINKS", source="b", target="z")],
            chunks=[Chunk(id="ch-b", content="metformin extended release", node_id="b")],
        ),
        remove_nodes=["h"],
    )
    assert res.nodes == 2
    store = kb.store
    assert store.get_nodes(["b"])[0].properties == {"name": "Metformin XR"}
    assert store.get_nodes(["b"])[0].version == 2
    assert store.existing_ids("node", ["z", "h"]) == {"z"}
    assert store.existing_ids("edge", ["e-dh", "e-bz"]) == {"e-bz"}
    assert store.get_chunks(["ch-b"])[0].content == "metformin extended release"
    assert [h.id for h in store.search_text("chunk", "extended", 5)] == ["ch-b"]
    assert store.counts() == {"nodes": 8, "edges": 7, "chunks": 7, "relation_types": 3}
    top = kb.state.chunk_vectors.search(deployment.embedder.embed_query("metformin extended release"), 1)
    assert top[0][0] == "ch-b" and abs(top[0][1] - 1.0) < 1e-4


def test_one_edge_property_is_read_without_records(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    store = kb.store
    ids = [e.id for e in data.edges()] + ["missing"]
    assert store.edge_property(ids, "n") == {"e-ab": 3}
    assert store.edge_property(ids, "evidence") == {"e-ab": "trial"}
    assert store.edge_property(ids, "nope") == {}
    assert store.edge_property([], "n") == {}
    # flags and nulls (JSON literals) come back as Python values, a text "true" stays a text
    kb.index_batch(
        Batch(
            edges=[
                Edge(id="e-flags", relation_type=data.edges()[0].relation_type, source=data.edges()[0].source,
                     target=data.edges()[0].target, properties={"title": True, "gone": None, "word": "true"}),
            ]
        )
    )  # fmt: skip
    assert store.edge_property(["e-flags"], "title") == {"e-flags": True}
    assert store.edge_property(["e-flags"], "gone") == {"e-flags": None}
    assert store.edge_property(["e-flags"], "word") == {"e-flags": "true"}
