"""The operations the front doors offer, shared by the MCP server and the REST API.

:class:`CefService` wraps one :class:`~cef.engine.kb.KnowledgeBase`: it checks
the server's limits, runs engine calls in worker threads (the engine is
synchronous), caches searches until the next write, applies the graph
exploration time limit (then vector search answers, and the response says
so), and dispatches tool calls by name. It raises cef errors; each front
door turns them into its own error format.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread
from pydantic import BaseModel, Field

from cef.engine.access import TenantView
from cef.engine.policy import QueryPolicy, search_query
from cef.errors import NotFoundError, ValidationError
from cef.model import (
    Batch,
    GraphQuery,
    ResolutionTarget,
    SearchResult,
    SearchStrategy,
    in_scope,
)
from cef.schema.discovery import GraphSchema, discover_schema, label_counts
from cef.server.auth import access_of, read_scope, scoped_query
from cef.server.cache import StampedTTLCache
from cef.server.responses import SearchResponse, build_search_response
from cef.server.settings import ApiKey, ServerSettings
from cef.server.tools import (
    AnswerQuestionInput,
    DeleteNodeInput,
    GetGraphSchemaInput,
    IndexChunksInput,
    IndexEdgesInput,
    IndexNodesInput,
    RetrieveContextInput,
    SearchMemoryInput,
    parse_tool_arguments,
    tool_spec,
)

if TYPE_CHECKING:
    from cef.engine.answer import Answer
    from cef.engine.indexer import IndexResult
    from cef.engine.kb import KnowledgeBase
    from cef.llm.base import LLMClient
    from cef.store.base import WriteSet

log = logging.getLogger(__name__)

__all__ = [
    "CefService",
    "ContextSupport",
    "LimitExceededError",
    "WriteResult",
    "load_context_support",
]

T = TypeVar("T")


class LimitExceededError(ValidationError):
    """A request asked for more than this server allows (depth, results, text length, batch size)."""


class WriteResult(BaseModel):
    """What a write did."""

    relation_types: int = 0
    nodes: int = 0
    edges: int = 0
    chunks: int = 0
    embedded: int = 0
    seconds: float = 0.0
    warnings: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, result: IndexResult) -> WriteResult:
        return cls(**asdict(result))


class ContextSupport:
    """The multi-query context provider (``cef.context.provider``), when it is installed."""

    def __init__(
        self,
        request_model: type[BaseModel],
        provider_cls: type[Any],
        response_model: type[BaseModel] | None = None,
    ) -> None:
        self.request_model = request_model
        self.provider_cls = provider_cls
        self.response_model = response_model


def load_context_support() -> ContextSupport | None:
    """Import the context provider lazily; None when it is not available."""
    try:
        from cef.context.provider import ContextProvider
        from cef.context.request import ContextRequest, ContextResponse
    except ImportError as exc:
        log.info("provide_context is not available: %s", exc)
        return None
    return ContextSupport(ContextRequest, ContextProvider, ContextResponse)


class CefService:
    """One knowledge base, served: limits, caching, time limits and tool dispatch."""

    def __init__(
        self,
        kb: KnowledgeBase,
        settings: ServerSettings,
        *,
        context: ContextSupport | bool | None = True,
        llm: LLMClient | None = None,
    ) -> None:
        self.kb = kb
        #: the LLM that answers questions (None: built from the settings on first use, if they name one)
        self.llm = llm
        self.settings = settings
        #: the server's graph time limit, applied by the engine to every query without its own deadline
        self.policy = QueryPolicy.limited(settings.graph_timeout_ms)
        self.cache: StampedTTLCache[Any] = StampedTTLCache(
            settings.cache_ttl_seconds, settings.cache_max_entries
        )
        if context is True:
            self.context = load_context_support()
        else:
            self.context = context or None
        self._provider: Any = None
        self._ready: anyio.Event | None = None
        #: what the warm-up loaded (shown by /health)
        self.loaded: dict[str, Any] = {}
        #: the warm-up failed: reads still run (slowly), but the server never reports ready
        self.failed = False
        kb.state.listeners.append(self._on_write)

    def close(self) -> None:
        if self._on_write in self.kb.state.listeners:
            self.kb.state.listeners.remove(self._on_write)

    def _on_write(self, writes: WriteSet) -> None:
        self.cache.clear()

    async def warm_up(self) -> None:
        """Load what the first request would otherwise load inside its time limit: the embedding
        model, the indexes a retrieval builds, the context provider and its token counter.

        Runs once (later callers wait for the first); every read waits for it
        before its time limit starts (:meth:`ensure_ready`). Failures are logged
        and the server still answers (slowly) rather than not at all.
        """
        if self._ready is not None:
            await self._ready.wait()
            return
        self._ready = anyio.Event()
        t0 = time.perf_counter()
        try:
            self.loaded = await self.run(self._load)
        except Exception as exc:
            log.warning("warm-up failed", exc_info=True)
            self.loaded = {"error": f"{type(exc).__name__}: {exc}"}
            self.failed = True
        finally:
            self.loaded["seconds"] = round(time.perf_counter() - t0, 3)
            self._ready.set()
        log.info("warm-up took %.0f ms: %s", (time.perf_counter() - t0) * 1000, self.loaded)

    def _load(self) -> dict[str, Any]:
        kb = self.kb
        loaded: dict[str, Any] = {"embedder": kb.embedder.name if kb.embedder is not None else "none"}
        if kb.embedder is not None:
            kb.embedder.embed_query("warm up")  # loads the model
        loaded["warm"] = kb.warm()  # models, entity index, query NER, relation-path vectors
        kb.retrieve(GraphQuery(query="warm up", top_k=1, min_results=0))  # builds the retrieval indexes
        info = kb.stats()
        loaded.update(nodes=info["nodes"], edges=info["edges"], chunks=info["chunks"])
        if self.context is not None:
            self._provider = self._provider or self.context.provider_cls(kb)
            counter = getattr(self._provider, "counter", None)
            if counter is not None and hasattr(counter, "count"):
                counter.count("warm up")  # loads the tokenizer
            loaded["context"] = True
        return loaded

    @property
    def warmed(self) -> bool:
        """The one-time loading has ended (successfully or not)."""
        return self._ready is not None and self._ready.is_set()

    @property
    def ready(self) -> bool:
        """The loading ended and succeeded: what /health reports as ready."""
        return self.warmed and not self.failed

    async def ensure_ready(self) -> None:
        """Wait until the one-time loading is done (start it if nobody has); reads call this before
        their time limit starts, so loading never counts against it."""
        if not self.warmed:
            await self.warm_up()

    # ----------------------------------------------------------- limits
    def check_text(self, text: str, what: str = "query") -> None:
        limit = self.settings.max_query_length
        if len(text) > limit:
            raise LimitExceededError(
                f"{what} is {len(text)} characters long; this server accepts at most {limit}"
            )

    def check_depth(self, depth: int, what: str = "depth") -> None:
        if depth > self.settings.max_depth:
            raise LimitExceededError(
                f"{what} {depth} is deeper than this server allows (max_depth {self.settings.max_depth})"
            )

    def check_count(self, n: int, what: str = "limit") -> None:
        if n > self.settings.max_limit:
            raise LimitExceededError(
                f"{what} {n} is more than this server returns (at most {self.settings.max_limit})"
            )

    def check_batch(self, n: int, what: str = "records") -> None:
        if n > self.settings.max_batch:
            raise LimitExceededError(
                f"{n} {what} in one call; this server accepts at most {self.settings.max_batch}"
            )

    def check_graph_query(self, q: GraphQuery) -> None:
        self.check_text(q.query)
        self.check_depth(q.traversal.depth, "traversal.depth")
        self.check_count(q.top_k, "top_k")

    # ----------------------------------------------------------- plumbing
    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a synchronous engine call in a worker thread."""
        return await anyio.to_thread.run_sync(fn, *args)

    def _stamp(self) -> Hashable:
        return (self.kb.state.seq, self.kb.store.data_version())

    async def _cached(
        self, key: Hashable, compute: Callable[[], Awaitable[T]], keep: Callable[[T], bool] = lambda _: True
    ) -> tuple[T, bool]:
        """``compute()``, or its cached value; a value ``keep`` refuses (a degraded answer) is not cached."""
        if not self.cache.enabled:
            return await compute(), False
        stamp = await self.run(self._stamp)
        hit = self.cache.get(key, stamp)
        if hit is not None:
            return hit, True
        value = await compute()
        if keep(value):
            self.cache.put(key, stamp, value)
        return value, False

    async def _retrieve(self, q: GraphQuery) -> tuple[SearchResult, bool]:
        """Retrieve with the server's graph time limit (``True``: it ran out, vector search answered).

        The engine applies the limit (:class:`~cef.engine.policy.QueryPolicy`) as the query's own
        cooperative deadline: counted from the moment the query holds the engine, checked between
        and inside its stages, vector search answering past it — one call, no racing thread.
        """
        q = self.policy.bound(q)
        result = await self.run(self.kb.retrieve, q)
        timed_out = bool(result.metadata.get("timed_out"))
        if timed_out:
            log.warning("graph exploration exceeded %s ms; answered by vector search", q.deadline_ms)
        return result, timed_out

    # ----------------------------------------------------------- reads
    async def retrieve_knowledge(self, q: GraphQuery) -> SearchResult:
        """GraphQuery → SearchResult (cached until the next write)."""
        self.check_graph_query(q)
        await self.ensure_ready()

        async def compute() -> SearchResult:
            return (await self._retrieve(q))[0]

        result, cached = await self._cached(
            ("retrieve", q.model_dump_json()), compute, keep=lambda r: not r.metadata.get("timed_out")
        )
        if cached:
            result = result.model_copy(update={"metadata": {**result.metadata, "cached": True}})
        return result

    async def search(self, req: SearchMemoryInput) -> SearchResponse:
        """The memory search: graph exploration + vector search, shaped as the search response."""
        await self.ensure_ready()
        depth = req.graph_depth if req.graph_depth is not None else self.settings.default_depth
        self.check_text(req.query)
        self.check_depth(depth, "graph_depth")
        self.check_count(req.limit)
        q = search_query(
            req.query,
            top_k=req.limit,
            depth=depth,
            graph=req.enable_graph,
            scope=req.scope,
            tags=req.tag_list or [],
        )
        key = ("search", req.model_dump_json(), depth)
        return await self._search_response(key, q, depth=depth, limit=req.limit)

    async def retrieve_context(
        self, req: RetrieveContextInput, *, scope: str | None = None
    ) -> SearchResponse:
        """The seed's retrieve_context: question + graph hints + keywords → search response."""
        await self.ensure_ready()
        self.check_text(req.textQuery, "textQuery")
        self.check_count(req.topK, "topK")
        hints = req.graphHints
        depth = hints.depth if hints is not None else self.settings.default_depth
        self.check_depth(depth, "graphHints.depth")
        q = await self.run(self._context_query, req, depth, scope)
        key = ("context", req.model_dump_json(), depth, scope)
        return await self._search_response(key, q, depth=depth, limit=req.topK)

    def _context_query(self, req: RetrieveContextInput, depth: int, scope: str | None) -> GraphQuery:
        text = req.textQuery
        extra = [k for k in req.semanticKeywords if k.strip() and k.lower() not in text.lower()]
        if extra:
            text = f"{text} {' '.join(extra)}"
        targets: list[ResolutionTarget] = []
        relations: list[str] = []
        hints = req.graphHints
        if hints is not None:
            label = hints.entityLabel
            labels = label_counts(self.kb, None if scope is None else [scope])  # what the caller may see
            if label not in labels:
                known = ", ".join(sorted(labels)[:50]) or "(none)"
                raise ValidationError(
                    f"graphHints.entityLabel: unknown node type {label!r}; node types: {known}"
                )
            value = hints.entityValue
            if hints.entityProperty == "id":
                targets = [ResolutionTarget(description=str(value), type_hint=label)]
            else:
                found = self.kb.find_nodes_by_property(hints.entityProperty, value, label=label, limit=50)
                found = [n for n in found if in_scope(n.scope, scope)][:5]
                targets = [ResolutionTarget(description=n.id, type_hint=label) for n in found] or [
                    ResolutionTarget(description=str(value)[:2000] or label, type_hint=label, max_matches=3)
                ]
            relations = list(hints.traverseRelations)
        return search_query(
            text, top_k=req.topK, depth=depth, scope=scope, targets=targets, relation_types=relations
        )

    async def _search_response(
        self,
        key: Hashable,
        q: GraphQuery,
        *,
        depth: int,
        limit: int,
    ) -> SearchResponse:
        async def compute() -> SearchResponse:
            t0 = time.perf_counter()
            result, timed_out = await self._retrieve(q)

            def build() -> SearchResponse:
                return build_search_response(
                    self.kb,
                    result,
                    depth=depth,
                    graph_enabled=q.strategy is not SearchStrategy.VECTOR,  # search_query chose
                    limit=limit,
                    timed_out=timed_out,
                    elapsed_ms=(time.perf_counter() - t0) * 1000,
                )

            return await self.run(build)

        response, cached = await self._cached(
            key, compute, keep=lambda r: not r.exploration_summary.timed_out
        )
        return response.model_copy(update={"cached": True}) if cached else response

    async def provide_context(self, request: BaseModel) -> BaseModel:
        """Several queries, one token budget, deduplicated (needs ``cef.context.provider``)."""
        await self.ensure_ready()
        if self.context is None:
            raise NotFoundError("provide_context is not available: cef.context.provider is not installed")
        if self._provider is None:
            self._provider = self.context.provider_cls(self.kb, policy=self.policy)
        response: BaseModel = await self.run(self._provider.provide_context, request)
        return response

    def _llm(self) -> LLMClient | None:
        st = self.settings
        if self.llm is None and st.llm:
            from cef.llm import make_llm_client

            options: dict[str, Any] = {}
            if st.llm_model:
                options["model"] = st.llm_model
            if st.llm_base_url:
                options["base_url"] = st.llm_base_url
            if st.llm_api_key is not None:
                options["api_key"] = st.llm_api_key.get_secret_value()
            self.llm = make_llm_client(st.llm, **options)
        return self.llm

    async def answer(self, req: AnswerQuestionInput) -> Answer:
        """A question answered by the server's LLM from retrieved passages, with citations."""
        await self.ensure_ready()
        self.check_text(req.question, "question")
        self.check_depth(req.depth)
        self.check_count(req.top_k, "top_k")
        llm = self._llm()
        return await self.run(
            lambda: self.kb.answer(
                req.question,
                llm,
                understand=req.understand,
                top_k=req.top_k,
                depth=req.depth,
                max_tokens=req.max_tokens,
                scope=req.scope,
                policy=self.policy,
            )
        )

    async def graph_schema(self, grant: ApiKey | None = None) -> GraphSchema:
        """The live schema; for a key bound to scopes, only what its scopes and shared records show."""
        scopes = grant.scopes if grant is not None else None
        return await self.run(
            lambda: discover_schema(self.kb, samples=self.settings.schema_samples, scopes=scopes)
        )

    # ----------------------------------------------------------- tenants
    def view(self, grant: ApiKey | None) -> TenantView:
        """The knowledge base as ``grant``'s data scopes see it: every route and tool reads and
        writes through this (:mod:`cef.engine.access` enforces the scopes)."""
        return TenantView(self.kb, access_of(grant))

    # ----------------------------------------------------------- writes
    async def index_batch(self, batch: Batch, grant: ApiKey | None = None) -> WriteResult:
        self.check_batch(len(batch))
        return WriteResult.of(await self.run(self.view(grant).index_batch, batch))

    async def delete_node(
        self, node_id: str, cascade: bool = True, grant: ApiKey | None = None
    ) -> WriteResult:
        return WriteResult.of(await self.run(self.view(grant).delete_node, node_id, cascade))

    # ----------------------------------------------------------- tools
    def tool_names(self, *, writable: bool) -> list[str]:
        names = [
            "retrieve_knowledge",
            "retrieve_context",
            "search_memory",
            "answer_question",
            "get_graph_schema",
        ]
        if self.context is not None:
            names.append("provide_context")
        if writable:
            names += ["index_nodes", "index_edges", "index_chunks", "delete_node"]
        return names

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, *, writable: bool, grant: ApiKey | None = None
    ) -> BaseModel:
        """Validate a tool call's arguments and run it; raises cef errors with a clear message.

        ``grant`` is the caller's API key (None: no keys): reads run in its data
        scope, writes stay in its scopes (:mod:`cef.server.auth`)."""
        spec = tool_spec(name, context_model=self.context.request_model if self.context else None)
        if spec is None or name not in self.tool_names(writable=True):
            raise NotFoundError(
                f"unknown tool {name!r}; tools: {', '.join(self.tool_names(writable=writable))}"
            )
        if spec.write and not writable:
            raise ValidationError(f"{name} is a write tool: start the server with --writable to use it")
        args = parse_tool_arguments(spec, arguments, self.settings)
        if isinstance(args, GraphQuery):
            return await self.retrieve_knowledge(scoped_query(grant, args))
        if isinstance(args, RetrieveContextInput):
            return await self.retrieve_context(args, scope=read_scope(grant, None))
        if isinstance(args, SearchMemoryInput):
            return await self.search(args.model_copy(update={"scope": read_scope(grant, args.scope)}))
        if isinstance(args, AnswerQuestionInput):
            return await self.answer(args.model_copy(update={"scope": read_scope(grant, args.scope)}))
        if isinstance(args, GetGraphSchemaInput):
            return await self.graph_schema(grant)
        if isinstance(args, IndexNodesInput):
            return await self.index_batch(Batch(relation_types=args.relation_types, nodes=args.nodes), grant)
        if isinstance(args, IndexEdgesInput):
            return await self.index_batch(Batch(relation_types=args.relation_types, edges=args.edges), grant)
        if isinstance(args, IndexChunksInput):
            return await self.index_batch(Batch(chunks=args.chunks), grant)
        if isinstance(args, DeleteNodeInput):
            return await self.delete_node(args.node_id, args.cascade, grant)
        request = args.model_copy(update={"scope": read_scope(grant, getattr(args, "scope", None))})
        return await self.provide_context(request)
