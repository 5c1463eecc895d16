"""A broad kind a question word asks ("who": a person) is compared with a type's card after the
words its relations' descriptions put before its name (issue 23, second wave): to the real
encoder a "patient" is a person's word, an "animal patient" is not, so "who is covering X" no
longer walks on from the vets to the animals they care for."""

from __future__ import annotations

from pathlib import Path

import pytest

import cef
import cef.retrieve.pathtypes as pathtypes
from cef import GraphQuery
from cef.model import Batch, Edge, Node, RelationType

RELATIONS = {
    "ASSIGNED": "a rota slot is covered by a veterinarian",
    "CARES_FOR": "a veterinarian is the named carer of an animal patient",
    "HOUSED_IN": "an animal patient is kept in an enclosure",
}
NODES = [
    ("Tuesday late slot", "Slot"),
    ("Jonas Weller", "Veterinarian"),
    ("Marta Osei", "Veterinarian"),
    ("Pebble", "Patient"),
    ("Clover", "Patient"),
    ("Thistle", "Patient"),
    ("North Paddock", "Enclosure"),
]
EDGES = [
    ("Tuesday late slot", "ASSIGNED", "Jonas Weller"),
    ("Tuesday late slot", "ASSIGNED", "Marta Osei"),
    ("Jonas Weller", "CARES_FOR", "Pebble"),
    ("Jonas Weller", "CARES_FOR", "Clover"),
    ("Marta Osei", "CARES_FOR", "Thistle"),
    ("Pebble", "HOUSED_IN", "North Paddock"),
]


def _answers(tmp_path: Path, name: str) -> list[str]:
    with cef.open(tmp_path / f"{name}.db") as kb:  # the default offline MiniLM encoder
        kb.index_batch(
            Batch(
                relation_types=[RelationType(name=r, description=d) for r, d in RELATIONS.items()],
                nodes=[Node(id=n, label=label, properties={"name": n}) for n, label in NODES],
                edges=[
                    Edge(id=f"e{i}", relation_type=r, source=s, target=t) for i, (s, r, t) in enumerate(EDGES)
                ],
            )
        )
        found = kb.retrieve(GraphQuery(query="Who is covering the Tuesday late slot?"))
        return [a.node.name for a in found.nodes]


def test_who_is_not_answered_by_a_type_its_descriptions_call_animals(tmp_path: Path) -> None:
    assert set(_answers(tmp_path, "on")[:2]) == {"Jonas Weller", "Marta Osei"}
    # mutation: without the descriptions' qualifier the card reads "patient", a person's word
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pathtypes, "described_modifiers", lambda description, is_head: [])
        assert _answers(tmp_path, "off")[0] not in {"Jonas Weller", "Marta Osei"}
