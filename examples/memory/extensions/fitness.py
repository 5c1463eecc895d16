"""Test case 4: a personal fitness coach (workouts, exercises, goals, measurements)."""

from __future__ import annotations

from typing import Any

from cef.schema.kinds import NodeKind
from cef.schema.specs import SemanticMemoryExtension


class FitnessExtension(SemanticMemoryExtension):
    name = "fitness"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type("user", NodeKind.INSTANCE, {"age": "int"}, domain="fitness")
        reg.register_node_type(
            "workout",
            NodeKind.EVENT,
            {"type": "string", "duration_minutes": "int", "intensity": "string", "date": "date"},
            domain="fitness",
        )
        reg.register_node_type(
            "exercise", NodeKind.CLASS, {"muscle_groups": "list", "equipment": "list"}, domain="fitness"
        )
        reg.register_node_type("muscle_group", NodeKind.CLASS, domain="fitness")
        reg.register_node_type("workout_type", NodeKind.CLASS, domain="fitness")
        reg.register_node_type(
            "goal",
            NodeKind.INSTANCE,
            {"target": "string", "deadline": "date", "status": "string"},
            domain="fitness",
        )
        reg.register_node_type(
            "measurement",
            NodeKind.ATTRIBUTE,
            {"type": "string", "value": "float", "unit": "string", "date": "date"},
            domain="fitness",
        )
        reg.register_node_type(
            "meal",
            NodeKind.EVENT,
            {"calories": "int", "protein": "int", "carbs": "int", "fat": "int"},
            domain="fitness",
        )
        reg.register_edge_type(
            "includes_exercise",
            source_types=["workout"],
            target_types=["exercise"],
            properties_schema={"sets": "int", "reps": "int", "weight_kg": "float"},
            domain="fitness",
        )
        reg.register_edge_type(
            "targets", source_types=["workout", "exercise"], target_types=["muscle_group"], domain="fitness"
        )
        reg.register_edge_type(
            "progresses_toward",
            source_types=["workout", "measurement"],
            target_types=["goal"],
            domain="fitness",
        )
        reg.register_edge_type(
            "prefers", source_types=["user"], target_types=["exercise", "workout_type"], domain="fitness"
        )
        reg.register_edge_type(
            "avoids",
            source_types=["user"],
            target_types=["exercise"],
            properties_schema={"reason": "string"},
            domain="fitness",
        )
        reg.register_edge_type(
            "performed",
            source_types=["user"],
            target_types=["workout"],
            inverse="performed_by",
            domain="fitness",
        )
        reg.register_edge_type("has_goal", source_types=["user"], target_types=["goal"], domain="fitness")
        reg.register_edge_type(
            "measures", source_types=["measurement"], target_types=["exercise", "user"], domain="fitness"
        )
        reg.register_vocabulary(
            "fitness",
            synonyms={
                "workout": ["training", "session"],
                "reps": ["repetitions"],
                "measurement": ["progress", "max", "1rm"],
            },
        )
