"""Naming property values (issue 27, wave 9): a brand, a code or a title a node holds as a property
value links a question to that node like its name and aliases (:attr:`cef.model.Node.value_names`):
in the node full-text index, the entity gazetteer and the engine's name finder."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef import Batch, Edge, Node, RelationType
from cef.retrieve.names import name_finder

ROOT = Path(__file__).resolve().parents[3]


def _verdict(result: cef.SearchResult) -> dict[str, object]:
    verdict = result.metadata["relevance"]
    assert isinstance(verdict, dict)
    return verdict


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("Eliquis", True),
        ("M19", True),
        ("ORD-1042", True),
        ("The Left Hand of Darkness", True),
        ("active", False),  # a lowercase word is a state, not a name
        ("2024-05-01", False),  # a date
        ("F", False),  # too short
        ("https://example.org/A", False),
        ("Taken twice a day with food, never doubled", False),  # a sentence
        ("Line one\nLine Two", False),
    ],
)
def test_which_property_values_name_a_node(value: str, names: bool) -> None:
    node = Node(id="n", label="Thing", properties={"name": "Thing one", "other": value, "n": 3})
    assert (value in node.value_names) is names
    assert node.names[0] == "Thing one" and "3" not in node.names


def test_the_name_and_aliases_are_no_value_names() -> None:
    node = Node(
        id="n", label="Drug", properties={"name": "Warfarin", "aliases": ["Coumadin"], "brand": "Coumadin"}
    )
    assert node.value_names == [] and node.names == ["Warfarin", "Coumadin"]


def test_a_brand_links_the_question_to_its_drug(clinical_kb: cef.KnowledgeBase) -> None:
    """Eliquis is apixaban's ``brand``: the question is answered by what apixaban treats."""
    result = clinical_kb.retrieve("What condition is Eliquis used for?")
    verdict = _verdict(result)
    assert verdict["nothing_matched"] is False
    assert "med-apixaban" in verdict["named"]  # type: ignore[operator]
    assert result.nodes[0].node.id == "cond-afib"
    # a brand nobody holds is still unknown
    assert _verdict(clinical_kb.retrieve("What condition is Zorvanix used for?"))["nothing_matched"] is True


def test_the_name_finder_reads_values_written_later(clinical_kb: cef.KnowledgeBase) -> None:
    finder = name_finder(clinical_kb.state)
    assert finder.lookup("Cordarone", None) == []
    clinical_kb.update_node("med-amiodarone", {"brand": "Cordarone"})
    assert finder.lookup("cordarone", None) == ["med-amiodarone"]


_SYLLABLES = ["zor", "vex", "qua", "lin", "dra", "mok", "tiv", "pex", "rul", "bax", "nek", "sov"]
_made_up = st.lists(st.sampled_from(_SYLLABLES), min_size=3, max_size=4).map(
    lambda s: "".join(s).capitalize()
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_generated_graph_links_a_brand_to_its_product(tmp_path: Path, data: st.DataObject) -> None:
    """Products with made-up names and brands, each made by one company: asked by brand, the
    product's maker answers (before, the brand was in no index: "nothing matched")."""
    words = data.draw(st.lists(_made_up, min_size=8, max_size=8, unique=True), label="names")
    products, brands, makers = words[:3], words[3:6], words[6:8]
    nodes = [
        Node(id=f"co{i}", label="Company", properties={"name": f"{m} Industries"})
        for i, m in enumerate(makers)
    ]
    nodes += [
        Node(id=f"p{i}", label="Product", properties={"name": p, "brand": b})
        for i, (p, b) in enumerate(zip(products, brands, strict=True))
    ]
    edges = [Edge(relation_type="MADE_BY", source=f"p{i}", target=f"co{i % 2}") for i in range(3)]
    asked = data.draw(st.integers(0, 2), label="asked")
    path = tmp_path / f"kb-{'-'.join(words)}.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(Batch(relation_types=[RelationType(name="MADE_BY")], nodes=nodes, edges=edges))
        result = kb.retrieve(f"Which company makes {brands[asked]}?")
        verdict = _verdict(result)
        assert verdict["nothing_matched"] is False
        assert f"p{asked}" in verdict["named"]  # type: ignore[operator]
        assert f"co{asked % 2}" in [n.node.id for n in result.nodes[:3]]


# ------------------------------------------------ a value shared by several nodes names none of them
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_value_several_nodes_share_names_none_of_them(tmp_path: Path, data: st.DataObject) -> None:
    """Products share a category value (a made-up ``line``); one product alone holds a brand. The
    brand names its product; the shared value names none (a category, not a node), and a value that
    is a label names nothing either. A later write that gives the brand to a second product makes it
    a name of neither."""
    words = data.draw(st.lists(_made_up, min_size=6, max_size=6, unique=True), label="names")
    products, line, brand = words[:4], words[4], words[5]
    shared = data.draw(st.integers(2, 4), label="shared")
    nodes = [
        Node(
            id=f"p{i}",
            label="Product",
            properties={"name": p, **({"line": line} if i < shared else {}), "kind": "Product"},
        )
        for i, p in enumerate(products)
    ]
    nodes[0].properties["brand"] = brand
    nodes.append(Node(id="co", label="Company", properties={"name": "Acme Industries"}))
    edges = [Edge(relation_type="MADE_BY", source=f"p{i}", target="co") for i in range(4)]
    with cef.open(tmp_path / f"kb-{uuid.uuid4().hex}.db", embedder=None) as kb:
        kb.index_batch(Batch(relation_types=[RelationType(name="MADE_BY")], nodes=nodes, edges=edges))
        finder = name_finder(kb.state)
        assert finder.lookup(brand, None) == ["p0"]
        assert finder.lookup(line, None) == []
        assert [i for i, *_ in finder.find(f"anything about {line} here", None)] == []
        assert not finder.tells_apart("Product", "p0")
        assert finder.names_of(kb.get_nodes(["p0"])[0]) == [products[0], brand]
        linked = _verdict(kb.retrieve(f"Which company makes {brand}?"))
        assert "p0" in linked["named"]  # type: ignore[operator]
        shared_q = _verdict(kb.retrieve(f"how do I sort a list in {line}?"))
        assert not set(shared_q["named"]) & {f"p{i}" for i in range(4)}  # type: ignore[call-overload]
        kb.update_node("p3", {"brand": brand})
        assert finder.lookup(brand, None) == [] and not finder.tells_apart(brand, "p0")


def test_a_language_two_services_share_links_no_service(tmp_path: Path) -> None:
    """``language: Python`` is held by two services of the services example: a programming question
    names neither of them and nothing in the example answers it."""
    graph = yaml.safe_load((ROOT / "examples" / "services" / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        verdict = _verdict(kb.retrieve("how do I reverse a linked list in python?"))
        assert verdict["nothing_matched"] is True and not verdict["named"]
