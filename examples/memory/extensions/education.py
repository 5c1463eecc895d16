"""Test case 5: an educational tutor (concepts, mastery, misconceptions, prerequisites)."""

from __future__ import annotations

from typing import Any

from cef.schema.kinds import NodeKind
from cef.schema.specs import SemanticMemoryExtension


class EducationExtension(SemanticMemoryExtension):
    name = "education"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type("student", NodeKind.INSTANCE, {"grade": "int"}, domain="education")
        reg.register_node_type(
            "concept",
            NodeKind.CLASS,
            {"subject": "string", "difficulty": "int", "prerequisites": "list"},
            domain="education",
        )
        reg.register_node_type(
            "lesson",
            NodeKind.EVENT,
            {"topic": "string", "duration": "int", "format": "string", "date": "date"},
            domain="education",
        )
        reg.register_node_type(
            "assessment",
            NodeKind.EVENT,
            {"type": "string", "score": "float", "max_score": "float", "date": "date"},
            domain="education",
        )
        reg.register_node_type(
            "misconception",
            NodeKind.BELIEF,
            {"correct_understanding": "string", "common_cause": "string"},
            domain="education",
        )
        reg.register_node_type(
            "learning_style", NodeKind.ATTRIBUTE, {"type": "string", "strength": "float"}, domain="education"
        )
        reg.register_edge_type(
            "understands",
            source_types=["student"],
            target_types=["concept"],
            properties_schema={"mastery_level": "float", "last_assessed": "datetime"},
            domain="education",
        )
        reg.register_edge_type(
            "struggles_with",
            source_types=["student"],
            target_types=["concept"],
            properties_schema={"attempts": "int"},
            domain="education",
        )
        reg.register_edge_type(
            "prerequisite_for",
            source_types=["concept"],
            target_types=["concept"],
            inverse="requires",
            domain="education",
        )
        reg.register_edge_type(
            "has_misconception", source_types=["student"], target_types=["misconception"], domain="education"
        )
        reg.register_edge_type(
            "concerns", source_types=["misconception"], target_types=["concept"], domain="education"
        )
        reg.register_edge_type(
            "covered_in", source_types=["concept"], target_types=["lesson"], domain="education"
        )
        reg.register_edge_type(
            "tested_by", source_types=["concept"], target_types=["assessment"], domain="education"
        )
        reg.register_edge_type(
            "took", source_types=["student"], target_types=["assessment"], domain="education"
        )
        reg.register_vocabulary(
            "education",
            synonyms={"student": ["learner", "pupil"], "understand": ["grasp", "comprehend", "master"]},
        )
