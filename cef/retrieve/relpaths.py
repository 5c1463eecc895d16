"""PATHS strategy: typed relation-path reasoning from the question's anchors.

A question about a curated graph names a thing ("John Miller", "The Matrix")
and asks for what lies a few typed hops away ("the drugs that interact with
the medication he takes"). For such a question:

1. **Anchors**: the query's explicit targets, else the graph nodes its text
   names (:func:`~cef.retrieve.entities.link_query_entities`: NER and a gazetteer of
   every node name and alias, exact, alias key, then fuzzy) that have typed
   edges of their own.
2. **Candidate relation paths** of 1..``max_hops`` hops that exist from each
   anchor over the curated typed edges (the text-graph relations MENTIONS,
   CO_OCCURS_WITH and SYNONYM are not facts), direction-aware, valid at the
   query's ``as_of`` (default: now), above its confidence limits, restricted
   to ``traversal.relation_types`` when given.
3. **Scoring** each path against the question with the anchor's mention
   masked (:mod:`cef.retrieve.pathscore`): cosine of the question to the path's
   words (relation names, inverse names, descriptions and example values) plus
   lexical cues (question words that name a relation, one per hop), minus a
   cost per hop no word explains.
4. **Answers**: the best paths are walked; their end nodes (never the anchor
   itself) become :class:`~cef.model.RankedNode` answers, each with one typed
   path that reaches it ("John Miller -[PRESCRIBED]-> Warfarin
   -[INTERACTS_WITH]-> Amiodarone"), ranked by path score, then by how many
   paths reach them and their confidence product.
5. **Chunks**: one chunk of each answer node first (in answer order, as far as
   ``top_k`` allows: several answers each get their own chunk before any gets
   a second), then the answers' other chunks, then those of the nodes on their
   paths, each explained by that typed path.

It returns ``None`` (not applicable) when the graph holds no typed relation
edges or the question names no node that has any.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from cef.graph.arrays import spans
from cef.graph.filter import EdgeFilter
from cef.graph.index import GraphIndex
from cef.model import (
    Chunk,
    Explanation,
    GraphPath,
    Node,
    RankedChunk,
    RankedNode,
    ReasoningContext,
    SearchStrategy,
)
from cef.retrieve.context import Anchor, QueryContext
from cef.retrieve.pathanchors import PathAnchor, path_anchors
from cef.retrieve.pathscore import PathScorer, path_scorer
from cef.retrieve.pathwalk import candidate_paths
from cef.retrieve.pathwords import RelationPath, masked_question
from cef.retrieve.presets import PathSettings, settings_for
from cef.retrieve.stagestate import BestPath, PathsInfo
from cef.schema.textgraph import TEXT_GRAPH_RELATIONS

__all__ = [
    "PathAnchor",
    "candidate_paths",
    "relation_path_search",
    "walk_path",
]


@dataclass
class _Reach:
    """Walks of one relation path from one anchor: per end node, one path and how many reach it."""

    nodes: np.ndarray  # (paths, hops + 1) node positions
    edges: np.ndarray  # (paths, hops) edge positions
    conf: np.ndarray  # confidence product per path
    ends: dict[int, tuple[int, int, float]] = field(default_factory=dict)  # end -> (row, count, best conf)


def curated_filter(qc: QueryContext) -> EdgeFilter | None:
    """The query's edge filter over typed (non-text) relations; None when the graph has none."""
    g = qc.state.graph
    q = qc.query
    wanted = [r for r in q.traversal.relation_types if r not in TEXT_GRAPH_RELATIONS]
    if not wanted:
        wanted = [name for name in g.relations.names if name not in TEXT_GRAPH_RELATIONS]
        if not wanted:
            return None
    flt = g.edge_filter(
        relation_types=wanted,
        semantics=q.traversal.semantics or None,
        direction=q.traversal.direction,
        min_confidence=q.traversal.min_confidence,
        valid_at=q.as_of or qc.now,
        scope=q.scope,
    )
    if not (flt.forward_ok.any() or flt.backward_ok.any()):
        return None
    return flt


def walk_path(
    graph: GraphIndex, start: int, path: RelationPath, flt: EdgeFilter, *, cap: int = 200_000
) -> _Reach:
    """Every walk of ``path`` from ``start`` (up to ``cap`` partial walks per hop), no node twice."""
    nodes = np.asarray([[start]], dtype=np.int64)
    edges = np.zeros((1, 0), dtype=np.int64)
    conf = np.ones(1)
    rel = graph.e_rel.view
    for hop in path:
        code = graph.relations.get(hop.relation)
        if code is None or not len(nodes):
            return _Reach(np.zeros((0, nodes.shape[1] + 1), np.int64), np.zeros((0, edges.shape[1] + 1), np.int64),
                          np.zeros(0))  # fmt: skip
        frontier, inverse = np.unique(nodes[:, -1], return_inverse=True)
        e, owner, target, fwd = graph.step(frontier, flt)
        bidir = bool(graph._rel_bidir[code])
        ok = rel[e] == code
        if not bidir:
            ok &= fwd == hop.forward
        e, owner, target = e[ok], owner[ok], target[ok]
        # rows of `nodes` whose last node is each owner
        f_index = np.searchsorted(frontier, owner)
        order = np.argsort(inverse, kind="stable")
        counts = np.bincount(inverse, minlength=len(frontier))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        reps = counts[f_index]
        if not reps.sum():
            nodes = np.zeros((0, nodes.shape[1] + 1), np.int64)
            edges = np.zeros((0, edges.shape[1] + 1), np.int64)
            conf = np.zeros(0)
            continue
        move = np.repeat(np.arange(len(e)), reps)
        offs = spans(starts[f_index], reps)
        rows = order[offs]
        if len(rows) > cap:
            rows, move = rows[:cap], move[:cap]
        new_nodes = np.concatenate([nodes[rows], target[move][:, None]], axis=1)
        simple = (new_nodes[:, :-1] != new_nodes[:, -1:]).all(axis=1)
        nodes = new_nodes[simple]
        edges = np.concatenate([edges[rows], e[move][:, None].astype(np.int64)], axis=1)[simple]
        conf = (conf[rows] * graph.e_conf.view[e[move]])[simple]
    reach = _Reach(nodes, edges, conf)
    if len(nodes):
        end = nodes[:, -1]
        order = np.lexsort((-conf, end))
        uniq, first, counts = np.unique(end[order], return_index=True, return_counts=True)
        for u, f, c in zip(uniq.tolist(), first.tolist(), counts.tolist(), strict=True):
            row = int(order[f])
            reach.ends[u] = (row, c, float(conf[row]))
    return reach


# ----------------------------------------------------------------------------- anchors
# ----------------------------------------------------------------------------- strategy
#: paths scored between two deadline checks (see :class:`CheckedPaths`)
CHECK_EVERY = 256


class CheckedPaths(list[RelationPath]):
    """Candidate paths that check the query's deadline every :data:`CHECK_EVERY` paths iterated: the
    scorer's loops over them stop near the time limit without knowing of it."""

    def __init__(self, paths: list[RelationPath], check: Callable[[], None]) -> None:
        super().__init__(paths)
        self.check = check

    def __iter__(self) -> Iterator[RelationPath]:
        for n, path in enumerate(super().__iter__()):
            if n % CHECK_EVERY == 0:
                self.check()
            yield path


def relation_path_search(qc: QueryContext, *, anchor_chunks: bool = True) -> list[RankedChunk] | None:
    """Rank answer nodes and their chunks by the typed relation paths the question asks for.

    ``anchor_chunks``: also rank the chunks of the anchors themselves (after the answers' and the
    paths'); the ``auto`` route leaves them to the text sources, which find them by the question's words.
    What it found goes to ``qc.stages.paths`` (:class:`~cef.retrieve.stagestate.PathsInfo`), with
    each returned chunk's role: ``answer`` (linked to an answer of the best paths), ``chain`` (the
    one chunk of a node in the middle of a best answer's path that follows the answers' own),
    ``path`` (another chunk of a node on an answer's path), ``anchor`` or ``weak answer`` (an answer
    of a weaker path).
    """
    flt = curated_filter(qc)
    if flt is None:
        return None
    settings = settings_for(PathSettings, qc.query)
    st = qc.state
    g = st.graph
    anchors = path_anchors(qc, flt)
    if not anchors:
        return None
    scorer = path_scorer(st, settings)
    max_hops = settings.max_hops
    scored: list[tuple[float, PathAnchor, RelationPath]] = []
    explained: dict[tuple[int, RelationPath], float] = {}
    walks = []
    for a in anchors:
        check = partial(qc.check_deadline, "paths")
        check()
        found = candidate_paths(g, a.pos, flt, max_hops, deep_limit=settings.deep_limit, check=check)
        walks.append((a, CheckedPaths(found, check)))
    walks = [(a, paths) for a, paths in walks if paths]
    # the question masked at each anchor's mention, embedded in one batch
    masked = list(dict.fromkeys(masked_question(qc.query.query, a.span) for a, _ in walks))
    got = qc.embed_many(masked) if masked else None
    vectors = dict(zip(masked, got, strict=True)) if got is not None else None
    for a, paths in walks:
        named: dict[RelationPath, float] = {}
        # the other anchors' mentions: things the question names, not what it asks for
        others = [o.span for o, _ in walks if o.span is not None and _apart(o.span, a.span)]
        ranked = scorer.rank(
            qc.query.query,
            a.span,
            paths,
            embed=qc.embed_many,
            explained_out=named,
            question_vectors=vectors,
            others=others,
            anchor=a.pos,
        )
        for s, p in ranked:
            scored.append((s + settings.anchor_weight * a.confidence, a, p))
        explained.update({(a.pos, p): v for p, v in named.items()})
    if not scored:
        qc.notes.append("paths: no typed relation path leaves the question's anchors")
        return []
    scored.sort(key=lambda x: -x[0])
    qc.check_deadline("paths")
    answers, answer_named, via = _answers(qc, scored, flt, settings, explained)
    _, best_anchor, best_path = scored[0]
    info = qc.stages.paths = PathsInfo(
        anchors=[a.node_id for a in anchors],
        # the question's words name at least half the hops of the best path, from an anchor it names
        named=round(explained.get((best_anchor.pos, best_path), 0.0), 4),
        # the same measure for the path behind each answer (a weaker path's may name less of the question)
        answer_named=answer_named,
        anchor_confidence=best_anchor.confidence,
        best=[
            BestPath(a.node_id, scorer.describe(p), round(s, 4))
            for s, a, p in scored[: settings.report_paths]
        ],
    )
    if not answers:
        qc.notes.append("paths: the best relation paths reach no node")
        return []
    qc.answer_nodes = answers
    if qc.reasoning is None:
        qc.reasoning = _reasoning(qc, anchors, answers, settings)
    known = {a.pos for a in qc.anchors}
    qc.anchors.extend(
        Anchor(a.pos, a.node_id, a.confidence, a.how, a.name) for a in anchors if a.pos not in known
    )
    return _chunks(qc, answers, via, settings, anchor_chunks=anchor_chunks, roles=info.roles)


def _apart(span: tuple[int, int], other: tuple[int, int] | None) -> bool:
    """``span`` and ``other`` (None: no mention) share no character."""
    return other is None or span[1] <= other[0] or other[1] <= span[0]


def _reasoning(
    qc: QueryContext, anchors: list[PathAnchor], answers: list[RankedNode], settings: PathSettings
) -> ReasoningContext:
    """What the path reasoning explored: the anchors, the nodes on the answers' paths, those paths."""
    paths = [a.path for a in answers if a.path is not None][: settings.max_answers]
    root_ids = [a.node_id for a in anchors]
    on_paths = [n for p in paths for n in p.node_ids if n not in root_ids]
    ids = list(dict.fromkeys([*root_ids, *on_paths]))
    recs = qc.nodes(ids)
    return ReasoningContext(
        root_nodes=[recs[i] for i in root_ids if i in recs],
        related_nodes=[recs[i] for i in dict.fromkeys(on_paths) if i in recs],
        paths=paths,
        depth=max((p.length for p in paths), default=0),
        metadata={"strategy": "paths"},
    )


def _answers(
    qc: QueryContext,
    scored: list[tuple[float, PathAnchor, RelationPath]],
    flt: EdgeFilter,
    settings: PathSettings,
    explained: dict[tuple[int, RelationPath], float],
) -> tuple[list[RankedNode], dict[str, float], dict[str, list[list[str]]]]:
    """Answer nodes of the best paths: the best path's ends first (then the next paths' new ones),
    per answer the share of its path the question names (``explained``: per anchor and path), and
    per answer the nodes in the middle of the walks of its path that reach it (:func:`_via`)."""
    g = qc.state.graph
    top = scored[0][0]
    found: dict[int, tuple[float, int, float, PathAnchor, RelationPath, _Reach, int]] = {}
    walked = 0
    anchor_pos = {a.pos for _, a, _ in scored}
    _, lead, lead_path = scored[0]
    for s, a, p in scored:
        if walked >= settings.walk_paths or (top - s > settings.score_margin and found):
            break
        if found and a.pos == lead.pos and len(p) < len(lead_path) and lead_path[: len(p)] == p:
            continue  # a first part of the best path, which answered: its ends are nodes on the way
        walked += 1
        reach = walk_path(g, a.pos, p, flt)
        min_conf = qc.query.traversal.min_path_confidence
        for end, (row, count, conf) in reach.ends.items():
            if end in anchor_pos or conf < min_conf:
                continue
            if end not in found:
                found[end] = (s, count, conf, a, p, reach, row)
        if len(found) >= settings.max_answers:
            break
    order = sorted(found.items(), key=lambda kv: (-kv[1][0], -kv[1][1], -kv[1][2], kv[0]))
    order = order[: settings.max_answers]
    if not order:
        return [], {}, {}
    ids = [g.node_ids[p] for p, _ in order]
    path_ids = {g.node_ids[int(n)] for _, v in order for n in v[5].nodes[v[6]].tolist()}
    records = {n.id: n for n in qc.state.get_nodes(sorted(path_ids | set(ids)))}
    linked = qc.state.store.chunks_for_nodes(ids)
    out: list[RankedNode] = []
    best = order[0][1][0]
    named: dict[str, float] = {}
    for pos, (s, count, _conf, a, p, reach, row) in order:
        node = records.get(g.node_ids[pos])
        if node is None:
            continue
        named[node.id] = round(explained.get((a.pos, p), 0.0), 4)
        path = _graph_path(g, reach, row, records)
        score = math.exp(s - best) * (1.0 + settings.count_bonus * math.log1p(count))
        out.append(
            RankedNode(
                node=node,
                score=round(score, 6),
                strategy=SearchStrategy.PATHS,
                path=path,
                text=render_node(node),
                chunk_ids=sorted(linked.get(node.id, [])),
            )
        )
    leading = {a.node.id for a in out if a.score >= out[0].score * settings.primary_share} if out else set()
    via = {
        g.node_ids[pos]: _via(g, v[5], pos, settings.chain_nodes)
        for pos, v in order
        if g.node_ids[pos] in leading
    }  # the best paths' answers only: the chain leads to them (see _chain)
    return out, named, via


def _via(g: GraphIndex, reach: _Reach, end: int, walks: int) -> list[list[str]]:
    """The nodes in the middle of up to ``walks`` walks of ``reach`` that end at ``end`` (the surest
    first), by distance from it: the nodes one hop before it, then two hops, up to the anchor's
    neighbour (every walk of one relation path has the same length)."""
    rows = np.flatnonzero(reach.nodes[:, -1] == end) if len(reach.nodes) else np.zeros(0, np.int64)
    rows = rows[np.argsort(-reach.conf[rows], kind="stable")][:walks]
    width = reach.nodes.shape[1]
    return [
        list(dict.fromkeys(g.node_ids[int(n)] for n in reach.nodes[rows, -back].tolist()))
        for back in range(2, width)
    ]


def _graph_path(g: GraphIndex, reach: _Reach, row: int, records: dict[str, Node]) -> GraphPath:
    nodes = [int(n) for n in reach.nodes[row].tolist()]
    edges = [int(e) for e in reach.edges[row].tolist()]
    rels: list[str] = []
    back: list[bool] = []
    for i, e in enumerate(edges):
        forward = int(g.e_src.view[e]) == nodes[i]
        name = g.relations.names[int(g.e_rel.view[e])]
        rt = g.rel_types.get(name)
        if forward or (rt is not None and rt.bidirectional):
            rels.append(name)
            back.append(False)
        elif rt is not None and rt.inverse:
            rels.append(rt.inverse)
            back.append(False)
        else:
            rels.append(name)
            back.append(True)
    ids = [g.node_ids[n] for n in nodes]
    rec_names = [records[i].name if i in records else i for i in ids]
    return GraphPath(
        node_ids=ids,
        relation_types=rels,
        edge_ids=[g.edge_ids[e] for e in edges],
        node_names=rec_names,
        reversed=back if any(back) else [],
        weight=float(sum(float(g.e_weight.view[e]) for e in edges)),
        confidence=round(float(np.prod([float(g.e_conf.view[e]) for e in edges])) if edges else 1.0, 6),
    )


def render_node(node: Node) -> str:
    """A node as one line of text: ``Medication Amiodarone (brand: Cordarone)``."""
    props = [
        f"{k}: {v}"
        for k, v in node.properties.items()
        if k not in ("name", "title", "label") and isinstance(v, str | int | float | bool)
    ]
    head = f"{node.label} {node.name}"
    return f"{head} ({', '.join(props)})" if props else head


def _chain(
    answers: list[RankedNode], via: dict[str, list[list[str]]], settings: PathSettings
) -> list[tuple[str, RankedNode]]:
    """The nodes in the middle of the best paths' walks to their answers (neither anchor nor answer,
    :func:`_via`), each once with the first answer it leads to: the nodes one hop before each answer
    first (the facts that lead to it), then those two hops before, in answer order at each distance;
    up to ``chain_nodes`` of them."""
    top = answers[0].score or 1.0
    best = [a for a in answers if a.score >= top * settings.primary_share]
    ends = {a.node.id for a in answers}
    out: dict[str, RankedNode] = {}
    for back in range(max((len(via.get(a.node.id, [])) for a in best), default=0)):
        for ans in best:
            steps = via.get(ans.node.id, [])
            for nid in steps[back] if back < len(steps) else []:
                if nid not in ends:
                    out.setdefault(nid, ans)
    return list(out.items())[: settings.chain_nodes]


def _chunks(
    qc: QueryContext,
    answers: list[RankedNode],
    via: dict[str, list[list[str]]],
    settings: PathSettings,
    *,
    anchor_chunks: bool = True,
    roles: dict[str, str] | None = None,
) -> list[RankedChunk]:
    """Each answer's own chunk first, in answer order, as far as ``top_k`` allows (several answers:
    one chunk of each before a second of any); then one chunk of each node in the middle of their
    paths (:func:`_chain`, role ``chain``: the facts that lead from the anchor to the answers), as far
    as ``top_k`` allows; then the further chunks of the best paths' answers, then of the other nodes
    on their paths (path nodes, then anchors), then of the answers of weaker paths. A node's own
    chunk is the one of its chunks most like the question."""
    top = answers[0].score or 1.0
    owner: dict[str, tuple[float, RankedNode, str]] = {}  # chunk -> (score, answer, role)
    for ans in answers:
        primary = ans.score >= top * settings.primary_share
        for cid in ans.chunk_ids:
            if cid not in owner:
                score = ans.score / top
                owner[cid] = (
                    (score, ans, "answer")
                    if primary
                    else (settings.weak_chunk_factor * score, ans, "weak answer")
                )
    chain = _chain(answers, via, settings)
    via_ids = {
        nid
        for ans in answers[: settings.path_node_answers]
        for nid in (ans.path.node_ids[1:-1] if ans.path else [])
    }
    anchors = {ans.path.node_ids[0] for ans in answers if ans.path}
    extra = qc.state.store.chunks_for_nodes(sorted(via_ids | anchors | {nid for nid, _ in chain}))
    for nid, ans in chain:
        for cid in extra.get(nid, []):
            if cid not in owner:
                owner[cid] = (settings.path_chunk_factor * ans.score / top, ans, "path")
    for ans in answers[: settings.path_node_answers]:
        if ans.path is None:
            continue
        for nid in ans.path.node_ids[:-1]:
            role = "anchor" if nid in anchors else "path"
            if role == "anchor" and not anchor_chunks:
                continue
            factor = settings.anchor_chunk_factor if role == "anchor" else settings.path_chunk_factor
            for cid in extra.get(nid, []):
                if cid not in owner:
                    owner[cid] = (factor * ans.score / top, ans, role)
    if not owner:
        return []
    chunks = qc.chunks(list(owner))
    vec = qc.query_vector
    ids = [c for c in owner if c in chunks]
    sims = (
        dict(zip(ids, qc.state.chunk_vectors.similarities(vec, ids).tolist(), strict=True))
        if vec is not None and ids
        else {}
    )
    first = _first_chunks(qc, answers, chain, extra, chunks, sims, owner, settings)
    leading = set(first)
    ranked = first + sorted(
        (c for c in ids if c not in leading), key=lambda c: (-owner[c][0], -sims.get(c, 0.0), c)
    )
    out: list[RankedChunk] = []
    ceiling = math.inf
    for rank, cid in enumerate(ranked, 1):
        score, ans, role = owner[cid]
        score = ceiling = min(score, ceiling)  # the order above, never a higher score below
        expl = Explanation(
            strategy=SearchStrategy.PATHS,
            anchors=[ans.path.node_ids[0]] if ans.path else [],
            path=ans.path,
            graph_score=round(score, 6),
            vector_score=round(sims[cid], 6) if cid in sims else None,
            rank_sources={"paths": rank},
            entities=[ans.node.name],
            notes=[
                f"{role}: chunk of {ans.node.name!r}"
                if role in ("answer", "weak answer")
                else f"{'on' if role in ('path', 'chain') else role + ' of'} the path to {ans.node.name!r}"
            ],
        )
        out.append(RankedChunk(chunk=chunks[cid], score=score, explanation=expl))
        if roles is not None:
            roles[cid] = role
    return out[: max(qc.query.top_k, 1) * 3]


def _first_chunks(
    qc: QueryContext,
    answers: list[RankedNode],
    chain: list[tuple[str, RankedNode]],
    extra: dict[str, list[str]],
    chunks: dict[str, Chunk],
    sims: dict[str, float],
    owner: dict[str, tuple[float, RankedNode, str]],
    settings: PathSettings,
) -> list[str]:
    """The chunks that lead, up to ``top_k`` of them: each best path's answer's own chunk, in answer
    order (a weaker path's answers come after the chunks of the nodes on the best answers' paths),
    then one chunk of each node of ``chain``; ``owner`` gets their roles (``answer``, ``chain``)."""
    k = max(qc.query.top_k, 1)
    top = answers[0].score or 1.0
    lead: list[str] = []

    def pick(mine: list[str]) -> str | None:
        mine = [c for c in mine if c in chunks and c not in lead]
        return min(mine, key=lambda c: (-sims.get(c, 0.0), c)) if mine else None

    for ans in answers:
        if len(lead) >= k or ans.score < top * settings.primary_share:
            break
        cid = pick([c for c in ans.chunk_ids if owner.get(c, (0.0, None, ""))[1] is ans])
        if cid is not None:
            lead.append(cid)
            owner[cid] = (ans.score / top, ans, "answer")
    for nid, _ans in chain:
        if len(lead) >= k:
            break
        cid = pick([c for c in extra.get(nid, []) if owner.get(c, (0.0, None, ""))[2] == "path"])
        if cid is not None:
            lead.append(cid)
            owner[cid] = (owner[cid][0], owner[cid][1], "chain")
    return lead


__all__ += ["PathScorer", "render_node"]
