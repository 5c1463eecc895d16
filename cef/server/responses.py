"""The memory-search response (results, exploration summary, related entities, suggested queries).

Built generically from a :class:`~cef.model.SearchResult`: its ranked chunks,
their explanations (paths, scores) and the reasoning context around the
anchors. Nothing here knows a domain.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from cef.model import GraphPath, Node, RankedChunk, ReasoningContext, SearchResult, SearchStrategy
from cef.retrieve.context import chunk_tags

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = [
    "EntityRef",
    "ExplorationSummary",
    "RelatedEntity",
    "Relationship",
    "SearchHit",
    "SearchResponse",
    "build_search_response",
    "chunk_tags",
]

PREVIEW_CHARS = 200


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EntityRef(_Model):
    text: str = Field(description="the entity's name")
    type: str = Field(description="its node type (label)")
    node_id: str


class Relationship(_Model):
    subject: str
    predicate: str
    object: str
    confidence: float = Field(ge=0.0, le=1.0)


class SearchHit(_Model):
    rank: int = Field(ge=1)
    chunk_id: str
    node_id: str | None = Field(default=None, description="the node the chunk is linked to")
    chunk_text: str
    preview: str
    combined_score: float
    vector_similarity: float | None = None
    graph_relevance: float | None = None
    bm25_score: float | None = None
    found_by_graph: bool
    strategy: SearchStrategy
    path: str | None = Field(default=None, description="the graph path that led to the chunk, in words")
    entities: list[EntityRef] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class ExplorationSummary(_Model):
    graph_enabled: bool
    entities_explored: int = Field(ge=0)
    relationships_traversed: int = Field(ge=0)
    chunks_from_graph: int = Field(ge=0)
    chunks_from_vector: int = Field(ge=0)
    chunks_from_bm25: int = Field(ge=0)
    chunks_combined: int = Field(ge=0)
    anchors: list[EntityRef] = Field(default_factory=list, description="where the graph exploration started")
    strategy: SearchStrategy = Field(description="the strategy whose results were returned")
    fallbacks: list[str] = Field(
        default_factory=list, description="strategies tried first, and why they gave way"
    )
    timed_out: bool = Field(default=False, description="graph exploration hit the time limit")
    fallback: str | None = Field(default=None, description="what answered instead of the graph, if anything")


class RelatedEntity(_Model):
    text: str
    type: str
    node_id: str
    relationship_to_query: str | None = Field(
        default=None, description="how it connects to the query's entities"
    )
    hops: int = Field(ge=0)
    mentions: int = Field(ge=0, description="returned results it is linked to")


class SearchResponse(_Model):
    """The seed's search response: results plus how the graph was explored."""

    success: bool = True
    query: str
    results_count: int = Field(ge=0)
    total_found: int = Field(ge=0)
    exploration_depth: int = Field(ge=0)
    processing_time_ms: float = Field(ge=0)
    cached: bool = False
    exploration_summary: ExplorationSummary
    results: list[SearchHit] = Field(default_factory=list)
    suggested_queries: list[str] = Field(default_factory=list)
    related_entities: list[RelatedEntity] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def _preview(text: str) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1].rstrip() + "…"


def _relationships(path: GraphPath | None) -> list[Relationship]:
    if path is None or not path.relation_types:
        return []
    names = path.node_names or path.node_ids
    return [
        Relationship(subject=names[i], predicate=rel, object=names[i + 1], confidence=path.confidence)
        for i, rel in enumerate(path.relation_types)
        if i + 1 < len(names)
    ]


def _found_by_graph(r: RankedChunk) -> bool:
    e = r.explanation
    return (
        e.path is not None
        or e.graph_score is not None
        or e.strategy in (SearchStrategy.GRAPH, SearchStrategy.PPR)
    )


def _suggest(
    query: str, anchors: Sequence[Node], related: Sequence[RelatedEntity], paths: dict[str, GraphPath]
) -> list[str]:
    """Follow-up queries: the query's entities joined to related ones by the relation between them."""
    low = query.lower()
    out: list[str] = []
    for ent in related:
        if ent.text.lower() in low:
            continue
        path = paths.get(ent.node_id)
        if path is not None and path.length == 1 and path.node_names:
            rel = path.relation_types[0].lower().replace("_", " ")
            out.append(f"{path.node_names[0]} {rel} {ent.text}")
        elif path is not None and path.node_names:
            out.append(f"How is {path.node_names[0]} related to {ent.text}?")
        else:
            out.append(f"{ent.text} ({ent.type})")
        if len(out) >= 3:
            break
    if not out and anchors:
        out = [f"What else is connected to {a.name}?" for a in anchors[:2]]
    return list(dict.fromkeys(out))


def build_search_response(
    kb: KnowledgeBase,
    result: SearchResult,
    *,
    depth: int,
    graph_enabled: bool,
    limit: int,
    timed_out: bool = False,
    elapsed_ms: float = 0.0,
    notes: Sequence[str] = (),
) -> SearchResponse:
    """Shape a SearchResult as the search response (reads node labels from the store)."""
    hits = result.results[:limit]
    ctx = result.reasoning_context
    anchor_ids = [
        a["node_id"] for a in result.metadata.get("anchors", []) if isinstance(a, dict) and "node_id" in a
    ]
    nodes = _nodes_named(kb, result, hits, anchor_ids)
    out_hits, mentions = _hits(hits, nodes)
    related, paths_to, edges = _related(ctx, mentions)
    anchors = [x for x in (_ref(nodes, i) for i in anchor_ids) if x is not None]
    fallback = result.strategy.value if timed_out or result.fallbacks else None
    summary = ExplorationSummary(
        graph_enabled=graph_enabled,
        entities_explored=len(ctx.root_nodes) + len(ctx.related_nodes) if ctx is not None else 0,
        relationships_traversed=len(edges),
        chunks_from_graph=sum(1 for r in result.results if _found_by_graph(r)),
        chunks_from_vector=sum(1 for r in result.results if r.explanation.vector_score is not None),
        chunks_from_bm25=sum(1 for r in result.results if r.explanation.bm25_score is not None),
        chunks_combined=len(result.results),
        anchors=anchors,
        strategy=result.strategy,
        fallbacks=list(result.fallbacks),
        timed_out=timed_out,
        fallback=fallback,
    )
    anchor_nodes = [nodes[i] for i in anchor_ids if i in nodes]
    all_notes = list(notes) + [str(n) for n in result.metadata.get("notes", [])]
    return SearchResponse(
        query=result.query,
        results_count=len(out_hits),
        total_found=len(result.results),
        exploration_depth=depth if graph_enabled else 0,
        processing_time_ms=round(elapsed_ms, 3),
        exploration_summary=summary,
        results=out_hits,
        suggested_queries=_suggest(result.query, anchor_nodes, related, paths_to),
        related_entities=related,
        notes=all_notes,
    )


def _nodes_named(
    kb: KnowledgeBase, result: SearchResult, hits: Sequence[RankedChunk], anchor_ids: list[str]
) -> dict[str, Node]:
    """The nodes the response names: the reasoning context's, then the anchors and the hits' nodes
    and path nodes read from the store."""
    ctx = result.reasoning_context
    nodes: dict[str, Node] = {}
    if ctx is not None:
        nodes.update({n.id: n for n in (*ctx.root_nodes, *ctx.related_nodes)})
    wanted_ids: set[str] = set(anchor_ids)
    for r in hits:
        if r.chunk.node_id:
            wanted_ids.add(r.chunk.node_id)
        if r.explanation.path is not None:
            wanted_ids.update(r.explanation.path.node_ids)
    missing = [i for i in wanted_ids if i not in nodes]
    if missing:
        nodes.update({n.id: n for n in kb.get_nodes(missing)})
    return nodes


def _ref(nodes: dict[str, Node], node_id: str) -> EntityRef | None:
    n = nodes.get(node_id)
    return EntityRef(text=n.name, type=n.label, node_id=n.id) if n is not None else None


def _hits(hits: Sequence[RankedChunk], nodes: dict[str, Node]) -> tuple[list[SearchHit], Counter[str]]:
    """The ranked hits as the response shows them, and how often each node is mentioned by them."""
    out_hits: list[SearchHit] = []
    mentions: Counter[str] = Counter()
    for rank, r in enumerate(hits, 1):
        e = r.explanation
        ids = list(
            dict.fromkeys(
                [*(e.path.node_ids if e.path else []), *([r.chunk.node_id] if r.chunk.node_id else [])]
            )
        )
        entities = [x for x in (_ref(nodes, i) for i in ids) if x is not None]
        mentions.update(x.node_id for x in entities)
        out_hits.append(
            SearchHit(
                rank=rank,
                chunk_id=r.chunk.id,
                node_id=r.chunk.node_id,
                chunk_text=r.chunk.content,
                preview=_preview(r.chunk.content),
                combined_score=r.score,
                vector_similarity=e.vector_score,
                graph_relevance=e.graph_score,
                bm25_score=e.bm25_score,
                found_by_graph=_found_by_graph(r),
                strategy=e.strategy,
                path=e.path.describe() if e.path is not None and e.path.length else None,
                entities=entities,
                relationships=_relationships(e.path),
                tags=chunk_tags(r.chunk.metadata),
                metadata=r.chunk.metadata,
            )
        )
    return out_hits, mentions


def _related(
    ctx: ReasoningContext | None, mentions: Counter[str]
) -> tuple[list[RelatedEntity], dict[str, GraphPath], set[str]]:
    """The reasoning context's related entities (most mentioned, nearest first, at most 10), the path
    to each node, and the edges the context walked."""
    related: list[RelatedEntity] = []
    paths_to: dict[str, GraphPath] = {}
    edges: set[str] = set()
    if ctx is None:
        return related, paths_to, edges
    for p in ctx.paths:
        if p.node_ids:
            paths_to[p.node_ids[-1]] = p
        edges.update(p.edge_ids)
    for n in ctx.related_nodes:
        found = paths_to.get(n.id)
        related.append(
            RelatedEntity(
                text=n.name,
                type=n.label,
                node_id=n.id,
                relationship_to_query=found.describe() if found is not None else None,
                hops=found.length if found is not None else 0,
                mentions=mentions.get(n.id, 0),
            )
        )
    related.sort(key=lambda x: (-x.mentions, x.hops, x.text))
    return related[:10], paths_to, edges
