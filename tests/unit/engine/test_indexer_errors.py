"""Every write error names what is wrong and writes nothing."""

from __future__ import annotations

import pytest

import cef
from cef import Batch, Chunk, Edge, Node, RelationType
from cef.errors import (
    DuplicateIdError,
    InvalidPropertyError,
    MissingNodeError,
    NotFoundError,
    UnknownRelationTypeError,
    ValidationError,
)


def _base(kb: cef.KnowledgeBase) -> None:
    kb.initialize(
        [Node(id="root", label="Thing", properties={"name": "Root"})],
        [RelationType(name="LINKS"), RelationType(name="PART_OF", semantics="HIERARCHY")],
    )


def _counts(kb: cef.KnowledgeBase) -> tuple[int, int, int]:
    s = kb.stats()
    return s["nodes"], s["edges"], s["chunks"]


def test_unregistered_relation_type_names_type_and_edge(kb: cef.KnowledgeBase) -> None:
    _base(kb)
    before = _counts(kb)
    batch = Batch(
        nodes=[Node(id="a", label="Thing")],
        edges=[Edge(id="e-bad", relation_type="LIKES", source="root", target="a")],
    )
    with pytest.raises(UnknownRelationTypeError) as info:
        kb.index_batch(batch)
    msg = str(info.value)
    assert "'LIKES'" in msg and "'e-bad'" in msg and "edges[0]" in msg and "LINKS" in msg
    assert _counts(kb) == before  # node 'a' of the same batch was not written either
    assert kb.find_node("a") is None


def test_edge_to_missing_node(kb: cef.KnowledgeBase) -> None:
    _base(kb)
    with pytest.raises(MissingNodeError) as info:
        kb.index_batch(
            Batch(
                nodes=[Node(id="b", label="Thing")],
                edges=[Edge(id="e1", relation_type="LINKS", source="b", target="ghost")],
            )
        )
    assert "'ghost'" in str(info.value) and "'e1'" in str(info.value)
    assert kb.find_node("b") is None


def test_chunk_linked_to_missing_node(kb: cef.KnowledgeBase) -> None:
    _base(kb)
    with pytest.raises(MissingNodeError, match=r"'nowhere'.*chunk 'c1'"):
        kb.index_chunk(Chunk(id="c1", content="text", node_id="nowhere"))
    assert kb.stats()["chunks"] == 0


@pytest.mark.parametrize("kind", ["node", "edge", "chunk"])
def test_duplicate_id_against_store(kb: cef.KnowledgeBase, kind: str) -> None:
    _base(kb)
    kb.index_node(Node(id="x", label="Thing"))
    kb.index_edge(Edge(id="ex", relation_type="LINKS", source="root", target="x"))
    kb.index_chunk(Chunk(id="cx", content="hello", node_id="x"))
    before = _counts(kb)
    item = {
        "node": Batch(nodes=[Node(id="new", label="Thing"), Node(id="x", label="Thing")]),
        "edge": Batch(edges=[Edge(id="ex", relation_type="LINKS", source="x", target="root")]),
        "chunk": Batch(chunks=[Chunk(id="cx", content="again")]),
    }[kind]
    with pytest.raises(DuplicateIdError) as info:
        kb.index_batch(item)
    assert f"duplicate {kind} id" in str(info.value)
    assert _counts(kb) == before
    assert kb.find_node("new") is None


def test_duplicate_id_within_batch(kb: cef.KnowledgeBase) -> None:
    _base(kb)
    with pytest.raises(DuplicateIdError, match=r"'twin'.*nodes\[0\]"):
        kb.index_batch(Batch(nodes=[Node(id="twin", label="A"), Node(id="twin", label="B")]))
    assert kb.find_node("twin") is None


def test_invalid_property_is_rejected_before_any_write(kb: cef.KnowledgeBase) -> None:
    with pytest.raises(ValueError, match="JSON-serializable"):
        Node(id="n", label="Thing", properties={"when": object()})
    _base(kb)
    with pytest.raises(InvalidPropertyError, match="'root'"):
        kb.update_node("root", {"bad": {1, 2}})
    assert kb.find_node("root").properties == {"name": "Root"}  # type: ignore[union-attr]


def test_confidence_and_weight_bounds() -> None:
    with pytest.raises(ValueError):
        Edge(relation_type="X", source="a", target="b", confidence=1.5)
    with pytest.raises(ValueError):
        Edge(relation_type="X", source="a", target="b", weight=0)


def test_unknown_relation_in_query(kb: cef.KnowledgeBase) -> None:
    _base(kb)
    with pytest.raises(UnknownRelationTypeError, match="'NOPE'"):
        kb.retrieve(cef.GraphQuery(query="q", traversal=cef.TraversalHint(relation_types=["NOPE"])))
    with pytest.raises(UnknownRelationTypeError):
        kb.get_neighbors("root", ["NOPE"])


def test_delete_without_cascade_refuses_and_keeps_everything(kb: cef.KnowledgeBase) -> None:
    _base(kb)
    kb.index_batch(
        Batch(
            nodes=[Node(id="a", label="Thing")],
            edges=[Edge(id="e", relation_type="LINKS", source="root", target="a")],
            chunks=[Chunk(id="c", content="about a", node_id="a")],
        )
    )
    with pytest.raises(ValidationError, match=r"1 edge.*1 linked chunk"):
        kb.delete_node("a", cascade=False)
    assert _counts(kb) == (2, 1, 1)
    kb.delete_node("a", cascade=True)
    assert _counts(kb) == (1, 0, 0)
    assert kb.get_neighbors("root") == []
    with pytest.raises(NotFoundError):
        kb.delete_node("a")
    with pytest.raises(NotFoundError):
        kb.delete_edge("e")


def test_inverse_name_on_write_is_stored_once_under_base_relation(kb: cef.KnowledgeBase) -> None:
    kb.initialize([], [RelationType(name="TREATS", inverse="TREATED_BY")])
    kb.index_batch(Batch(nodes=[Node(id="drug", label="Drug"), Node(id="cond", label="Condition")]))
    edge = kb.index_edge(Edge(id="t", relation_type="TREATED_BY", source="cond", target="drug"))
    assert (edge.relation_type, edge.source, edge.target) == ("TREATS", "drug", "cond")
    assert [n.id for n in kb.get_neighbors("cond", ["TREATED_BY"], direction="out")] == ["drug"]
    assert [n.id for n in kb.get_neighbors("drug", ["TREATS"], direction="out")] == ["cond"]
    assert kb.get_neighbors("drug", ["TREATED_BY"], direction="out") == []


def test_relation_endpoint_types_enforced(kb: cef.KnowledgeBase) -> None:
    kb.initialize([], [RelationType(name="PRESCRIBED", source_types=["Patient"], target_types=["Drug"])])
    kb.index_batch(Batch(nodes=[Node(id="p", label="Patient"), Node(id="d", label="Drug")]))
    with pytest.raises(ValidationError, match="source 'd' has type 'Drug'"):
        kb.index_edge(Edge(relation_type="PRESCRIBED", source="d", target="p"))
    kb.index_edge(Edge(relation_type="PRESCRIBED", source="p", target="d"))
    assert kb.stats()["edges"] == 1
