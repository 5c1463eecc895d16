"""``retrieve(GraphQuery)`` as a template: validate → time → stages → fallback chain → wrap.

Strategies are plain functions ``(QueryContext) -> list[RankedChunk]`` in the
knowledge base's :class:`~cef.retrieve.strategies.StrategyRegistry`, so new ones
plug in without touching the template. Each strategy names the stages it needs
first (anchors and the traversal from them, the path-text vectors, the query's
patterns) and the chain it falls back along when it returns fewer than
``min_results`` chunks; the template runs the registry's plan and names no
strategy. A strategy returns ``None`` when it does not apply to this knowledge
base (PPR where no text was turned into a graph): it is skipped without counting
as a fallback. What the stages tell each other lives in ``qc.stages``
(:mod:`cef.retrieve.stagestate`); the result's metadata is built from it here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cef.errors import UnknownRelationTypeError
from cef.model import GraphQuery, RankedChunk, SearchResult, SearchStrategy
from cef.retrieve.context import DeadlineExceeded, QueryContext, YieldToWriter
from cef.retrieve.pathvectors import path_vectors, typed_relations
from cef.retrieve.ports import EngineView
from cef.retrieve.relevance import assess_relevance
from cef.retrieve.search import bm25_search, vector_search
from cef.retrieve.stagestate import TokenBudget
from cef.retrieve.strategies import StrategyRegistry
from cef.retrieve.visibility import guard_result


def validate_query(state: EngineView, query: GraphQuery) -> None:
    g = state.graph
    for name in query.traversal.relation_types:
        if not g.known_relation(name):
            raise UnknownRelationTypeError(name, "traversal.relation_types", list(g.rel_types))


#: how often one query steps aside for waiting writes before it holds the engine to its end
MAX_YIELDS = 3


def retrieve(state: EngineView, query: GraphQuery, strategies: StrategyRegistry) -> SearchResult:
    """Run ``query`` along the fallback chain ``strategies`` gives its strategy.

    A write never waits for a long read: reads share the engine and a write needs it alone, so
    when a write arrives, the read running graph work lets go at its next check (the same checks
    as the time limit), the write goes, and the read starts again, seeing it. A read steps aside
    at most :data:`MAX_YIELDS` times, then holds the engine to its end (a stream of writes cannot
    starve it); its time limit counts from its first hold."""
    t0 = time.perf_counter()
    deadline: list[float] = []  # when the time limit passes: set at the first hold of the engine
    for attempt in range(MAX_YIELDS + 1):
        try:
            return _retrieve_once(state, query, strategies, t0, deadline, yields=attempt < MAX_YIELDS)
        except YieldToWriter:
            continue
    raise AssertionError("the last attempt does not yield")  # pragma: no cover


def _retrieve_once(
    state: EngineView,
    query: GraphQuery,
    strategies: StrategyRegistry,
    t0: float,
    deadline: list[float],
    *,
    yields: bool,
) -> SearchResult:
    with state.reading():
        validate_query(state, query)
        qc = QueryContext(state=state, query=query, started=t0, yields=yields)
        if query.deadline_ms is not None:  # counted from when the engine is ours, not from the wait
            if not deadline:
                deadline.append(time.perf_counter() + query.deadline_ms / 1000)
            qc.deadline = deadline[0]
        plan = strategies.plan(query)
        done: set[str] = set()
        tried: list[str] = []
        used = strategies.chain(query.strategy)[0]
        best: tuple[list[RankedChunk], SearchStrategy] | None = None
        try:
            for strategy, stages in plan:
                fn = strategies.function(strategy)
                if fn is None:
                    continue
                for stage in stages:  # each once, right before the first strategy that needs it
                    if stage.name not in done and stage.applies(qc):
                        done.add(stage.name)
                        stage.run(qc)
                attempt = fn(qc)
                if attempt is None:  # does not apply to this knowledge base: not a fallback
                    continue
                if best is None or len(attempt) > len(best[0]):
                    best = (attempt, strategy)
                if len(attempt) >= max(query.min_results, 1):
                    best = (attempt, strategy)
                    break
                tried.append(f"{strategy.value}: {len(attempt)} result(s) < min_results {query.min_results}")
                qc.check_deadline(strategy.value)
            else:
                # nothing reached min_results: keep the attempt that found the most
                qc.notes.append("no strategy reached min_results; returning the largest result set")
        except DeadlineExceeded as exc:
            best = _after_deadline(qc, exc, tried)
        results: list[RankedChunk] = []
        if best is not None:
            results, used = best
        results = _dedupe(results)[: query.top_k]
        if query.max_token_budget is not None:
            results = _within_budget(qc, results, query.max_token_budget)
        results = assess_relevance(qc, results)  # relevance in [0, 1]; "nothing matched" below the threshold
        # the one place the stages' records become the result's metadata
        meta = qc.stages.report(query)
        meta["anchors"] = [
            {"node_id": a.node_id, "score": round(a.score, 4), "how": a.how, "target": a.target}
            for a in qc.anchors
        ]
        if qc.notes:
            meta["notes"] = qc.notes
        result = SearchResult(
            query=query.query,
            results=results,
            nodes=qc.answer_nodes,
            strategy=used,
            reasoning_context=qc.reasoning if query.include_reasoning_context else None,
            enhanced_query=qc.enhanced_query,
            duration_ms=(time.perf_counter() - t0) * 1000,
            fallbacks=tried,
            metadata=meta,
        )
        # the one exit of every strategy: nothing out of the query's scope leaves the engine
        return guard_result(state, result, query.scope)


def _after_deadline(
    qc: QueryContext, exc: DeadlineExceeded, tried: list[str]
) -> tuple[list[RankedChunk], SearchStrategy]:
    """The deadline passed during graph work: answer by vector search (BM25 without vectors)."""
    limit = qc.query.deadline_ms
    note = f"graph: exploration exceeded the {limit} ms time limit (during {exc.stage}); answered by vector search"
    tried.insert(0, note)
    qc.notes.insert(0, note)
    qc.stages.timed_out = True
    qc.deadline = None  # the fallback itself runs to the end
    qc.yields = False
    qc.reached.clear()
    qc.reasoning = None
    qc.enhanced_query = None
    qc.answer_nodes = []
    results = vector_search(qc)
    if len(results) >= max(qc.query.min_results, 1):
        return results, SearchStrategy.VECTOR
    words = bm25_search(qc)
    return (words, SearchStrategy.BM25) if len(words) > len(results) else (results, SearchStrategy.VECTOR)


def warm(state: EngineView, *, path_texts: int = 10_000) -> dict[str, float]:
    """Load now what the first query would otherwise load inside its time: the embedding model,
    the entity index and query NER, and the vectors of the relation paths the schema allows (up
    to ``path_texts``). Returns seconds per part."""
    from cef.retrieve.entities import entity_index, link_query_entities
    from cef.retrieve.pathwords import default_lemmatizer
    from cef.retrieve.presets import EntityLinkingSettings

    out: dict[str, float] = {}
    t = time.perf_counter()
    if state.embedder is not None:
        state.embedder.embed_query("warm up")
        out["embedder"] = time.perf_counter() - t
    with state.reading():
        t = time.perf_counter()
        index = entity_index(state)
        link_query_entities(index, state, "Warm up the engine in Paris.", EntityLinkingSettings())
        index.resolver  # noqa: B018 - the misspelled / partial name tiers, made on first use
        index.written_names()
        out["entities"] = time.perf_counter() - t
        if typed_relations(state):
            t = time.perf_counter()
            default_lemmatizer()
            path_vectors(state, embed=path_texts)
            out["paths"] = time.perf_counter() - t
    return {k: round(v, 3) for k, v in out.items()}


def prepare_entities(state: EngineView, progress: Callable[[str, int, int], None] | None = None) -> bool:
    """Build (and save) the entity index now when the graph is big enough to keep it in a file;
    False (nothing done) for a small graph. Call it while holding ``state.reading()``."""
    from cef.retrieve import entities

    if not entities.kept_in_file(state.graph):
        return False
    if progress is not None:
        progress("indexing entity names", 0, 1)
    entities.entity_index(state)
    if progress is not None:
        progress("indexing entity names", 1, 1)
    return True


def _within_budget(qc: QueryContext, results: list[RankedChunk], budget: int) -> list[RankedChunk]:
    """The best results whose chunk texts fit ``budget`` tokens together (the default counter)."""
    from cef.context.tokens import make_token_counter

    counter = make_token_counter()
    kept: list[RankedChunk] = []
    used = 0
    for r in results:
        n = counter.count(r.chunk.content)
        if used + n > budget:
            continue
        kept.append(r)
        used += n
    qc.stages.token_budget = TokenBudget(budget, used, len(results) - len(kept))
    if len(kept) < len(results):
        qc.notes.append(f"token budget {budget}: kept {len(kept)} of {len(results)} chunks ({used} tokens)")
    return kept


def _dedupe(results: list[RankedChunk]) -> list[RankedChunk]:
    seen: set[str] = set()
    out = []
    for r in results:
        if r.chunk.id not in seen:
            seen.add(r.chunk.id)
            out.append(r)
    return out
