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

import heapq
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from cef.context.formats import ContextFormat
from cef.errors import ValidationError
from cef.graph.filter import EdgeFilter
from cef.memory.beliefs import importance
from cef.memory.bundle import (
    BeliefInfo,
    Conflict,
    ContextBundle,
    Fact,
    ObservationRef,
    Relation,
    Section,
    TemporalChange,
    TemporalContext,
)
from cef.memory.temporal import TemporalConstraint, aware, changed_edges
from cef.memory.understand import QueryUnderstanding, understand_query
from cef.model import Node
from cef.schema.kinds import BELIEF_RELATIONS, NodeKind

if TYPE_CHECKING:
    from cef.memory.view import MemoryRetrievalView

__all__ = ["RetrievalConstraints", "normalize_scope", "retrieve_context"]

#: priority kept per hop away from an anchor (before edge confidence and relevance)
HOP_DECAY = 0.7
#: a relation the question does not name keeps this share of the priority (named: up to 1)
UNNAMED_RELATION = 0.5
#: a node of a type the question does not name keeps this share (named: 1)
UNNAMED_TYPE = 0.8
#: neighbour priority × clip(SIM_BASE + SIM_SLOPE × cosine(question, neighbour), SIM_BASE, 1)
SIM_BASE = 0.4
SIM_SLOPE = 1.2
#: final score factor of facts whose type the question names
HINTED_TYPE_BOOST = 1.5
#: share of a contained node's score its container gains (a file defining relevant functions)
CONTAINER_SHARE = 0.3
#: most neighbours of one node offered to the queue (hubs)
FANOUT = 48
#: a scope holding more than this share of the nodes is searched by filtering a global search
ALLOWED_SHARE = 0.5
#: nodes taken from the queue and expanded together
EXPAND_BATCH = 8
#: a node-vector match below this cosine is not an anchor
MIN_VECTOR = 0.3
#: facts scoring at least this share of the best one are core facts
CORE_SHARE = 0.35
#: properties never shown in facts (bookkeeping)
HIDDEN_PROPS = frozenset({"aliases", "usage", "source_document", "embedding"})
MAX_RELATIONS_PER_FACT = 8
#: relations shown under a node the question names
MAX_RELATIONS_NAMED = 20
EXCERPT_CHARS = 240
_DEFAULT_WINDOW = timedelta(days=30)


class RetrievalConstraints(BaseModel):
    """What to retrieve and how much.

    ``scope`` is a scope name or a mapping (``{"user_id": "u1"}`` → ``user_id=u1``);
    a scoped query sees that scope's records and unscoped ones, never another
    scope's. ``temporal`` picks current state (default), as-of T, or history,
    and the window of the "what changed" section.
    """

    model_config = ConfigDict(extra="forbid")

    temporal: TemporalConstraint | None = None
    confidence_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    scope: str | dict[str, str] | None = None
    max_tokens: int = Field(default=4000, ge=1, le=1_000_000)
    max_nodes: int = Field(default=100, ge=1, le=100_000)
    max_depth: int = Field(default=5, ge=0, le=10)
    max_anchors: int = Field(default=10, ge=1, le=200)
    include_beliefs: bool = True
    include_temporal_context: bool = True
    include_conflicts: bool = True
    format: ContextFormat = ContextFormat.MARKDOWN
    record_usage: bool = False

    @field_validator("scope")
    @classmethod
    def _scope(cls, v: str | dict[str, str] | None) -> str | dict[str, str] | None:
        normalize_scope(v)
        return v


def normalize_scope(scope: str | dict[str, str] | None) -> str | None:
    """A scope mapping as one stable string (``a=1;b=2``); strings pass through."""
    if scope is None:
        return None
    if isinstance(scope, dict):
        if not scope:
            return None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in scope.items()):
            raise ValueError("scope mappings hold strings")
        return ";".join(f"{k}={scope[k]}" for k in sorted(scope))
    if not isinstance(scope, str) or not scope.strip():
        raise ValueError("a scope is a non-empty string or a mapping of strings")
    return scope


@dataclass
class _Reached:
    pos: int
    priority: float
    depth: int
    parent: int = -1
    edge: int = -1
    forward: bool = True
    anchor_how: str | None = None


@dataclass
class _Run:
    memory: MemoryRetrievalView
    constraints: RetrievalConstraints
    scope: str | None
    now: datetime
    temporal: TemporalConstraint
    understandings: list[QueryUnderstanding]
    flt: EdgeFilter
    query_text: str
    timings: dict[str, float] = field(default_factory=dict)
    embed_ms: float = 0.0

    def embed(self, text: str) -> np.ndarray | None:
        t0 = time.perf_counter()
        vec = self.memory.embed_query(text)
        self.embed_ms += (time.perf_counter() - t0) * 1000
        return vec


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
        run = _Run(memory, c, scope, now, temporal, us, flt, " ".join(queries))
        run.timings["understand"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        anchors = _anchors(run)
        run.timings["anchors"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        reached = _expand(run, anchors)
        run.timings["expand"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        candidates, temporal_ctx = _assemble(run, reached)
        run.timings["assemble"] = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    bundle = ContextBundle.assemble(
        query=queries,
        candidates=candidates,
        temporal=temporal_ctx if c.include_temporal_context else None,
        max_tokens=c.max_tokens,
        counter=memory.token_counter,
        fmt=c.format,
        scope=scope,
        understanding={
            "queries": [u.summary() for u in us],
            "anchors": [
                {"node_id": g.node_ids[a.pos], "score": round(a.priority, 4), "how": a.anchor_how}
                for a in anchors
            ],
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


# ----------------------------------------------------------------- anchors
def _scope_ok(run: _Run, pos: int) -> bool:
    g = run.memory.kb.state.graph
    if not g.node_alive[pos]:
        return False
    if run.scope is None:
        return True
    code = int(g.node_scope[pos])
    return code == -1 or g.scopes.names[code] == run.scope


def _anchors(run: _Run) -> list[_Reached]:
    memory = run.memory
    st = memory.kb.state
    g = st.graph
    reg = memory.registry
    found: dict[int, _Reached] = {}

    def add(node_id: str, score: float, how: str) -> None:
        pos = g.pos(node_id)
        if pos is None or not _scope_ok(run, pos):
            return
        kind = reg.kind_of(g.label_of(pos))
        if kind in (NodeKind.OBSERVATION, NodeKind.BELIEF) and how != "name":
            return
        cur = found.get(pos)
        if cur is None or score > cur.priority:
            found[pos] = _Reached(pos=pos, priority=score, depth=0, anchor_how=how)

    hinted: set[str] = set()
    for u in run.understandings:
        hinted.update(u.type_hints)
        for e in u.entities:
            if e.how in ("name", "synonym", "self"):
                for nid in e.node_ids:
                    add(nid, 1.0 if e.how != "synonym" else 0.95, e.how)
            elif e.how == "ner":
                vec = run.embed(e.text)
                if vec is not None:
                    for nid, sim in _node_vector_hits(run, vec, 3):
                        if sim >= MIN_VECTOR + 0.1:
                            add(nid, 0.8 * sim, "ner")
    qvec = run.embed(run.query_text)
    if qvec is not None and len(st.node_vectors):
        for nid, sim in _node_vector_hits(run, qvec, 8):
            if sim >= MIN_VECTOR:
                add(nid, 0.9 * sim, "vector")
        for t in hinted:
            for nid, sim in _node_vector_hits(run, qvec, 6, t):
                if sim >= MIN_VECTOR:
                    add(nid, 0.9 * sim + 0.05, "type")
    # chunks by meaning and by words lend their nodes
    chunk_hits: list[tuple[str, float]] = []
    if qvec is not None and len(st.chunk_vectors):
        chunk_hits.extend((cid, 0.6 * s) for cid, s in st.chunk_vectors.search(qvec, 8) if s >= MIN_VECTOR)
    text_hits = st.store.search_text("chunk", run.query_text, 8, scope=run.scope)
    if text_hits:
        top = max(h.score for h in text_hits) or 1.0
        chunk_hits.extend((h.id, 0.5 * h.score / top) for h in text_hits)
    if chunk_hits:
        chunks = {ch.id: ch for ch in st.store.get_chunks([cid for cid, _ in chunk_hits])}
        for cid, s in chunk_hits:
            ch = chunks.get(cid)
            if ch is None or ch.node_id is None:
                continue
            if run.scope is not None and ch.scope is not None and ch.scope != run.scope:
                continue
            add(ch.node_id, s, "passage")
    # in the current state (or as of T), a node whose every fact has ended is history, not an anchor
    if run.temporal.mode != "history":
        for pos in [p for p, a in found.items() if a.anchor_how not in ("name", "synonym", "self")]:
            if g.incident_edges(pos) and not len(g.step(np.array([pos], dtype=np.int64), run.flt)[0]):
                del found[pos]
    # type-hinted anchors first among equals
    for a in found.values():
        if hinted and not any(reg.is_a(g.label_of(a.pos), t) for t in hinted):
            a.priority *= UNNAMED_TYPE
    ranked = sorted(found.values(), key=lambda a: (-a.priority, g.node_ids[a.pos]))
    return ranked[: run.constraints.max_anchors]


def _allowed_ids(run: _Run, type_name: str | None = None) -> list[str] | None:
    """Ids of the live nodes the query may see (its scope, of a type); None when that is (nearly) all."""
    g = run.memory.kb.state.graph
    n = len(g.node_ids)
    mask = g.node_alive.view[:n].copy()
    if run.scope is not None:
        code = g.scopes.get(run.scope)
        sc = g.node_scope.view[:n]
        mask &= (sc == -1) | (sc == (code if code is not None else -2))
    if type_name is not None:
        reg = run.memory.registry
        codes = [c for c, lb in enumerate(g.labels.names) if reg.is_a(lb, type_name)]
        mask &= np.isin(g.node_label.view[:n], codes)
    positions = np.flatnonzero(mask)
    if type_name is None and len(positions) > ALLOWED_SHARE * max(1, int(g.node_alive.view[:n].sum())):
        return None
    ids = g.node_ids
    return [ids[p] for p in positions.tolist()]


def _node_vector_hits(
    run: _Run, vec: np.ndarray, k: int, type_name: str | None = None
) -> list[tuple[str, float]]:
    """Top-k nodes by cosine among those the query may see (its scope; a type, if given)."""
    st = run.memory.kb.state
    allowed = _allowed_ids(run, type_name)
    if allowed is not None:
        return st.node_vectors.search(vec, k, allowed=allowed) if allowed else []
    g = st.graph
    fetch = k if run.scope is None else k * 4
    kept: list[tuple[str, float]] = []
    for _ in range(4):  # the scope holds most nodes: search all, drop the few others
        hits = st.node_vectors.search(vec, fetch)
        kept = [(i, s) for i, s in hits if (p := g.pos(i)) is not None and _scope_ok(run, p)]
        if len(kept) >= k or len(hits) < fetch:
            break
        fetch *= 4
    return kept[:k]


# --------------------------------------------------------------- expansion
def _relation_boosts(run: _Run) -> dict[str, float]:
    """Relation name → how much the questions name it (0..1); an inverse name counts for its base."""
    g = run.memory.kb.state.graph
    boost: dict[str, float] = {}
    for u in run.understandings:
        for name, w in u.relation_hints.items():
            boost[name] = max(boost.get(name, 0.0), w)
    for name, rt in g.rel_types.items():
        if rt.inverse and rt.inverse in boost:
            boost[name] = max(boost.get(name, 0.0), boost[rt.inverse])
    return boost


def _expand(run: _Run, anchors: list[_Reached]) -> dict[int, _Reached]:
    """Best-first expansion from the anchors, bounded by max_depth and max_nodes."""
    memory = run.memory
    st = memory.kb.state
    g = st.graph
    reg = memory.registry
    c = run.constraints
    qvec = run.embed(run.query_text) if len(st.node_vectors) else None
    rel_boost = _relation_boosts(run)
    hinted = {t for u in run.understandings for t in u.type_hints}
    rel_codes = {name: g.relations.get(name) for name in g.relations.names}
    boost_by_code = np.ones(len(g.relations), dtype=np.float64)
    skip_by_code = np.zeros(len(g.relations), dtype=np.bool_)
    for name, code in rel_codes.items():
        if code is None:
            continue
        boost_by_code[code] = UNNAMED_RELATION + (1.0 - UNNAMED_RELATION) * min(1.0, rel_boost.get(name, 0.0))
        skip_by_code[code] = name in BELIEF_RELATIONS
    label_boost_arr = np.array(
        [1.0 if not hinted or any(reg.is_a(lb, t) for t in hinted) else UNNAMED_TYPE for lb in g.labels.names]
        or [1.0],
        dtype=np.float64,
    )

    heap: list[tuple[float, int, int, int, int, int, bool]] = []
    counter = 0
    for a in anchors:
        heapq.heappush(heap, (-a.priority, counter, a.pos, 0, -1, -1, True))
        counter += 1
    anchor_how = {a.pos: a.anchor_how for a in anchors}
    reached: dict[int, _Reached] = {}
    while heap and len(reached) < c.max_nodes:
        # the best few nodes of the queue are expanded together (one vectorized step)
        batch: list[_Reached] = []
        while heap and len(batch) < EXPAND_BATCH and len(reached) < c.max_nodes:
            negp, _, pos, depth, parent, edge, fwd = heapq.heappop(heap)
            if pos in reached:
                continue
            r = reached[pos] = _Reached(pos, -negp, depth, parent, edge, fwd, anchor_how.get(pos))
            if depth < c.max_depth:
                batch.append(r)
        if not batch:
            continue
        edges, owners, targets, forward = g.step(np.array([r.pos for r in batch], dtype=np.int64), run.flt)
        if not len(edges):
            continue
        codes = g.e_rel.view[edges]
        keep = ~skip_by_code[codes]
        if reached:
            keep &= ~np.isin(targets, np.fromiter(reached, dtype=np.int64, count=len(reached)))
        edges, owners, targets, forward, codes = (
            edges[keep],
            owners[keep],
            targets[keep],
            forward[keep],
            codes[keep],
        )
        if not len(edges):
            continue
        by_pos = {r.pos: r for r in batch}
        owner_prio = np.fromiter(
            (by_pos[int(o)].priority for o in owners), dtype=np.float64, count=len(owners)
        )
        tboost = label_boost_arr[g.node_label.view[targets]]
        prio = (
            owner_prio * HOP_DECAY * g.e_conf.view[edges].astype(np.float64) * boost_by_code[codes] * tboost
        )
        order = np.argsort(-prio, kind="stable")[: FANOUT * len(batch)]
        edges, owners, targets, forward, prio = (
            edges[order],
            owners[order],
            targets[order],
            forward[order],
            prio[order],
        )
        if qvec is not None:  # meaning steers the walk: a neighbour unlike the question costs more
            sims = st.node_vectors.similarities(qvec, [g.node_ids[t] for t in targets.tolist()])
            prio = prio * np.clip(SIM_BASE + SIM_SLOPE * sims.astype(np.float64), SIM_BASE, 1.0)
        for p_, t, o, e, f in zip(
            prio.tolist(), targets.tolist(), owners.tolist(), edges.tolist(), forward.tolist(), strict=True
        ):
            heapq.heappush(heap, (-p_, counter, t, by_pos[o].depth + 1, o, e, f))
            counter += 1
    return reached


def _edges_among(run: _Run, positions: Sequence[int]) -> list[tuple[int, int, int]]:
    """Allowed edges (position, source, target) between the given nodes, belief relations left out."""
    g = run.memory.kb.state.graph
    if not positions:
        return []
    arr = np.asarray(sorted(positions), dtype=np.int64)
    edges, owners, targets, _ = g.step(arr, run.flt)
    keep = np.isin(targets, arr) & (owners < targets)  # each edge once (it is seen from both ends)
    edges = edges[keep]
    skip = {g.relations.get(name) for name in BELIEF_RELATIONS}
    out = []
    for e in np.unique(edges).tolist():
        if int(g.e_rel[e]) in skip:
            continue
        out.append((e, int(g.e_src[e]), int(g.e_dst[e])))
    return out


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


def _assemble(run: _Run, reached: dict[int, _Reached]) -> tuple[list[tuple[Section, Any]], TemporalContext]:
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
    among = _edges_among(run, list(reached))
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
    rel_boost = _relation_boosts(run)
    asked = {name for name, w in rel_boost.items() if w >= 0.5}
    candidates_by_owner: dict[int, list[tuple[float, str, str, int]]] = {}
    for e, s, t in among:
        if s not in in_facts or t not in in_facts:
            continue
        name = g.relations.names[int(g.e_rel[e])]
        owner, other = (s, t) if scores[s] >= scores[t] else (t, s)
        weight = UNNAMED_RELATION + (1.0 - UNNAMED_RELATION) * min(1.0, rel_boost.get(name, 0.0))
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


def _path(g: Any, reached: dict[int, _Reached], pos: int, nodes: dict[str, Node]) -> str:
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


def _excerpts(run: _Run, node_ids: list[str], qvec: np.ndarray | None) -> dict[str, str]:
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
        if ch is None or (run.scope is not None and ch.scope is not None and ch.scope != run.scope):
            continue
        text = " ".join(ch.content.split())
        out[nid] = text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."
    return out


def _beliefs(
    run: _Run,
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
    run: _Run, fact_positions: list[int], nodes: dict[str, Node], scores: dict[int, float]
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
