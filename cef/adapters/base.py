"""What the LangChain and LlamaIndex retrievers share: the options, the query they build, the hits they return.

:class:`CefRetrieverOptions` holds where the knowledge is (see
:mod:`cef.adapters.source`) and every retrieval option as pydantic fields; it
turns a question into a :class:`~cef.GraphQuery`, runs it, and turns the
:class:`~cef.SearchResult` into :class:`Hit` values the adapters wrap in
their framework's document type. Each hit's ``metadata`` carries:

============  ==========================================================
key           value
============  ==========================================================
score         the chunk's (or answer node's) score, higher is better
chunk_id      the chunk's id (``None`` for an answer node without chunks)
node_id       the node the chunk is linked to (or the answer node)
strategy      the strategy that found it (``hybrid``, ``graph``, ...)
path          the explanation path, ``A -[REL]-> B`` (``None`` if none)
explanation   the whole :class:`~cef.Explanation` as JSON (anchors, scores)
============  ==========================================================

plus the chunk's own metadata (cef's keys win when the names clash).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator, model_validator

from cef.adapters.source import KnowledgeSource, is_server_url, open_source
from cef.engine.kb import KnowledgeBase
from cef.model import (
    GraphQuery,
    RankedChunk,
    RankedNode,
    ResolutionTarget,
    SearchResult,
    SearchStrategy,
    TraversalHint,
)

__all__ = ["CEF_METADATA_KEYS", "CefRetrieverOptions", "Hit", "hits"]

#: the metadata keys cef sets on every returned document
CEF_METADATA_KEYS = ("score", "chunk_id", "node_id", "strategy", "path", "explanation")

#: GraphQuery fields with a field of their own here (search_kwargs may not set them)
_OWN_FIELDS = frozenset(
    {"query", "top_k", "strategy", "targets", "traversal", "as_of", "scope", "max_token_budget"}
)


class CefRetrieverOptions(BaseModel):
    """Where to retrieve from and how: the fields both framework retrievers take.

    ``depth`` and ``relation_types`` are short for the same fields of
    ``traversal`` (and win over it); ``search_kwargs`` reaches every other
    :class:`~cef.GraphQuery` field (``min_results``, ``patterns``,
    ``max_graph_nodes``, ``options``, ...).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, validate_assignment=True)

    # where: fixed once built (the first query opens or connects to it)
    knowledge_base: KnowledgeBase | str | Path = Field(
        frozen=True,
        description="an open cef.KnowledgeBase, a file path, a postgresql:// URL, or a `cef serve http` URL",
    )
    api_key: SecretStr | None = Field(
        default=None, frozen=True, description="the cef server's API key (read scope)"
    )
    embedder: Any = Field(
        default="default",
        frozen=True,
        description="for a path or database URL: the embedder cef.open() loads ('default', None for graph + "
        "BM25, a provider name or an Embedder)",
    )
    timeout: float = Field(default=30.0, gt=0, frozen=True, description="seconds to wait for a cef server")

    # how: any of these may change, or be overridden for one call
    strategy: SearchStrategy = Field(
        default=SearchStrategy.AUTO, description="how to search ('auto': cef picks)"
    )
    depth: int | None = Field(
        default=None, ge=0, le=10, description="graph traversal depth (None: traversal's)"
    )
    relation_types: list[str] | None = Field(default=None, description="only follow these relations")
    traversal: TraversalHint = Field(
        default_factory=TraversalHint, description="direction, semantics, confidence floors"
    )
    targets: list[ResolutionTarget] = Field(
        default_factory=list, description="entry points to resolve in the graph (a string: its description)"
    )
    as_of: datetime | None = Field(default=None, description="only edges valid at this time")
    scope: str | None = Field(default=None, description="only chunks of this scope")
    max_token_budget: int | None = Field(
        default=None,
        ge=1,
        description="GraphQuery.max_token_budget: the chunks returned fit this many tokens together",
    )
    search_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="any other GraphQuery field, e.g. {'min_results': 0}"
    )
    answer_nodes: bool = Field(
        default=True, description="also return answer nodes that have no chunk, as their text (PATHS)"
    )

    _source: KnowledgeSource | None = PrivateAttr(default=None)
    _source_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @field_validator("targets", mode="before")
    @classmethod
    def _targets(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"description": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("search_kwargs")
    @classmethod
    def _search_kwargs(cls, value: dict[str, Any]) -> dict[str, Any]:
        own = sorted(_OWN_FIELDS & value.keys())
        if own:
            raise ValueError(f"set {', '.join(own)} with the retriever's own fields, not search_kwargs")
        unknown = sorted(value.keys() - GraphQuery.model_fields.keys())
        if unknown:
            known = ", ".join(sorted(GraphQuery.model_fields.keys() - _OWN_FIELDS))
            raise ValueError(
                f"unknown GraphQuery field(s) {', '.join(unknown)}; search_kwargs takes: {known}"
            )
        return value

    @model_validator(mode="after")
    def _key_needs_server(self) -> CefRetrieverOptions:
        if self.api_key is not None and not is_server_url(self.knowledge_base):
            raise ValueError(
                "api_key is for a cef server URL (http:// or https://); a knowledge base opened in this "
                "process needs none"
            )
        return self

    # ------------------------------------------------------------ the query
    def graph_query(self, text: str, top_k: int, **overrides: Any) -> GraphQuery:
        """The GraphQuery for ``text``; ``overrides`` are option fields for this call only.

        Raises pydantic's ``ValidationError`` for a bad option, naming the field.
        """
        opts = self
        if overrides:
            unknown = sorted(overrides.keys() - _QUERY_OPTIONS)
            if unknown:
                raise TypeError(
                    f"unknown retrieval option(s) {', '.join(unknown)}; options: {', '.join(sorted(_QUERY_OPTIONS))}"
                )
            data = {name: getattr(self, name) for name in _QUERY_OPTIONS}
            opts = CefRetrieverOptions.model_validate(
                {**data, **overrides, "knowledge_base": self.knowledge_base, "api_key": self.api_key}
            )
        shortcuts = {"depth": opts.depth, "relation_types": opts.relation_types}
        traversal = {**opts.traversal.model_dump(), **{k: v for k, v in shortcuts.items() if v is not None}}
        return GraphQuery.model_validate(
            {
                **opts.search_kwargs,
                "query": text,
                "top_k": top_k,
                "strategy": opts.strategy,
                "targets": opts.targets,
                "traversal": traversal,
                "as_of": opts.as_of,
                "scope": opts.scope,
                "max_token_budget": opts.max_token_budget,
            }
        )

    # ------------------------------------------------------------ running it
    @property
    def source(self) -> KnowledgeSource:
        """Where queries go (opened or connected on the first query)."""
        with self._source_lock:  # batch() runs calls in threads: open once
            if self._source is None:
                self._source = open_source(
                    self.knowledge_base,
                    api_key=self.api_key.get_secret_value() if self.api_key is not None else None,
                    embedder=self.embedder,
                    timeout=self.timeout,
                )
            return self._source

    def search(self, text: str, top_k: int, **overrides: Any) -> list[Hit]:
        query = self.graph_query(text, top_k, **overrides)
        return hits(self.source.retrieve(query), answer_nodes=self._answer_nodes(overrides))

    async def asearch(self, text: str, top_k: int, **overrides: Any) -> list[Hit]:
        query = self.graph_query(text, top_k, **overrides)
        return hits(await self.source.aretrieve(query), answer_nodes=self._answer_nodes(overrides))

    def _answer_nodes(self, overrides: dict[str, Any]) -> bool:
        return bool(overrides.get("answer_nodes", self.answer_nodes))

    def close(self) -> None:
        """Close what the retriever opened (a knowledge base it opened from a path, an HTTP client)."""
        with self._source_lock:
            if self._source is not None:
                self._source.close()
                self._source = None


#: the fields a single call may override
_QUERY_OPTIONS = frozenset(CefRetrieverOptions.model_fields) - {
    "knowledge_base",
    "api_key",
    "embedder",
    "timeout",
}


# ------------------------------------------------------------------ results
@dataclass(frozen=True)
class Hit:
    """One retrieved passage, framework-neutral: the adapters wrap it in a Document or a TextNode."""

    id: str
    text: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)
    node_id: str | None = None


def hits(result: SearchResult, *, answer_nodes: bool = True) -> list[Hit]:
    """The ranked chunks, then (with ``answer_nodes``) the answer nodes that have no chunk at all."""
    out = [_chunk_hit(rc) for rc in result.results]
    if answer_nodes:
        out.extend(_node_hit(rn) for rn in result.nodes if not rn.chunk_ids)
    return out


def _chunk_hit(rc: RankedChunk) -> Hit:
    e = rc.explanation
    meta = {
        **rc.chunk.metadata,
        "score": rc.score,
        "chunk_id": rc.chunk.id,
        "node_id": rc.chunk.node_id,
        "strategy": e.strategy.value,
        "path": e.path.describe() if e.path is not None else None,
        "explanation": e.model_dump(mode="json", exclude_none=True),
    }
    return Hit(id=rc.chunk.id, text=rc.chunk.content, score=rc.score, metadata=meta, node_id=rc.chunk.node_id)


def _node_hit(rn: RankedNode) -> Hit:
    path = rn.path.describe() if rn.path is not None else None
    meta = {
        "score": rn.score,
        "chunk_id": None,
        "node_id": rn.node.id,
        "strategy": rn.strategy.value,
        "path": path,
        "explanation": {
            "strategy": rn.strategy.value,
            **({"path": rn.path.model_dump(mode="json")} if rn.path is not None else {}),
            "notes": ["an answer node with no chunk: its text is the node rendered"],
        },
        "label": rn.node.label,
    }
    text = rn.text or rn.node.name
    if path:
        text = f"{text}\n(path: {path})"
    return Hit(id=rn.node.id, text=text, score=rn.score, metadata=meta, node_id=rn.node.id)
