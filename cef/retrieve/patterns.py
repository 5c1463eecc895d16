"""Stage 2b: match ``GraphQuery.patterns`` and rank the chunks on the matched paths.

:func:`match_query_patterns` runs each pattern or combinator of the query with
a :class:`~cef.patterns.PatternExecutor` (entry points: the query's resolved
anchors, for patterns without a start of their own) and records the matched
paths in the reasoning context. :func:`pattern_search` is the ``PATTERN``
strategy: chunks linked to the end nodes of matched paths first, then chunks
of the other nodes on them, each explained by its path.

One :class:`PatternRunner` per engine keeps the executor and its node cache:
the engine's write listener drops the nodes this process writes, the change
feed the nodes other processes wrote (their commits are replayed, which no
listener sees), and a reloaded graph gets a new executor.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from cef.model import Explanation, GraphPath, Node, RankedChunk, ReasoningContext, SearchStrategy
from cef.model.query import MatchedGraphPath
from cef.patterns import (
    CachedNodeLookup,
    CombinatorType,
    GraphPattern,
    MatchedPath,
    PatternExecutor,
    PatternResult,
    QueryCombinator,
    RankingStrategy,
    SimilarityFn,
)
from cef.retrieve.anchors import resolve_anchors
from cef.retrieve.context import QueryContext
from cef.retrieve.ports import EngineView
from cef.retrieve.search import bm25_hits
from cef.retrieve.stagestate import PatternMatches, PatternsInfo
from cef.store.base import WriteSet

#: chunks of end nodes score in (END_TIER, 1], chunks of other nodes on a path in (0, END_TIER]
END_TIER = 0.5
#: weight of the path's rank against the chunk's text similarity inside a tier
PATH_WEIGHT = 0.7

PatternQuery = GraphPattern | QueryCombinator


class PatternRunner:
    """A :class:`PatternExecutor` over an engine's graph, with a :class:`CachedNodeLookup` kept fresh.

    Callers hold the engine lock (``state.reading()``) while they run patterns.
    """

    def __init__(self, state: EngineView) -> None:
        self._state = weakref.ref(state)
        self._executor: PatternExecutor | None = None
        self._lookup: CachedNodeLookup | None = None
        self._seq = state.seq
        self._lock = threading.Lock()
        state.listeners.append(self._on_write)

    @property
    def state(self) -> EngineView:
        st = self._state()
        if st is None:  # pragma: no cover - the runner lives only as long as its engine
            raise RuntimeError("the engine of this pattern runner was closed and collected")
        return st

    @property
    def lookup(self) -> CachedNodeLookup | None:
        """The node cache of the current executor (None before the first run)."""
        return self._lookup

    def _fetch(self, ids: Sequence[str]) -> list[Node]:
        return self.state.get_nodes(ids)

    def executor(self) -> PatternExecutor:
        """The executor for the engine's current graph (rebuilt when the graph object changes)."""
        st = self.state
        with self._lock:
            ex = self._executor
            if ex is None or ex.graph is not st.graph:
                self._lookup = CachedNodeLookup(st.graph, self._fetch)
                emb = st.embedder
                ex = self._executor = PatternExecutor(
                    st.graph,
                    self._lookup,
                    embed_query=emb.embed_query if emb is not None else None,
                    node_vectors=st.node_vectors,
                )
            elif st.seq != self._seq and self._lookup is not None:
                self._forget_changed(st, self._lookup)
            self._seq = st.seq
            return ex

    def _forget_changed(self, st: EngineView, lookup: CachedNodeLookup) -> None:
        """Drop the nodes changed since we last looked: commits replayed from other processes reach no
        listener (an own write may have replayed some first), so read them from the change feed."""
        _, changes = st.store.changes_since(self._seq)
        if len(changes) > self.MAX_REPLAYED or any(c.kind == "reset" for c in changes):
            lookup.invalidate()
            return
        # new rows ("insert_range") were never cached under their id
        lookup.invalidate([c.id for c in changes if c.kind == "node" and c.op != "insert_range"])

    #: above this many changes since the last run, drop the whole node cache instead
    MAX_REPLAYED = 10_000

    def _on_write(self, writes: WriteSet) -> None:
        with self._lock:
            if self._lookup is not None:
                touched = [
                    *(n.id for n in writes.nodes),
                    *(n.id for n in writes.updated_nodes),
                    *writes.delete_nodes,
                ]
                if touched:
                    self._lookup.invalidate(touched)

    def run(
        self,
        query: PatternQuery,
        *,
        start_nodes: Sequence[str] | None = None,
        query_text: str | None = None,
        similarity: SimilarityFn | None = None,
    ) -> PatternResult:
        """Match one pattern or combinator (see :meth:`PatternExecutor.run`)."""
        return self.executor().run(
            query, start_nodes=start_nodes, query_text=query_text, similarity=similarity
        )


_RUNNERS: weakref.WeakKeyDictionary[EngineView, PatternRunner] = weakref.WeakKeyDictionary()
_RUNNERS_LOCK = threading.Lock()


def runner_for(state: EngineView) -> PatternRunner:
    """The engine's pattern runner (created, and its write listener registered, on first use)."""
    with _RUNNERS_LOCK:
        runner = _RUNNERS.get(state)
        if runner is None:
            runner = _RUNNERS[state] = PatternRunner(state)
        return runner


def needs_entry_points(query: PatternQuery) -> bool:
    """True when a pattern has no start of its own and so starts from the caller's entry points (the first
    of a SEQUENTIAL combinator; any of an INTERSECTION or UNION, whose patterns all start afresh)."""
    if not isinstance(query, QueryCombinator):
        heads = [query]
    elif query.type is CombinatorType.SEQUENTIAL:
        heads = query.patterns[:1]
    else:
        heads = query.patterns
    return any(not (p.start.node_ids or p.start.label or p.steps[0].source_label) for p in heads)


def _similarity(qc: QueryContext) -> SimilarityFn | None:
    vec = qc.query_vector
    st = qc.state
    if vec is None or not len(st.node_vectors):
        return None
    ids = st.graph.node_ids

    def sim(positions: np.ndarray) -> np.ndarray:
        return np.asarray(st.node_vectors.similarities(vec, [ids[p] for p in positions.tolist()]))

    return sim


def _wants_similarity(query: PatternQuery) -> bool:
    first = query.patterns[0] if isinstance(query, QueryCombinator) else query
    ranking = query.effective_ranking if isinstance(query, QueryCombinator) else query.ranking
    weights = query.effective_weights if isinstance(query, QueryCombinator) else query.hybrid_weights
    if first.semantic_query:  # the executor embeds the pattern's own text
        return False
    return ranking is RankingStrategy.SEMANTIC_SCORE or (
        ranking is RankingStrategy.HYBRID and weights.semantic > 0
    )


def _merge(results: Sequence[PatternResult]) -> list[MatchedPath]:
    """Paths of several results, rank by rank (each result's best first), duplicates dropped."""
    out: list[MatchedPath] = []
    seen: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    longest = max((len(r.paths) for r in results), default=0)
    for i in range(longest):
        for r in results:
            if i < len(r.paths):
                p = r.paths[i]
                key = (tuple(p.node_ids), tuple(p.edge_ids))
                if key not in seen:
                    seen.add(key)
                    out.append(p)
    return out


def to_graph_path(path: MatchedPath) -> MatchedGraphPath:
    """A matched path as the reasoning context carries it."""
    return MatchedGraphPath(
        **path.to_graph_path().model_dump(),
        pattern_id=path.pattern_id,
        score=path.score,
        explanation=path.explanation,
    )


def at_query_time(query: PatternQuery, when: datetime) -> PatternQuery:
    """The pattern (or each pattern of a combinator) with ``valid_at`` set to ``when`` where it has none."""
    if isinstance(query, QueryCombinator):
        inner = [at_query_time(p, when) for p in query.patterns]
        return query.model_copy(update={"patterns": inner})
    if query.valid_at is not None:
        return query
    return query.model_copy(update={"valid_at": when})


def match_query_patterns(qc: QueryContext) -> PatternMatches:
    """Run the query's patterns; record the paths in ``qc.reasoning`` and in ``qc.stages.patterns``.

    Patterns without a start of their own start from the query's anchors;
    they are resolved here when such a pattern needs them and no stage resolved them yet.
    Like the rest of retrieval, patterns walk the edges valid at the query's
    ``as_of`` (default: now) unless they set their own ``valid_at``.
    """
    runner = runner_for(qc.state)
    if not qc.stages.anchors_resolved and any(needs_entry_points(pq) for pq in qc.query.patterns):
        resolve_anchors(qc)
        qc.stages.anchors_resolved = True
    entry = [a.node_id for a in qc.anchors]
    sim: SimilarityFn | None = None
    results: list[PatternResult] = []
    for i, pq in enumerate(qc.query.patterns):
        name = pq.patterns[0].pattern_id if isinstance(pq, QueryCombinator) else pq.pattern_id
        if needs_entry_points(pq) and not entry:
            qc.notes.append(
                f"pattern {i + 1} ('{name}') has no start of its own and the query resolved no anchors: skipped"
            )
            continue
        if sim is None and _wants_similarity(pq):
            sim = _similarity(qc)
        timed = at_query_time(pq, qc.query.as_of or qc.now)
        result = runner.run(timed, start_nodes=entry or None, query_text=qc.query.query, similarity=sim)
        results.append(result)
        qc.notes.extend(f"pattern '{name}': {w}" for w in result.warnings)
        if result.timed_out:
            qc.notes.append(f"pattern '{name}' hit its time limit: its paths are partial")
    matches = PatternMatches(_merge(results), results)
    if qc.reasoning is None:
        qc.reasoning = ReasoningContext()
    qc.reasoning.matched_paths = [to_graph_path(p) for p in matches.paths]
    qc.stages.patterns = PatternsInfo(matches, round(sum(r.elapsed_ms for r in results), 3))
    return matches


@dataclass
class _Owner:
    """The best reason a node is on the matched paths."""

    end: bool  # the node ends a path
    rank: int  # rank of the best path with the node in that role
    path: MatchedPath


def _owners(paths: Sequence[MatchedPath]) -> dict[str, _Owner]:
    """Every node on a path: end nodes (by their best path) before the other nodes (by theirs)."""
    owners: dict[str, _Owner] = {}
    for rank, p in enumerate(paths):
        end = p.end_node_id
        cur = owners.get(end)
        if cur is None or not cur.end:
            owners[end] = _Owner(True, rank, p)
    for rank, p in enumerate(paths):
        for nid in reversed(p.node_ids[:-1]):  # nearest the end first
            owners.setdefault(nid, _Owner(False, rank, p))
    return owners


def _path_strength(paths: Sequence[MatchedPath]) -> list[float]:
    """Each path's score scaled to 0..1 over the matched paths (all 1 when they tie)."""
    if not paths:
        return []
    scores = [p.score for p in paths]
    lo, hi = min(scores), max(scores)
    if hi - lo < 1e-12:
        return [1.0] * len(paths)
    return [(s - lo) / (hi - lo) for s in scores]


def _text_scores(qc: QueryContext, chunk_ids: list[str]) -> tuple[dict[str, float], str | None]:
    """Similarity of each chunk to the query: cosine with an embedder, else BM25 scaled to the best hit."""
    st = qc.state
    vec = qc.query_vector
    if vec is not None and len(st.chunk_vectors):
        sims = st.chunk_vectors.similarities(vec, chunk_ids)
        return {c: max(0.0, float(s)) for c, s in zip(chunk_ids, sims, strict=True)}, "vector"
    hits = bm25_hits(qc, qc.query.query, max(200, qc.query.top_k * 20))
    top = hits[0][1] if hits else 0.0
    if top <= 0:
        return {}, None
    return {cid: s / top for cid, s in hits}, "bm25"


def pattern_search(qc: QueryContext) -> list[RankedChunk]:
    """The PATTERN strategy: chunks linked to nodes on the matched paths, end nodes first."""
    info = qc.stages.patterns
    if info is None or not info.matches.paths:
        return []
    paths = info.matches.paths
    owners = _owners(paths)
    linked = qc.state.store.chunks_for_nodes(list(owners))
    chunk_owner: dict[str, str] = {}
    for nid in owners:  # end nodes first, so a chunk shared by two nodes belongs to the better one
        for cid in linked.get(nid, ()):
            chunk_owner.setdefault(cid, nid)
    if not chunk_owner:
        return []
    chunks = qc.chunks(list(chunk_owner))
    candidates = [c for c in chunk_owner if c in chunks]
    text, text_kind = _text_scores(qc, candidates)
    strength = {id(p): s for p, s in zip(paths, _path_strength(paths), strict=True)}
    graph_paths: dict[int, GraphPath] = {}
    scored: list[tuple[float, int, str, RankedChunk]] = []
    for cid in candidates:
        nid = chunk_owner[cid]
        own = owners[nid]
        p = own.path
        path_score = strength[id(p)]
        t = text.get(cid, 0.0)
        inner = PATH_WEIGHT * path_score + (1 - PATH_WEIGHT) * min(1.0, t)
        score = END_TIER + (1 - END_TIER) * inner if own.end else END_TIER * inner
        gp = graph_paths.get(id(p))
        if gp is None:
            gp = graph_paths[id(p)] = p.to_graph_path()
        name = p.node_names[p.node_ids.index(nid)] if p.node_names else nid
        role = "end node" if own.end else f"node {p.node_ids.index(nid) + 1} of {len(p.node_ids)}"
        explanation = Explanation(
            strategy=SearchStrategy.PATTERN,
            anchors=[p.start_node_id],
            path=gp,
            vector_score=t if text_kind == "vector" else None,
            bm25_score=t if text_kind == "bm25" else None,
            graph_score=path_score,
            rank_sources={"pattern": own.rank + 1},
            entities=[name],
            notes=[
                f"linked to {name!r}, the {role} of matched path {own.rank + 1}: {p.to_path_string()}",
                p.explanation,
            ],
        )
        scored.append(
            (score, own.rank, cid, RankedChunk(chunk=chunks[cid], score=score, explanation=explanation))
        )
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    return [r for _, _, _, r in scored[: qc.query.top_k]]
