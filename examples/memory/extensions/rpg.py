"""Test case 1: an RPG game master (NPCs, locations, plot threads, trust)."""

from __future__ import annotations

from typing import Any

from cef.schema.kinds import NodeKind
from cef.schema.specs import SemanticMemoryExtension


class RPGExtension(SemanticMemoryExtension):
    name = "rpg"

    def register(self, memory: Any) -> None:
        reg = memory.get_extension_registry()
        reg.register_node_type(
            "npc", NodeKind.INSTANCE, {"disposition": "string", "threat_level": "int"}, domain="rpg"
        )
        reg.register_node_type("player", NodeKind.INSTANCE, {"character_class": "string"}, domain="rpg")
        reg.register_node_type(
            "location", NodeKind.INSTANCE, {"danger_level": "int", "lighting": "string"}, domain="rpg"
        )
        reg.register_node_type(
            "plot_thread", NodeKind.INSTANCE, {"status": "string", "phase": "string"}, domain="rpg"
        )
        reg.register_node_type("item", NodeKind.INSTANCE, {"rarity": "string"}, domain="rpg")
        reg.register_node_type("story_event", NodeKind.EVENT, {"occurred_at": "datetime"}, domain="rpg")
        reg.register_edge_type(
            "trusts",
            source_types=["npc"],
            target_types=["player", "npc"],
            properties_schema={"affinity": {"type": "int", "required": True}},
            inverse="trusted_by",
            domain="rpg",
        )
        reg.register_edge_type(
            "involved_in", target_types=["plot_thread"], properties_schema={"role": "string"}, domain="rpg"
        )
        reg.register_edge_type(
            "present_at", source_types=["npc", "player"], target_types=["location"], domain="rpg"
        )
        reg.register_edge_type(
            "knows_about",
            source_types=["npc", "player"],
            properties_schema={"detail": "string"},
            inverse="known_by",
            domain="rpg",
        )
        reg.register_edge_type(
            "participated_in", source_types=["npc", "player"], target_types=["story_event"], domain="rpg"
        )
        reg.register_vocabulary(
            "rpg",
            synonyms={
                "npc": ["character", "person", "figure"],
                "plot_thread": ["quest", "mission", "task", "objective", "storyline"],
                "item": ["artifact", "relic", "treasure"],
            },
        )
