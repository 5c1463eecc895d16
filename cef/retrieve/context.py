"""The per-query working set every retrieval stage reads and adds to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np

from cef.embed.base import BatchedEmbedder
from cef.graph.filter import EdgeFilter
from cef.model import Chunk, GraphQuery, Node, RankedChunk, RankedNode, ReasoningContext, utcnow
from cef.retrieve.ports import EngineView


@dataclass
class Anchor:
    """A node the search starts from, and how it was found."""

    pos: int
    node_id: str
    score: float
    how: str  # "vector", "name", "exact", "id", "entity"...
    target: str = ""


@dataclass
class QueryContext:
    """One retrieval in flight: the query, lazily computed embeddings and the stages' outputs."""

    state: EngineView
    query: GraphQuery
    started: float
    now: datetime = field(default_factory=utcnow)
    anchors: list[Anchor] = field(default_factory=list)
    reasoning: ReasoningContext | None = None
    # node position -> (depth, path confidence) from the expansion
    reached: dict[int, tuple[int, float]] = field(default_factory=dict)
    enhanced_query: str | None = None
    notes: list[str] = field(default_factory=list)
    answer_nodes: list[RankedNode] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    linked: dict[tuple[str, str], Any] = field(default_factory=dict)  # query entity links, per settings
    _vec_cache: dict[str, np.ndarray] = field(default_factory=dict)
    _chunk_cache: dict[str, Chunk] = field(default_factory=dict)

    def embed(self, text: str) -> np.ndarray | None:
        emb = self.state.embedder
        if emb is None:
            return None
        vec = self._vec_cache.get(text)
        if vec is None:
            vec = np.asarray(emb.embed_query(text), dtype=np.float32)
            self._vec_cache[text] = vec
        return vec

    def embed_many(self, texts: Sequence[str]) -> np.ndarray | None:
        """Vectors of several texts in one batch (not cached: callers keep what they reuse).

        The question itself joins the batch when it is not embedded yet and the embedder
        embeds questions like any text (every route that embeds other texts compares chunks
        with the question next): one call to the model, not two."""
        emb = self.state.embedder
        if emb is None:
            return None
        question = self.query.query
        same_way = isinstance(emb, BatchedEmbedder) and type(emb).embed_query is BatchedEmbedder.embed_query
        join = same_way and question not in self._vec_cache and question not in texts
        extra = [question] if join else []
        got = np.asarray(emb.embed([*texts, *extra]), dtype=np.float32)
        if extra:
            self._vec_cache[question] = got[-1]
            got = got[:-1]
        return got

    @cached_property
    def query_vector(self) -> np.ndarray | None:
        return self.embed(self.query.query)

    @cached_property
    def edge_filter(self) -> EdgeFilter:
        q = self.query
        return self.state.graph.edge_filter(
            relation_types=q.traversal.relation_types or None,
            semantics=q.traversal.semantics or None,
            direction=q.traversal.direction,
            min_confidence=q.traversal.min_confidence,
            valid_at=q.as_of or self.now,
            scope=q.scope,
        )

    def chunks(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunk records by id (cached per query), scope-checked."""
        missing = [i for i in ids if i not in self._chunk_cache]
        if missing:
            for c in self.state.store.get_chunks(missing):
                self._chunk_cache[c.id] = c
        scope = self.query.scope
        out = {}
        for i in ids:
            cached = self._chunk_cache.get(i)
            if cached is not None and (scope is None or cached.scope is None or cached.scope == scope):
                out[i] = cached
        return out

    def nodes(self, ids: list[str]) -> dict[str, Node]:
        return {n.id: n for n in self.state.get_nodes(ids)}

    def results_or_empty(self, results: list[RankedChunk] | None) -> list[RankedChunk]:
        return results or []
