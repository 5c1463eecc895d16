"""The ``auto`` route: every applicable source, fused by weighted reciprocal rank.

One route answers every question by default, whatever the knowledge base holds:

* **paths** — typed relation-path reasoning over curated edges
  (:mod:`cef.retrieve.relpaths`), where the graph has typed relations and the
  question names (or the query targets) a node that has some;
* **hybrid** — the anchored traversal (:func:`~cef.retrieve.search.hybrid_search`),
  when the query carries hints (targets or relation types): hints are always
  used, never dropped, and when the steered sources (paths, hybrid) find at
  least ``min_results`` chunks they answer alone (the rest would reach outside
  the walk the query asked for);
* **ppr** — personalized PageRank over the text graph (MENTIONS edges), where
  ingest turned text into one;
* **vector** and **bm25** — unless PPR was seeded by entities the question names (PPR then
  carries the dense signal itself); vector only with an embedder.

When the chunks a question finds are conversation turns (see :mod:`cef.retrieve.dialogue`) and
the query has no hints, the turns are ranked by that module's stage: vector and BM25 fused, with
the session and speaker priors of dialogue.

Each source ranks chunks; a chunk's fused score is
``Σ weight(source) / (fuse_k + rank in source)``. The weights say what the
graph holds: a source that does not apply (no typed edges, no text graph, no
hints) weighs nothing, and when a curated graph gave a confident path answer
(:meth:`~cef.retrieve.stagestate.PathsInfo.confident`: the question names the best path, by
:class:`~cef.retrieve.presets.AutoSettings`) the paths source weighs ``fuse_paths_confident``.
Every fused chunk's explanation carries the route (``strategy=auto``), its
rank in each source (``rank_sources``) and each source's share of its score
(``shares``); the path and anchors come from the source that explains it best
(paths, then hybrid, then ppr).
"""

from __future__ import annotations

from collections.abc import Callable

from cef.model import Explanation, GraphQuery, RankedChunk, SearchStrategy
from cef.retrieve.context import QueryContext
from cef.retrieve.presets import AutoSettings, PathSettings, settings_for
from cef.retrieve.stagestate import RouteInfo, RouteSource

__all__ = ["auto_search", "fuse", "has_hints"]

#: the sources' order of preference for the path that explains a fused chunk
_EXPLAINS = ("paths", "path_context", "path_anchor", "hybrid", "ppr", "vector", "bm25")


def has_hints(qc: QueryContext) -> bool:
    """The query steers the graph walk: explicit targets or relation types."""
    q = qc.query
    return bool(q.targets or q.traversal.relation_types)


def fuse(
    sources: dict[str, list[RankedChunk]], weights: dict[str, float], rrf_k: float, top: int
) -> list[RankedChunk]:
    """Weighted reciprocal-rank fusion of ranked chunk lists (each deduplicated by chunk id)."""
    score: dict[str, float] = {}
    parts: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    best: dict[str, dict[str, RankedChunk]] = {}
    for name, ranked in sources.items():
        w = weights.get(name, 0.0)
        if w <= 0:
            continue
        seen: set[str] = set()
        for rank, rc in enumerate(ranked, 1):
            cid = rc.chunk.id
            if cid in seen:
                continue
            seen.add(cid)
            part = w / (rrf_k + rank)
            score[cid] = score.get(cid, 0.0) + part
            parts.setdefault(cid, {})[name] = part
            ranks.setdefault(cid, {})[name] = rank
            best.setdefault(cid, {})[name] = rc
    order = sorted(score, key=lambda c: (-score[c], c))[:top]
    out: list[RankedChunk] = []
    for cid in order:
        by_source = best[cid]
        lead = next(s for s in (*_EXPLAINS, *by_source) if s in by_source)
        base = by_source[lead].explanation
        total = score[cid]
        expl = Explanation(
            strategy=SearchStrategy.AUTO,
            anchors=base.anchors,
            path=base.path,
            vector_score=_first(by_source, lambda e: e.vector_score),
            bm25_score=_first(by_source, lambda e: e.bm25_score),
            graph_score=base.graph_score,
            rank_sources=ranks[cid],
            shares={s: round(v / total, 4) for s, v in sorted(parts[cid].items(), key=lambda kv: -kv[1])},
            entities=base.entities,
            notes=[f"auto: {_share_text(parts[cid], total)}", *base.notes],
        )
        out.append(RankedChunk(chunk=by_source[lead].chunk, score=round(total, 6), explanation=expl))
    return out


def _first(by_source: dict[str, RankedChunk], get: Callable[[Explanation], float | None]) -> float | None:
    for rc in by_source.values():
        v = get(rc.explanation)
        if v is not None:
            return v
    return None


def _share_text(parts: dict[str, float], total: float) -> str:
    return ", ".join(f"{s} {100 * v / total:.0f}%" for s, v in sorted(parts.items(), key=lambda kv: -kv[1]))


def auto_search(qc: QueryContext) -> list[RankedChunk]:
    """Run every source that applies and fuse them (see the module doc)."""
    from cef.retrieve.dialogue import dialogue_search
    from cef.retrieve.ppr import ppr_search
    from cef.retrieve.relpaths import relation_path_search
    from cef.retrieve.search import bm25_search, hybrid_search, vector_search

    s = settings_for(AutoSettings, qc.query)
    if not has_hints(qc):
        turns = dialogue_search(qc)  # conversation turns: ranked by session, speaker and reply context
        if turns is not None:
            return turns
    q = qc.query
    depth = max(q.top_k, s.fuse_depth)
    deep = q.model_copy(update={"top_k": depth})
    sources: dict[str, list[RankedChunk]] = {}
    weights: dict[str, float] = {}

    paths = relation_path_search(qc)
    info = qc.stages.paths
    if paths and info is not None:
        # answers' own chunks, the chunks of the nodes on their paths (supporting context, weighed
        # by the path strategy's path_chunk_factor) and of the anchors (anchor_chunk_factor: the text
        # sources find those by the question's words too, so a chunk linking the anchor to the
        # answers ranks before the anchor's own)
        weight = s.fuse_paths_confident if info.confident(s) else s.fuse_paths
        if not info.named:  # no question word names a relation of the best path: a guess
            weight = s.fuse_paths_unnamed
        ps = settings_for(PathSettings, q)
        # the answers' chunks up to the first of another role lead (the answers' own chunks, and with
        # no chain their further ones too); the rest is context in the paths' order: the chain of
        # nodes that leads to the answers first, then the answers' second chunks, other path nodes'
        lead = next((i for i, rc in enumerate(paths) if info.roles.get(rc.chunk.id) != "answer"), len(paths))
        answers = paths[:lead]
        context = [rc for rc in paths[lead:] if info.roles.get(rc.chunk.id) != "anchor"]
        anchored = [rc for rc in paths if info.roles.get(rc.chunk.id) == "anchor"]
        if answers:
            sources["paths"], weights["paths"] = answers, weight
        if context:
            sources["path_context"], weights["path_context"] = context, weight * ps.path_chunk_factor
        if anchored:
            sources["path_anchor"], weights["path_anchor"] = anchored, weight * ps.anchor_chunk_factor
    if has_hints(qc):
        hybrid = _run(hybrid_search, qc, deep)
        if hybrid:
            sources["hybrid"] = hybrid
            weights["hybrid"] = s.fuse_hybrid
    steered = {
        cid for name in ("paths", "path_context", "path_anchor", "hybrid") for cid in _ids(sources.get(name))
    }
    if has_hints(qc) and len(steered) >= max(q.min_results, 1):
        # the query steered the walk (targets, relation types) and the walk found enough: its
        # reasoning context is the answer; text-wide sources would reach outside it
        return _fused(qc, sources, weights, s)
    # PPR seeded by entities the question names already blends the dense signal (its dense seeds
    # and bridge bonus): measured on multi-hop passages, adding vector and BM25 lists beside it
    # only dilutes the bridges. Seeded by dense hits alone it is a diffusion of them: then the
    # text sources speak for themselves. Entity-seeded with no other source, PPR answers alone
    # (its top-k is the fusion's): it reads and explains only that many chunks.
    alone = None if sources else q.top_k
    ppr = _run(lambda sub: ppr_search(sub, named_top_k=alone), qc, deep)
    text_led = bool(ppr) and (qc.stages.ppr_seed_entities or 0) > 0
    if ppr:
        sources["ppr"] = ppr
        weights["ppr"] = s.fuse_ppr if text_led else s.fuse_ppr_dense
    if not text_led or not sources:
        if qc.state.embedder is not None:
            vec = _run(vector_search, qc, deep)
            if vec:
                sources["vector"] = vec
                weights["vector"] = s.fuse_vector
        bm = _run(bm25_search, qc, deep)
        if bm:
            sources["bm25"] = bm
            weights["bm25"] = s.fuse_bm25
    return _fused(qc, sources, weights, s)


def _fused(
    qc: QueryContext, sources: dict[str, list[RankedChunk]], weights: dict[str, float], s: AutoSettings
) -> list[RankedChunk]:
    """The fusion, with the route (sources, weights, hints) recorded in the result metadata."""
    qc.stages.route = RouteInfo(
        sources={name: RouteSource(weights[name], len(sources[name])) for name in sources},
        hints=_hint_names(qc),
    )
    return fuse(sources, weights, s.fuse_k, qc.query.top_k)


def _ids(ranked: list[RankedChunk] | None) -> list[str]:
    return [rc.chunk.id for rc in ranked or []]


def _run(
    fn: Callable[[QueryContext], list[RankedChunk] | None], qc: QueryContext, query: GraphQuery
) -> list[RankedChunk] | None:
    """One source on a copy of the context answering ``query``; what it explored is kept."""
    sub = _with_query(qc, query)
    out = fn(sub)
    if sub is not qc:
        if qc.reasoning is None:
            qc.reasoning = sub.reasoning
        if qc.enhanced_query is None:
            qc.enhanced_query = sub.enhanced_query
    return out


def _with_query(qc: QueryContext, query: GraphQuery) -> QueryContext:
    """The same query context answering a copy of its query (a deeper top-k for fusion)."""
    from dataclasses import replace

    return replace(qc, query=query) if query is not qc.query else qc


def _hint_names(qc: QueryContext) -> list[str]:
    q = qc.query
    out = []
    if q.targets:
        out.append("targets")
    if q.traversal.relation_types:
        out.append("relation_types")
    if q.patterns:
        out.append("patterns")
    if q.as_of is not None:
        out.append("as_of")
    return out
