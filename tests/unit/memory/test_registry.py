"""The extension registry: types, validation on write, inverses, hierarchies, persistence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from cef import Edge, Node
from cef.errors import (
    ConfigurationError,
    InvalidPropertyError,
    UnknownNodeTypeError,
    UnknownRelationTypeError,
    ValidationError,
)
from cef.memory import NodeKind, SemanticMemory, SemanticMemoryExtension
from cef.model import Batch, RelationSemantics
from cef.schema.kinds import UNIVERSAL_RELATIONS
from cef.schema.registry import META_PREFIX


def no_zero_dose(node: Node) -> str | None:
    return "dosage must not be 0 mg" if node.properties.get("dosage") == "0 mg" else None


class ClinicExtension(SemanticMemoryExtension):
    """Module level, so it can be restored when a memory is reopened."""

    name = "clinic"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type("person", NodeKind.INSTANCE, {"name": "string"})
        reg.register_node_type("patient", "person", {"mrn": "string", "age": "int"}, required=["mrn"])
        reg.register_node_type("medication", NodeKind.CLASS, {"drug_class": "string"})
        reg.register_node_type("prescription", NodeKind.EVENT, {"dosage": "string"}, validation=no_zero_dose)
        reg.register_edge_type(
            "prescribed_to", source_types=["medication"], target_types=["person"], inverse="takes"
        )
        reg.register_edge_type(
            "interacts_with",
            source_types=["medication"],
            target_types=["medication"],
            properties_schema={"severity": {"type": "string", "required": True}},
            bidirectional=True,
        )
        reg.register_vocabulary(
            "clinic",
            synonyms={"patient": ["client", "subject"]},
            class_extensions=[("metformin", "medication.n.01", "Diabetes medication")],
        )


@pytest.fixture
def clinic(memory: SemanticMemory) -> SemanticMemory:
    memory.register_extension(ClinicExtension())
    memory.kb.index_batch(
        Batch(
            nodes=[
                Node(id="p1", label="patient", properties={"name": "Ann Lee", "mrn": "001", "age": 61}),
                Node(id="warfarin", label="medication", properties={"name": "Warfarin"}),
                Node(id="aspirin", label="medication", properties={"name": "Aspirin"}),
            ]
        )
    )
    return memory


def counts(m: SemanticMemory) -> dict[str, int]:
    return m.kb.store.counts()


def test_universal_vocabulary_is_registered_with_semantics(memory: SemanticMemory) -> None:
    rel = memory.kb.state.graph.rel_types
    assert set(UNIVERSAL_RELATIONS) <= set(rel)
    assert rel["instance_of"].semantics is RelationSemantics.CLASSIFICATION
    assert rel["part_of"].inverse == "has_part" and rel["part_of"].parent_end == "target"
    assert rel["located_in"].inverse == "contains"
    assert rel["knows"].bidirectional
    assert {k.value for k in NodeKind} == {
        "instance", "class", "attribute", "event", "collection", "observation", "belief", "time_point", "time_range",
    }  # fmt: skip


def test_inverse_names_are_written_and_walked(clinic: SemanticMemory) -> None:
    kb = clinic.kb
    stored = kb.index_edge(Edge(relation_type="takes", source="p1", target="warfarin"))
    assert (stored.relation_type, stored.source, stored.target) == ("prescribed_to", "warfarin", "p1")
    assert [n.id for n in kb.get_neighbors("p1", ["takes"], direction="out")] == ["warfarin"]
    assert [n.id for n in kb.get_neighbors("warfarin", ["prescribed_to"], direction="out")] == ["p1"]


def test_type_hierarchy_lets_subtypes_through(clinic: SemanticMemory) -> None:
    reg = clinic.registry
    assert reg.is_a("patient", "person") and reg.is_a("patient", "instance")
    assert not reg.is_a("medication", "person")
    assert reg.kind_of("patient") is NodeKind.INSTANCE
    assert reg.kind_of("prescription") is NodeKind.EVENT
    assert reg.kind_of("belief") is NodeKind.BELIEF  # a kind label is its own kind
    assert reg.kind_of("gadget") is None  # unregistered
    # prescribed_to allows target type "person": a patient is one
    clinic.kb.index_edge(Edge(relation_type="prescribed_to", source="aspirin", target="p1"))


def test_wrong_source_type_is_refused_and_nothing_written(clinic: SemanticMemory) -> None:
    before = counts(clinic)
    with pytest.raises(
        ValidationError, match=r"source 'p1' has type 'patient'.*allows source types \['medication'\]"
    ):
        clinic.kb.index_batch(
            Batch(
                nodes=[Node(id="m9", label="medication", properties={"name": "Heparin"})],
                edges=[Edge(relation_type="prescribed_to", source="p1", target="warfarin")],
            )
        )
    assert counts(clinic) == before


def test_missing_or_mistyped_properties_are_refused(clinic: SemanticMemory) -> None:
    before = counts(clinic)
    with pytest.raises(InvalidPropertyError, match="required property 'mrn' is missing"):
        clinic.kb.index_node(Node(id="p2", label="patient", properties={"name": "Bo"}))
    with pytest.raises(InvalidPropertyError, match="property 'age': expected int, got str"):
        clinic.kb.index_node(Node(id="p2", label="patient", properties={"mrn": "2", "age": "old"}))
    with pytest.raises(InvalidPropertyError, match="required property 'severity'"):
        clinic.kb.index_edge(Edge(relation_type="interacts_with", source="warfarin", target="aspirin"))
    with pytest.raises(InvalidPropertyError, match="dosage must not be 0 mg"):
        clinic.kb.index_node(Node(id="rx", label="prescription", properties={"dosage": "0 mg"}))
    with pytest.raises(InvalidPropertyError, match="required property 'mrn'"):  # updates are checked too
        clinic.kb.update_node("p1", {"mrn": None})
    assert counts(clinic) == before
    clinic.kb.index_edge(
        Edge(
            relation_type="interacts_with",
            source="warfarin",
            target="aspirin",
            properties={"severity": "major"},
        )
    )
    assert counts(clinic)["edges"] == before["edges"] + 1


def test_strict_registry_refuses_unknown_types(clinic: SemanticMemory) -> None:
    clinic.kb.index_node(Node(id="x1", label="gadget"))  # open by default
    clinic.registry.set_strict(True)
    with pytest.raises(UnknownNodeTypeError, match="'gizmo' is not registered"):
        clinic.kb.index_node(Node(id="x2", label="gizmo"))
    clinic.kb.index_node(Node(id="x3", label="event"))  # a universal kind is always fine


def test_bad_registrations_are_clear(memory: SemanticMemory) -> None:
    reg = memory.registry
    with pytest.raises(UnknownNodeTypeError, match="parent 'mammal' is neither"):
        reg.register_node_type("cat", "mammal")
    with pytest.raises(ValidationError, match="unknown type 'colour'"):
        reg.register_node_type("cat", NodeKind.INSTANCE, {"fur": "colour"})
    with pytest.raises(ValidationError, match="letters, digits and underscores"):
        reg.register_edge_type("likes very much")
    with pytest.raises(ValidationError, match="unknown semantics"):
        reg.register_edge_type("likes", semantics="LOVE")
    with pytest.raises(ValidationError, match="already the inverse of 'part_of'"):
        reg.register_edge_type("has_part")
    with pytest.raises(ValidationError, match="parse"):
        reg.register_ingestion_pipeline("csv", parser=object())  # type: ignore[arg-type]
    assert "cat" not in reg.node_types and "likes" not in reg.edge_types


def test_a_failing_extension_registers_nothing(memory: SemanticMemory) -> None:
    class Broken(SemanticMemoryExtension):
        name = "broken"

        def register(self, memory: Any) -> None:
            reg = memory.get_extension_registry()
            reg.register_node_type("widget", NodeKind.INSTANCE)
            reg.register_edge_type("links", inverse="linked_by")
            reg.register_edge_type("linked_by")  # clashes with the inverse above: refused at write

    meta_before = memory.kb.store.meta_items(META_PREFIX)
    with pytest.raises(ValidationError, match="inverse"):
        memory.register_extension(Broken())
    assert memory.kb.store.meta_items(META_PREFIX) == meta_before
    assert "widget" not in memory.registry.node_types
    assert "links" not in memory.kb.state.graph.rel_types


def test_registering_twice_widens_an_edge_type(memory: SemanticMemory) -> None:
    reg = memory.registry
    reg.register_node_type("file", NodeKind.INSTANCE)
    reg.register_node_type("concept", NodeKind.CLASS)
    reg.register_node_type("assessment", NodeKind.EVENT)
    reg.register_edge_type("tested_by", target_types=["file"])
    spec = reg.register_edge_type("tested_by", source_types=["concept"], target_types=["assessment"])
    assert spec.source_types == [] and spec.target_types == ["file", "assessment"]
    assert memory.kb.state.graph.rel_types["tested_by"].target_types == ["file", "assessment"]
    with pytest.raises(ValidationError, match="already registered under 'class'"):
        reg.register_node_type("concept", NodeKind.INSTANCE)


def test_registry_persists_and_restores_extensions(
    memory: SemanticMemory, open_memory_at: Callable[..., SemanticMemory]
) -> None:
    memory.register_extension(ClinicExtension())
    memory.close()
    again = open_memory_at()
    try:
        reg = again.registry
        assert reg.extensions == ["clinic"]
        assert reg.node_type("patient") is not None and reg.node_type("patient").parent == "person"  # type: ignore[union-attr]
        assert reg.edge_type("prescribed_to").inverse == "takes"  # type: ignore[union-attr]
        assert "patient" in reg.canonical_terms("client")
        assert reg.class_of_term("Metformin").class_name == "medication"  # type: ignore[union-attr]
        # the validation callable came back with the extension
        with pytest.raises(InvalidPropertyError, match="dosage must not be 0 mg"):
            again.kb.index_node(Node(id="rx", label="prescription", properties={"dosage": "0 mg"}))
        # and reopening does not write the registry again
        version = again.kb.store.get_meta(META_PREFIX + "version")
    finally:
        again.close()
    third = open_memory_at()
    try:
        assert third.kb.store.get_meta(META_PREFIX + "version") == version
    finally:
        third.close()


def test_declarative_registrations_survive_without_extension_class(
    memory: SemanticMemory, open_memory_at: Callable[..., SemanticMemory]
) -> None:
    reg = memory.registry
    reg.register_node_type("gem", NodeKind.INSTANCE, {"carats": "float"}, required=["carats"])
    reg.register_edge_type("set_in", source_types=["gem"])
    memory.close()
    again = open_memory_at(restore_extensions=False)
    try:
        with pytest.raises(InvalidPropertyError, match="carats"):
            again.kb.index_node(Node(id="g", label="gem"))
        with pytest.raises(UnknownRelationTypeError):
            again.kb.index_edge(Edge(relation_type="mounted_in", source="a", target="b"))
    finally:
        again.close()


def test_observations_are_immutable(memory: SemanticMemory) -> None:
    result = memory.observe("The boiler makes a rattling noise", source="observed")
    with pytest.raises(ValidationError, match="observations are immutable"):
        memory.kb.update_node(result.observation_id, {"text": "changed"})


def test_unknown_pipeline_is_a_configuration_error(memory: SemanticMemory) -> None:
    with pytest.raises(ConfigurationError, match="no ingestion pipeline for content type 'cobol'"):
        memory.ingest("IDENTIFICATION DIVISION.", "cobol")


def test_universal_vocabulary_yields_to_existing_names() -> None:
    from cef.schema.kinds import universal_relation_types

    types = {rt.name: rt for rt in universal_relation_types({"contains", "owns"})}
    assert "owns" not in types  # taken: left to its owner
    assert types["located_in"].inverse is None  # its inverse name is taken: two separate types
    assert types["part_of"].inverse == "has_part"
