"""``retrieve_context`` stages 4 and 5: facts, relations, passages, beliefs, conflicts and what
changed, scored and made candidates of the bundle's packer."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from cef.memory.beliefs import importance
from cef.memory.bundle import (
    BeliefInfo,
    Conflict,
    Fact,
    ObservationRef,
    Relation,
    Section,
    TemporalChange,
    TemporalContext,
)
from cef.memory.temporal import aware, changed_edges
from cef.model import Node, in_scope
from cef.schema.kinds import BELIEF_RELATIONS, NodeKind

if TYPE_CHECKING:
    pass


from cef.memory.constraints import Reached, Run
from cef.memory.walk import WALK, edges_among, relation_boosts
from cef.retrieve.bestfirst import walk_weights

__all__ = ["assemble"]

#: final score factor of facts whose type the question names
HINTED_TYPE_BOOST = 1.5

#: share of a contained node's score its container gains (a file defining relevant functions)
CONTAINER_SHARE = 0.3

#: facts scoring at least this share of the best one are core facts
CORE_SHARE = 0.35

#: properties never shown in facts (bookkeeping)
HIDDEN_PROPS = frozenset({"aliases", "usage", "source_document", "embedding"})

MAX_RELATIONS_PER_FACT = 8

#: relations shown under a node the question names
MAX_RELATIONS_NAMED = 20

EXCERPT_CHARS = 240

_DEFAULT_WINDOW = timedelta(days=30)


# ---------------------------------------------------------------- assembly
def _props(node: Node) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in node.properties.items():
        if k in HIDDEN_PROPS or k == "name" or v is None or v == "" or v == []:
            continue
        if isinstance(v, str) and len(v) > 200:
            v = v[:197] + "..."
        out[k] = v
    return out


def assemble(run: Run, reached: dict[int, Reached]) -> tuple[list[tuple[Section, Any]], TemporalContext]:
    memory = run.memory
    st = memory.kb.state
    g = st.graph
    reg = memory.registry
    c = run.constraints
    ids = [g.node_ids[p] for p in reached]
    nodes = {n.id: n for n in st.get_nodes(ids)}
    # score: expansion priority (relations, types, meaning along the path) × importance
    qvec = run.embed(run.query_text)
    scores: dict[int, float] = {}
    for pos, r in reached.items():
        node = nodes.get(g.node_ids[pos])
        imp = importance(node.properties, node.updated, run.now) if node is not None else 0.5
        scores[pos] = r.priority * (0.5 + imp)
    # a container of relevant parts is relevant (a file that defines what the question is about)
    among = edges_among(run, list(reached))
    bonus: dict[int, float] = {}
    for e, s, t in among:
        rt = g.rel_types.get(g.relations.names[int(g.e_rel[e])])
        if rt is not None and rt.semantics.value == "CONTAINMENT" and rt.parent_end is not None:
            parent, child = (s, t) if rt.parent_end == "source" else (t, s)
            bonus[parent] = bonus.get(parent, 0.0) + CONTAINER_SHARE * scores[child]
    for pos, extra in bonus.items():
        scores[pos] += min(extra, scores[pos])
    # the kinds of things the question asks for come first ("which files", "what medications")
    hinted = {t for u in run.understandings for t in u.type_hints}
    if hinted:
        for pos in scores:
            if any(reg.is_a(g.label_of(pos), t) for t in hinted):
                scores[pos] *= HINTED_TYPE_BOOST

    fact_positions = [
        p for p in reached if reg.kind_of(g.label_of(p)) not in (NodeKind.BELIEF, NodeKind.OBSERVATION)
    ]
    belief_positions = [p for p in reached if reg.kind_of(g.label_of(p)) == NodeKind.BELIEF]
    fact_positions.sort(key=lambda p: (-scores[p], g.node_ids[p]))
    in_facts = set(fact_positions)

    # relations among the facts, attached to the better-scored end, named relations first
    rel_boost = relation_boosts(run)
    asked = {name for name, w in rel_boost.items() if w >= 0.5}
    relation_weight = walk_weights(g, rel_boost, None, WALK).relation  # as the walk weighs them
    candidates_by_owner: dict[int, list[tuple[float, str, str, int]]] = {}
    for e, s, t in among:
        if s not in in_facts or t not in in_facts:
            continue
        name = g.relations.names[int(g.e_rel[e])]
        owner, other = (s, t) if scores[s] >= scores[t] else (t, s)
        weight = float(relation_weight[int(g.e_rel[e])])
        candidates_by_owner.setdefault(owner, []).append(
            ((scores[s] + scores[t]) * weight, name, g.node_ids[other], e)
        )
    chosen_edges: dict[int, list[int]] = {}
    for owner, cands in candidates_by_owner.items():
        named_owner = reached[owner].anchor_how in ("name", "synonym", "self")
        chosen_edges[owner] = _diverse(
            cands, MAX_RELATIONS_NAMED if named_owner else MAX_RELATIONS_PER_FACT, asked
        )
    wanted = [g.edge_ids[e] for es in chosen_edges.values() for e in es]
    records = {e.id: e for e in st.store.get_edges(wanted)}
    attached: dict[int, list[Relation]] = {}
    for owner, es in chosen_edges.items():
        for e in es:
            rec = records.get(g.edge_ids[e])
            if rec is None:
                continue
            src, dst = nodes.get(rec.source), nodes.get(rec.target)
            attached.setdefault(owner, []).append(
                Relation(
                    source_id=rec.source,
                    source_name=src.name if src else rec.source,
                    relation=rec.relation_type,
                    target_id=rec.target,
                    target_name=dst.name if dst else rec.target,
                    properties={k: v for k, v in rec.properties.items() if k not in _EDGE_HIDDEN},
                    confidence=round(rec.confidence, 4),
                    valid_from=rec.valid_from,
                    valid_to=rec.valid_to,
                )
            )

    # passages for the top facts
    excerpts = _excerpts(run, [g.node_ids[p] for p in fact_positions[:15]], qvec)

    best = scores[fact_positions[0]] if fact_positions else 1.0
    facts: list[tuple[Section, Any]] = []
    for p in fact_positions:
        node = nodes.get(g.node_ids[p])
        if node is None:
            continue
        r = reached[p]
        named = r.anchor_how in ("name", "synonym", "self")
        rels = attached.get(p, [])
        kind = reg.kind_of(node.label)
        fact = Fact(
            node_id=node.id,
            name=node.name,
            type=node.label,
            kind=kind.value if kind else None,
            properties=_props(node),
            relations=rels,
            score=round(scores[p], 4),
            depth=r.depth,
            path=_path(g, reached, p, nodes) if r.depth > 1 else None,  # one hop shows as a relation
            excerpt=excerpts.get(node.id),
        )
        named = r.anchor_how in ("name", "synonym", "self")
        section: Section = "core_facts" if (named or scores[p] >= CORE_SHARE * best) else "supporting"
        facts.append((section, fact))

    parents = {p: reached[p].parent for p in belief_positions}
    beliefs, conflicts = _beliefs(run, fact_positions, parents, nodes, scores)
    temporal_ctx, changes = _temporal(run, fact_positions, nodes, scores)
    candidates: list[tuple[Section, Any]] = list(facts)
    if c.include_beliefs:
        candidates.extend(("beliefs", b) for b in beliefs)
    if c.include_conflicts:
        candidates.extend(("conflicts", x) for x in conflicts)
    if c.include_temporal_context:
        candidates.extend(("temporal", x) for x in changes)
    return candidates, temporal_ctx


T = TypeVar("T")


def _diverse(
    scored: list[tuple[float, str, str, T]], limit: int, asked: Collection[str] = frozenset()
) -> list[T]:
    """Up to ``limit`` of ``(score, relation, tiebreak, item)``: relations the question names first,
    then round-robin across relation types (best type first), so one busy relation does not hide
    the others."""
    ranked = sorted(scored, key=lambda x: (-x[0], x[1], x[2]))
    out = [x[3] for x in ranked if x[1] in asked][:limit]
    groups: dict[str, list[T]] = {}
    for x in ranked:
        if x[1] not in asked:
            groups.setdefault(x[1], []).append(x[3])
    order = list(groups.values())  # groups appear in the order of their best item
    i = 0
    while len(out) < limit and any(i < len(grp) for grp in order):
        for grp in order:
            if i < len(grp) and len(out) < limit:
                out.append(grp[i])
        i += 1
    return out


_EDGE_HIDDEN = frozenset({"source_document", "superseded_at", "supersedes_edge", "version_of"})


def _path(g: Any, reached: dict[int, Reached], pos: int, nodes: dict[str, Node]) -> str:
    parts: list[str] = []
    cur = reached[pos]
    hops = 0
    while cur.parent >= 0 and hops < 12:
        name = nodes[g.node_ids[cur.pos]].name if g.node_ids[cur.pos] in nodes else g.node_ids[cur.pos]
        parts.append(f"-{g.relation_name(cur.edge, cur.forward)}-> {name}")
        cur = reached[cur.parent]
        hops += 1
    root = nodes[g.node_ids[cur.pos]].name if g.node_ids[cur.pos] in nodes else g.node_ids[cur.pos]
    return " ".join([root, *reversed(parts)])


def _excerpts(run: Run, node_ids: list[str], qvec: np.ndarray | None) -> dict[str, str]:
    st = run.memory.kb.state
    linked = st.store.chunks_for_nodes(node_ids)
    if not linked:
        return {}
    all_ids = [cid for ids in linked.values() for cid in ids[:50]]
    sims = (
        dict(zip(all_ids, st.chunk_vectors.similarities(qvec, all_ids).tolist(), strict=True))
        if qvec is not None
        else {}
    )
    best: dict[str, str] = {}
    for nid, cids in linked.items():
        cids = cids[:50]
        pick = max(cids, key=lambda x: sims.get(x, 0.0)) if sims else cids[0]
        best[nid] = pick
    chunks = {ch.id: ch for ch in st.store.get_chunks(list(best.values()))}
    out: dict[str, str] = {}
    for nid, cid in best.items():
        ch = chunks.get(cid)
        if ch is None or not in_scope(ch.scope, run.scope):
            continue
        text = " ".join(ch.content.split())
        out[nid] = text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."
    return out


def _beliefs(
    run: Run,
    fact_positions: list[int],
    belief_parents: dict[int, int],
    nodes: dict[str, Node],
    scores: dict[int, float],
) -> tuple[list[BeliefInfo], list[Conflict]]:
    memory = run.memory
    st = memory.kb.state
    g = st.graph
    reg = memory.registry
    about_code = g.relations.get("about")
    subject_of: dict[int, int] = {}  # belief pos -> subject pos
    if about_code is not None and fact_positions:
        flt = run.flt
        edges, owners, targets, _ = g.step(np.asarray(fact_positions[:200], dtype=np.int64), flt)
        for e, o, t in zip(edges.tolist(), owners.tolist(), targets.tolist(), strict=True):
            if int(g.e_rel[e]) == about_code and reg.kind_of(g.label_of(t)) == NodeKind.BELIEF:
                subject_of.setdefault(int(t), int(o))
    for p, parent in belief_parents.items():  # belief-kind nodes reached by a domain relation
        subject_of.setdefault(p, parent)
    if not subject_of:
        return [], []
    bnodes = {n.id: n for n in st.get_nodes([g.node_ids[p] for p in subject_of])}
    keywords = {k for u in run.understandings for k in u.keywords}
    rows: list[tuple[float, BeliefInfo, Node]] = []
    for bpos, spos in subject_of.items():
        bn = bnodes.get(g.node_ids[bpos])
        if bn is None:
            continue
        props = bn.properties
        conf = float(props.get("confidence", 1.0))
        subject = nodes.get(g.node_ids[spos]) if spos >= 0 else None
        info = BeliefInfo(
            belief_id=bn.id,
            statement=str(props.get("statement") or bn.name),
            subject_id=subject.id if subject else props.get("subject"),
            subject_name=subject.name if subject else None,
            confidence=round(conf, 4),
            status=str(props.get("status", "active")),
            sources=list(props.get("source_types", [])),
            verified=bool(props.get("verified", False)),
            supported_by=len(props.get("supporting", [])),
            contradicted_by=list(props.get("contradicted_by", [])),
        )
        words = set(str(info.statement).lower().split())
        overlap = sum(1 for k in keywords if any(w.startswith(k) for w in words))
        rank = (scores.get(spos, 0.0) if spos >= 0 else scores.get(bpos, 0.0)) * (1 + overlap) * conf
        rows.append((rank, info, bn))
    rows.sort(key=lambda r: (-r[0], r[1].belief_id))
    threshold = run.constraints.confidence_threshold
    beliefs = [info for _, info, _ in rows if info.confidence >= threshold]
    conflicts: list[Conflict] = []
    contested = [(info, bn) for _, info, bn in rows if info.contradicted_by]
    if contested:
        obs_ids = {
            o
            for _, bn in contested
            for o in [*bn.properties.get("supporting", []), *bn.properties.get("contradicted_by", [])]
        }
        obs = {n.id: n for n in st.get_nodes(sorted(obs_ids))}

        def ref(oid: str) -> ObservationRef | None:
            n = obs.get(oid)
            if n is None:
                return None
            p = n.properties
            at = p.get("observed_at")
            return ObservationRef(
                id=n.id,
                text=str(p.get("text", n.name)),
                source_type=str(p.get("source_type", "")),
                credibility=float(p.get("credibility", 0.0)),
                observed_at=datetime.fromisoformat(at) if isinstance(at, str) else None,
            )

        for info, bn in contested:
            sup = [r for r in (ref(o) for o in bn.properties.get("supporting", [])) if r is not None]
            con = [r for r in (ref(o) for o in bn.properties.get("contradicted_by", [])) if r is not None]
            conflicts.append(
                Conflict(
                    belief_id=info.belief_id,
                    statement=info.statement,
                    subject_name=info.subject_name,
                    confidence=info.confidence,
                    supporting=sup[:5],
                    contradicting=con[:5],
                )
            )
    return beliefs, conflicts


def _temporal(
    run: Run, fact_positions: list[int], nodes: dict[str, Node], scores: dict[int, float]
) -> tuple[TemporalContext, list[TemporalChange]]:
    t = run.temporal
    ref = t.as_of if t.mode == "as_of" and t.as_of is not None else run.now
    since = t.since if t.since is not None else ref - _DEFAULT_WINDOW
    until = t.until if t.until is not None else ref
    ctx = TemporalContext(mode=t.mode, reference_time=run.now, as_of=t.as_of, since=since, until=until)
    if not run.constraints.include_temporal_context or not fact_positions:
        return ctx, []
    g = run.memory.kb.state.graph
    changes = changed_edges(
        g,
        aware(since),
        aware(until),
        scope=run.scope,
        node_positions=np.asarray(fact_positions, dtype=np.int64),
        limit=60,
    )
    changes = [ch for ch in changes if ch.relation not in BELIEF_RELATIONS]
    # the changes that touch the most relevant facts first, newest first among equals
    relevance = {g.node_ids[p]: scores.get(p, 0.0) for p in fact_positions}
    changes.sort(
        key=lambda ch: (
            -max(relevance.get(ch.source, 0.0), relevance.get(ch.target, 0.0)),
            -ch.at.timestamp(),
        )
    )
    missing = [i for ch in changes for i in (ch.source, ch.target) if i not in nodes]
    if missing:
        nodes = {**nodes, **{n.id: n for n in run.memory.kb.state.get_nodes(list(dict.fromkeys(missing)))}}
    out = [
        TemporalChange(
            kind=ch.kind,
            at=ch.at,
            source_name=nodes[ch.source].name if ch.source in nodes else ch.source,
            relation=ch.relation,
            target_name=nodes[ch.target].name if ch.target in nodes else ch.target,
            valid_from=ch.valid_from,
            valid_to=ch.valid_to,
        )
        for ch in changes
    ]
    return ctx, out
