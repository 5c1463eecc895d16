"""GRAPH strategy: the graph-first pipeline of seed 001.

1. **Parse** the question's entities (NER + a gazetteer of every graph name) and
   **match** them to nodes: exact name, alias key, fuzzy, optionally by type
   (:func:`~cef.retrieve.entities.link_query_entities`); explicit targets join them.
2. **Traverse** 0–3 hops (deeper on request) over the graph's relations,
   skipping edges below a minimum confidence and paths whose confidence
   product falls too low; add the entities most often **co-occurring** with
   the query's entities.
3. **Gather** the chunks that mention a reached entity (MENTIONS edges) or are
   linked to a reached node; each gets a graph relevance from how close and
   how sure the entities it holds are.
4. **Expand** the question with the names of the closest related entities.
5. **Search** by vector (the expanded question) and BM25.
6. **Combine**: ``0.6 × cosine + 0.4 × graph relevance`` by default (weights
   configurable, BM25 optional), or reciprocal-rank fusion; deduplicate.
7. **Enrich** each result: entities of its passage, the path that found it,
   the seed entity it started from.

Settings: :class:`~cef.retrieve.presets.GraphFirstSettings`, overridable per
query through ``GraphQuery.options``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cef.graph.filter import EdgeFilter
from cef.graph.index import GraphIndex
from cef.model import Chunk, Explanation, GraphPath, RankedChunk, SearchStrategy
from cef.retrieve.anchors import record_entities, target_entities
from cef.retrieve.context import QueryContext
from cef.retrieve.entities import (
    TEXT_RELATIONS,
    EntityIndex,
    LinkedEntity,
    entity_index,
    link_query_entities,
)
from cef.retrieve.expand import build_reasoning_context, path_for
from cef.retrieve.presets import GraphFirstSettings, settings_for
from cef.retrieve.search import bm25_hits, vector_hits
from cef.retrieve.stagestate import GraphReach, RelatedEntity
from cef.schema.textgraph import CO_OCCURS_WITH, MENTIONS

__all__ = ["GraphEvidence", "explore", "graph_first_search"]


@dataclass
class _Reach:
    """How a node was reached: score (link confidence × path confidence × decay^hops) and path."""

    score: float
    path: GraphPath
    seed: str


@dataclass
class GraphEvidence:
    """What the graph says about a question: reached nodes and the chunks they point to."""

    reached: dict[int, _Reach] = field(default_factory=dict)
    chunk_score: dict[str, float] = field(default_factory=dict)
    chunk_path: dict[str, GraphPath] = field(default_factory=dict)
    chunk_seed: dict[str, str] = field(default_factory=dict)
    chunk_holder: dict[str, int] = field(default_factory=dict)


def _traversal_filter(qc: QueryContext, s: GraphFirstSettings) -> EdgeFilter | None:
    g = qc.state.graph
    t = qc.query.traversal
    wanted = list(s.relation_types or t.relation_types)
    if not wanted:
        wanted = [name for name in g.rel_types if name not in TEXT_RELATIONS]
        if not wanted:
            return None
    return g.edge_filter(
        relation_types=wanted,
        semantics=t.semantics or None,
        direction=t.direction,
        min_confidence=max(s.min_confidence, t.min_confidence),
        valid_at=qc.query.as_of or qc.now,
        scope=qc.query.scope,
    )


def explore(
    qc: QueryContext, index: EntityIndex, seeds: Sequence[LinkedEntity], s: GraphFirstSettings
) -> GraphEvidence:
    """Steps 2–3: traverse from the seed entities, add co-occurring ones, score the chunks they reach."""
    st = qc.state
    g = st.graph
    ev = GraphEvidence()
    depth = s.depth if s.depth is not None else qc.query.traversal.depth
    seed_conf = {e.pos: e.confidence for e in seeds}
    flt = _traversal_filter(qc, s) if depth > 0 else None
    min_path = max(s.min_path_confidence, qc.query.traversal.min_path_confidence)
    exp = g.expand(
        list(seed_conf),
        depth if flt is not None else 0,
        flt if flt is not None else g.edge_filter(relation_types=[MENTIONS]),
        max_nodes=min(s.max_graph_nodes, qc.query.max_graph_nodes),
        min_path_confidence=min_path,
    )
    for pos, d, conf in zip(exp.nodes.tolist(), exp.depth.tolist(), exp.confidence.tolist(), strict=True):
        path = path_for(g, exp, pos)
        seed = path.node_ids[0]
        base = seed_conf.get(g.pos(seed) or -1, 1.0)
        ev.reached[pos] = _Reach(base * conf * s.hop_decay**d, path, seed)
    if s.cooccurrence and s.max_cooccurring:
        _cooccurring(g, ev, seed_conf, s)
    _gather_chunks(qc, index, ev)
    return ev


def _cooccurring(
    g: GraphIndex, ev: GraphEvidence, seed_conf: dict[int, float], s: GraphFirstSettings
) -> None:
    """The entities most often mentioned together with each seed (CO_OCCURS_WITH, one hop)."""
    if g.relations.get(CO_OCCURS_WITH) is None:
        return
    flt = g.edge_filter(relation_types=[CO_OCCURS_WITH], min_confidence=0.0)
    for seed, conf in seed_conf.items():
        edges, _, targets, fwd = g.step(np.array([seed], dtype=np.int64), flt)
        if not len(edges):
            continue
        strength = g.e_weight.view[edges].astype(np.float64)
        order = np.argsort(-strength, kind="stable")[: s.max_cooccurring]
        top = float(strength[order[0]])
        for k in order.tolist():
            t = int(targets[k])
            if t in ev.reached:
                continue
            e = int(edges[k])
            score = conf * float(g.e_conf[e]) * s.hop_decay * (float(strength[k]) / top)
            path = GraphPath(
                node_ids=[g.node_ids[seed], g.node_ids[t]],
                relation_types=[g.relation_name(e, bool(fwd[k]))],
                edge_ids=[g.edge_ids[e]],
                confidence=float(g.e_conf[e]),
            )
            ev.reached[t] = _Reach(score, path, g.node_ids[seed])


def _gather_chunks(qc: QueryContext, index: EntityIndex, ev: GraphEvidence) -> None:
    """Chunks of passages mentioning a reached entity, and chunks linked to a reached node."""
    g = qc.state.graph
    top_w = float(index.ent_weight.max()) if len(index.ent_weight) else 1.0

    def credit(cid: str, value: float, path: GraphPath, seed: str, holder: int) -> None:
        ev.chunk_score[cid] = ev.chunk_score.get(cid, 0.0) + value
        best = ev.chunk_path.get(cid)
        if best is None or path.length < best.length:
            ev.chunk_path[cid] = path
            ev.chunk_seed[cid] = seed
            ev.chunk_holder[cid] = holder

    direct = qc.state.store.chunks_for_nodes([g.node_ids[p] for p in ev.reached])
    for pos, reach in ev.reached.items():
        for cid in direct.get(g.node_ids[pos], []):
            credit(cid, reach.score, reach.path, reach.seed, pos)
        pidx, weights, edges = index.passages_of(pos)
        for i, w, e in zip(pidx.tolist(), weights.tolist(), edges.tolist(), strict=True):
            holder = int(index.passages[i])
            path = GraphPath(
                node_ids=[*reach.path.node_ids, g.node_ids[holder]],
                relation_types=[*reach.path.relation_types, g.relation_name(e, False)],
                edge_ids=[*reach.path.edge_ids, g.edge_ids[e]],
                confidence=reach.path.confidence * float(g.e_conf[e]),
            )
            for cid in index.passage_chunks[i]:
                credit(cid, reach.score * w / top_w, path, reach.seed, holder)
    peak = max(ev.chunk_score.values(), default=0.0)
    if peak > 0:
        ev.chunk_score = {c: v / peak for c, v in ev.chunk_score.items()}


def _expanded_query(
    qc: QueryContext, ev: GraphEvidence, seeds: Sequence[LinkedEntity], index: EntityIndex, n: int
) -> str:
    """Step 4: the question plus the names of the closest related entities it does not already say."""
    text = qc.query.query
    if n <= 0:
        return text
    low = text.lower()
    seed_pos = {e.pos for e in seeds}
    extra: list[str] = []
    for pos, _ in sorted(ev.reached.items(), key=lambda kv: (-kv[1].score, kv[0])):
        name = index.names.get(pos)
        if pos in seed_pos or not name or name.lower() in low or pos in index.passage_index:
            continue
        extra.append(name)
        if len(extra) >= n:
            break
    return f"{text} {' '.join(extra)}" if extra else text


def _ranks(scores: dict[str, float]) -> dict[str, int]:
    return {cid: r for r, (cid, _) in enumerate(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])), 1)}


def graph_first_search(qc: QueryContext) -> list[RankedChunk] | None:
    """Seed 001's pipeline: query entities → graph → chunks → vector + BM25 → combined ranking.

    ``None`` (not applicable) when the graph has no named node to match;
    ``[]`` when the question names none.
    """
    s = settings_for(GraphFirstSettings, qc.query)
    st = qc.state
    index = entity_index(st)
    if not index.key_index:
        return None
    linked = link_query_entities(index, st, qc.query.query, s.linking, scope=qc.query.scope)
    linked += [t for t in target_entities(qc) if t.pos not in {e.pos for e in linked}]
    record_entities(qc, linked)
    if not linked:
        qc.notes.append("graph: the question names no entity of the graph")
        return []
    qc.check_deadline("graph entity linking")
    ev = explore(qc, index, linked, s)
    qc.check_deadline("graph exploration")
    expanded = _expanded_query(qc, ev, linked, index, s.expansion_terms) if s.expand_query else qc.query.query
    if expanded != qc.query.query:
        qc.enhanced_query = expanded
    k = max(s.candidates, qc.query.top_k)
    vec_hits = vector_hits(qc, expanded, k)
    bm_hits = bm25_hits(qc, qc.query.query, k) if s.bm25_weight > 0 or s.fusion == "rrf" else []
    cands = list(dict.fromkeys([*ev.chunk_score, *(c for c, _ in vec_hits), *(c for c, _ in bm_hits)]))
    chunks = qc.chunks(cands)
    cands = [c for c in cands if c in chunks]
    if not cands:
        return []
    qvec = qc.embed(expanded)
    vsim: dict[str, float] = {}
    if qvec is not None and len(st.chunk_vectors):
        vsim = dict(zip(cands, st.chunk_vectors.similarities(qvec, cands).tolist(), strict=True))
    top_bm = bm_hits[0][1] if bm_hits else 0.0
    bm = {c: v / top_bm for c, v in bm_hits} if top_bm > 0 else {}
    graph = {c: ev.chunk_score.get(c, 0.0) for c in cands}
    if s.fusion == "rrf":
        lists = [
            (s.vector_weight, vsim),
            (s.graph_weight, {c: v for c, v in graph.items() if v > 0}),
            (s.bm25_weight or 1.0, bm),
        ]
        combined = {c: 0.0 for c in cands}
        for weight, scores in lists:
            for cid, r in _ranks(scores).items():
                combined[cid] += weight / (s.rrf_k + r)
    else:
        combined = {
            c: s.vector_weight * vsim.get(c, 0.0) + s.graph_weight * graph[c] + s.bm25_weight * bm.get(c, 0.0)
            for c in cands
        }
    ordered = sorted(cands, key=lambda c: (-combined[c], c))[: qc.query.top_k]
    qc.check_deadline("graph ranking")
    ranks = {
        "vector": _ranks(vsim),
        "graph": _ranks({c: v for c, v in graph.items() if v > 0}),
        "bm25": _ranks(bm),
    }
    results = _explained(qc, index, ev, ordered, chunks, combined, vsim, bm, graph, ranks)
    _record(qc, index, ev, linked, s, len(results))
    return results


def _explained(
    qc: QueryContext,
    index: EntityIndex,
    ev: GraphEvidence,
    ordered: list[str],
    chunks: dict[str, Chunk],
    combined: dict[str, float],
    vsim: dict[str, float],
    bm: dict[str, float],
    graph: dict[str, float],
    ranks: dict[str, dict[str, int]],
) -> list[RankedChunk]:
    """Step 7: each result with its passage's entities, the path that found it and its scores."""
    g = qc.state.graph
    on_paths = {i for cid in ordered if (p := ev.chunk_path.get(cid)) is not None for i in p.node_ids}
    id_names = {i: index.names[pos] for i in on_paths if (pos := g.pos(i)) is not None and pos in index.names}
    holders = list(dict.fromkeys(chunks[cid].node_id for cid in ordered if chunks[cid].node_id))
    id_names.update({n.id: n.name for n in qc.state.get_nodes([h for h in holders if h])})
    out = []
    for cid in ordered:
        chunk = chunks[cid]
        holder_id = chunk.node_id
        hpos = g.pos(holder_id) if holder_id else None
        ents: list[str] = []
        if hpos is not None and hpos in index.passage_index:
            mine = index.passage_entities[index.passage_index[hpos]].tolist()
            mine.sort(key=lambda p: (-(ev.reached[p].score if p in ev.reached else 0.0), p))
            ents = [index.names[p] for p in mine[:10] if p in index.names]
        path = ev.chunk_path.get(cid)
        if path is not None:
            path = path.model_copy(update={"node_names": [id_names.get(i, i) for i in path.node_ids]})
        expl = Explanation(
            strategy=SearchStrategy.GRAPH,
            anchors=[ev.chunk_seed[cid]] if cid in ev.chunk_seed else [],
            path=path,
            vector_score=round(vsim[cid], 6) if cid in vsim else None,
            bm25_score=round(bm[cid], 6) if cid in bm else None,
            graph_score=round(graph[cid], 6),
            rank_sources={name: r[cid] for name, r in ranks.items() if cid in r},
            entities=ents,
        )
        out.append(RankedChunk(chunk=chunk, score=float(combined[cid]), explanation=expl))
    return out


def _record(
    qc: QueryContext,
    index: EntityIndex,
    ev: GraphEvidence,
    linked: Sequence[LinkedEntity],
    s: GraphFirstSettings,
    n_results: int,
) -> None:
    """Related entities (with scores) in the metadata; the reasoning context when GRAPH answers."""
    g = qc.state.graph
    seed_pos = {e.pos for e in linked}
    related = [
        RelatedEntity(g.node_ids[p], index.names.get(p, g.node_ids[p]), round(r.score, 4), r.path.length)
        for p, r in sorted(ev.reached.items(), key=lambda kv: (-kv[1].score, kv[0]))
        if p not in seed_pos and p not in index.passage_index
    ][:20]
    qc.stages.related_entities = related
    qc.stages.graph = GraphReach(len(ev.reached), len(ev.chunk_score))
    if n_results >= max(qc.query.min_results, 1) and qc.query.include_reasoning_context:
        depth = s.depth if s.depth is not None else qc.query.traversal.depth
        flt = _traversal_filter(qc, s)
        if flt is not None:
            ctx, _ = build_reasoning_context(
                g,
                qc.state.get_nodes,
                sorted(seed_pos),
                depth,
                flt,
                max_nodes=s.max_graph_nodes,
                min_path_confidence=max(s.min_path_confidence, qc.query.traversal.min_path_confidence),
            )
            qc.reasoning = ctx
