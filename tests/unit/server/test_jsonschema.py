"""JSON Schema helpers: $ref inlining (recursion kept), title stripping."""

from __future__ import annotations

from pydantic import BaseModel

from cef.server.jsonschema import inline_refs, model_input_schema, strip_titles


class Leaf(BaseModel):
    title: str
    n: int = 1


class Tree(BaseModel):
    leaf: Leaf
    children: list[Tree] = []


def test_refs_inlined_and_recursion_kept() -> None:
    schema = inline_refs(Tree.model_json_schema(), keep_shared=False)
    assert schema["properties"]["leaf"]["properties"]["n"]["type"] == "integer"
    # the recursive reference cannot be inlined: it stays, with its definition
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert "Tree" in schema["$defs"]
    assert "Leaf" not in schema["$defs"]


def test_strip_titles_keeps_a_property_called_title() -> None:
    schema = strip_titles(Leaf.model_json_schema())
    assert "title" not in schema
    assert "title" in schema["properties"]
    assert "title" not in schema["properties"]["title"]


def test_model_input_schema_is_self_contained() -> None:
    schema = model_input_schema(Leaf)
    assert schema["type"] == "object"
    assert schema["required"] == ["title"]
    assert "$defs" not in schema


class Pair(BaseModel):
    left: Leaf
    right: Leaf
    extra: Tree | None = None


def test_shared_definitions_stay_referenced_once() -> None:
    schema = inline_refs(Pair.model_json_schema())
    assert schema["properties"]["left"] == {"$ref": "#/$defs/Leaf"}
    assert set(schema["$defs"]) == {"Leaf", "Tree"}
    assert schema["$defs"]["Tree"]["properties"]["leaf"] == {"$ref": "#/$defs/Leaf"}
    everything = inline_refs(Pair.model_json_schema(), keep_shared=False)
    assert everything["properties"]["left"]["properties"]["n"]["type"] == "integer"
