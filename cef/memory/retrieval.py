"""``retrieve_context``: understand → anchors → priority expansion → beliefs → assembly.

1. **Understand** each question (:mod:`cef.memory.understand`).
2. **Anchors**: nodes named in the question (names, aliases, synonyms), the
   scope's own node for "my"/"this student", extractor mentions resolved by
   meaning, and the nearest nodes to the whole question by vector (restricted
   to hinted types too); chunks found by vector and BM25 lend their nodes as
   weaker anchors. Everything is scope-filtered.
3. **Expand** best-first from the anchors with a priority queue, bounded by
   ``max_depth`` and ``max_nodes``: a neighbour's priority is its parent's ×
   hop decay × edge confidence × a boost for relations and types the question
   names. Edges are filtered by scope and time (current state, as known at T,
   or all history).
4. **Beliefs**: beliefs about the reached nodes (and belief-kind nodes
   reached), kept above the confidence threshold; contested ones become
   conflicts with the observations on each side.
5. **Assemble** facts (properties, relations among reached nodes, the best
   passage), beliefs, conflicts and what changed in the window into a
   :class:`~cef.memory.bundle.ContextBundle` packed to ``max_tokens``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from cef.context.items import ContextChunk
from cef.errors import ValidationError
from cef.memory.bundle import (
    ContextBundle,
)
from cef.memory.temporal import TemporalConstraint
from cef.memory.understand import QueryUnderstanding, understand_query

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase
    from cef.memory.view import MemoryRetrievalView


from cef.memory.assemble import assemble
from cef.memory.constraints import RetrievalConstraints, Run, normalize_scope
from cef.memory.walk import expand, find_anchors, query_context

__all__ = ["RetrievalConstraints", "conversation_passages", "normalize_scope", "retrieve_context"]

#: conversation turns asked of the engine per question
PASSAGES_PER_QUERY = 10


def conversation_passages(kb: KnowledgeBase, queries: Sequence[str], scope: str | None) -> list[ContextChunk]:
    """The conversation turns ``kb.retrieve`` (the engine's one route, defaults) ranks for each
    question, best first, each once (``queries``: which questions found it); other chunks are
    not passages of the memory's context (its facts carry their excerpts)."""
    from cef.model import GraphQuery
    from cef.retrieve.dialogue import is_turn

    found: dict[str, ContextChunk] = {}
    for n, q in enumerate(queries, 1):
        res = kb.retrieve(GraphQuery(query=q, scope=scope, top_k=PASSAGES_PER_QUERY, min_results=1))
        for r in res.results:
            if not is_turn(r.chunk):
                continue
            item = found.get(r.chunk.id)
            if item is None:
                found[r.chunk.id] = ContextChunk(
                    id=r.chunk.id,
                    content=r.chunk.content,
                    score=round(r.score, 4),
                    node_id=r.chunk.node_id,
                    queries=[n],
                    why=res.strategy.value,
                )
            elif n not in item.queries:
                item.queries.append(n)
    return list(found.values())


def _merge_temporal(
    constraints: RetrievalConstraints, us: Sequence[QueryUnderstanding]
) -> TemporalConstraint:
    """Explicit constraints win; otherwise the questions' own hints."""
    if constraints.temporal is not None:
        return constraints.temporal
    mode = "current"
    as_of: datetime | None = None
    since: datetime | None = None
    for u in us:
        h = u.temporal
        if h.mode == "as_of" and h.as_of is not None:
            mode, as_of = "as_of", h.as_of
        elif h.mode == "history" and mode == "current":
            mode = "history"
        if h.since is not None:
            since = h.since if since is None else min(since, h.since)
    return TemporalConstraint(mode=mode, as_of=as_of, since=since)  # type: ignore[arg-type]


def retrieve_context(
    memory: MemoryRetrievalView, query: str | Sequence[str], constraints: RetrievalConstraints | None = None
) -> ContextBundle:
    """The memory's one retrieval entry point (see the module docstring)."""
    t_start = time.perf_counter()
    c = constraints or RetrievalConstraints()
    queries = [query] if isinstance(query, str) else list(query)
    if not queries or not all(isinstance(q, str) and q.strip() for q in queries):
        raise ValidationError("retrieve_context needs a question (or a list of questions) with some text")
    if any(len(q) > 10_000 for q in queries):
        raise ValidationError("a question is limited to 10000 characters")
    scope = normalize_scope(c.scope)
    kb = memory.kb
    memory.refresh()
    with kb.state.reading():
        now = memory.now()
        t0 = time.perf_counter()
        us = [understand_query(memory, q, scope, now) for q in queries]
        temporal = _merge_temporal(c, us)
        g = kb.state.graph
        if temporal.mode == "as_of":
            flt = g.edge_filter(valid_at=temporal.as_of, known_at=temporal.as_of, scope=scope)
        elif temporal.mode == "history":
            flt = g.edge_filter(scope=scope)
        else:
            flt = g.edge_filter(valid_at=now, scope=scope)
        run = Run(memory, c, scope, now, temporal, us, flt, " ".join(queries))
        run.timings["understand"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        qc = query_context(run)
        anchors = find_anchors(run, qc)
        run.timings["anchors"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        reached = expand(run, qc)
        run.timings["expand"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        candidates, temporal_ctx = assemble(run, reached)
        run.timings["assemble"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    passages = conversation_passages(kb, queries, scope)
    run.timings["passages"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    bundle = ContextBundle.assemble(
        query=queries,
        candidates=[*candidates, *(("passages", p) for p in passages)],
        temporal=temporal_ctx if c.include_temporal_context else None,
        max_tokens=c.max_tokens,
        counter=memory.token_counter,
        fmt=c.format,
        scope=scope,
        understanding={
            "queries": [u.summary() for u in us],
            "anchors": [{"node_id": a.node_id, "score": round(a.score, 4), "how": a.how} for a in anchors],
        },
    )
    run.timings["pack"] = (time.perf_counter() - t0) * 1000
    run.timings["embed"] = run.embed_ms
    run.timings["total"] = (time.perf_counter() - t_start) * 1000
    bundle.timings_ms = {k: round(v, 3) for k, v in run.timings.items()}
    if c.record_usage:
        shown = [f.node_id for f in bundle.facts()] + [b.belief_id for b in bundle.beliefs]
        if shown:
            memory.record_feedback(shown, "used")
    return bundle
