"""The tools cef offers to LLMs and agents, defined once.

Each tool has a name, an input model (pydantic: it validates calls and gives
the JSON Schema), and a description into which the live graph schema and
worked examples built from it are injected. The MCP server lists these
tools, the REST API accepts the same input models where it has a matching
endpoint, and ``cef tools`` prints them as OpenAI function-calling or MCP
tool definitions::

    from cef.server.tools import tool_definitions
    for tool in tool_definitions(schema, settings):
        print(tool.to_openai())
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.fields import FieldInfo

from cef.errors import ValidationError, format_validation_error
from cef.model import Chunk, Edge, GraphQuery, Node, RelationType, TraversalHint
from cef.model.graph import MAX_JSON_DEPTH, json_depth_ok
from cef.schema.discovery import GraphSchema, describe_schema
from cef.server.jsonschema import model_input_schema
from cef.server.settings import ServerSettings
from cef.server.tool_examples import (
    retrieve_context_examples,
    retrieve_knowledge_examples,
    search_memory_examples,
)

__all__ = [
    "READ_TOOLS",
    "WRITE_TOOLS",
    "AnswerQuestionInput",
    "DeleteNodeInput",
    "GetGraphSchemaInput",
    "GraphHints",
    "IndexChunksInput",
    "IndexEdgesInput",
    "IndexNodesInput",
    "InputModels",
    "RetrieveContextInput",
    "SearchMemoryInput",
    "ToolDefinition",
    "ToolSpec",
    "format_validation_error",
    "input_models",
    "parse_tool_arguments",
    "tool_definitions",
    "tool_spec",
]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- input models
class GraphHints(_Input):
    """Where to start in the graph (``retrieve_context``): one entity, found by a property value."""

    entityLabel: str = Field(
        min_length=1, max_length=128, description="node type from the schema, e.g. 'Patient'"
    )
    entityProperty: str = Field(
        min_length=1, max_length=128, description="property to match, e.g. 'name' (or 'id' for a node id)"
    )
    entityValue: str | int | float | bool = Field(description="value to match, e.g. 'John Miller'")
    traverseRelations: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="relation types from the schema to follow (empty: all)",
    )
    depth: int = Field(default=2, ge=1, le=5, description="how many hops to walk from the entity")


class RetrieveContextInput(_Input):
    """The ``retrieve_context`` tool: a question plus optional graph hints and keywords."""

    textQuery: str = Field(min_length=1, max_length=10_000, description="the question in natural language")
    graphHints: GraphHints | None = Field(
        default=None, description="graph traversal hints: give them when the question names an entity"
    )
    semanticKeywords: list[str] = Field(
        default_factory=list, max_length=20, description="extra keywords to boost semantic search"
    )
    topK: int = Field(default=10, ge=1, le=100, description="how many chunks to return")


class SearchMemoryInput(_Input):
    """A memory search (``search_memory`` tool, ``POST /api/v1/search``)."""

    query: str = Field(min_length=1, max_length=10_000, description="what to search for, in natural language")
    limit: int = Field(default=10, ge=1, le=100, description="most results to return")
    tags: list[str] | str | None = Field(
        default=None,
        description="only chunks tagged with one of these (chunk metadata 'tags'): a list, or a comma-separated string",
    )
    graph_depth: int | None = Field(
        default=None,
        ge=0,
        le=10,
        description="graph exploration depth: 0 no graph (pure vector), 1 direct relations, 2 two hops, "
        "3 three hops; default: the server's setting",
    )
    exploration_depth: int | None = Field(
        default=None,
        ge=0,
        le=10,
        description="another name for graph_depth; when both are given, graph_depth is used",
    )
    enable_graph: bool = Field(
        default=True, description="use the knowledge graph (false: vector and BM25 only)"
    )
    scope: str | None = Field(
        default=None,
        max_length=256,
        description="only data of this scope (and unscoped data); a key limited to scopes must name one "
        "of them unless it has only one",
    )

    @field_validator("tags", mode="after")
    @classmethod
    def _split_tags(cls, value: list[str] | str | None) -> list[str] | str | None:
        if isinstance(value, str):
            return [t.strip() for t in value.split(",") if t.strip()] or None
        return value

    @model_validator(mode="after")
    def _one_depth(self) -> SearchMemoryInput:
        if self.exploration_depth is not None:  # graph_depth wins (stated in the schema)
            if self.graph_depth is None:
                self.graph_depth = self.exploration_depth
            self.exploration_depth = None
        return self

    @property
    def tag_list(self) -> list[str] | None:
        """The tags as a list (a comma-separated string is split when validated)."""
        return [self.tags] if isinstance(self.tags, str) else self.tags


class GetGraphSchemaInput(_Input):
    """``get_graph_schema`` takes no arguments."""


class IndexNodesInput(_Input):
    """Add nodes (and, optionally, relation types) in one transaction."""

    nodes: list[Node] = Field(min_length=1, description="nodes to add; ids must be new")
    relation_types: list[RelationType] = Field(
        default_factory=list, description="relation types to register in the same transaction"
    )


class IndexEdgesInput(_Input):
    """Add edges (and, optionally, the relation types they use) in one transaction."""

    edges: list[Edge] = Field(min_length=1, description="edges between existing nodes")
    relation_types: list[RelationType] = Field(
        default_factory=list, description="relation types to register first, in the same transaction"
    )


class IndexChunksInput(_Input):
    """Add text chunks, optionally linked to nodes, in one transaction."""

    chunks: list[Chunk] = Field(min_length=1, description="text passages; node_id links one to a node")


class AnswerQuestionInput(_Input):
    """The ``answer_question`` tool (``POST /api/v1/answer``): a question answered by the server's LLM."""

    question: str = Field(min_length=1, max_length=10_000, description="the question, in natural language")
    top_k: int = Field(default=6, ge=1, le=100, description="chunks to retrieve and give the LLM")
    depth: int = Field(default=2, ge=0, le=10, description="graph traversal depth")
    understand: bool = Field(
        default=True, description="let the LLM turn the question into a graph query over the schema first"
    )
    max_tokens: int = Field(default=512, ge=1, le=8192, description="longest answer, in tokens")
    scope: str | None = Field(default=None, max_length=256, description="only data of this scope")


class DeleteNodeInput(_Input):
    node_id: str = Field(min_length=1, max_length=512, description="id of the node to delete")
    cascade: bool = Field(default=True, description="also delete its edges and linked chunks")


# ---------------------------------------------------------------- the server's limits
@dataclass(frozen=True)
class InputModels:
    """The input models with this server's limits in their constraints (and so in their JSON Schemas)."""

    graph_query: type[GraphQuery]
    search: type[SearchMemoryInput]
    context: type[RetrieveContextInput]
    answer: type[AnswerQuestionInput]

    def of(self, model: type[BaseModel]) -> type[BaseModel]:
        """The limited version of a base input model (other models are returned as they are)."""
        limited: dict[type[BaseModel], type[BaseModel]] = {
            GraphQuery: self.graph_query,
            SearchMemoryInput: self.search,
            RetrieveContextInput: self.context,
            AnswerQuestionInput: self.answer,
        }
        return limited.get(model, model)


M = TypeVar("M", bound=BaseModel)


def _subclass(name: str, __base__: type[M], **fields: tuple[Any, FieldInfo]) -> type[M]:
    """A subclass of ``__base__`` with some fields redefined, built now (never deferred: FastAPI
    builds its request adapters from it, and a deferred model makes pydantic warn there)."""
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": __base__.__doc__,
        "__annotations__": {key: annotation for key, (annotation, _) in fields.items()},
        "model_config": ConfigDict(**{**__base__.model_config, "defer_build": False}),
        **{key: info for key, (_, info) in fields.items()},
    }
    return cast(type[M], type(name, (__base__,), namespace))


def _narrow(model: type[BaseModel], name: str, **constraints: Any) -> FieldInfo:
    return FieldInfo.merge_field_infos(model.model_fields[name], Field(**constraints))


@functools.lru_cache(maxsize=16)
def _input_models(max_depth: int, max_limit: int, max_text: int) -> InputModels:
    limit = min(100, max_limit)
    hops = max(1, min(5, max_depth))
    traversal: type[TraversalHint] = _subclass(
        "TraversalHint",
        __base__=TraversalHint,
        depth=(int, _narrow(TraversalHint, "depth", le=max_depth, default=min(2, max_depth))),
    )
    graph_query: type[GraphQuery] = _subclass(
        "GraphQuery",
        __base__=GraphQuery,
        query=(str, _narrow(GraphQuery, "query", max_length=max_text)),
        top_k=(int, _narrow(GraphQuery, "top_k", le=max_limit, default=min(10, max_limit))),
        traversal=(traversal, _narrow(GraphQuery, "traversal", default_factory=traversal)),
    )
    search: type[SearchMemoryInput] = _subclass(
        "SearchMemoryInput",
        __base__=SearchMemoryInput,
        query=(str, _narrow(SearchMemoryInput, "query", max_length=max_text)),
        limit=(int, _narrow(SearchMemoryInput, "limit", le=limit, default=min(10, limit))),
        graph_depth=(int | None, _narrow(SearchMemoryInput, "graph_depth", le=max_depth)),
        exploration_depth=(int | None, _narrow(SearchMemoryInput, "exploration_depth", le=max_depth)),
    )
    hints: type[GraphHints] = _subclass(
        "GraphHints",
        __base__=GraphHints,
        depth=(int, _narrow(GraphHints, "depth", le=hops, default=min(2, hops))),
    )
    context: type[RetrieveContextInput] = _subclass(
        "RetrieveContextInput",
        __base__=RetrieveContextInput,
        textQuery=(str, _narrow(RetrieveContextInput, "textQuery", max_length=max_text)),
        graphHints=(cast(Any, hints | None), _narrow(RetrieveContextInput, "graphHints")),
        topK=(int, _narrow(RetrieveContextInput, "topK", le=limit, default=min(10, limit))),
    )
    answer: type[AnswerQuestionInput] = _subclass(
        "AnswerQuestionInput",
        __base__=AnswerQuestionInput,
        question=(str, _narrow(AnswerQuestionInput, "question", max_length=max_text)),
        top_k=(int, _narrow(AnswerQuestionInput, "top_k", le=limit, default=min(6, limit))),
        depth=(int, _narrow(AnswerQuestionInput, "depth", le=max_depth, default=min(2, max_depth))),
    )
    for model in (traversal, graph_query, search, hints, context, answer):
        model.model_rebuild()  # resolve the base models' postponed annotations now, not at first use
    return InputModels(graph_query, search, context, answer)


def input_models(settings: ServerSettings) -> InputModels:
    """The input models carrying ``settings``' limits (depth, results, text length)."""
    return _input_models(settings.max_depth, settings.max_limit, settings.max_query_length)


# ---------------------------------------------------------------- definitions
@dataclass(frozen=True)
class ToolDefinition:
    """One tool as published: name, description (schema injected) and JSON Schema of its input."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    write: bool = False
    destructive: bool = False

    def to_openai(self) -> dict[str, Any]:
        """An OpenAI function-calling tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        }

    def to_mcp(self) -> dict[str, Any]:
        """An MCP tool, as ``tools/list`` returns it."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {
                "readOnlyHint": not self.write,
                "destructiveHint": self.destructive,
                "idempotentHint": not self.write,
                "openWorldHint": False,
            },
        }


ExamplesFn = Callable[[GraphSchema], list[dict[str, Any]]]


@dataclass(frozen=True)
class ToolSpec:
    """What a tool is, independent of the live schema."""

    name: str
    title: str
    summary: str
    input_model: type[BaseModel]
    write: bool = False
    destructive: bool = False
    with_schema: str = "none"  # "full" (schema + examples), "labels", "relations" or "none"
    examples: ExamplesFn | None = None
    notes: str = ""

    def definition(self, schema: GraphSchema | None, settings: ServerSettings) -> ToolDefinition:
        return ToolDefinition(
            name=self.name,
            title=self.title,
            description=self._describe(schema),
            input_schema=self.input_schema(settings),
            write=self.write,
            destructive=self.destructive,
        )

    def model(self, settings: ServerSettings) -> type[BaseModel]:
        """The input model with the server's limits."""
        return input_models(settings).of(self.input_model)

    def input_schema(self, settings: ServerSettings) -> dict[str, Any]:
        schema = model_input_schema(self.model(settings))
        if self.input_model is RetrieveContextInput:
            schema["required"] = list(settings.required_fields)
        return schema

    def _describe(self, schema: GraphSchema | None) -> str:
        parts = [self.summary.strip()]
        if self.notes:
            parts.append(self.notes.strip())
        if schema is not None and self.with_schema != "none":
            if self.with_schema == "full":
                parts.append("GRAPH SCHEMA\n" + describe_schema(schema))
            elif self.with_schema == "labels":
                labels = ", ".join(schema.labels()) or "(none yet)"
                parts.append(f"Node types in the knowledge base: {labels}.")
            elif self.with_schema == "relations":
                rels = ", ".join(schema.relation_names()) or "(none registered)"
                parts.append(
                    f"Registered relation types: {rels}. Register a new one in relation_types before using it."
                )
            if self.examples is not None:
                examples = self.examples(schema)
                if examples:
                    lines = [f"{i}. {json.dumps(ex, ensure_ascii=False)}" for i, ex in enumerate(examples, 1)]
                    parts.append("EXAMPLES\n" + "\n".join(lines))
        return "\n\n".join(parts)


# ---------------------------------------------------------------- the tools
READ_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="retrieve_knowledge",
        title="Retrieve knowledge (structured graph query)",
        summary=(
            "Retrieve relevant knowledge with a structured graph query: resolve `targets` to graph nodes "
            "(by name and meaning), walk the graph from them (`traversal`: relation types, semantics, depth, "
            "direction, confidence), optionally match `patterns`, then rank the text chunks linked to what "
            "was reached with vector + BM25 search. Falls back to pure vector, then BM25, search when the "
            "graph finds fewer than `min_results`. Returns ranked chunks with the graph paths that explain "
            "them, the strategy used and the fallbacks tried. MUST use the graph schema below to build the "
            "query: `targets[].type_hint` is a node type and `traversal.relation_types` are relation types from it."
        ),
        input_model=GraphQuery,
        with_schema="full",
        examples=retrieve_knowledge_examples,
    ),
    ToolSpec(
        name="retrieve_context",
        title="Retrieve context (question + graph hints)",
        summary=(
            "Retrieve context using graph reasoning + semantic search. Give `textQuery` (the question); when "
            "it names an entity, also give `graphHints` (entityLabel and entityProperty from the schema below, "
            "entityValue the actual value) so the search starts from that node and walks `traverseRelations` "
            "up to `depth` hops; `semanticKeywords` boost semantic search. Returns ranked passages with their "
            "graph paths, related entities and suggested follow-up queries."
        ),
        input_model=RetrieveContextInput,
        with_schema="full",
        examples=retrieve_context_examples,
    ),
    ToolSpec(
        name="search_memory",
        title="Search memory",
        summary=(
            "Search the knowledge base with graph exploration: finds entities named in the query, explores "
            "their neighbourhood up to `graph_depth` hops (0: pure vector search), and combines chunks "
            "linked to them with vector search. Returns results with scores, the entities and relationships "
            "behind each, an exploration summary, related entities and suggested queries."
        ),
        input_model=SearchMemoryInput,
        with_schema="labels",
        examples=search_memory_examples,
    ),
    ToolSpec(
        name="answer_question",
        title="Answer a question (with citations)",
        summary=(
            "Answer a question from the knowledge base with the server's LLM: the question is turned into a "
            "graph query over the schema (`understand`), the best `top_k` passages are retrieved and the LLM "
            "answers from them only, citing passage ids in square brackets. Returns the answer, the cited "
            "chunk ids and the retrieved passages. Without an LLM configured on the server (CEF_LLM) the "
            "answer is null and the passages are returned."
        ),
        input_model=AnswerQuestionInput,
        with_schema="labels",
    ),
    ToolSpec(
        name="get_graph_schema",
        title="Get the graph schema",
        summary=(
            "The live schema of the knowledge graph: node types with their property names, counts and "
            "example names; relation types with their semantics and the source → target node types seen "
            "in the data. Call it before building a retrieve_knowledge query on an unfamiliar graph."
        ),
        input_model=GetGraphSchemaInput,
    ),
)

WRITE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="index_nodes",
        title="Add nodes",
        summary="Add nodes to the knowledge graph (all or nothing). `label` is the node type, `properties` "
        "a JSON object (`name` gives the display name), `content` optional text to embed. Reuse an existing "
        "node type where one fits.",
        input_model=IndexNodesInput,
        write=True,
        with_schema="labels",
    ),
    ToolSpec(
        name="index_edges",
        title="Add edges",
        summary="Add typed edges between existing nodes (all or nothing). `relation_type` must be registered "
        "(or registered in `relation_types` of the same call); `weight` > 0 is a strength, `confidence` 0..1, "
        "`valid_from`/`valid_to` when the fact holds.",
        input_model=IndexEdgesInput,
        write=True,
        with_schema="relations",
    ),
    ToolSpec(
        name="index_chunks",
        title="Add text chunks",
        summary="Add text passages (all or nothing), optionally linked to a node with `node_id`; they are "
        "embedded and indexed for full-text search.",
        input_model=IndexChunksInput,
        write=True,
    ),
    ToolSpec(
        name="delete_node",
        title="Delete a node",
        summary="Delete a node by id; with `cascade` (default) also its edges and linked chunks.",
        input_model=DeleteNodeInput,
        write=True,
        destructive=True,
    ),
)


def context_tool(request_model: type[BaseModel]) -> ToolSpec:
    """The ``provide_context`` tool around the context provider's request model."""
    return ToolSpec(
        name="provide_context",
        title="Provide context (several queries, one token budget)",
        summary=(
            "Retrieve and assemble context for several queries at once within one token budget: each query "
            "is retrieved, chunks found by more than one are kept once (best score), and the best are packed "
            "until the budget is used. Returns the selected chunks, the graph contexts behind them and the "
            "tokens used. Use the graph schema below for node types and relation types."
        ),
        input_model=request_model,
        with_schema="full",
    )


def tool_spec(name: str, *, context_model: type[BaseModel] | None = None) -> ToolSpec | None:
    for spec in (*READ_TOOLS, *WRITE_TOOLS):
        if spec.name == name:
            return spec
    if name == "provide_context" and context_model is not None:
        return context_tool(context_model)
    return None


def tool_definitions(
    schema: GraphSchema | None,
    settings: ServerSettings,
    *,
    writable: bool | None = None,
    context_model: type[BaseModel] | None = None,
) -> list[ToolDefinition]:
    """Every tool, descriptions built from ``schema``; write tools only when ``writable``."""
    specs: list[ToolSpec] = list(READ_TOOLS)
    if context_model is not None:
        specs.insert(2, context_tool(context_model))
    if settings.writable if writable is None else writable:
        specs.extend(WRITE_TOOLS)
    return [s.definition(schema, settings) for s in specs]


# ---------------------------------------------------------------- validation
def strict_json(value: Any) -> str:
    """``value`` as JSON text for pydantic's strict JSON mode, with integral floats written as integers
    (JSON Schema counts ``3.0`` as an integer; strict mode would not)."""

    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
            return int(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v

    if not json_depth_ok(value, MAX_BODY_DEPTH):  # refused before anything recurses into it
        raise ValueError(f"the request nests deeper than {MAX_BODY_DEPTH} levels of lists and objects")
    return json.dumps(norm(value))


#: how deep a request body may nest (the records in it allow MAX_JSON_DEPTH inside their properties)
MAX_BODY_DEPTH = MAX_JSON_DEPTH + 16


def parse_tool_arguments(
    spec: ToolSpec, arguments: Mapping[str, Any] | None, settings: ServerSettings
) -> BaseModel:
    """Validate a call's arguments with the tool's input model (raises :class:`~cef.errors.ValidationError`)."""
    try:  # strict JSON: the types the input schema states, no coercion (0 is not false, "5" not 5)
        text = strict_json(dict(arguments or {}))
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"invalid arguments for {spec.name}: not JSON ({exc})") from None
    try:
        parsed = spec.model(settings).model_validate_json(text, strict=True)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"invalid arguments for {spec.name}: {format_validation_error(exc)}") from None
    if isinstance(parsed, RetrieveContextInput):
        missing = [f for f in settings.required_fields if not getattr(parsed, f)]
        if missing:
            raise ValidationError(
                f"invalid arguments for {spec.name}: {', '.join(missing)} required by this server's configuration"
            )
    return parsed
