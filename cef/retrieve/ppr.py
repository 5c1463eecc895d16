"""PPR strategy: personalized PageRank over the entity–passage graph, seeded by the question.

The graph is the ``MENTIONS`` edges ingest writes (see :mod:`cef.schema.textgraph`):
every chunk's node (its passage) is joined to the entities it mentions, the
passage's title entity with a heavier edge. No co-occurrence, synonym or
passage–passage edges: they did not help ranking.

For a question:

1. **Entities** named in it are linked to graph nodes (:func:`link_query_entities`:
   spaCy NER plus a query gazetteer of every graph name, matched by exact
   name, alias key, then fuzzy similarity).
2. **Seeds**: each entity ∝ link confidence × log(1 + N/df) (df = passages that
   mention it, N = passages), together 1.0; the 5 passages closest to the
   question by embedding ∝ (cosine − 5th cosine + 0.001), together 0.5; no
   seed at all → the 5 closest passages, uniformly.
3. **PPR** (damping 0.5) over the MENTIONS graph, approximated by forward push
   (:mod:`cef.graph.push`: each node's score at most ``epsilon`` × its weighted
   degree below exact PPR); the work follows the seeds' neighbourhood, not the
   graph. Passages score the min-max of their PPR mass (a passage the push
   never reached: 0).
4. **Bridge**: a passage titled by an entity of one of the 3 best passages gets
   ``0.4 × (parent score / best score) × min-max cosine`` on top — the second
   hop of a multi-hop question is usually the page of an entity the first hop
   mentions (when several passages share that title, the one closest to the
   question by embedding).

Cosines come from the chunk vector index (:class:`PassageCosines`): the closest
passages by search, the min-max range from the best match and the best match of
the negated question, other passages' cosines only where the bridge asks.

The matrix, passage lists, title owners and the query gazetteer are built once
per graph generation (:func:`entity_index`). Every :class:`~cef.model.RankedChunk`
says why it is there: PPR and cosine scores, the entities linked to its
passage, the seed entities, and a path from a seed entity to the passage.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from cef.graph.index import GraphIndex
from cef.graph.push import PushResult, forward_push
from cef.model import Explanation, GraphPath, RankedChunk, ReasoningContext, SearchStrategy
from cef.retrieve.anchors import record_entities, target_entities
from cef.retrieve.context import QueryContext
from cef.retrieve.entities import EntityIndex, LinkedEntity, entity_index, link_query_entities
from cef.retrieve.presets import PPRSettings, settings_for
from cef.retrieve.stagestate import PprInfo, RelatedEntity
from cef.retrieve.visibility import hidden_nodes

if TYPE_CHECKING:
    pass

__all__ = [
    "minmax",
    "ppr_search",
]

log = logging.getLogger(__name__)


def minmax(x: np.ndarray) -> np.ndarray:
    """``x`` scaled to 0..1 (all zeros when constant)."""
    if not len(x):
        return x
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)


class PassageCosines:
    """Cosines of the question to passages (a passage's best chunk), computed only for the passages asked about.

    The closest passages come from the chunk vector index (an ANN index on a
    big store), the cosine range from its best and worst match (the worst: the
    best match of the negated question), so no step reads every passage.
    """

    def __init__(self, qc: QueryContext, index: EntityIndex, vec: np.ndarray, fetch: int) -> None:
        self.qc, self.index, self.vec = qc, index, vec
        self._known: dict[int, float] = {}
        vectors = qc.state.chunk_vectors
        hits = vectors.search(vec, fetch)
        self.top: list[tuple[int, float]] = []  # (passage, cosine), best first, one per passage
        for pi, cos in self._passages_of(hits):
            if pi not in self._known:
                self._known[pi] = cos
                self.top.append((pi, cos))
        self.hi = self.top[0][1] if self.top else 0.0
        self._lo: float | None = None

    @property
    def lo(self) -> float:
        """The corpus's worst cosine: minus the best match of the negated question (searched on first use)."""
        if self._lo is None:
            worst = self.qc.state.chunk_vectors.search(-np.asarray(self.vec, dtype=np.float32), 1)
            self._lo = min(-worst[0][1], self.hi) if worst else self.hi
        return self._lo

    def _passages_of(self, hits: list[tuple[str, float]]) -> list[tuple[int, float]]:
        chunks = self.qc.chunks([c for c, _ in hits])
        g, passages = self.qc.state.graph, self.index.passages
        out = []
        for cid, cos in hits:
            ch = chunks.get(cid)
            pos = g.pos(ch.node_id) if ch is not None and ch.node_id is not None else None
            if pos is None:
                continue
            i = int(np.searchsorted(passages, pos))
            if i < len(passages) and passages[i] == pos:
                out.append((i, float(cos)))
        return out

    def of(self, passages: Sequence[int]) -> np.ndarray:
        """The cosine of each passage (its best chunk; -1 when it has no vector)."""
        missing = [i for i in passages if i not in self._known]
        if missing:
            ids = [c for i in missing for c in self.index.passage_chunks[i]]
            sims = self.qc.state.chunk_vectors.similarities(self.vec, ids).tolist() if ids else []
            k = 0
            for i in missing:
                n = len(self.index.passage_chunks[i])
                self._known[i] = max(sims[k : k + n], default=-1.0)
                k += n
        return np.array([self._known[i] for i in passages], dtype=np.float64)

    def scaled(self, passages: Sequence[int]) -> np.ndarray:
        """Min-max scaled cosines (0 for the corpus's worst match, 1 for its best)."""
        span = self.hi - self.lo
        if span <= 0:
            return np.zeros(len(passages))
        return np.clip((self.of(passages) - self.lo) / span, 0.0, 1.0)


def top_order(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values, best first, ties by index: ``argsort(-values, kind="stable")[:k]``."""
    n = len(values)
    if k >= n:
        return np.argsort(-values, kind="stable")
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    kth = np.partition(values, n - k)[n - k]
    above = np.flatnonzero(values > kth)
    tied = np.flatnonzero(values == kth)[: k - len(above)]
    sel = np.concatenate([above, tied])
    return sel[np.lexsort((sel, -values[sel]))]


def first_unreached(n: int, cand: np.ndarray, count: int) -> np.ndarray:
    """The first ``count`` of ``0..n-1`` not in ``cand`` (distinct), in order, without a pass over all ``n``:
    among the first ``count + len(cand)`` numbers at most ``len(cand)`` are candidates."""
    head = np.arange(min(n, count + len(cand)), dtype=np.int64)
    return np.setdiff1d(head, cand, assume_unique=True)[:count]


def passage_ppr(index: EntityIndex, seeds: dict[int, float], settings: PPRSettings) -> np.ndarray:
    """Approximate PPR from ``seeds`` over the MENTIONS graph: a score per graph node (see :mod:`cef.graph.push`)."""
    return _push(index, seeds, settings).scores


def _push(
    index: EntityIndex, seeds: dict[int, float], settings: PPRSettings, blocked: np.ndarray | None = None
) -> PushResult:
    if index.push is None:
        raise ValueError("this entity index has no MENTIONS graph to rank over")
    if blocked is not None and len(blocked) < index.push.size:  # nodes added since the mask was made
        blocked = np.concatenate([blocked, np.ones(index.push.size - len(blocked), dtype=bool)])
    return forward_push(
        index.push, seeds, damping=settings.damping, epsilon=settings.epsilon, blocked=blocked
    )


# ----------------------------------------------------------------------------- strategy
def ppr_search(qc: QueryContext, *, named_top_k: int | None = None) -> list[RankedChunk] | None:
    """Rank chunks by personalized PageRank from the question's entities and closest passages.

    ``None`` (not applicable) when the graph has no MENTIONS edges; ``[]`` when
    there is nothing to seed from (no entity found and no embeddings).
    ``named_top_k``: how many chunks to collect and explain when entities the
    question names seeded the ranking (the ``auto`` route asks for a deep list
    to fuse, but fuses nothing else beside such a ranking: reading, explaining
    and then dropping the chunks past its top-k would be wasted work); the
    first ones are the same either way.
    """
    settings = settings_for(PPRSettings, qc.query)
    st = qc.state
    index = entity_index(st)
    if not index.has_mentions:
        return None
    linked = link_query_entities(index, st, qc.query.query, settings.linking, qc.linked, scope=qc.query.scope)
    linked += [t for t in target_entities(qc) if t.pos not in {e.pos for e in linked}]
    record_entities(qc, linked)
    qc.check_deadline("ppr entity linking")
    n_pass = len(index.passages)
    vec = qc.query_vector
    dense = (
        PassageCosines(qc, index, vec, max(4 * settings.dense_seeds, 20))
        if vec is not None and len(st.chunk_vectors) and index.chunk_ids
        else None
    )

    seeds: dict[int, float] = {}
    ent_w = []
    for e in linked:
        df = float(index.df[e.pos]) if e.pos < len(index.df) else 0.0
        if df <= 0 and e.pos not in index.passage_index:
            continue  # not in the MENTIONS graph: it would only leak seed mass
        ent_w.append((e.pos, e.confidence * math.log(1.0 + n_pass / max(df, 1.0))))
    total = sum(w for _, w in ent_w)
    named = total > 0 and settings.entity_seed_weight > 0
    qc.stages.ppr_seed_entities = len(ent_w) if named else 0
    if named:
        for pos, w in ent_w:
            seeds[pos] = seeds.get(pos, 0.0) + settings.entity_seed_weight * w / total
    if dense is not None and dense.top and settings.dense_seeds and settings.dense_seed_weight > 0:
        top = dense.top[: settings.dense_seeds]
        cos = np.array([c for _, c in top])
        sw = np.maximum(cos - cos.min() + 1e-3, 0.0)
        for (i, _), w in zip(top, (settings.dense_seed_weight * sw / sw.sum()).tolist(), strict=True):
            pos = int(index.passages[i])
            seeds[pos] = seeds.get(pos, 0.0) + w
    if not seeds and dense is not None:
        for i, _ in dense.top[:5]:
            seeds[int(index.passages[i])] = 1.0
    if not seeds:
        qc.notes.append("ppr: no query entity in the graph and no embeddings to seed from")
        return []

    pushed = _push(index, seeds, settings, hidden_nodes(st.graph, qc.query.scope))
    qc.check_deadline("ppr")
    pr = pushed.scores
    # passages the push reached (every other passage scores 0, the minimum, when some were not reached)
    at = np.minimum(np.searchsorted(index.passages, pushed.touched), n_pass - 1)
    hit = (
        index.passages[at] == pushed.touched
    )  # a binary search per touched node, not a pass over all passages
    reached, cand = pushed.touched[hit], at[hit]
    mass = pr[reached]
    lo = float(mass.min()) if len(cand) == n_pass else 0.0
    hi = float(mass.max()) if len(mass) else 0.0
    score = np.zeros(n_pass)
    if hi > lo:
        score[cand] = (mass - lo) / (hi - lo)
    bonus = np.zeros(n_pass)
    via: dict[int, tuple[int, int]] = {}  # bridged passage -> (parent passage, entity)
    final = score.copy() if len(cand) == n_pass else np.zeros(n_pass)
    if len(cand) < n_pass:
        final[cand] = score[cand]
    if settings.bridge_weight > 0 and settings.bridge_top and dense is not None and len(cand):
        best = cand[top_order(score[cand], settings.bridge_top)]
        top_s = float(score[best[0]]) or 1.0
        for i in best.tolist():
            for j in index.passage_entities[i].tolist():
                owners = [o for o in index.title_owners.get(j, ()) if o != i]
                if len(owners) > 1:  # several passages share the title: the one closest to the question
                    cos = dense.of(owners)
                    owners = [max(zip(owners, cos.tolist(), strict=True), key=lambda oc: (oc[1], -oc[0]))[0]]
                for o in owners:
                    if score[i] / top_s > bonus[o]:
                        bonus[o] = score[i] / top_s
                        via[o] = (i, j)
        if via:
            bridged = np.fromiter(via, dtype=np.int64, count=len(via))
            final[bridged] = score[bridged] + settings.bridge_weight * bonus[bridged] * top_s * dense.scaled(
                bridged.tolist()
            )
            cand = np.union1d(cand, bridged)
    want = max(4 * qc.query.top_k, 256)
    ranking = cand[top_order(final[cand], want)]
    if len(ranking) < min(want, n_pass):  # fewer passages reached than asked for: the rest in index order
        ranking = np.concatenate([ranking, first_unreached(n_pass, cand, want - len(ranking))])

    k = min(named_top_k, qc.query.top_k) if named and named_top_k is not None else qc.query.top_k
    results = _collect(qc, index, ranking, final, score, k)
    _explain(qc, index, settings, results, linked, pushed, score, bonus, via)
    return [r for r, _ in results]


def _collect(
    qc: QueryContext,
    index: EntityIndex,
    ranking: np.ndarray,
    final: np.ndarray,
    score: np.ndarray,
    k: int,
) -> list[tuple[RankedChunk, int]]:
    """The top ``k`` chunks of the best passages (a passage's chunks in cosine order)."""
    vec = qc.query_vector
    out: list[tuple[RankedChunk, int]] = []
    batch = max(k * 2, 20)
    start = 0
    while len(out) < k and start < len(ranking):
        idx = ranking[start : start + batch].tolist()
        start += batch
        ids = [c for i in idx for c in index.passage_chunks[i]]
        chunks = qc.chunks(ids)
        sims = (
            dict(zip(ids, qc.state.chunk_vectors.similarities(vec, ids).tolist(), strict=True))
            if vec is not None and ids
            else {}
        )
        for rank, i in enumerate(idx, start - batch + 1):
            mine = [c for c in index.passage_chunks[i] if c in chunks]
            mine.sort(key=lambda c: -sims.get(c, 0.0))
            for cid in mine:
                expl = Explanation(
                    strategy=SearchStrategy.PPR,
                    graph_score=round(float(score[i]), 6),
                    vector_score=round(float(sims[cid]), 6) if cid in sims else None,
                    rank_sources={"ppr": rank},
                )
                out.append((RankedChunk(chunk=chunks[cid], score=float(final[i]), explanation=expl), i))
                if len(out) >= k:
                    break
            if len(out) >= k:
                break
    return out


#: a 3-hop explanation path scans at most this many passages of the shorter of two entities' lists
PATH_SCAN = 4096


def _mention_edge(index: EntityIndex, entity: int, passage: int) -> int | None:
    """The MENTIONS edge from ``passage`` (an index) to ``entity``, if any (a binary search of its list)."""
    found, _, edges = index.passages_of(entity)
    i = int(np.searchsorted(found, passage))
    return int(edges[i]) if i < len(found) and found[i] == passage else None


def _common_passages(
    index: EntityIndex, a: int, b: int, skip: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Passages mentioning both entities (not ``skip``): (passages, edge to ``a``, edge to ``b``).

    The shorter list is looked up in the longer one (both sorted) in blocks, and
    the scan stops at the first block with a match or after :data:`PATH_SCAN`
    passages: the cost does not grow with how many passages mention a hub.
    """
    a_pass, _, a_edge = index.passages_of(a)
    b_pass, _, b_edge = index.passages_of(b)
    swap = len(a_pass) > len(b_pass)
    small, small_edge, big, big_edge = (
        (b_pass, b_edge, a_pass, a_edge) if swap else (a_pass, a_edge, b_pass, b_edge)
    )
    empty = np.zeros(0, dtype=np.int64)
    if not len(big):
        return empty, empty, empty
    block = 256
    for start in range(0, min(len(small), PATH_SCAN), block):
        part = small[start : start + block]
        at = np.minimum(np.searchsorted(big, part), len(big) - 1)
        hit = (big[at] == part) & (part != skip)
        if hit.any():
            got, e_small, e_big = part[hit], small_edge[start : start + block][hit], big_edge[at[hit]]
            return (got, e_big, e_small) if swap else (got, e_small, e_big)
    return empty, empty, empty


def seed_path(
    g: GraphIndex,
    index: EntityIndex,
    seeds: Sequence[int],
    passage: int,
    depth: int,
    names: Mapping[int, str],
    holder_names: dict[str, str],
) -> GraphPath | None:
    """A shortest MENTIONS path from a seed entity to a passage (index), the most confident one found.

    One hop when the passage mentions a seed; else three: the seed, a passage
    mentioning it and one of this passage's entities, that entity, this
    passage (the middle passage among the first found by :func:`_common_passages`).
    Only the lists of the few entities involved are read (a breadth-first walk
    from the seeds would visit their whole neighbourhood).
    """
    conf = g.e_conf.view
    holder = int(index.passages[passage])
    mine = index.passage_entities[passage]
    mentioned = set(mine.tolist())
    best: tuple[float, list[int], list[int]] | None = None
    for s in seeds:
        if s in mentioned and s != holder:
            direct = _mention_edge(index, s, passage)
            if direct is not None:
                c = float(conf[direct])
                if best is None or c > best[0]:
                    best = (c, [s, holder], [direct])
    if best is None and depth >= 3:
        for s in seeds:
            if not len(index.passages_of(s)[0]):
                continue
            for ent in mine.tolist():
                last = _mention_edge(index, ent, passage)
                if last is None:
                    continue
                common, s_edge, e_edge = _common_passages(index, s, ent, passage)
                if not len(common):
                    continue
                scores = conf[s_edge] * conf[e_edge] * float(conf[last])
                k = int(np.argmax(scores))
                c = float(scores[k])
                mid = int(index.passages[int(common[k])])
                if len({s, mid, ent, holder}) < 4:
                    continue  # a path that comes back to a node it passed explains nothing
                if best is None or c > best[0]:
                    best = (c, [s, mid, ent, holder], [int(s_edge[k]), int(e_edge[k]), last])
    if best is None:
        return None
    _, nodes, edges = best
    node_ids = [g.node_ids[p] for p in nodes]
    # walking from the seed: a MENTIONS edge runs passage -> entity, so it is walked forward from a passage
    forward = [g.node_ids[int(g.e_src[e])] == node_ids[k] for k, e in enumerate(edges)]
    return GraphPath(
        node_ids=node_ids,
        relation_types=[g.relation_name(e, f) for e, f in zip(edges, forward, strict=True)],
        edge_ids=[g.edge_ids[e] for e in edges],
        node_names=[holder_names.get(n, names.get(p, n)) for p, n in zip(nodes, node_ids, strict=True)],
        weight=float(sum(float(g.e_weight[e]) for e in edges)),
        confidence=float(np.prod([float(conf[e]) for e in edges])),
    )


def _explain(
    qc: QueryContext,
    index: EntityIndex,
    settings: PPRSettings,
    results: list[tuple[RankedChunk, int]],
    linked: Sequence[LinkedEntity],
    pushed: PushResult,
    score: np.ndarray,
    bonus: np.ndarray,
    via: dict[int, tuple[int, int]],
) -> None:
    """Entities, seeds, paths and notes on each result; related entities in the metadata."""
    pr = pushed.scores
    st = qc.state
    g = st.graph
    seed_pos = [e.pos for e in linked if e.pos < len(index.df) and index.df[e.pos] > 0]
    seed_ids = [g.node_ids[p] for p in seed_pos]
    names = index.names
    holders = [int(index.passages[i]) for _, i in results]
    holder_names = {n.id: n.name for n in st.get_nodes([g.node_ids[h] for h in holders])}
    seed_set = set(seed_pos)
    paths: list[GraphPath] = []
    for r, i in results:
        e = r.explanation
        e.anchors = list(seed_ids)
        ents = index.passage_entities[i].tolist()
        ents.sort(key=lambda p: (p not in seed_set, -float(pr[p])))
        e.entities = [names[p] for p in ents[: settings.explain_entities] if p in names]
        if seed_pos and settings.path_depth > 0:
            path = seed_path(g, index, seed_pos, i, settings.path_depth, names, holder_names)
            if path is not None and path.length:
                e.path = path
                paths.append(path)
        if bonus[i] > 0 and i in via:
            parent, ent = via[i]
            e.notes.append(
                f"bridge: titled by {names.get(ent, g.node_ids[ent])!r}, "
                f"which {holder_names.get(g.node_ids[int(index.passages[parent])], 'a top passage')!r} mentions"
            )
        if not seed_pos:
            e.notes.append("seeded by the passages closest to the question (no query entity in the graph)")
    # related entities: most PPR mass among non-seed entities
    ent_pos = pushed.touched[pushed.touched < len(index.df)]
    ent_pos = ent_pos[index.df[ent_pos] > 0]
    related: list[RelatedEntity] = []
    if len(ent_pos) and settings.related_entities:
        mass = pr[ent_pos]
        top = ent_pos[top_order(mass, settings.related_entities + len(seed_set))]
        peak = float(mass.max()) or 1.0
        for p in top.tolist():
            if p in seed_set:
                continue
            related.append(
                RelatedEntity(g.node_ids[p], names.get(p, g.node_ids[p]), round(float(pr[p]) / peak, 4))
            )
            if len(related) >= settings.related_entities:
                break
    qc.stages.related_entities = related
    qc.stages.ppr = PprInfo(seed_ids, len(index.passages), sum(1 for o in via if bonus[o] > 0))
    if len(results) >= max(qc.query.min_results, 1) and qc.query.include_reasoning_context:
        roots = st.get_nodes(seed_ids)
        rel_nodes = st.get_nodes([x.node_id for x in related])
        qc.reasoning = ReasoningContext(
            root_nodes=roots,
            related_nodes=rel_nodes,
            paths=paths,
            context_keywords=[x.name for x in related],
            semantic_groups={"mentioned_with": [x.node_id for x in related]},
            depth=settings.path_depth,
            metadata={"strategy": "ppr", "seeds": len(seed_ids)},
        )
