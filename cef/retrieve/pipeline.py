"""``retrieve(GraphQuery)`` as a template: validate → time → stages → fallback chain → wrap.

Strategies are plain functions ``(QueryContext) -> list[RankedChunk]`` in the
knowledge base's :class:`~cef.retrieve.strategies.StrategyRegistry`, so new ones
plug in without touching the template. Each strategy names the chain it falls
back along when it returns fewer than ``min_results`` chunks. A strategy returns
``None`` when it does not apply to this knowledge base (PPR where no text was
turned into a graph): it is skipped without counting as a fallback.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable

from cef.errors import UnknownRelationTypeError
from cef.model import GraphQuery, RankedChunk, SearchResult, SearchStrategy
from cef.retrieve.anchors import resolve_anchors
from cef.retrieve.context import DeadlineExceeded, QueryContext, YieldToWriter
from cef.retrieve.expand import expand_anchors
from cef.retrieve.patterns import match_query_patterns
from cef.retrieve.ports import EngineView
from cef.retrieve.relevance import assess_relevance
from cef.retrieve.route import has_hints
from cef.retrieve.search import bm25_search, vector_search
from cef.retrieve.stagestate import TokenBudget
from cef.retrieve.strategies import StrategyRegistry
from cef.retrieve.visibility import guard_result


def _needs_prepare(strategies: StrategyRegistry, strategy: SearchStrategy, qc: QueryContext) -> bool:
    """Anchors and traversal run before graph strategies, and before ``auto`` when the query has hints."""
    return strategies.needs_graph(strategy) or (strategy is SearchStrategy.AUTO and has_hints(qc))


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
        chain = strategies.chain(query.strategy)
        if SearchStrategy.AUTO in chain or SearchStrategy.PATHS in chain:
            path_vectors(state)  # the saved path-text vectors, read once per engine
        graph_chain = any(_needs_prepare(strategies, s, qc) for s in chain)
        prepared = False

        def prepare() -> None:
            """Anchors and traversal, once, right before the first strategy that needs them."""
            nonlocal prepared
            if prepared:
                return
            prepared = True
            resolve_anchors(qc)
            qc.check_deadline("anchors")
            ctx = expand_anchors(qc)
            qc.check_deadline("expansion")
            if ctx is not None and ctx.context_keywords:
                extra = [k for k in ctx.context_keywords if k not in query.query.lower()][:10]
                qc.enhanced_query = f"{query.query} {' '.join(extra)}".strip() if extra else query.query

        results: list[RankedChunk] = []
        tried: list[str] = []
        used = chain[0]
        best: tuple[list[RankedChunk], SearchStrategy] | None = None
        try:
            if query.patterns:  # matched paths rank first; the requested chain is the fallback
                if graph_chain:
                    prepare()
                chain = [SearchStrategy.PATTERN, *(s for s in chain if s is not SearchStrategy.PATTERN)]
                match_query_patterns(qc, anchors_resolved=graph_chain)
                qc.check_deadline("patterns")
            for strategy in chain:
                fn = strategies.function(strategy)
                if fn is None:
                    continue
                if _needs_prepare(strategies, strategy, qc):
                    prepare()
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
        if best is not None:
            results, used = best
        results = _dedupe(results)[: query.top_k]
        if query.max_token_budget is not None:
            results = _within_budget(qc, results, query.max_token_budget)
        results = assess_relevance(qc, results)  # relevance in [0, 1]; "nothing matched" below the threshold
        meta = qc.stages.report()  # the one place the stages' records become the result's metadata
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
        if _typed_relations(state):
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


#: per engine, how many relation-path text vectors its path scorer held after the last read or
#: save of ``<db>-path-text-vectors`` (see :func:`path_vectors`)
_paths_on_disk: weakref.WeakKeyDictionary[EngineView, int] = weakref.WeakKeyDictionary()
_paths_lock = threading.Lock()


def _typed_relations(state: EngineView) -> bool:
    """Whether the schema has relations of its own (beyond the text graph's), i.e. relation paths."""
    from cef.schema.textgraph import TEXT_GRAPH_RELATIONS

    return any(name not in TEXT_GRAPH_RELATIONS for name in state.graph.relations.names)


def path_vectors(state: EngineView, *, embed: int = 0) -> int:
    """Give the relation-path scorer the path-text vectors saved beside the store
    (``<db>-path-text-vectors``, read once per engine), so that a query in a new process embeds
    its question and not the schema's paths. With ``embed`` > 0, the texts of up to that many
    paths the schema allows are embedded now (those not saved yet) and saved. Returns how many
    text vectors the scorer holds (0: no embedder or no typed relations). Call it while holding
    ``state.reading()``."""
    from cef.retrieve.pathscore import path_scorer

    emb = state.embedder
    if emb is None or not _typed_relations(state):
        return 0
    scorer = path_scorer(state)
    saved = state.vectors_path("path-text")
    with _paths_lock:
        if state not in _paths_on_disk:
            _paths_on_disk[state] = scorer.load_vectors(saved, emb.name) if saved is not None else 0
    if embed > 0:
        scorer.prepare(lambda texts: emb.embed(list(texts)), limit=embed)
        save_path_vectors(state)
    return len(scorer.vectors)


def save_path_vectors(state: EngineView) -> bool:
    """Save the path-text vectors beside the store when the scorer holds more than were read or
    saved last (questions embed the paths they reach that were not saved); False: nothing to do."""
    from cef.retrieve.pathscore import path_scorer

    emb, saved = state.embedder, state.vectors_path("path-text")
    with _paths_lock:
        known = _paths_on_disk.get(state)
    if emb is None or saved is None or known is None:
        return False  # this engine never read them: nothing of the scorer's came from or goes to disk
    with state.reading():
        scorer = path_scorer(state)
    held = len(scorer.vectors)
    if held <= known or not scorer.save_vectors(saved, emb.name):
        return False
    with _paths_lock:
        _paths_on_disk[state] = held
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
