"""YAML and JSON graph files: the documented format, and errors naming file, line and item."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cef.errors import ParseError
from cef.ingest.parsers import JsonGraphParser, ParseContext, ParseOptions, YamlGraphParser
from cef.model import RelationSemantics

ROOT = Path(__file__).resolve().parents[3]

GOOD_YAML = """\
relation_types:
  - name: TREATS
    semantics: association
    inverse: TREATED_BY
    description: a drug treats a condition
  - {name: IS_A, semantics: CLASSIFICATION}
nodes:
  - id: aspirin
    label: Drug
    properties: {name: Aspirin, approved: 1899-03-06}
    content: Aspirin is a pain reliever.
  - id: 42
    label: Condition
    properties: {name: Headache}
    scope: tenant-b
edges:
  - source: aspirin
    target: 42
    type: TREATS
    weight: 2.5
    confidence: 0.8
    valid_from: 2020-01-01
    properties: {evidence: trial}
  - {id: e2, relation_type: IS_A, source: aspirin, target: 42}
chunks:
  - content: Aspirin relieves mild headaches.
    node_id: aspirin
    metadata: {source: leaflet}
  - {id: c2, content: Free-standing passage.}
"""


def _yaml(text: str, path: str = "graph.yaml", **options: object) -> object:
    return YamlGraphParser().parse(text.encode(), ParseContext(path=path, options=ParseOptions(**options)))  # type: ignore[arg-type]


def _yaml_error(text: str) -> ParseError:
    with pytest.raises(ParseError) as err:
        _yaml(text)
    assert err.value.file == "graph.yaml"
    return err.value


def _json_error(text: str) -> ParseError:
    with pytest.raises(ParseError) as err:
        JsonGraphParser().parse(text.encode(), ParseContext(path="g.json"))
    assert err.value.file == "g.json"
    return err.value


def test_yaml_well_formed() -> None:
    doc = YamlGraphParser().parse(
        GOOD_YAML.encode(), ParseContext(path="graph.yaml", options=ParseOptions(scope="t"))
    )
    batch = doc.batch
    treats, is_a = batch.relation_types
    assert treats.name == "TREATS" and treats.semantics is RelationSemantics.ASSOCIATION
    assert treats.inverse == "TREATED_BY" and treats.description == "a drug treats a condition"
    assert is_a.semantics is RelationSemantics.CLASSIFICATION
    aspirin, headache = batch.nodes
    assert aspirin.properties == {"name": "Aspirin", "approved": "1899-03-06"}  # dates stay strings
    assert aspirin.content == "Aspirin is a pain reliever." and aspirin.scope == "t"
    assert headache.id == "42" and headache.scope == "tenant-b"  # numeric ids become strings
    e1, e2 = batch.edges
    assert (e1.relation_type, e1.source, e1.target, e1.weight, e1.confidence) == (
        "TREATS",
        "aspirin",
        "42",
        2.5,
        0.8,
    )
    assert e1.valid_from == datetime(2020, 1, 1, tzinfo=UTC) and e1.properties == {"evidence": "trial"}
    assert e1.id.startswith("edge:") and e2.id == "e2"
    c1, c2 = batch.chunks
    assert c1.node_id == "aspirin" and c1.metadata == {"source": "leaflet"} and c1.id.startswith("chunk:")
    assert c2.id == "c2" and c2.node_id is None
    assert doc.document_id is None and doc.warnings == []


def test_derived_ids_are_stable_across_parses() -> None:
    a = YamlGraphParser().parse(GOOD_YAML.encode(), ParseContext(path="graph.yaml")).batch
    b = YamlGraphParser().parse(GOOD_YAML.encode(), ParseContext(path="graph.yaml")).batch
    assert [e.id for e in a.edges] == [e.id for e in b.edges]
    assert [c.id for c in a.chunks] == [c.id for c in b.chunks]


def test_json_equivalent_of_the_yaml() -> None:
    import yaml

    data = yaml.load(GOOD_YAML, Loader=yaml.BaseLoader)  # every scalar a string
    data["edges"][0]["weight"] = 2.5
    data["edges"][0]["confidence"] = 0.8
    data["edges"][1]["weight"] = 1
    doc = JsonGraphParser().parse(json.dumps(data, indent=2).encode(), ParseContext(path="g.json"))
    assert [n.id for n in doc.batch.nodes] == ["aspirin", "42"]
    assert [e.relation_type for e in doc.batch.edges] == ["TREATS", "IS_A"]
    assert len(doc.batch.chunks) == 2 and len(doc.batch.relation_types) == 2


def test_the_clinical_example_parses() -> None:
    path = ROOT / "examples" / "clinical" / "graph.yaml"  # shipped in the repository
    batch = YamlGraphParser().parse(path.read_bytes(), ParseContext(path="clinical/graph.yaml")).batch
    assert batch.relation_types and batch.nodes and batch.edges
    names = {rt.name for rt in batch.relation_types}
    assert {e.relation_type for e in batch.edges} <= names


def test_empty_yaml_is_an_empty_batch_with_a_warning() -> None:
    doc = _yaml("# nothing yet\n")
    assert len(doc.batch) == 0 and doc.warnings  # type: ignore[attr-defined]


def test_yaml_syntax_error_line() -> None:
    err = _yaml_error("nodes:\n  - id: a\n    label: X\n  - id: b\n    label: [Y\n")
    assert err.line == 6 and "invalid YAML" in str(err)  # the end of the file, where the ] is missing
    assert str(err).startswith("graph.yaml:6: ") and "flow sequence started on line 5" in str(err)
    err = _yaml_error("nodes:\n  - id: a\n   label: X\n")
    assert err.line == 3


def test_yaml_bad_field_names_item_path_and_line() -> None:
    text = GOOD_YAML.replace("    weight: 2.5\n", "    weight: -3\n")
    err = _yaml_error(text)
    assert err.line == GOOD_YAML.splitlines().index("    weight: 2.5") + 1
    assert "edges[0].weight" in str(err) and "greater than or equal to 0.000001" in str(err)


def test_yaml_bad_item_line_points_at_the_item() -> None:
    text = "nodes:\n  - id: a\n    label: X\n  - id: b\n    label: Y\n    colour: red\n"
    err = _yaml_error(text)
    assert err.line == 6 and "nodes[1].colour" in str(err) and "unknown field" in str(err)
    err = _yaml_error("nodes:\n  - id: a\n    label: X\n  - id: b\n")
    assert err.line == 4 and "nodes[1]" in str(err) and "label" in str(err)
    err = _yaml_error("nodes:\n  - {label: X}\n")
    assert err.line == 2 and "needs an id" in str(err)
    err = _yaml_error("edges:\n  - {source: a, target: b}\n")
    assert err.line == 2 and "relation_type" in str(err)
    err = _yaml_error("edges:\n  - {source: a, target: b, type: R, relation_type: R}\n")
    assert err.line == 2 and "not both" in str(err)
    err = _yaml_error("relation_types:\n  - {name: 'bad name'}\n")
    assert err.line == 2 and "relation_types[0].name" in str(err)


def test_yaml_structure_errors() -> None:
    err = _yaml_error("nodes: []\nedge: []\n")
    assert err.line == 2 and "unknown key" in str(err) and "edges" in str(err)
    err = _yaml_error("- just\n- a list\n")
    assert "must be a mapping" in str(err)
    err = _yaml_error("nodes:\n  a: b\n")
    assert "nodes: must be a list" in str(err)
    err = _yaml_error("nodes:\n  - plain string\n")
    assert err.line == 2 and "nodes[0]: must be a mapping" in str(err)


def test_duplicate_ids_are_refused() -> None:
    err = _yaml_error("nodes:\n  - {id: a, label: X}\n  - {id: b, label: X}\n  - {id: a, label: Y}\n")
    assert err.line == 4 and "duplicate id 'a'" in str(err) and "nodes[0]" in str(err)
    err = _yaml_error("relation_types:\n  - {name: R}\n  - {name: R}\n")
    assert err.line == 3 and "duplicate name 'R'" in str(err)
    err = _yaml_error("edges:\n  - {source: a, target: b, type: R}\n  - {source: a, target: b, type: R}\n")
    assert err.line == 3 and "duplicate id" in str(err)


def test_same_triple_with_different_validity_is_two_edges() -> None:
    text = (
        "edges:\n"
        "  - {source: a, target: b, type: R, valid_from: 2020-01-01, valid_to: 2021-01-01}\n"
        "  - {source: a, target: b, type: R, valid_from: 2021-01-01}\n"
    )
    edges = _yaml(text).batch.edges  # type: ignore[attr-defined]
    assert len({e.id for e in edges}) == 2


def test_yaml_alias_bomb_and_recursion_are_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for name in "bcdefg":
        bomb += f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]\n"
        prev = name
    assert "alias bomb" in str(_yaml_error(bomb))
    err = _yaml_error("nodes: &n\n  - *n\n")
    assert "recursive" in str(err) and err.line is not None


def test_json_syntax_error_line() -> None:
    err = _json_error(
        '{\n  "nodes": [\n    {"id": "a", "label": "X"},\n    {"id": "b" "label": "Y"}\n  ]\n}\n'
    )
    assert err.line == 4 and "invalid JSON" in str(err)


def test_json_bad_item_names_index_path_and_line() -> None:
    text = (
        '{"nodes": [{"id": "a", "label": "X"}],\n'
        ' "edges": [\n'
        '   {"source": "a", "target": "a", "type": "R"},\n'
        '   {"source": "a", "target": "b", "type": "R", "weight": 1},\n'
        '   {"source": "a", "target": "a", "type": "R2",\n'
        '    "confidence": 7}\n'
        " ]}\n"
    )
    err = _json_error(text)
    assert "edges[2].confidence" in str(err) and err.line == 6
    err = _json_error('{"nodes": [\n {"id": "a", "label": "X"},\n {"id": "b"}\n]}')
    assert "nodes[1]" in str(err) and err.line == 3
    err = _json_error('{"nodes": [],\n "vertices": []}')
    assert "vertices" in str(err) and err.line == 2


def test_json_nested_too_deep() -> None:
    err = _json_error("[" * 100_000 + "]" * 100_000)
    assert "deep" in str(err) or "must be a mapping" in str(err)
