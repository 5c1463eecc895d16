"""A domain node whose label is a text-container word ("Section", "Document") is a thing (issue 23).

The orchestra set's sections ("Cellos", alias "cello section") have the label ``Section``, which
ingest also gives a note's heading sections: they were never path anchors nor named nodes, so "Who
sits in the principal chair of the cello section?" answered nothing. A node of such a label is a text
container only when no relation but text's own touches it (:func:`is_text_container`). Generated
graphs with made-up names and relations; each property also checks that the label-only rule it
replaced (patched back in) fails on the same graph.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import cef
from cef.graph.index import GraphIndex
from cef.model import Batch, Edge, GraphQuery, Node, RelationType
from cef.retrieve.entityparts import is_text_container, text_containers
from cef.schema.textgraph import CONTAINER_LABELS
from tests.unit.retrieve.test_path_properties import PROPERTY, distinct, proper


def _label_only(g: GraphIndex, pos: int) -> bool:
    """The rule before: every node of a container label is a container."""
    return g.label_of(pos) in CONTAINER_LABELS


def _labels_only(g: GraphIndex) -> np.ndarray:
    return np.array([_label_only(g, p) for p in range(len(g.node_ids))], dtype=np.bool_)


@contextmanager
def _label_rule() -> Iterator[None]:
    with (
        patch("cef.retrieve.pathanchors.is_text_container", _label_only),
        patch("cef.retrieve.entities.text_containers", _labels_only),
    ):
        yield


@contextmanager
def _kb(
    nodes: list[Node], edges: list[tuple[str, str, str]], relations: list[str]
) -> Iterator[cef.KnowledgeBase]:
    with tempfile.TemporaryDirectory() as tmp, cef.open(Path(tmp) / "g.db", embedder=None) as kb:
        kb.index_batch(
            Batch(
                relation_types=[RelationType(name=r) for r in relations],
                nodes=nodes,
                edges=[
                    Edge(id=f"e{i}", relation_type=r, source=s, target=t) for i, (s, r, t) in enumerate(edges)
                ],
            )
        )
        yield kb


def _answers(kb: cef.KnowledgeBase, question: str) -> list[str]:
    return [a.node.id for a in kb.retrieve(GraphQuery(query=question)).nodes]


@PROPERTY
@given(
    names=distinct(6), label=st.sampled_from(sorted(CONTAINER_LABELS - {"Passage"})), by_alias=st.booleans()
)
def test_a_domain_node_of_a_container_label_is_anchored_and_walked(
    names: list[str], label: str, by_alias: bool
) -> None:
    # members -rel-> a node labelled Section/Document, named by a plural common-looking word and an
    # alias "<word> <label>" written lowercase in the question
    word, rel, other, x1, x2, x3 = names
    group = Node(
        id="g",
        label=label,
        properties={"name": word.capitalize() + "s", "aliases": [f"{word} {label.lower()}"]},
    )
    members = [
        Node(id=f"m{i}", label="Person", properties={"name": proper(x1, x2) + str(i)}) for i in range(2)
    ]
    stray = Node(id="s", label="Person", properties={"name": proper(x3, x1)})
    edges = [(m.id, rel, "g") for m in members] + [(stray.id, other, members[0].id)]
    mention = f"the {word} {label.lower()}" if by_alias else f"the {word.capitalize()}s"
    question = f"Who are the ones who {rel} {mention}?"
    with _kb([group, *members, stray], edges, [rel, other]) as kb:
        assert set(_answers(kb, question)[:2]) == {"m0", "m1"}
        with _label_rule():  # mutation: the label alone makes it a container; nothing is anchored
            assert not set(_answers(kb, question)[:2]) & {"m0", "m1"}


@PROPERTY
@given(names=distinct(3))
def test_a_node_only_text_relations_touch_stays_a_container(names: list[str]) -> None:
    # a note's heading section (HAS_SECTION from its note, LINKS_TO another) is text; the same node
    # with one relation of a domain is a thing
    word, rel, x1 = names
    note = Node(id="n", label="Note", properties={"name": proper(x1, word)})
    section = Node(id="sec", label="Section", properties={"name": word.capitalize()})
    other = Node(id="o", label="Note", properties={"name": proper(word, x1)})
    edges = [("n", "HAS_SECTION", "sec"), ("sec", "LINKS_TO", "o")]
    with _kb([note, section, other], edges, ["HAS_SECTION", "LINKS_TO", rel]) as kb:
        g = kb.state.graph
        pos = g.pos("sec")
        assert pos is not None and is_text_container(g, pos)
        assert not is_text_container(g, g.pos("n") or 0)  # a Note is no container label
        assert text_containers(g).tolist() == [is_text_container(g, p) for p in range(len(g.node_ids))]
        kb.index_batch(Batch(edges=[Edge(id="d", relation_type=rel, source="o", target="sec")]))
        g = kb.state.graph
        pos = g.pos("sec")
        assert pos is not None and not is_text_container(g, pos)
        assert not text_containers(g)[pos]
