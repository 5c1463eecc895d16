"""Test case 3: a pharma field rep (patients, prescriptions, medications, interactions)."""

from __future__ import annotations

from typing import Any

from cef.model import RelationSemantics
from cef.schema.kinds import NodeKind
from cef.schema.specs import SemanticMemoryExtension


class PharmaExtension(SemanticMemoryExtension):
    name = "pharma"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type(
            "patient",
            NodeKind.INSTANCE,
            {"mrn": "string", "dob": "date", "conditions": "list"},
            required=["mrn"],
            domain="pharma",
        )
        reg.register_node_type(
            "medication", NodeKind.CLASS, {"generic_name": "string", "drug_class": "string"}, domain="pharma"
        )
        reg.register_node_type(
            "prescription",
            NodeKind.EVENT,
            {"dosage": "string", "frequency": "string", "prescriber": "string"},
            domain="pharma",
        )
        reg.register_node_type(
            "lab_result",
            NodeKind.ATTRIBUTE,
            {"test_name": "string", "value": "float", "unit": "string", "taken_at": "date"},
            domain="pharma",
        )
        reg.register_node_type("condition", NodeKind.CLASS, {"icd10": "string"}, domain="pharma")
        reg.register_edge_type(
            "prescribed_to",
            source_types=["medication"],
            target_types=["patient"],
            inverse="takes",
            domain="pharma",
        )
        reg.register_edge_type(
            "interacts_with",
            source_types=["medication"],
            target_types=["medication"],
            properties_schema={"severity": "string", "effect": "string"},
            bidirectional=True,
            domain="pharma",
        )
        reg.register_edge_type(
            "contraindicated_for", source_types=["medication"], target_types=["condition"], domain="pharma"
        )
        reg.register_edge_type(
            "has_condition", source_types=["patient"], target_types=["condition"], domain="pharma"
        )
        reg.register_edge_type(
            "has_prescription",
            source_types=["patient"],
            target_types=["prescription"],
            inverse="prescription_for",
            domain="pharma",
        )
        reg.register_edge_type(
            "prescription_of",
            source_types=["prescription"],
            target_types=["medication"],
            semantics=RelationSemantics.REFERENCE,
            domain="pharma",
        )
        reg.register_edge_type(
            "has_lab_result", source_types=["patient"], target_types=["lab_result"], domain="pharma"
        )
        reg.register_edge_type(
            "relevant_to",
            source_types=["lab_result"],
            target_types=["medication", "condition"],
            domain="pharma",
        )
        reg.register_vocabulary(
            "pharma",
            synonyms={
                "patient": ["client", "subject", "individual"],
                "medication": ["drug", "drugs", "med", "meds", "medicine", "medicines"],
                "interacts_with": ["interaction", "interactions"],
            },
            wordnet_extensions=[("metformin", "medication.n.01", "Diabetes medication")],
        )
