"""Tool definitions: one source for MCP, OpenAI function calling and REST."""

from __future__ import annotations

import json
import re

import pytest

import cef
from cef.errors import ValidationError
from cef.model import GraphQuery
from cef.schema.discovery import GraphSchema, discover_schema
from cef.server.settings import ServerSettings
from cef.server.tools import (
    READ_TOOLS,
    WRITE_TOOLS,
    RetrieveContextInput,
    SearchMemoryInput,
    parse_tool_arguments,
    tool_definitions,
    tool_spec,
)


@pytest.fixture
def schema(clinical_kb: cef.KnowledgeBase) -> GraphSchema:
    return discover_schema(clinical_kb)


def test_read_only_by_default_write_tools_when_writable(schema: GraphSchema) -> None:
    names = [d.name for d in tool_definitions(schema, ServerSettings())]
    assert names == [
        "retrieve_knowledge",
        "retrieve_context",
        "search_memory",
        "answer_question",
        "get_graph_schema",
    ]
    names = [d.name for d in tool_definitions(schema, ServerSettings(), writable=True)]
    assert names[-4:] == ["index_nodes", "index_edges", "index_chunks", "delete_node"]


def test_live_schema_is_in_the_descriptions(schema: GraphSchema) -> None:
    defs = {d.name: d for d in tool_definitions(schema, ServerSettings(), writable=True)}
    for name in ("retrieve_knowledge", "retrieve_context"):
        text = defs[name].description
        assert "GRAPH SCHEMA" in text
        assert "Patient: name, age, sex" in text
        assert "HAS_CONDITION [ASSOCIATION]: Patient → Condition" in text
        assert "EXAMPLES" in text
    assert "Guideline" in defs["search_memory"].description
    assert "INTERACTS_WITH" in defs["index_edges"].description
    assert "GRAPH SCHEMA" not in tool_definitions(None, ServerSettings())[0].description


def test_examples_are_valid_calls_using_real_schema_names(schema: GraphSchema) -> None:
    labels, relations = set(schema.labels()), set(schema.relation_names())
    for spec in READ_TOOLS:
        if spec.examples is None:
            continue
        examples = spec.examples(schema)
        assert examples, spec.name
        for example in examples:
            parsed = parse_tool_arguments(spec, example, ServerSettings())
            if isinstance(parsed, GraphQuery):
                assert {t.type_hint for t in parsed.targets} <= labels
                assert set(parsed.traversal.relation_types) <= relations
            if isinstance(parsed, RetrieveContextInput) and parsed.graphHints is not None:
                assert parsed.graphHints.entityLabel in labels
                assert set(parsed.graphHints.traverseRelations) <= relations


def test_examples_on_an_empty_schema_still_parse() -> None:
    for spec in READ_TOOLS:
        for example in spec.examples(GraphSchema()) if spec.examples else []:
            parse_tool_arguments(spec, example, ServerSettings())


def test_schemas_are_self_contained_objects(schema: GraphSchema) -> None:
    for d in tool_definitions(schema, ServerSettings(), writable=True):
        assert d.input_schema["type"] == "object"
        text = json.dumps(d.input_schema)
        refs = set(re.findall(r'"#/\$defs/([^"]+)"', text))
        assert refs <= set(d.input_schema.get("$defs", {})), d.name  # every $ref resolves inside the schema
        assert d.description
    sizes = {d.name: len(json.dumps(d.input_schema)) for d in tool_definitions(schema, ServerSettings())}
    assert sizes["search_memory"] < 2000 and sizes["retrieve_context"] < 3000


def test_openai_and_mcp_formats(schema: GraphSchema) -> None:
    d = tool_definitions(schema, ServerSettings(), writable=True)
    openai = d[0].to_openai()
    assert openai["type"] == "function"
    assert openai["function"]["name"] == "retrieve_knowledge"
    assert openai["function"]["parameters"] is d[0].input_schema
    mcp = d[-1].to_mcp()
    assert mcp["name"] == "delete_node"
    assert mcp["inputSchema"]["required"] == ["node_id"]
    assert mcp["annotations"]["destructiveHint"] is True
    assert d[0].to_mcp()["annotations"]["readOnlyHint"] is True


def test_required_fields_come_from_settings(schema: GraphSchema) -> None:
    spec = tool_spec("retrieve_context")
    assert spec is not None
    assert spec.input_schema(ServerSettings())["required"] == ["textQuery"]
    strict = ServerSettings(required_fields=["graphHints"])
    assert spec.input_schema(strict)["required"] == ["textQuery", "graphHints"]
    with pytest.raises(ValidationError, match="graphHints required by this server's configuration"):
        parse_tool_arguments(spec, {"textQuery": "who is John?"}, strict)
    parse_tool_arguments(spec, {"textQuery": "who is John?"}, ServerSettings())


def test_bad_arguments_give_a_readable_message() -> None:
    spec = tool_spec("retrieve_knowledge")
    assert spec is not None
    with pytest.raises(ValidationError) as err:
        parse_tool_arguments(spec, {"query": "", "traversal": {"depth": 99}, "surprise": 1}, ServerSettings())
    message = str(err.value)
    assert message.startswith("invalid arguments for retrieve_knowledge: ")
    assert "query: String should have at least 1 character" in message
    assert "traversal.depth: Input should be less than or equal to 3" in message  # the server's max_depth
    assert "surprise: Extra inputs are not permitted" in message


def test_search_memory_accepts_the_seed_spellings() -> None:
    a = SearchMemoryInput.model_validate({"query": "x", "tags": "python, api", "exploration_depth": 1})
    assert a.tags == ["python", "api"]
    assert a.graph_depth == 1
    b = SearchMemoryInput.model_validate({"query": "x", "tags": ["t"], "graph_depth": 0})
    assert (b.tags, b.graph_depth) == (["t"], 0)


def test_every_tool_is_found_by_name() -> None:
    for spec in (*READ_TOOLS, *WRITE_TOOLS):
        assert tool_spec(spec.name) is spec
    assert tool_spec("nope") is None
