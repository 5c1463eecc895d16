"""The small knowledge base every conformance test starts from."""

from __future__ import annotations

from datetime import UTC, datetime

from cef import Batch, Chunk, Edge, Node, RelationSemantics, RelationType

T0 = datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
T1 = datetime(2025, 6, 30, 8, 30, 0, tzinfo=UTC)

RELATIONS = [
    RelationType(name="LINKS", semantics=RelationSemantics.ASSOCIATION, description="a plain link"),
    RelationType(name="PART_OF", semantics=RelationSemantics.CONTAINMENT, parent_end="target"),
    RelationType(name="CITES", semantics=RelationSemantics.REFERENCE, inverse="CITED_BY"),
]

TEXTS = {
    "ch-a": "warfarin interacts with aspirin and raises bleeding risk",
    "ch-b": "metformin treats type two diabetes",
    "ch-c": "aspirin relieves headache pain",
    "ch-d": "bleeding risk rises with anticoagulant therapy",
    "ch-e": "the patient record mentions diabetes and kidney disease",
    "ch-g": "scoped note about warfarin dosing",
    "ch-x": "an orphan paragraph about quantum physics",
}
OWNER = {"ch-a": "a", "ch-b": "b", "ch-c": "c", "ch-d": "d", "ch-e": "e", "ch-g": "g", "ch-x": None}


def nodes() -> list[Node]:
    return [n.model_copy(update={"created": T0, "updated": T0}) for n in _nodes()]


def _nodes() -> list[Node]:
    return [
        Node(
            id="a",
            label="Drug",
            properties={
                "name": "Warfarin",
                "aliases": ["Coumadin"],
                "dose_mg": 5,
                "active": True,
                "meta": {"atc": "B01AA03", "tags": ["anticoagulant", "oral"]},
            },
            content="Warfarin is an oral anticoagulant",
            created=T0,
            updated=T0,
        ),
        Node(id="b", label="Drug", properties={"name": "Metformin", "dose_mg": 500, "active": False}),
        Node(id="c", label="Drug", properties={"name": "Aspirin", "dose_mg": 100.5}),
        Node(id="d", label="Condition", properties={"name": "Bleeding"}),
        Node(id="e", label="Patient", properties={"name": "John Miller", "age": 67}),
        Node(id="f", label="Ward", properties={"title": "Cardiology ward"}),
        Node(id="g", label="Note", properties={"name": "Scoped note"}, scope="s1"),
        Node(id="h", label="Condition", properties={"name": "Kidney disease", "unicode": "naïve – ü"}),
    ]


def edges() -> list[Edge]:
    return [
        Edge(
            id="e-ab",
            relation_type="LINKS",
            source="a",
            target="b",
            weight=2.0,
            confidence=0.9,
            recorded_at=T0,
            properties={"evidence": "trial", "n": 3},
        ),
        Edge(id="e-bc", relation_type="LINKS", source="b", target="c", recorded_at=T0),
        Edge(
            id="e-cd",
            relation_type="LINKS",
            source="c",
            target="d",
            confidence=0.5,
            recorded_at=T0,
            valid_from=T0,
            valid_to=T1,
        ),
        Edge(id="e-ae", relation_type="CITES", source="a", target="e", recorded_at=T0, scope="s1"),
        Edge(id="e-ec", relation_type="LINKS", source="e", target="c", recorded_at=T0),
        Edge(id="e-fa", relation_type="PART_OF", source="f", target="a", recorded_at=T0),
        Edge(id="e-dh", relation_type="LINKS", source="d", target="h", weight=0.5, recorded_at=T0),
    ]


def chunks() -> list[Chunk]:
    return [
        Chunk(
            id=cid,
            content=text,
            node_id=OWNER[cid],
            scope="s1" if cid == "ch-g" else None,
            metadata={"n": i, "source": f"doc-{i}.md"},
            created=T0,
        )
        for i, (cid, text) in enumerate(TEXTS.items())
    ]


def batch() -> Batch:
    return Batch(relation_types=RELATIONS, nodes=nodes(), edges=edges(), chunks=chunks())
