"""Pure data types (pydantic v2). No I/O here."""

from cef.model.graph import Batch, Chunk, Edge, Node, RelationSemantics, RelationType, new_id, utcnow
from cef.model.query import (
    Direction,
    Explanation,
    GraphPath,
    GraphQuery,
    MatchedGraphPath,
    RankedChunk,
    RankedNode,
    ReasoningContext,
    ResolutionTarget,
    SearchResult,
    SearchStrategy,
    TraversalHint,
)

__all__ = [
    "Batch",
    "Chunk",
    "Direction",
    "Edge",
    "Explanation",
    "GraphPath",
    "GraphQuery",
    "MatchedGraphPath",
    "Node",
    "RankedChunk",
    "RankedNode",
    "ReasoningContext",
    "RelationSemantics",
    "RelationType",
    "ResolutionTarget",
    "SearchResult",
    "SearchStrategy",
    "TraversalHint",
    "new_id",
    "utcnow",
]
