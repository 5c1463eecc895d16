"""The per-query working set every retrieval stage reads and adds to."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np

from cef.embed.base import BatchedEmbedder
from cef.graph.filter import EdgeFilter
from cef.model import Chunk, GraphQuery, Node, RankedChunk, RankedNode, ReasoningContext, in_scope, utcnow
from cef.retrieve.ports import EngineView
from cef.retrieve.stagestate import StageState


class DeadlineExceeded(Exception):
    """The query's ``deadline_ms`` passed: the pipeline stops graph work and answers by vector search."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


class YieldToWriter(Exception):
    """A write waits for this read: the read lets go of the engine and starts again after it
    (see :func:`cef.retrieve.pipeline.retrieve`)."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


def chunk_tags(metadata: dict[str, Any]) -> list[str]:
    """A chunk's tags: metadata ``tags`` as a list or a comma-separated string."""
    raw = metadata.get("tags")
    if isinstance(raw, str):
        return [t.strip() for t in raw.split(",") if t.strip()]
    if isinstance(raw, list):
        return [str(t) for t in raw if isinstance(t, str | int | float) and str(t).strip()]
    return []


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
    #: what each stage tells the next (and the result's metadata is built from)
    stages: StageState = field(default_factory=StageState)
    linked: dict[tuple[str, ...], Any] = field(default_factory=dict)  # query entity links, per settings
    #: ``time.perf_counter()`` past which graph work stops (the query's ``deadline_ms``); None: no limit
    deadline: float | None = None
    #: step aside (:class:`YieldToWriter`) at the next check when a write waits for this read
    yields: bool = False
    _vec_cache: dict[str, np.ndarray] = field(default_factory=dict)
    _chunk_cache: dict[str, Chunk] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.query.deadline_ms is not None and self.deadline is None:
            self.deadline = self.started + self.query.deadline_ms / 1000

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    @property
    def watched(self) -> bool:
        """Whether :meth:`check_deadline` can stop this query (stages skip their checks if not)."""
        return self.deadline is not None or self.yields

    def check_deadline(self, stage: str) -> None:
        """Stop the query's graph work here when its deadline has passed, or step aside when a write
        waits for this read (stages call this in their loops)."""
        if self.yields and self.state.writer_waits_on_me():  # first: the write goes before any fallback
            raise YieldToWriter(stage)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise DeadlineExceeded(stage)

    @cached_property
    def wanted_tags(self) -> frozenset[str]:
        return frozenset(t.strip().lower() for t in self.query.tags if t.strip())

    @property
    def filters_chunks(self) -> bool:
        """Some chunks are not visible to this query (a scope or tags): searches fetch more, then filter."""
        return self.query.scope is not None or bool(self.wanted_tags)

    def chunk_visible(self, chunk: Chunk) -> bool:
        if not in_scope(chunk.scope, self.query.scope):
            return False
        tags = self.wanted_tags
        return not tags or not tags.isdisjoint(t.lower() for t in chunk_tags(chunk.metadata))

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
        """Chunk records by id (cached per query), those the query may see (its scope and tags)."""
        missing = [i for i in ids if i not in self._chunk_cache]
        if missing:
            for c in self.state.store.get_chunks(missing):
                self._chunk_cache[c.id] = c
        out = {}
        for i in ids:
            cached = self._chunk_cache.get(i)
            if cached is not None and self.chunk_visible(cached):
                out[i] = cached
        return out

    def nodes(self, ids: list[str]) -> dict[str, Node]:
        return {n.id: n for n in self.state.get_nodes(ids)}

    def results_or_empty(self, results: list[RankedChunk] | None) -> list[RankedChunk]:
        return results or []
