"""Stage 1: resolve the query's targets to anchor nodes (vector-first, then names)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import fuzz

from cef.model import ResolutionTarget
from cef.retrieve.context import Anchor, QueryContext
from cef.retrieve.entities import LinkedEntity, entity_index
from cef.retrieve.search import search_visible

#: a vector match below this cosine is not trusted as an anchor
MIN_VECTOR_SCORE = 0.35
#: a fuzzy name match below this (0..100) is ignored
MIN_FUZZY = 85
#: a filter keeping more than this share of the live nodes searches them all and drops the others
ALLOWED_SHARE = 0.5

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
) -> list[tuple[str, float]]:
    """Top-``k`` nodes by cosine to ``vec`` among the live nodes inside ``scope`` and, when given,
    of ``labels``: the search runs over those nodes only, or — a scope holding most nodes — over
    every vector, dropping the few others (widened until ``k`` are kept)."""
    if k <= 0 or not len(vectors):
        return []
    n = len(g.node_ids)
    mask = g.visible_nodes(None if scope is None else [scope])
    if labels is not None:
        codes = [c for c, name in enumerate(g.labels.names) if name in labels]
        mask &= np.isin(g.node_label.view[:n], codes)
    elif scope is None or int(mask.sum()) > ALLOWED_SHARE * max(1, int(g.node_alive.view[:n].sum())):

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
            names = [node.name, *node.aliases]
            best = max(fuzz.ratio(want, n.lower()) for n in names)
            if any(n.lower() == want for n in names):
                add(g.pos(node.id), 1.0, "exact")
            elif best >= MIN_FUZZY:
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
            g, st.node_vectors, vec, k, scope=qc.query.scope, labels=labels
        ):
            if score >= MIN_VECTOR_SCORE:
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
    """With no explicit targets, look for node names mentioned in the question itself."""
    st = qc.state
    text = qc.query.query.lower()
    hits = st.store.search_text("node", qc.query.query, 50, scope=qc.query.scope)
    if not hits:
        return []
    nodes = qc.nodes([h.id for h in hits])
    scored: list[tuple[float, str]] = []
    for h in hits:
        node = nodes.get(h.id)
        if node is None:
            continue
        for name in [node.name, *node.aliases]:
            low = name.lower()
            if len(low) < 3:
                continue
            if _contains_phrase(text, low):
                scored.append((1.0 + len(low) / 100.0, node.name))
            else:
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
