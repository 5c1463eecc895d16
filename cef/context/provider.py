"""Multi-query context assembly: several queries, one token budget, one prompt-ready context.

::

    from cef.context import ContextProvider, ContextRequest, QuerySpec

    provider = ContextProvider(kb, counter="cl100k")
    response = provider.provide_context(ContextRequest.of(
        "Which medications interact with warfarin?",
        QuerySpec(query="kidney function", start_node="pat-lucas", depth=1),
        token_budget=1500,
    ))
    prompt = response.to_prompt_context()

(``ContextRequest.model_validate({"queries": ["...", {...}], ...})`` takes the
same request as JSON-like data, query strings included.)

Each query is answered by :meth:`KnowledgeBase.retrieve` (a start node becomes a
:class:`~cef.model.ResolutionTarget` naming the node id). Chunks found by
several queries are kept once, with their best score and every query that
found them; a :class:`RankingStrategy` orders them globally. Graph reasoning
(the anchors, the paths that explain chunks, key concepts) is packed first
within ``reserve_reasoning_tokens``; chunks fill the rest. The budget holds
for the rendered text in the requested format, counted by the provider's token
counter.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cef.context.budget import Candidate, Packed, pack
from cef.context.formats import ContextChunk, ContextDocument, ContextEntity, ContextPath, score_of
from cef.context.request import (
    ContextRequest,
    ContextResponse,
    QuerySpec,
    RankingStrategy,
    ReasoningSection,
    SelectedChunk,
)
from cef.context.tokens import TokenCounter, resolve_counter
from cef.engine.policy import QueryPolicy
from cef.errors import CefError, EmbeddingError, StoreError
from cef.model import (
    Explanation,
    GraphPath,
    GraphQuery,
    Node,
    RankedChunk,
    ResolutionTarget,
    SearchResult,
    TraversalHint,
)

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

log = logging.getLogger(__name__)

__all__ = [
    "ContextProvider",
    "MergedChunk",
    "dedupe_chunks",
    "entity_item",
    "explain",
    "path_item",
    "rank_chunks",
]

#: properties shown for an anchor entity
ANCHOR_PROPERTIES = 6
#: at most this many paths are considered for the reasoning section
MAX_PATH_CANDIDATES = 30
MAX_KEYWORDS = 20


# ------------------------------------------------------------ dedupe and rank
@dataclass
class MergedChunk:
    """One chunk across all queries: its best hit, and where every query ranked it."""

    best: RankedChunk
    query: int  # 0-based index of the query with the best score
    ranks: dict[int, int] = field(default_factory=dict)  # query index -> 1-based rank

    @property
    def id(self) -> str:
        return self.best.chunk.id

    @property
    def score(self) -> float:
        return self.best.score

    @property
    def queries(self) -> list[int]:
        return sorted(self.ranks)


def dedupe_chunks(results: Sequence[Sequence[RankedChunk]]) -> list[MergedChunk]:
    """Merge per-query result lists: one entry per chunk id, keeping the best score (first on ties)."""
    merged: dict[str, MergedChunk] = {}
    for qi, ranked in enumerate(results):
        for rank, rc in enumerate(ranked, 1):
            cur = merged.get(rc.chunk.id)
            if cur is None:
                merged[rc.chunk.id] = MergedChunk(best=rc, query=qi, ranks={qi: rank})
                continue
            cur.ranks.setdefault(qi, rank)
            if rc.score > cur.best.score:
                cur.best = rc
                cur.query = qi
    return list(merged.values())


def rank_chunks(merged: Sequence[MergedChunk], strategy: RankingStrategy | str) -> list[MergedChunk]:
    """Order merged chunks globally by ``strategy`` (deterministic: ties by query, rank, id)."""
    strategy = RankingStrategy(strategy)
    if strategy is RankingStrategy.SCORE:
        return sorted(merged, key=lambda m: (-m.score, m.query, m.ranks[m.query], m.id))
    if strategy is RankingStrategy.QUERY_ORDER:
        return sorted(merged, key=lambda m: (min(m.ranks), m.ranks[min(m.ranks)], m.id))
    if strategy is RankingStrategy.RECIPROCAL_RANK:
        return sorted(merged, key=lambda m: (-sum(1.0 / (60 + r) for r in m.ranks.values()), -m.score, m.id))
    # round robin: walk each query's own ranking in turns
    per_query: dict[int, list[MergedChunk]] = {}
    for m in merged:
        for qi in m.ranks:
            per_query.setdefault(qi, []).append(m)
    for qi, lst in per_query.items():
        lst.sort(key=lambda m, q=qi: (m.ranks[q], m.id))  # type: ignore[misc]
    out: list[MergedChunk] = []
    seen: set[str] = set()
    cursors = dict.fromkeys(per_query, 0)
    order = sorted(per_query)
    while len(out) < len(merged):
        for qi in order:
            lst = per_query[qi]
            while cursors[qi] < len(lst) and lst[cursors[qi]].id in seen:
                cursors[qi] += 1
            if cursors[qi] < len(lst):
                m = lst[cursors[qi]]
                seen.add(m.id)
                out.append(m)
                cursors[qi] += 1
    return out


# ------------------------------------------------------------------ provider
def entity_item(
    node: Node, max_properties: int = ANCHOR_PROPERTIES, score: float | None = None
) -> ContextEntity:
    """A node as a context entity: type, name and its first properties (name and aliases shown once)."""
    props: dict[str, Any] = {}
    for key, value in node.properties.items():
        if key in ("name", "title", "label_text") or len(props) >= max_properties:
            continue
        props[key] = value
    return ContextEntity(id=node.id, type=node.label, name=node.name, properties=props, score=score_of(score))


def path_item(path: GraphPath) -> ContextPath:
    return ContextPath(
        text=path.describe(),
        node_ids=list(path.node_ids),
        confidence=round(path.confidence, 4),
    )


def explain(e: Explanation) -> str:
    """A short "how it was found" for a chunk."""
    if e.path is not None and e.path.length:
        return f"{e.strategy.value}: {e.path.describe()}"
    return e.strategy.value


class ContextProvider:
    """Assembles context for several queries within one token budget.

    ``counter`` decides how tokens are counted: a :class:`TokenCounter`, a name
    (``"cl100k"``, ``"wordpiece"``, ``"estimate"``, a model name such as
    ``"gpt-4"``), or None for cl100k when installed.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        counter: TokenCounter | str | None = None,
        *,
        policy: QueryPolicy | None = None,
    ) -> None:
        self.kb = kb
        self.counter = resolve_counter(counter)
        #: the calling door's time limit (:class:`~cef.engine.policy.QueryPolicy`), for every query
        self.policy = policy or QueryPolicy()

    def provide_context(self, request: ContextRequest) -> ContextResponse:
        """Retrieve for every query, then assemble within the budget."""
        t0 = time.perf_counter()
        results, warnings = self.retrieve(request)
        t1 = time.perf_counter()
        response = self.assemble(request, results, warnings=warnings)
        response.duration_ms = (time.perf_counter() - t0) * 1000
        response.metadata["retrieval_ms"] = round((t1 - t0) * 1000, 3)
        return response

    def retrieve(self, request: ContextRequest) -> tuple[list[SearchResult | None], list[str]]:
        """One :class:`SearchResult` per query (None where retrieval failed) and the warnings."""
        results: list[SearchResult | None] = []
        warnings: list[str] = []
        for i, spec in enumerate(request.queries, 1):
            try:
                results.append(self._retrieve_one(request, spec, i, warnings))
            except (StoreError, EmbeddingError) as exc:
                log.warning("context query %d failed: %s", i, exc)
                warnings.append(f"query {i}: retrieval failed, the knowledge base is unavailable: {exc}")
                results.append(None)
        return results, warnings

    def _retrieve_one(
        self, request: ContextRequest, spec: QuerySpec, i: int, warnings: list[str]
    ) -> SearchResult:
        targets: list[ResolutionTarget] = []
        if spec.start_node is not None:
            if self.kb.find_node(spec.start_node) is None:
                warnings.append(
                    f"query {i}: start node {spec.start_node!r} does not exist; searched without it"
                )
            else:
                targets = [ResolutionTarget(description=spec.start_node)]
        top_k = spec.top_k or request.top_k_per_query
        query = GraphQuery(
            query=spec.query,
            targets=targets,
            traversal=TraversalHint(depth=request.default_depth if spec.depth is None else spec.depth),
            strategy=request.strategy,
            top_k=top_k,
            include_reasoning_context=request.include_paths,
            scope=request.scope,
            as_of=request.as_of,
        )
        return self.kb.retrieve(self.policy.bound(query))

    def assemble(
        self,
        request: ContextRequest,
        results: Sequence[SearchResult | None],
        *,
        warnings: Sequence[str] = (),
    ) -> ContextResponse:
        """Dedupe, rank and pack already-retrieved results (one per query, None where it failed)."""
        t0 = time.perf_counter()
        if len(results) != len(request.queries):
            raise CefError(f"assemble() got {len(results)} results for {len(request.queries)} queries")
        warnings = list(warnings)
        ok = [r for r in results if r is not None]
        merged = rank_chunks(
            dedupe_chunks([r.results if r is not None else [] for r in results]), request.ranking
        )
        reasoning = self._reasoning_candidates(request, results, merged)
        chunks = [self._chunk_candidate(request, m) for m in merged]
        base = ContextDocument(
            title="Context",
            queries=[q.query for q in request.queries],
        )
        reserve = request.reasoning_reserve
        packed = pack(
            base,
            [*reasoning, *chunks],
            counter=self.counter,
            fmt=request.format,
            budget=request.token_budget,
            caps={"reasoning": reserve},
            allow_cut=request.allow_truncation,
        )
        reason = None
        if not ok:
            reason = "the knowledge base is unavailable" if any(r is None for r in results) else "no queries"
        elif not merged and not reasoning:
            reason = "no match: no query found any chunk or graph context"
        elif packed.document.is_empty():
            reason = "nothing fits the token budget"
        return self._response(request, results, merged, packed, warnings, reason, t0)

    # ------------------------------------------------------------ candidates
    def _chunk_candidate(self, request: ContextRequest, m: MergedChunk) -> Candidate:
        rc = m.best
        item = ContextChunk(
            id=rc.chunk.id,
            content=rc.chunk.content,
            score=score_of(rc.score),
            node_id=rc.chunk.node_id,
            queries=[q + 1 for q in m.queries],
            why=explain(rc.explanation) if request.include_explanations else None,
        )
        return Candidate(section="chunks", item=item, key=f"chunk:{rc.chunk.id}", text_field="content")

    def _reasoning_candidates(
        self, request: ContextRequest, results: Sequence[SearchResult | None], merged: Sequence[MergedChunk]
    ) -> list[Candidate]:
        if not request.include_paths:
            return []
        out: list[Candidate] = []
        seen_nodes: set[str] = set()
        keywords: dict[str, None] = {}
        paths: dict[tuple[str, ...], GraphPath] = {}
        # paths that explain the best chunks come first
        for m in merged:
            p = m.best.explanation.path
            if p is not None and p.length:
                paths.setdefault(tuple(p.edge_ids) or tuple(p.node_ids), p)
        extra: list[GraphPath] = []
        for r in results:
            ctx = r.reasoning_context if r is not None else None
            if ctx is None:
                continue
            for node in ctx.root_nodes:
                if node.id not in seen_nodes:
                    seen_nodes.add(node.id)
                    out.append(
                        Candidate(
                            section="entities",
                            item=entity_item(node),
                            key=f"entity:{node.id}",
                            group="reasoning",
                        )
                    )
            extra.extend(p for p in ctx.paths if p.length)
            keywords.update(dict.fromkeys(ctx.context_keywords))
        for p in sorted(extra, key=lambda p: (p.length, -p.confidence, p.node_ids)):
            paths.setdefault(tuple(p.edge_ids) or tuple(p.node_ids), p)
        for n, (key, p) in enumerate(paths.items()):
            if n >= MAX_PATH_CANDIDATES:
                break
            out.append(
                Candidate(section="paths", item=path_item(p), key="path:" + "|".join(key), group="reasoning")
            )
        if keywords:
            out.append(
                Candidate(
                    section="keywords", item=list(keywords)[:MAX_KEYWORDS], key="keywords", group="reasoning"
                )
            )
        return out

    # -------------------------------------------------------------- response
    def _response(
        self,
        request: ContextRequest,
        results: Sequence[SearchResult | None],
        merged: Sequence[MergedChunk],
        packed: Packed,
        warnings: list[str],
        reason: str | None,
        t0: float,
    ) -> ContextResponse:
        by_id = {m.id: m for m in merged}
        selected: list[SelectedChunk] = []
        reasoning_tokens = 0
        for c in packed.selected:
            if c.section != "chunks":
                reasoning_tokens += packed.tokens_by_key.get(c.key, 0)
                continue
            m = by_id[c.item.id]
            selected.append(
                SelectedChunk(
                    chunk=m.best.chunk,
                    content=c.item.content,
                    score=m.score,
                    queries=[q + 1 for q in m.queries],
                    truncated=c.item.truncated,
                    tokens=packed.tokens_by_key.get(c.key, 0),
                    explanation=m.best.explanation,
                )
            )
        doc = packed.document
        strategies = list(dict.fromkeys(r.strategy for r in results if r is not None))
        retrieved = sum(len(r.results) for r in results if r is not None)
        budget = request.token_budget
        metadata: dict[str, Any] = {
            "queries_processed": sum(1 for r in results if r is not None),
            "queries": [q.query for q in request.queries],
            "chunks_retrieved": retrieved,
            "unique_chunks": len(merged),
            "chunks_selected": len(selected),
            "chunks_truncated": sum(1 for s in selected if s.truncated),
            "chunks_dropped": sum(1 for c in packed.dropped if c.section == "chunks"),
            "paths_selected": len(doc.paths),
            "token_utilization": round(packed.total_tokens / budget, 4),
            "content_utilization": round(packed.content_tokens / budget, 4),
            "reasoning_tokens": reasoning_tokens,
            "reserve_reasoning_tokens": request.reasoning_reserve,
            "strategies_used": [s.value for s in strategies],
            "ranking": request.ranking.value,
            "tokenizer": self.counter.name,
            "per_query": [
                {
                    "query": q.query,
                    "strategy": r.strategy.value if r is not None else None,
                    "results": len(r.results) if r is not None else 0,
                    "fallbacks": list(r.fallbacks) if r is not None else [],
                    "anchors": r.metadata.get("anchors", []) if r is not None else [],
                }
                for q, r in zip(request.queries, results, strict=True)
            ],
            "assembly_ms": round((time.perf_counter() - t0) * 1000, 3),
        }
        if reason:
            metadata["reason"] = reason
        return ContextResponse(
            context=packed.text,
            format=request.format,
            chunks=selected,
            reasoning=ReasoningSection(
                anchors=list(doc.entities),
                paths=list(doc.paths),
                keywords=list(doc.keywords),
                tokens=reasoning_tokens,
            ),
            total_tokens=packed.total_tokens,
            token_budget=budget,
            truncated=packed.truncated,
            duration_ms=(time.perf_counter() - t0) * 1000,
            strategies_used=strategies,
            warnings=warnings,
            reason=reason,
            metadata=metadata,
            document=doc,
        )
