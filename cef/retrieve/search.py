"""Stage 3: find and score chunks — vector, BM25, and graph-constrained hybrid."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from cef.model import Explanation, RankedChunk, SearchStrategy
from cef.retrieve.context import QueryContext
from cef.retrieve.expand import path_for
from cef.retrieve.presets import HybridSettings, settings_for

if TYPE_CHECKING:
    import numpy as np

    from cef.store.base import VectorIndex


def search_visible(
    index: VectorIndex,
    vec: np.ndarray,
    k: int,
    keep: Callable[[list[str]], Collection[str]] | None = None,
    *,
    allowed: Iterable[str] | None = None,
) -> list[tuple[str, float]]:
    """Top-``k`` ids of ``index`` by cosine to ``vec`` among those ``keep`` lets through (all when
    None): fetches 4 × ``k``, drops what ``keep`` rejects, and widens the search (× 4) until ``k``
    are kept or the index has no more."""
    if keep is None:
        return index.search(vec, k, allowed=allowed)
    fetch = k * 4
    while True:
        hits = index.search(vec, fetch, allowed=allowed)
        ok = keep([h[0] for h in hits])
        kept = [h for h in hits if h[0] in ok]
        if len(kept) >= k or len(hits) < fetch:
            return kept[:k]
        fetch *= 4


def vector_hits(
    qc: QueryContext, text: str | None, k: int, allowed: list[str] | None = None
) -> list[tuple[str, float]]:
    """Top-k chunk ids by cosine similarity (respecting the query's scope)."""
    st = qc.state
    if not len(st.chunk_vectors) or k <= 0:
        return []  # nothing to compare with: the query is not embedded
    vec = qc.embed(text) if text else qc.query_vector
    if vec is None:
        return []
    return search_visible(st.chunk_vectors, vec, k, qc.chunks if qc.filters_chunks else None, allowed=allowed)


def bm25_hits(qc: QueryContext, text: str, k: int) -> list[tuple[str, float]]:
    """Top-k chunk ids by BM25 (the scope is pushed down; tags are checked here)."""
    store = qc.state.store
    if not qc.wanted_tags:
        return [(h.id, h.score) for h in store.search_text("chunk", text, k, scope=qc.query.scope)]
    fetch = k * 4
    while True:
        hits = store.search_text("chunk", text, fetch, scope=qc.query.scope)
        ok = qc.chunks([h.id for h in hits])
        kept = [(h.id, h.score) for h in hits if h.id in ok]
        if len(kept) >= k or len(hits) < fetch:
            return kept[:k]
        fetch *= 4


def _ranked(qc: QueryContext, scored: list[tuple[str, float, Explanation]]) -> list[RankedChunk]:
    chunks = qc.chunks([s[0] for s in scored])
    return [RankedChunk(chunk=chunks[i], score=s, explanation=e) for i, s, e in scored if i in chunks]


def vector_search(qc: QueryContext) -> list[RankedChunk]:
    text = qc.enhanced_query or qc.query.query
    hits = vector_hits(qc, text, qc.query.top_k)
    return _ranked(
        qc,
        [
            (cid, s, Explanation(strategy=SearchStrategy.VECTOR, vector_score=s, rank_sources={"vector": r}))
            for r, (cid, s) in enumerate(hits, 1)
        ],
    )


def bm25_search(qc: QueryContext) -> list[RankedChunk]:
    hits = bm25_hits(qc, qc.query.query, qc.query.top_k)
    return _ranked(
        qc,
        [
            (cid, s, Explanation(strategy=SearchStrategy.BM25, bm25_score=s, rank_sources={"bm25": r}))
            for r, (cid, s) in enumerate(hits, 1)
        ],
    )


def hybrid_search(qc: QueryContext) -> list[RankedChunk]:
    """Vector ranking restricted to chunks linked to the reasoning context, blended with graph proximity
    (:class:`~cef.retrieve.presets.HybridSettings`)."""
    if not qc.reached:
        return []
    settings = settings_for(HybridSettings, qc.query)
    vector_weight, hop_decay = settings.text_weight, settings.hop_decay
    st = qc.state
    g = st.graph
    pos_of = {g.node_ids[p]: p for p in qc.reached}
    linked = st.store.chunks_for_nodes(list(pos_of))
    owner: dict[str, str] = {}
    for node_id, chunk_ids in linked.items():
        for cid in chunk_ids:
            owner.setdefault(cid, node_id)
    if not owner:
        return []
    candidates = list(owner)
    chunks = qc.chunks(candidates)
    candidates = [c for c in candidates if c in chunks]
    vec = qc.embed(qc.enhanced_query or qc.query.query)
    sims = st.chunk_vectors.similarities(vec, candidates) if vec is not None else None
    bm25: dict[str, float] = {}
    if sims is None:  # no embedding model: the text signal is BM25, normalized to 0..1
        hits = bm25_hits(qc, qc.query.query, max(200, qc.query.top_k * 20))
        top = hits[0][1] if hits else 1.0
        bm25 = {cid: s / top for cid, s in hits} if top > 0 else {}
    traversal = qc.stages.traversal
    if traversal is None:
        raise RuntimeError("hybrid search runs after the anchored traversal (expand_anchors)")
    exp, anchor_score = traversal.walk, traversal.anchor_score
    scored = []
    for i, cid in enumerate(candidates):
        pos = pos_of[owner[cid]]
        depth, conf = qc.reached[pos]
        path = path_for(g, exp, pos)
        anchor = path.node_ids[0]
        graph_score = anchor_score.get(g.pos(anchor) or -1, 1.0) * conf * hop_decay**depth
        vscore = float(sims[i]) if sims is not None else bm25.get(cid, 0.0)
        score = vector_weight * vscore + (1 - vector_weight) * graph_score
        scored.append(
            (
                cid,
                score,
                Explanation(
                    strategy=SearchStrategy.HYBRID,
                    anchors=[anchor],
                    path=path,
                    vector_score=vscore if sims is not None else None,
                    bm25_score=bm25.get(cid) if sims is None else None,
                    graph_score=graph_score,
                    notes=[f"linked to {owner[cid]!r}, {depth} hop(s) from anchor {anchor!r}"],
                ),
            )
        )
    scored.sort(key=lambda x: (-x[1], x[0]))
    best = scored[: qc.query.top_k]
    _name_paths(qc, [e for _, _, e in best])
    return _ranked(qc, best)


def _name_paths(qc: QueryContext, explanations: list[Explanation]) -> None:
    ids = list({i for e in explanations if e.path for i in e.path.node_ids})
    names = {i: n.name for i, n in qc.nodes(ids).items()}
    for e in explanations:
        if e.path is not None:
            e.path.node_names = [names.get(i, i) for i in e.path.node_ids]
