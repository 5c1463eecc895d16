"""Query and result types: what callers ask and what retrieval returns."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cef.model.graph import Chunk, Node, RelationSemantics, check_json
from cef.model.patterns import GraphPattern, QueryCombinator

Direction = Literal["out", "in", "both"]


class SearchStrategy(StrEnum):
    """How results were (or should be) found. ``AUTO`` lets the engine choose.

    ``PATTERN`` ranks the chunks linked to the paths ``GraphQuery.patterns``
    matched; a query with patterns tries it first. ``PATHS`` reasons over typed
    relation paths from the question's anchors and ranks answer nodes (see
    ``SearchResult.nodes``) and the chunks linked to them.
    """

    AUTO = "auto"
    HYBRID = "hybrid"
    VECTOR = "vector"
    BM25 = "bm25"
    GRAPH = "graph"
    PPR = "ppr"
    PATTERN = "pattern"
    PATHS = "paths"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: what ``GraphQuery.patterns`` holds
PatternList = list[GraphPattern | QueryCombinator]


class ResolutionTarget(_Model):
    """An entry point to resolve in the graph, by meaning (vector) and by name."""

    description: str = Field(
        min_length=1, max_length=2000, description="text that describes the node to find"
    )
    type_hint: str | None = Field(
        default=None, description="node label to restrict matches to, e.g. 'Patient'"
    )
    max_matches: int = Field(default=1, ge=1, le=50)


class TraversalHint(_Model):
    """How to walk the graph from the resolved targets."""

    relation_types: list[str] = Field(
        default_factory=list,
        max_length=200,
        description="only follow these relations (empty: all; at most 200)",
    )
    semantics: list[RelationSemantics] = Field(
        default_factory=list, max_length=20, description="only follow these semantics"
    )
    depth: int = Field(default=2, ge=0, le=10)
    direction: Direction = "both"
    min_confidence: float = Field(default=0.0, ge=0.0, le=1.0, description="skip edges below this confidence")
    min_path_confidence: float = Field(
        default=0.0, ge=0.0, le=1.0, description="stop paths whose confidence product falls below this"
    )


class GraphQuery(_Model):
    """A structured retrieval request (the ``retrieve_knowledge`` tool's input)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    query: str = Field(min_length=1, max_length=10_000, description="the user's question in natural language")
    targets: list[ResolutionTarget] = Field(
        default_factory=list, max_length=50, description="entry points to resolve in the graph (at most 50)"
    )
    traversal: TraversalHint = Field(default_factory=TraversalHint)
    strategy: SearchStrategy = SearchStrategy.AUTO
    top_k: int = Field(default=10, ge=1, le=1000)
    min_results: int = Field(default=3, ge=0, le=1000)
    include_reasoning_context: bool = True
    max_token_budget: int | None = Field(default=None, ge=1)
    max_graph_nodes: int = Field(default=500, ge=1, le=1_000_000)
    scope: str | None = Field(default=None, max_length=256)
    tags: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="only chunks carrying at least one of these tags (chunk metadata `tags`, case-insensitive)",
    )
    as_of: datetime | None = Field(default=None, description="only edges valid at this time")
    deadline_ms: int | None = Field(
        default=None,
        ge=1,
        le=600_000,
        description=(
            "time limit for graph exploration in milliseconds, counted from when the engine starts the query; "
            "past it the graph work stops and vector search answers (metadata.timed_out, a fallback note)"
        ),
    )
    patterns: PatternList = Field(
        default_factory=list,
        max_length=20,
        description=(
            "graph patterns (GraphPattern) or combinators of patterns (QueryCombinator) to match; a pattern "
            "without start nodes starts from the resolved targets; patterns walk edges valid at as_of (default: "
            "now) unless they set valid_at. Chunks linked to the matched paths' nodes are ranked first (end "
            "nodes before the rest)"
        ),
    )
    options: dict[str, Any] = Field(default_factory=dict, description="strategy-specific settings")

    @field_validator("options")
    @classmethod
    def _options_flat(cls, v: dict[str, Any]) -> dict[str, Any]:
        return check_json(v, "options")

    @model_validator(mode="after")
    def _check(self) -> GraphQuery:
        if self.min_results > self.top_k:
            self.min_results = self.top_k
        return self


class GraphPath(_Model):
    """A path through the graph: ``nodes[i] -relations[i]-> nodes[i+1]``."""

    node_ids: list[str]
    relation_types: list[str] = Field(default_factory=list)
    edge_ids: list[str] = Field(default_factory=list)
    node_names: list[str] = Field(default_factory=list)
    reversed: list[bool] = Field(
        default_factory=list,
        description="per hop: the edge was walked from its target to its source (empty: every hop forward)",
    )
    weight: float = 0.0
    confidence: float = 1.0

    @property
    def length(self) -> int:
        return len(self.relation_types)

    def describe(self) -> str:
        """``John Miller -[PRESCRIBED]-> Warfarin``; a hop walked backwards reads ``A <-[REL]- B``."""
        names = self.node_names or self.node_ids
        if not names:
            return ""
        parts = [names[0]]
        for i, (rel, name) in enumerate(zip(self.relation_types, names[1:], strict=False)):
            back = i < len(self.reversed) and self.reversed[i]
            parts.append(f"<-[{rel}]- {name}" if back else f"-[{rel}]-> {name}")
        return " ".join(parts)


class MatchedGraphPath(GraphPath):
    """A path a graph pattern matched (see ``GraphQuery.patterns``), with its score and why it matched."""

    pattern_id: str = Field(description="the pattern that matched (a SEQUENTIAL chain joins ids with '>')")
    score: float = Field(default=0.0, description="the pattern's ranking score; higher is better")
    explanation: str = Field(default="", description="which steps and constraints matched, and how it scored")


class Explanation(_Model):
    """Why a chunk is in the results."""

    strategy: SearchStrategy
    anchors: list[str] = Field(default_factory=list, description="node ids the search started from")
    path: GraphPath | None = None
    vector_score: float | None = None
    bm25_score: float | None = None
    graph_score: float | None = None
    rank_sources: dict[str, int] = Field(
        default_factory=dict, description="rank of the chunk in each source list"
    )
    entities: list[str] = Field(
        default_factory=list, description="names of graph entities linked to the chunk"
    )
    shares: dict[str, float] = Field(
        default_factory=dict, description="auto route: each source's share of the fused score (sums to 1)"
    )
    notes: list[str] = Field(default_factory=list)


class RankedChunk(_Model):
    """A chunk the query retrieved, with its score and an explanation of why it ranks there."""

    chunk: Chunk
    score: float
    explanation: Explanation
    relevance: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="how well it answers the question, comparable across questions (cef.retrieve.relevance); "
        "score only ranks",
    )


class RankedNode(_Model):
    """A graph node retrieval reached as an answer, with the typed path that explains it."""

    node: Node
    score: float
    strategy: SearchStrategy
    path: GraphPath | None = Field(default=None, description="from an anchor to this node")
    text: str = Field(
        default="",
        description="the node rendered as text (label, name, properties), for nodes without chunks",
    )
    chunk_ids: list[str] = Field(default_factory=list, description="chunks linked to this node")
    relevance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="how well it answers the question (cef.retrieve.relevance)"
    )


class ReasoningContext(_Model):
    """What graph traversal found around the anchors."""

    root_nodes: list[Node] = Field(default_factory=list)
    related_nodes: list[Node] = Field(default_factory=list)
    paths: list[GraphPath] = Field(default_factory=list)
    matched_paths: list[MatchedGraphPath] = Field(
        default_factory=list, description="paths matched by the query's patterns, best first"
    )
    context_keywords: list[str] = Field(default_factory=list)
    semantic_groups: dict[str, list[str]] = Field(default_factory=dict, description="group name -> node ids")
    depth: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)


class SearchResult(_Model):
    """The answer to a retrieval: ranked chunks, how they were found, and why."""

    query: str
    results: list[RankedChunk] = Field(default_factory=list)
    nodes: list[RankedNode] = Field(
        default_factory=list, description="answer nodes, best first (typed relation-path reasoning)"
    )
    strategy: SearchStrategy
    reasoning_context: ReasoningContext | None = None
    enhanced_query: str | None = None
    duration_ms: float = 0.0
    fallbacks: list[str] = Field(
        default_factory=list, description="strategies tried before the one that answered"
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
