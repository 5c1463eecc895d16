"""Schema discovery and change tracking on the clinical example."""

from __future__ import annotations

import cef
from cef import Batch, Chunk, Edge, Node, RelationType
from cef.schema.discovery import SchemaTracker, describe_schema, discover_schema


def test_discovers_types_properties_counts_and_endpoints(clinical_kb: cef.KnowledgeBase) -> None:
    schema = discover_schema(clinical_kb)
    patient = schema.node_type("Patient")
    assert patient is not None
    assert patient.count == 3
    assert set(patient.properties) == {"name", "age", "sex"}
    assert len(patient.examples) == 2
    rel = {r.name: r for r in schema.relation_types}
    assert rel["HAS_CONDITION"].inverse == "CONDITION_OF"
    assert rel["INTERACTS_WITH"].bidirectional
    assert rel["IS_A"].semantics.value == "CLASSIFICATION"
    is_a = {(e.source, e.target): e.count for e in rel["IS_A"].endpoints}
    assert is_a[("Medication", "DrugClass")] == 5
    assert ("Condition", "DiseaseClass") in is_a
    assert rel["IS_A"].count == sum(is_a.values())


def test_describe_schema_names_everything(clinical_kb: cef.KnowledgeBase) -> None:
    text = describe_schema(discover_schema(clinical_kb))
    assert "- Patient: name, age, sex" in text
    assert "HAS_CONDITION [ASSOCIATION]: Patient → Condition (inverse: CONDITION_OF)" in text
    assert "INTERACTS_WITH [ASSOCIATION, bidirectional]" in text


def test_empty_schema_is_described() -> None:
    from cef.schema.discovery import GraphSchema

    assert "empty" in describe_schema(GraphSchema())


def test_tracker_marks_only_schema_changing_writes(clinical_kb: cef.KnowledgeBase) -> None:
    tracker = SchemaTracker(clinical_kb)
    tracker.attach()
    try:
        assert tracker.refresh()  # first read
        before = tracker.fingerprint
        assert not tracker.dirty

        clinical_kb.index_chunk(Chunk(id="c-new", content="more about warfarin", node_id="med-warfarin"))
        clinical_kb.index_node(Node(id="pat-zoe", label="Patient", properties={"name": "Zoe"}))
        clinical_kb.index_edge(Edge(relation_type="HAS_CONDITION", source="pat-zoe", target="cond-afib"))
        assert not tracker.dirty  # same labels, properties and endpoint types
        assert not tracker.refresh()

        clinical_kb.index_node(Node(id="pat-ida", label="Patient", properties={"name": "Ida", "ward": "3B"}))
        assert tracker.dirty  # a new property name
        assert tracker.refresh()
        assert "ward" in (tracker.schema.node_type("Patient") or tracker.schema.node_types[0]).properties

        clinical_kb.index_batch(
            Batch(
                relation_types=[RelationType(name="VISITED")],
                nodes=[Node(id="clinic-1", label="Clinic", properties={"name": "North"})],
                edges=[Edge(relation_type="VISITED", source="pat-zoe", target="clinic-1")],
            )
        )
        assert tracker.refresh()
        assert "Clinic" in tracker.schema.labels()
        assert tracker.fingerprint != before
    finally:
        tracker.detach()
    assert tracker.on_write not in clinical_kb.state.listeners


def test_new_edge_between_known_types_on_a_new_pair_is_a_change(clinical_kb: cef.KnowledgeBase) -> None:
    tracker = SchemaTracker(clinical_kb)
    tracker.attach()
    tracker.refresh()
    clinical_kb.index_edge(Edge(relation_type="TREATS", source="med-warfarin", target="spec-cardiology"))
    assert tracker.dirty
    assert tracker.refresh()
    treats = next(r for r in tracker.schema.relation_types if r.name == "TREATS")
    assert ("Medication", "Specialty") in {(e.source, e.target) for e in treats.endpoints}
    tracker.detach()


def test_poll_sees_another_connection(clinical_kb: cef.KnowledgeBase, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tracker = SchemaTracker(clinical_kb)
    tracker.refresh()
    path = clinical_kb.store.path  # type: ignore[attr-defined]
    with cef.open(path, embedder=None) as other:  # a second engine: its writes reach us via the change feed
        other.index_node(Node(id="lab-1", label="LabResult", properties={"name": "INR 3.1"}))
    assert tracker.poll()
    assert "LabResult" in tracker.schema.labels()
    assert not tracker.poll()
