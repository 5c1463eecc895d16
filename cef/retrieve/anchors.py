"""Stage 1: the nodes a search starts from (anchors).

The route resolves a query's targets, or the names its text mentions, to anchor nodes by id, name
and vector (:func:`resolve_anchors`). A caller that reads the question itself — the memory's
understanding — hands the same stage what it read (:class:`AnchorRequest`: the nodes named, the
types named) and :func:`anchor_stage` adds the question's nearest nodes and its passages' nodes,
in the query's scope and under its edge filter.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import fuzz

from cef.model import ResolutionTarget
from cef.retrieve.context import Anchor, QueryContext
from cef.retrieve.entities import LinkedEntity, entity_index
from cef.retrieve.names import name_finder
from cef.retrieve.presets import AnchorSettings, settings_for
from cef.retrieve.search import search_visible

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.store.base import VectorIndex


def node_visible(g: GraphIndex, pos: int, scope: str | None) -> bool:
    """Whether node ``pos`` is live and inside ``scope`` (its own or unscoped; every scope when None)."""
    if not g.node_alive[pos]:
        return False
    if scope is None:
        return True
    code = int(g.node_scope[pos])
    return code == -1 or g.scopes.names[code] == scope


def node_vector_hits(
    g: GraphIndex,
    vectors: VectorIndex,
    vec: np.ndarray,
    k: int,
    *,
    scope: str | None = None,
    labels: Collection[str] | None = None,
    allowed_share: float = AnchorSettings().allowed_share,
) -> list[tuple[str, float]]:
    """Top-``k`` nodes by cosine to ``vec`` among the live nodes inside ``scope`` and, when given,
    of ``labels``: the search runs over those nodes only, or — a scope holding more than
    ``allowed_share`` of the live nodes — over every vector, dropping the few others (widened until
    ``k`` are kept)."""
    if k <= 0 or not len(vectors):
        return []
    n = len(g.node_ids)
    mask = g.visible_nodes(None if scope is None else [scope])
    if labels is not None:
        codes = [c for c, name in enumerate(g.labels.names) if name in labels]
        mask &= np.isin(g.node_label.view[:n], codes)
    elif scope is None or int(mask.sum()) > allowed_share * max(1, int(g.node_alive.view[:n].sum())):

        def visible(ids: list[str]) -> set[str]:
            return {i for i in ids if (p := g.pos(i)) is not None and node_visible(g, p, scope)}

        return search_visible(vectors, vec, k, visible)
    ids = g.node_ids
    allowed = [ids[p] for p in np.flatnonzero(mask).tolist()]
    return vectors.search(vec, k, allowed=allowed) if allowed else []


def resolve_target(qc: QueryContext, target: ResolutionTarget) -> list[Anchor]:
    """Anchors for one target: exact id, exact/fuzzy name, and vector similarity, best first."""
    st = qc.state
    g = st.graph
    cfg = settings_for(AnchorSettings, qc.query)
    found: dict[int, Anchor] = {}

    def add(pos: int | None, score: float, how: str) -> None:
        if pos is None or not node_visible(g, pos, qc.query.scope):
            return
        if target.type_hint and g.label_of(pos) != target.type_hint:
            return
        cur = found.get(pos)
        if cur is None or score > cur.score:
            found[pos] = Anchor(pos, g.node_ids[pos], score, how, target.description)

    # an id given verbatim
    add(g.pos(target.description), 1.0, "id")
    # the entity resolver: exact and alias names, then (curated nodes) fuzzy and partial names
    got = entity_index(st).resolver.resolve(target.description, hint=target.type_hint)
    if got is not None:
        add(g.pos(got.node_id), {"exact": 1.0, "alias": 0.98}.get(got.how, 0.6 + 0.3 * got.score), got.how)
    # names through the node full-text index, re-scored by string similarity
    want = target.description.lower()
    hits = st.store.search_text("node", target.description, 25, scope=qc.query.scope)
    if hits:
        nodes = qc.nodes([h.id for h in hits])
        for h in hits:
            node = nodes.get(h.id)
            if node is None:
                continue
            names = name_finder(st).names_of(node)
            best = max(fuzz.ratio(want, n.lower()) for n in names)
            if any(n.lower() == want for n in names):
                add(g.pos(node.id), 1.0, "exact")
            elif best >= cfg.min_fuzzy:
                add(g.pos(node.id), 0.6 + 0.3 * best / 100.0, "fuzzy")
            else:
                partial = max(fuzz.token_set_ratio(want, n.lower()) for n in names)
                if partial >= 95:
                    add(g.pos(node.id), 0.75, "name")
    # vector similarity over node embeddings
    vec = qc.embed(target.description)
    if vec is not None and len(st.node_vectors):
        labels = [target.type_hint] if target.type_hint else None
        k = max(target.max_matches * 3, 5)
        for node_id, score in node_vector_hits(
            g, st.node_vectors, vec, k, scope=qc.query.scope, labels=labels, allowed_share=cfg.allowed_share
        ):
            if score >= cfg.min_vector_score:
                add(g.pos(node_id), float(score), "vector")
    ranked = sorted(found.values(), key=lambda a: (-a.score, a.node_id))
    exact = [a for a in ranked if a.how in ("id", "exact")]
    if exact:  # an exact name beats anything merely similar
        ranked = exact + [a for a in ranked if a.how not in ("id", "exact")]
    return ranked[: target.max_matches]


def resolve_anchors(qc: QueryContext) -> list[Anchor]:
    """All anchors of a query: its explicit targets, else names found in the query text."""
    anchors: dict[int, Anchor] = {}
    targets = qc.query.targets
    if not targets:
        targets = implicit_targets(qc)
    for t in targets:
        qc.check_deadline("anchors")
        found = resolve_target(qc, t)
        if not found and qc.query.targets:
            qc.notes.append(
                f"target {t.description!r}"
                + (f" (type {t.type_hint})" if t.type_hint else "")
                + " matched no node: tried the id, exact, alias, fuzzy and partial names"
                + (" and node vectors" if qc.state.embedder is not None else "")
                + "; check the spelling, the type hint, or give a node id"
            )
        for a in found:
            if a.pos not in anchors or a.score > anchors[a.pos].score:
                anchors[a.pos] = a
    qc.anchors = sorted(anchors.values(), key=lambda a: (-a.score, a.node_id))
    return qc.anchors


def implicit_targets(qc: QueryContext, limit: int = 3) -> list[ResolutionTarget]:
    """With no explicit targets, the node names mentioned in the question itself: the names the
    engine's name finder (:func:`~cef.retrieve.names.name_finder`) reads in it, and names of the
    nodes the full-text index finds that the question holds nearly (a misspelling), longest first."""
    st = qc.state
    query = qc.query.query
    text = query.lower()
    scored: list[tuple[float, str]] = []
    hit_ids = dict.fromkeys(h.id for h in st.store.search_text("node", query, 50, scope=qc.query.scope))
    finder = name_finder(st)
    named = [i for i, *_ in finder.find(query, qc.query.scope) if i not in hit_ids]
    order = [*hit_ids, *dict.fromkeys(named)]
    nodes = qc.nodes(order) if order else {}
    for node_id in order:
        node = nodes.get(node_id)
        if node is None:
            continue
        for name in finder.names_of(node):
            low = name.lower()
            if len(low) < 3:
                continue
            if _contains_phrase(text, low):
                scored.append((1.0 + len(low) / 100.0, node.name))
            elif node_id in hit_ids:
                s = fuzz.partial_ratio(low, text)
                if s >= 90 and len(low) >= 5:
                    scored.append((s / 100.0, node.name))
    scored.sort(key=lambda x: -x[0])
    names = list(dict.fromkeys(n for _, n in scored))[:limit]
    return [ResolutionTarget(description=n, max_matches=1) for n in names]


def _contains_phrase(text: str, phrase: str) -> bool:
    i = text.find(phrase)
    while i >= 0:
        before = i == 0 or not text[i - 1].isalnum()
        end = i + len(phrase)
        after = end == len(text) or not text[end].isalnum()
        if before and after:
            return True
        i = text.find(phrase, i + 1)
    return False


def anchor_vector_scores(qc: QueryContext, positions: np.ndarray) -> np.ndarray:
    """Cosine of the query to each node position (0 where a node has no vector)."""
    vec = qc.query_vector
    if vec is None:
        return np.zeros(len(positions))
    ids = [qc.state.graph.node_ids[int(p)] for p in positions]
    return qc.state.node_vectors.similarities(vec, ids)


def target_entities(qc: QueryContext) -> list[LinkedEntity]:
    """The query's explicit targets, resolved to nodes (anchors), as linked entities."""
    if not qc.query.targets:
        return []
    if not qc.anchors:
        resolve_anchors(qc)
    g = qc.state.graph
    return [
        LinkedEntity(a.pos, a.node_id, a.target or a.node_id, a.target, float(a.score), "target")
        for a in qc.anchors
        if g.node_alive[a.pos]
    ]


def record_entities(qc: QueryContext, linked: Sequence[LinkedEntity]) -> None:
    """Put the query's entities in the result metadata and among the anchors."""
    qc.stages.query_entities = list(linked)
    have = {a.pos for a in qc.anchors}
    for e in linked:
        if e.pos not in have:
            qc.anchors.append(Anchor(e.pos, e.node_id, e.confidence, "entity", e.mention))
            have.add(e.pos)


# ------------------------------------------------------- a caller's reading of the question
@dataclass(frozen=True)
class AnchorRequest:
    """What a caller that reads the question itself (the memory's understanding,
    :mod:`cef.memory.understand`) hands the anchor stage, :func:`anchor_stage`, beside the text.

    ``named``: nodes the question names, already found (node id, score, how: ``name``,
    ``synonym``, ``self``); ``mentions``: names an extractor found that match no node, resolved by
    meaning; ``type_hints``: node types the question names (nearest nodes of each are anchors too,
    and anchors of other types keep ``unnamed_type`` of their score); ``is_a(label, type)``: the
    type hierarchy; ``named_only(label)``: labels anchored only when named by name (records of
    what was said, not things); ``drop_ended``: a node whose every fact ended under the query's
    edge filter is history, not an anchor (unless named); at most ``limit`` anchors."""

    named: Sequence[tuple[str, float, str]] = ()
    mentions: Sequence[str] = ()
    type_hints: Sequence[str] = ()
    is_a: Callable[[str, str], bool] | None = None
    named_only: Callable[[str], bool] | None = None
    unnamed_type: float = 1.0
    drop_ended: bool = True
    limit: int = 10


#: ways of being found that name the node (never dropped, never only by likeness)
NAMED = frozenset({"name", "synonym", "self"})


def anchor_stage(qc: QueryContext, request: AnchorRequest) -> list[Anchor]:
    """The anchors of a question a caller has read (:class:`AnchorRequest`): the nodes it names,
    its mentions' and its own nearest nodes by meaning (of each named type too), and the nodes of
    the chunks that match it by meaning and by words, inside the query's scope; best first (ties by
    id), also left in ``qc.anchors``; its weights and counts are the query's :class:`AnchorSettings`."""
    st = qc.state
    g = st.graph
    scope = qc.query.scope
    cfg = settings_for(AnchorSettings, qc.query)
    found: dict[int, Anchor] = {}

    def add(node_id: str, score: float, how: str) -> None:
        pos = g.pos(node_id)
        if pos is None or not node_visible(g, pos, scope):
            return
        if how != "name" and request.named_only is not None and request.named_only(g.label_of(pos)):
            return
        cur = found.get(pos)
        if cur is None or score > cur.score:
            found[pos] = Anchor(pos, node_id, score, how)

    def nearest(vec: np.ndarray, k: int, type_name: str | None = None) -> list[tuple[str, float]]:
        labels = None
        if type_name is not None and request.is_a is not None:
            is_a = request.is_a
            labels = {name for name in g.labels.names if is_a(name, type_name)}
        return node_vector_hits(
            g, st.node_vectors, vec, k, scope=scope, labels=labels, allowed_share=cfg.allowed_share
        )

    for node_id, score, how in request.named:
        add(node_id, score, how)
    if len(st.node_vectors):
        for text in request.mentions:
            vec = qc.embed(text)
            for nid, sim in nearest(vec, cfg.mention_k) if vec is not None else []:
                if sim >= cfg.question_min_vector + 0.1:
                    add(nid, cfg.mention_share * sim, "ner")
    qvec = qc.query_vector
    if qvec is not None and len(st.node_vectors):
        for nid, sim in nearest(qvec, cfg.question_k):
            if sim >= cfg.question_min_vector:
                add(nid, cfg.vector_share * sim, "vector")
        for t in request.type_hints:
            for nid, sim in nearest(qvec, cfg.type_k, t):
                if sim >= cfg.question_min_vector:
                    add(nid, cfg.vector_share * sim + cfg.type_bonus, "type")
    for nid, score in _passage_nodes(qc, qvec, cfg):
        add(nid, score, "passage")
    if request.drop_ended:
        for pos in [p for p, a in found.items() if a.how not in NAMED]:
            if g.incident_edges(pos) and not len(g.step(np.array([pos], dtype=np.int64), qc.edge_filter)[0]):
                del found[pos]
    hinted = request.type_hints
    if hinted and request.is_a is not None:
        for a in found.values():
            if not any(request.is_a(g.label_of(a.pos), t) for t in hinted):
                a.score *= request.unnamed_type
    qc.anchors = sorted(found.values(), key=lambda a: (-a.score, a.node_id))[: request.limit]
    return qc.anchors


def _passage_nodes(qc: QueryContext, qvec: np.ndarray | None, cfg: AnchorSettings) -> list[tuple[str, float]]:
    """The nodes of the chunks like the question (vector) and sharing its words (BM25), each with
    its chunk's share of a score, in the query's scope."""
    st = qc.state
    hits: list[tuple[str, float]] = []
    if qvec is not None and len(st.chunk_vectors):

        def visible(ids: list[str]) -> set[str]:
            return set(qc.chunks(ids))

        keep = visible if qc.filters_chunks else None
        hits.extend(
            (cid, cfg.chunk_vector_share * s)
            for cid, s in search_visible(st.chunk_vectors, qvec, cfg.chunk_k, keep)
            if s >= cfg.question_min_vector
        )
    text_hits = st.store.search_text("chunk", qc.query.query, cfg.chunk_k, scope=qc.query.scope)
    if text_hits:
        top = max(h.score for h in text_hits) or 1.0
        hits.extend((h.id, cfg.chunk_text_share * h.score / top) for h in text_hits)
    chunks = qc.chunks([cid for cid, _ in hits]) if hits else {}
    return [
        (ch.node_id, s) for cid, s in hits if (ch := chunks.get(cid)) is not None and ch.node_id is not None
    ]
