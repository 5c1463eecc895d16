"""What a multi-query context request asks for, and what the response holds.

:class:`ContextRequest` (queries, one token budget, ranking, output format)
is what :class:`~cef.context.provider.ContextProvider` answers with a
:class:`ContextResponse`: the rendered text plus the chunks and graph
reasoning in it. The REST API, the MCP server and the CLI take and return the
same models.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cef.context.formats import ContextDocument, ContextEntity, ContextFormat, ContextPath, render
from cef.model import Chunk, Explanation, SearchStrategy

__all__ = [
    "DEFAULT_REASONING_SHARE",
    "MIN_TOKEN_BUDGET",
    "ContextRequest",
    "ContextResponse",
    "QuerySpec",
    "RankingStrategy",
    "ReasoningSection",
    "SelectedChunk",
]

#: the default share of the budget reserved for graph reasoning (paths, anchors, key concepts)
DEFAULT_REASONING_SHARE = 0.2


class RankingStrategy(StrEnum):
    """How chunks from several queries are ordered before packing."""

    #: best score first, whatever query found the chunk
    SCORE = "score"
    #: best of query 1, best of query 2, ..., then the second of each, and so on
    ROUND_ROBIN = "round_robin"
    #: every chunk of query 1 (by rank), then the new ones of query 2, ...
    QUERY_ORDER = "query_order"
    #: reciprocal rank fusion: chunks several queries agree on come first
    RECIPROCAL_RANK = "rrf"


class QuerySpec(BaseModel):
    """One query of a context request."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=10_000)
    start_node: str | None = Field(
        default=None, min_length=1, max_length=512, description="id of a node to start graph reasoning from"
    )
    depth: int | None = Field(
        default=None, ge=0, le=10, description="traversal depth (default: the request's)"
    )
    top_k: int | None = Field(
        default=None, ge=1, le=1000, description="chunks to retrieve (default: the request's)"
    )


#: the smallest token budget: the empty frame of every format fits (the largest, JSON counted by
#: wordpiece, takes about 100 tokens), so a schema-valid request never fails on its budget alone
MIN_TOKEN_BUDGET = 128


def _strings_allowed(schema: dict[str, Any]) -> None:
    """State in the JSON schema what the validator accepts: a query may be a string, and so may the list."""
    array = {k: v for k, v in schema.items() if k not in ("description", "title")}
    text = {"type": "string", "minLength": 1, "maxLength": 10_000}
    array["items"] = {"anyOf": [array["items"], text]}
    for key in array:
        schema.pop(key, None)
    schema["anyOf"] = [array, text]


class ContextRequest(BaseModel):
    """What to assemble: queries, one token budget, ranking and output format."""

    model_config = ConfigDict(extra="forbid")

    queries: list[QuerySpec] = Field(
        min_length=1,
        max_length=200,
        description="the queries: objects, plain strings, or one string for a single query",
        json_schema_extra=lambda schema: _strings_allowed(schema),
    )
    token_budget: int = Field(
        default=4000,
        ge=MIN_TOKEN_BUDGET,
        le=2_000_000,
        description=f"tokens the rendered context may use; at least {MIN_TOKEN_BUDGET} (the empty frame of "
        "every format). A budget too small to echo the queries in the header gets them shortened or left out",
    )
    top_k_per_query: int = Field(default=10, ge=1, le=1000)
    default_depth: int = Field(default=2, ge=0, le=10)
    ranking: RankingStrategy = RankingStrategy.SCORE
    reserve_reasoning_tokens: int | None = Field(
        default=None,
        ge=0,
        description="tokens reserved for graph reasoning (anchors, paths, key concepts); "
        f"default {int(DEFAULT_REASONING_SHARE * 100)}% of the budget; more than token_budget means the whole budget; unused reserve goes to chunks",
    )
    include_paths: bool = Field(default=True, description="include the graph reasoning section")
    include_explanations: bool = Field(default=True, description="say how each chunk was found")
    allow_truncation: bool = Field(
        default=True,
        description="cut a chunk that does not fit at a sentence boundary (marked) instead of dropping it",
    )
    strategy: SearchStrategy = SearchStrategy.AUTO
    scope: str | None = None
    as_of: datetime | None = None
    format: ContextFormat = ContextFormat.MARKDOWN

    @classmethod
    def of(cls, *queries: str | QuerySpec, **options: Any) -> ContextRequest:
        """A request for ``queries`` (texts or :class:`QuerySpec`), other fields as keywords."""
        specs = [QuerySpec(query=q) if isinstance(q, str) else q for q in queries]
        return cls(queries=specs, **options)

    @field_validator("queries", mode="before")
    @classmethod
    def _strings_are_queries(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [{"query": value}]
        if isinstance(value, list):
            return [{"query": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _check(self) -> ContextRequest:
        if self.reserve_reasoning_tokens is not None and self.reserve_reasoning_tokens > self.token_budget:
            self.reserve_reasoning_tokens = (
                self.token_budget
            )  # at most the whole budget (stated in the schema)
        return self

    @property
    def reasoning_reserve(self) -> int:
        if not self.include_paths:
            return 0
        if self.reserve_reasoning_tokens is not None:
            return self.reserve_reasoning_tokens
        return int(self.token_budget * DEFAULT_REASONING_SHARE)


class SelectedChunk(BaseModel):
    """A chunk placed in the context: the stored record, the text as placed, and why it is there."""

    chunk: Chunk
    content: str = Field(description="the text as placed (ends with the truncation marker when cut)")
    score: float
    queries: list[int] = Field(description="1-based numbers of the queries that found it")
    truncated: bool = False
    tokens: int = Field(description="tokens its fragment of the rendered context costs (upper bound)")
    explanation: Explanation


class ReasoningSection(BaseModel):
    """The graph reasoning that made it into the context."""

    anchors: list[ContextEntity] = Field(default_factory=list)
    paths: list[ContextPath] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    tokens: int = 0


class ContextResponse(BaseModel):
    """Assembled context: the rendered text plus everything in it, and how it was built."""

    context: str = Field(description="the rendered context; its token count is total_tokens")
    format: ContextFormat
    chunks: list[SelectedChunk] = Field(default_factory=list)
    reasoning: ReasoningSection = Field(default_factory=ReasoningSection)
    total_tokens: int
    token_budget: int
    truncated: bool = Field(description="the budget cut or dropped something")
    duration_ms: float = 0.0
    strategies_used: list[SearchStrategy] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    reason: str | None = Field(default=None, description="why the context is empty, when it is")
    metadata: dict[str, Any] = Field(default_factory=dict)
    document: ContextDocument = Field(
        default_factory=ContextDocument,
        exclude=True,
        description="the content, to render again in another format",
    )

    @property
    def is_empty(self) -> bool:
        return self.document.is_empty()

    def to_prompt_context(self, format: ContextFormat | str | None = None) -> str:
        """The context to put in a prompt.

        Without ``format`` this is :attr:`context`, which fits the budget. Another
        format re-renders the same content; its token count may differ.
        """
        if format is None or ContextFormat(format) is self.format:
            return self.context
        return render(self.document, format)
