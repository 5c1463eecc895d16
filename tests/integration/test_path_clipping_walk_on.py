"""Two rules of issue 23's tenth wave, with the real encoder on graphs of made-up names.

A clipped noun names the type whose name it clips ("which *labs*": ``Laboratory``), before a type
whose members happen to be called by it ("Vesko Labs" supplies reagents); and a path that walks
one hop no question word names past a relation the question names ("which titles has X
*issued*") gains no answer-type fit there unless a noun names its end type."""

from __future__ import annotations

from pathlib import Path

import pytest

import cef
import cef.retrieve.pathwalkon as pathwalkon
from cef import GraphQuery
from cef.model import Batch, Edge, Node, RelationType


def _kb(
    tmp_path: Path, name: str, nodes: list[tuple[str, str]], edges: list[tuple[str, str, str]]
) -> cef.KnowledgeBase:
    kb = cef.open(tmp_path / f"{name}.db")  # the default offline MiniLM encoder
    kb.index_batch(
        Batch(
            relation_types=[RelationType(name=r) for r in dict.fromkeys(r for _, r, _ in edges)],
            nodes=[Node(id=n, label=label, properties={"name": n}) for n, label in nodes],
            edges=[
                Edge(id=f"e{i}", relation_type=r, source=s, target=t) for i, (s, r, t) in enumerate(edges)
            ],
        )
    )
    return kb


def _best(kb: cef.KnowledgeBase, question: str, **options: float) -> tuple[list[str], list[str]]:
    found = kb.retrieve(GraphQuery(query=question, options=options))
    path = found.nodes[0].path if found.nodes else None
    return (path.relation_types if path else []), [a.node.name for a in found.nodes]


CLIPPED_NODES = [
    ("Tarmo Belik", "Clinician"),
    ("Korvel Laboratory", "Laboratory"),
    ("Sannet Laboratory", "Laboratory"),
    ("Vesko Labs", "Supplier"),
    ("Dremo Labs", "Supplier"),
    ("Pallik Labs", "Supplier"),
]
CLIPPED_EDGES = [
    ("Tarmo Belik", "FEMORATES", "Korvel Laboratory"),
    ("Tarmo Belik", "FEMORATES", "Sannet Laboratory"),
    ("Tarmo Belik", "GALVISTS", "Vesko Labs"),
    ("Tarmo Belik", "GALVISTS", "Dremo Labs"),
    ("Tarmo Belik", "GALVISTS", "Pallik Labs"),
]


def test_a_clipped_noun_names_its_type_before_members_called_by_it(tmp_path: Path) -> None:
    with _kb(tmp_path, "clip", CLIPPED_NODES, CLIPPED_EDGES) as kb:
        q = "Which labs does Tarmo Belik work with?"
        path, answers = _best(kb, q)
        assert path == ["FEMORATES"] and set(answers[:2]) == {"Korvel Laboratory", "Sannet Laboratory"}
        # mutation: no clipping (out of the encoder's reach): the suppliers called "... Labs" win
        path, _ = _best(kb, q, clipping_cosine=1.0)
        assert path == ["GALVISTS"]


WALK_NODES = [
    ("Orvane Hesk", "Publisher"),
    ("Lumo Tarvis", "Game"),
    ("Pelka Dunmir", "Game"),
    ("Sailing simulation", "Genre"),
    ("Puzzle", "Genre"),
]
WALK_EDGES = [
    ("Orvane Hesk", "ISSUED", "Lumo Tarvis"),
    ("Orvane Hesk", "ISSUED", "Pelka Dunmir"),
    ("Lumo Tarvis", "HAS_GENRE", "Sailing simulation"),
    ("Pelka Dunmir", "HAS_GENRE", "Puzzle"),
]


def test_no_type_gain_one_unnamed_hop_past_the_named_relation(tmp_path: Path) -> None:
    with _kb(tmp_path, "walk", WALK_NODES, WALK_EDGES) as kb:
        q = "Which titles has Orvane Hesk issued?"
        path, answers = _best(kb, q)
        assert path == ["ISSUED"] and set(answers[:2]) == {"Lumo Tarvis", "Pelka Dunmir"}
        # a noun naming the far type still walks on
        path, _ = _best(kb, "Which genres has Orvane Hesk issued?")
        assert path == ["ISSUED", "HAS_GENRE"]
    # mutation: without the rule the asked noun's cosine with "genre" walks on past the named relation
    with pytest.MonkeyPatch.context() as mp, _kb(tmp_path, "walk-off", WALK_NODES, WALK_EDGES) as kb:
        mp.setattr(pathwalkon, "walked_on", lambda *args: {})
        path, _ = _best(kb, q)
        assert path == ["ISSUED", "HAS_GENRE"]
