"""Relations named by words no card holds (issue 23, p23f), with the real encoder on graphs of
made-up names: an order word ("after", "before") names a sequence relation and the way to walk it,
whichever way the relation's name runs; a classifier noun ("what kind of") names the relation
declared a CLASSIFICATION."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

import cef
import cef.retrieve.pathorder as pathorder
import cef.retrieve.pathscore as pathscore
from cef import GraphQuery
from cef.model import Batch, Edge, Node, RelationType
from cef.model.graph import RelationSemantics

STAGES = ["Korvel Tam", "Sannet Drow", "Vesko Pilm", "Dremo Lask"]
PEOPLE = ["Tarmo Belik", "Orvane Hesk", "Lumo Tarvis", "Pelka Dunmir"]


def _kb(tmp_path: Path, seq: RelationType, later_first: bool) -> cef.KnowledgeBase:
    """Four stages in order, each with its own person; ``seq`` links them (from the later stage
    to the earlier when ``later_first``)."""
    kb = cef.open(tmp_path / f"{seq.name}.db")  # the default offline MiniLM encoder
    pairs = list(pairwise(STAGES))
    edges = [(b, a) if later_first else (a, b) for a, b in pairs]
    kb.index_batch(
        Batch(
            relation_types=[seq, RelationType(name="FEMORATED_BY", inverse="FEMORATES")],
            nodes=[Node(id=n, label="Stage", properties={"name": n}) for n in STAGES]
            + [Node(id=n, label="Person", properties={"name": n}) for n in PEOPLE],
            edges=[
                Edge(id=f"s{i}", relation_type=seq.name, source=s, target=t) for i, (s, t) in enumerate(edges)
            ]
            + [
                Edge(id=f"p{i}", relation_type="FEMORATED_BY", source=s, target=p)
                for i, (s, p) in enumerate(zip(STAGES, PEOPLE, strict=True))
            ],
        )
    )
    return kb


def _answers(kb: cef.KnowledgeBase, question: str) -> list[str]:
    return [a.node.name for a in kb.retrieve(GraphQuery(query=question)).nodes]


SEQUENCES = [
    (RelationType(name="FOLLOWED_BY", inverse="PRECEDED_BY", semantics=RelationSemantics.SEQUENCE), False),
    (RelationType(name="SUPERSEDES", semantics=RelationSemantics.SEQUENCE), True),
    (RelationType(name="PRECEDES"), False),
    (
        RelationType(
            name="TARVO_LINK",
            semantics=RelationSemantics.SEQUENCE,
            description="a stage and the next stage of the plan",
        ),
        False,
    ),
]


@pytest.mark.parametrize(("seq", "later_first"), SEQUENCES, ids=[s.name for s, _ in SEQUENCES])
def test_an_order_word_walks_the_sequence_its_way(
    tmp_path: Path, seq: RelationType, later_first: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _kb(tmp_path, seq, later_first) as kb:
        after = "Who femorated the stage after Sannet Drow?"
        before = "Who femorated the stage right before Sannet Drow?"
        assert _answers(kb, after)[:1] == [PEOPLE[2]]
        assert _answers(kb, before)[:1] == [PEOPLE[0]]
        # mutation: no order word read: "after" and "before" can no longer both be right
        monkeypatch.setattr(pathscore, "order_cues", lambda *a, **k: {})
        assert _answers(kb, after)[:1] != [PEOPLE[2]] or _answers(kb, before)[:1] != [PEOPLE[0]]


def test_a_classifier_noun_names_the_classification_relation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = cef.open(tmp_path / "classify.db")
    works = ["Tidel Varns", "Moskel Prine", "Gavro Tesh"]
    kinds = ["Lurvan", "Pesko"]
    makers = ["Dalma Ruvik", "Feno Starl"]
    kb.index_batch(
        Batch(
            relation_types=[
                RelationType(name="IN_VORM", semantics=RelationSemantics.CLASSIFICATION),
                RelationType(name="MADE_BY"),
            ],
            nodes=[Node(id=n, label="Piece", properties={"name": n}) for n in works]
            + [Node(id=n, label="Vorm", properties={"name": n}) for n in kinds]
            + [Node(id=n, label="Manufacturer", properties={"name": n}) for n in makers],
            edges=[
                Edge(id="c0", relation_type="IN_VORM", source=works[0], target=kinds[0]),
                Edge(id="c1", relation_type="IN_VORM", source=works[1], target=kinds[0]),
                Edge(id="c2", relation_type="IN_VORM", source=works[2], target=kinds[1]),
                Edge(id="m0", relation_type="MADE_BY", source=works[0], target=makers[0]),
                Edge(id="m1", relation_type="MADE_BY", source=works[1], target=makers[1]),
                Edge(id="m2", relation_type="MADE_BY", source=works[2], target=makers[1]),
            ],
        )
    )
    with kb:
        q = f"What kind of piece is {works[2]}?"
        assert _answers(kb, q)[:1] == [kinds[1]]
        monkeypatch.setattr(pathscore, "classification_relation", lambda *a, **k: None)
        assert _answers(kb, q)[:1] != [kinds[1]]


def test_order_module_reads_names_alone() -> None:
    assert pathorder.order_of_type(None, "FOLLOWED_BY") is True
    assert pathorder.order_of_type(None, "OWNED_BY") is None


def test_a_description_verb_after_the_asked_noun_names_the_answer_relation(tmp_path: Path) -> None:
    # "which company <verb>ed X": the verb is only in the description of the relation that reaches
    # the maker; "company" heads the operator's type (as far off), a broader word for the maker
    kb = cef.open(tmp_path / "verb.db")
    kb.index_batch(
        Batch(
            relation_types=[
                RelationType(name="UNIT_OF", semantics=RelationSemantics.CLASSIFICATION),
                RelationType(name="MADE_BY", description="a model is designed and built by a manufacturer"),
                RelationType(name="SITED_IN", semantics=RelationSemantics.CONTAINMENT),
                RelationType(name="RUN_BY", description="a site is run by an operating company"),
            ],
            nodes=[
                Node(id="u", label="Unit", properties={"name": "Korvel T-12"}),
                Node(id="d", label="Model", properties={"name": "Sannet Mk4"}),
                Node(id="m", label="Manufacturer", properties={"name": "Vesko Pilm"}),
                Node(id="s", label="Site", properties={"name": "Pelka Dunmir"}),
                Node(id="o", label="OperatingCompany", properties={"name": "Dremo Lask"}),
            ],
            edges=[
                Edge(id="e0", relation_type="UNIT_OF", source="u", target="d"),
                Edge(id="e1", relation_type="MADE_BY", source="d", target="m"),
                Edge(id="e2", relation_type="SITED_IN", source="u", target="s"),
                Edge(id="e3", relation_type="RUN_BY", source="s", target="o"),
            ],
        )
    )
    with kb:
        assert _answers(kb, "Which company built Korvel T-12?")[:1] == ["Vesko Pilm"]
        # the verb says nothing of a relation: the noun's type decides
        assert _answers(kb, "Which company is Korvel T-12 with?")[:1] == ["Dremo Lask"]


def test_a_classifier_phrase_naming_a_type_leaves_the_classification_alone(tmp_path: Path) -> None:
    # "which tarvel varieties ...": the phrase names the type TarvelVariety by every word, the type fit
    # reads it; the relation declared a CLASSIFICATION is not what is asked
    kb = cef.open(tmp_path / "named.db")
    kb.index_batch(
        Batch(
            relation_types=[
                RelationType(name="FILED_IN", semantics=RelationSemantics.CLASSIFICATION),
                RelationType(name="DRAWN_FROM"),
            ],
            nodes=[
                Node(id="w", label="Blend", properties={"name": "Korvel Sannet"}),
                Node(id="z", label="Zone", properties={"name": "Pelka Dunmir"}),
                Node(id="v1", label="TarvelVariety", properties={"name": "Lumo Orvane"}),
                Node(id="v2", label="TarvelVariety", properties={"name": "Dremo Hesk"}),
            ],
            edges=[
                Edge(id="e0", relation_type="FILED_IN", source="w", target="z"),
                Edge(id="e1", relation_type="DRAWN_FROM", source="w", target="v1"),
                Edge(id="e2", relation_type="DRAWN_FROM", source="w", target="v2"),
            ],
        )
    )
    with kb:
        q = "Which tarvel varieties go into Korvel Sannet?"
        assert set(_answers(kb, q)[:2]) == {"Lumo Orvane", "Dremo Hesk"}
