"""Ingestion pipelines: Python source via ast (files, classes, functions, imports, calls), text with entities."""

from __future__ import annotations

from pathlib import Path

import pytest

from cef.errors import ParseError
from cef.memory import SemanticMemory
from cef.schema.pipelines import IngestContext
from tests.support.examples import example_extension

from .conftest import Clock

PKG = {
    "shop/__init__.py": '"""A tiny shop."""\nfrom .cart import Cart\n',
    "shop/pricing.py": (
        '"""Prices."""\nimport math\n\n\ndef round_price(x: float) -> float:\n'
        '    """Round to cents."""\n    return math.floor(x * 100) / 100\n'
    ),
    "shop/cart.py": (
        '"""The cart."""\nfrom __future__ import annotations\n\nimport json\n'
        "from .pricing import round_price\n\n\n"
        "class Base:\n    pass\n\n\n"
        "class Cart(Base):\n"
        '    """Items and a total."""\n\n'
        "    def __init__(self) -> None:\n        self.items: list[float] = []\n\n"
        "    def add(self, price: float) -> None:\n        if price < 0:\n            raise ValueError\n"
        "        self.items.append(price)\n\n"
        "    def total(self) -> float:\n        return round_price(sum(self.items))\n\n"
        "    def dump(self) -> str:\n        return json.dumps({'total': self.total()})\n\n\n"
        "def new_cart() -> Cart:\n    return Cart()\n"
    ),
}


def write_pkg(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root / "shop"


@pytest.fixture
def code(memory: SemanticMemory) -> SemanticMemory:
    memory.register_extension(example_extension("code"))
    return memory


def edges(memory: SemanticMemory, rel: str) -> set[tuple[str, str]]:
    return {
        (e.source, e.target)
        for e in memory.kb.store.iter_edges()
        if e.relation_type == rel and "superseded_at" not in e.properties and e.valid_to is None
    }


def test_python_package(code: SemanticMemory, tmp_path: Path) -> None:
    pkg = write_pkg(tmp_path / "src", PKG)
    report = code.ingest_path(pkg, "python", scope="dev")
    assert report.documents == 3 and not report.failures
    node = code.kb.find_node("py:file:shop/cart.py")
    assert node is not None and node.label == "file" and node.properties["lines"] > 20 and node.scope == "dev"
    fn = code.kb.find_node("py:func:shop.cart.Cart.add")
    assert fn is not None and fn.properties["signature"] == "add(self, price: float) -> None"
    assert fn.properties["complexity"] == 2
    assert ("py:file:shop/cart.py", "py:file:shop/pricing.py") in edges(code, "imports")
    assert ("py:file:shop/__init__.py", "py:file:shop/cart.py") in edges(code, "imports")
    assert ("py:file:shop/cart.py", "py:module:json") in edges(code, "imports")
    defines = edges(code, "defines")
    assert {
        ("py:file:shop/cart.py", "py:class:shop.cart.Cart"),
        ("py:class:shop.cart.Cart", "py:func:shop.cart.Cart.add"),
    } <= defines
    calls = edges(code, "calls")
    assert ("py:func:shop.cart.Cart.total", "py:func:shop.pricing.round_price") in calls  # imported function
    assert ("py:func:shop.cart.Cart.dump", "py:func:shop.cart.Cart.total") in calls  # self.method
    assert ("py:func:shop.cart.new_cart", "py:func:shop.cart.Cart.__init__") in calls  # constructor
    assert ("py:class:shop.cart.Cart", "py:class:shop.cart.Base") in edges(code, "subclass_of")
    chunk = code.kb.store.get_chunks(["py:func:shop.cart.Cart.add#src"])[0]
    assert chunk.content.startswith("def add(self, price: float)") and chunk.scope == "dev"
    # the same content again is skipped
    assert code.ingest_path(pkg, "python", scope="dev").skipped == 3


def test_reingest_closes_removed_facts_instead_of_deleting(
    code: SemanticMemory, clock: Clock, tmp_path: Path
) -> None:
    pkg = write_pkg(tmp_path / "src", PKG)
    code.ingest_path(pkg, "python", scope="dev")
    t0 = clock.now
    clock.advance(days=1)
    changed = PKG["shop/cart.py"].replace(
        "return json.dumps({'total': self.total()})", "return str(self.items)"
    )
    changed = changed.replace("import json\n", "")
    changed += "\n\ndef checkout(cart: Cart) -> float:\n    return cart.total()\n"
    (pkg / "cart.py").write_text(changed)
    report = code.ingest_path(pkg, "python", scope="dev")
    assert report.documents == 1 and report.skipped == 2
    assert ("py:func:shop.cart.Cart.dump", "py:func:shop.cart.Cart.total") not in edges(code, "calls")
    changes = code.changed_since(t0, scope="dev")
    kinds = {(c.kind, c.relation, c.source, c.target) for c in changes}
    assert ("ended", "calls", "py:func:shop.cart.Cart.dump", "py:func:shop.cart.Cart.total") in kinds
    assert ("ended", "imports", "py:file:shop/cart.py", "py:module:json") in kinds
    assert ("added", "defines", "py:file:shop/cart.py", "py:func:shop.cart.checkout") in kinds
    assert ("added", "calls", "py:func:shop.cart.checkout", "py:func:shop.cart.Cart.total") in kinds
    # nothing unchanged shows as a change
    assert not any(c.target == "py:func:shop.pricing.round_price" for c in changes)
    # what we knew before the change is still there
    bundle = code.retrieve_context("Cart.dump", scope="dev", temporal={"as_of": t0}, max_depth=1)
    dump = next(f for f in bundle.facts() if f.node_id == "py:func:shop.cart.Cart.dump")
    assert any(r.relation == "calls" and r.target_name == "Cart.total" for r in dump.relations)


def test_syntax_error_writes_nothing(code: SemanticMemory) -> None:
    before = code.kb.store.counts()
    with pytest.raises(ParseError, match=r"broken.py:2: Python syntax error"):
        code.ingest("x = 1\ndef (:\n", "python", {"path": "broken.py"})
    assert code.kb.store.counts() == before


def test_single_file_resolves_against_existing_nodes(code: SemanticMemory, tmp_path: Path) -> None:
    pkg = write_pkg(tmp_path / "src", PKG)
    code.ingest_path(pkg / "pricing.py", "python", root=tmp_path / "src")
    code.ingest_path(pkg / "cart.py", "python", root=tmp_path / "src")
    assert ("py:func:shop.cart.Cart.total", "py:func:shop.pricing.round_price") in edges(code, "calls")


def test_text_with_entities(memory: SemanticMemory) -> None:
    from cef.extract.spacy_ner import SpacyEntityExtractor

    memory._extractor = SpacyEntityExtractor()
    text = (
        "Ada Lovelace wrote the first published algorithm for Charles Babbage's Analytical Engine in London. "
        "Babbage admired her notes."
    )
    ids = memory.ingest(text, "text", {"path": "notes/ada.txt", "title": "Ada notes"}, scope="s1")
    doc = memory.kb.find_node(ids[0])
    assert doc is not None and doc.label == "document" and doc.name == "Ada notes"
    mentioned = {e.target for e in memory.kb.store.iter_edges() if e.relation_type == "mentions"}
    names = {n.name for n in memory.kb.store.get_nodes(sorted(mentioned))}
    assert {"Ada Lovelace", "London"} <= names
    assert memory.kb.store.chunks_for_nodes([doc.id])[doc.id]
    # entities found again link to the same node instead of a new one
    memory.ingest("London is large.", "text", {"path": "notes/london.txt"}, scope="s1")
    londons = [n for n in memory.kb.store.iter_nodes() if n.name == "London"]
    assert len(londons) == 1
    bundle = memory.retrieve_context("What did Ada Lovelace write?", scope="s1")
    assert any(f.node_id == doc.id and f.excerpt and "Analytical Engine" in f.excerpt for f in bundle.facts())


def test_parser_protocol_for_a_user_pipeline(memory: SemanticMemory) -> None:
    from cef.model import Batch, Node

    class KeyValue:
        def parse(self, content: str, context: IngestContext) -> Batch:
            nodes = []
            for line in content.splitlines():
                key, _, value = line.partition("=")
                nodes.append(
                    Node(
                        id=f"{context.document_id}:{key}",
                        label="attribute",
                        properties={"name": key, "value": value},
                    )
                )
            return Batch(nodes=nodes)

    memory.registry.register_ingestion_pipeline("kv", KeyValue(), extensions=[".kv"])
    ids = memory.ingest("color=orange\nsize=small", "kv", {"id": "cat"})
    assert ids == ["cat:color", "cat:size"]
    assert memory.kb.find_node("cat:color").properties["value"] == "orange"  # type: ignore[union-attr]
