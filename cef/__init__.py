"""cef — Context Engineering Framework.

Answers one question for an LLM or an agent: what context is relevant to this
query, right now, within this token budget? ::

    import cef

    with cef.open("kb.db") as kb:
        kb.index_batch(cef.Batch(relation_types=[...], nodes=[...], edges=[...], chunks=[...]))
        result = kb.retrieve("which medications interact with warfarin?")
"""

from cef.engine.indexer import IndexResult
from cef.engine.kb import KnowledgeBase
from cef.errors import CefError
from cef.model import (
    Batch,
    Chunk,
    Edge,
    Explanation,
    GraphPath,
    GraphQuery,
    Node,
    RankedChunk,
    RankedNode,
    ReasoningContext,
    RelationSemantics,
    RelationType,
    ResolutionTarget,
    SearchResult,
    SearchStrategy,
    TraversalHint,
)
from cef.wiring import open_kb as open

__version__ = "0.1.0"

__all__ = [
    "Batch",
    "CefError",
    "Chunk",
    "Edge",
    "Explanation",
    "GraphPath",
    "GraphQuery",
    "IndexResult",
    "KnowledgeBase",
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
    "open",
]
