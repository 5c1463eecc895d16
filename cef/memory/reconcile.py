"""Writes that reconcile new information with what the memory holds.

* :func:`reconcile` — one observation into beliefs (create, reinforce,
  supersede, contradict), one transaction.
* :func:`write_documents` — parsed documents as new versions of themselves:
  nodes upserted, chunks replaced, edges diffed bi-temporally, one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.errors import ValidationError
from cef.extract.normalize import normalize_name
from cef.graph.filter import SUPERSEDED_AT
from cef.memory.beliefs import Claim, Observation, SourceType, UpdateResult, combine_confidence, parse_claim
from cef.memory.ingest import SOURCE_DOCUMENT
from cef.memory.temporal import supersession
from cef.model import Batch, Edge, Node, new_id
from cef.schema.kinds import NodeKind
from cef.schema.pipelines import IngestContext

if TYPE_CHECKING:
    from cef.memory.view import MemoryView

__all__ = ["SUPERSEDE_RATIO", "reconcile", "write_documents"]

#: a change supersedes a belief when its source's credibility is at least this share of the belief's confidence
SUPERSEDE_RATIO = 0.75
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd"})
DOC_META = "memory.doc."


# ------------------------------------------------------------------ subjects
def _self_node(memory: MemoryView, scope: str | None) -> Node:
    return Node(
        id=memory.self_id(scope),
        label=NodeKind.INSTANCE.value,
        properties={"name": "me" if scope is None else f"me ({scope})"},
        scope=scope,
    )


def _find_subject(
    memory: MemoryView, obs: Observation, scope: str | None
) -> tuple[str, tuple[int, int] | None, list[Node]]:
    """(subject node id, span of its mention in the text, nodes to create)."""
    g = memory.kb.state.graph
    reg = memory.registry
    text = obs.text
    if obs.subject:
        sid = obs.subject if g.has_node(obs.subject) else memory.resolve_name(obs.subject, scope) or ""
        low = text.lower()
        names = [obs.subject]
        if sid:
            node = memory.kb.state.get_nodes([sid])
            names = [n for nd in node for n in [nd.name, *nd.aliases]] or names
        span = None
        for name in names:
            i = low.find(name.lower())
            if i >= 0:
                span = (i, i + len(name))
                break
        if sid:
            return sid, span, []
        key = normalize_name(obs.subject)
        if not key:
            raise ValidationError(f"observation subject {obs.subject!r} has no usable name")
        new = Node(
            id=f"entity:{scope + ':' if scope else ''}{key}",
            label="entity",
            properties={"name": obs.subject},
            scope=scope,
        )
        return new.id, span, ([] if g.has_node(new.id) else [new])
    found = []
    for node_id, _name, pos, length in memory.names_in_text(text, scope):
        pos_g = g.pos(node_id)
        if pos_g is None:
            continue
        if reg.kind_of(g.label_of(pos_g)) in (NodeKind.BELIEF, NodeKind.OBSERVATION):
            continue
        found.append((pos, -length, node_id))
    if found:
        pos, neg_len, node_id = min(found)
        return node_id, (pos, pos - neg_len), []
    words = {w.strip(".,!?;:").lower() for w in text.split()}
    if words & _FIRST_PERSON:
        me = _self_node(memory, scope)
        return me.id, None, ([] if g.has_node(me.id) else [me])
    extractor = memory.extractor
    if extractor is not None:
        mentions = [m for m in extractor.extract([text])[0] if m.start >= 0 and m.normalized]
        if mentions:
            m = mentions[0]
            new = Node(
                id=f"entity:{scope + ':' if scope else ''}{m.normalized}",
                label="entity",
                properties={"name": m.text, "entity_type": m.type.lower()},
                scope=scope,
            )
            return new.id, (m.start, m.end), ([] if g.has_node(new.id) else [new])
    me = _self_node(memory, scope)
    return me.id, None, ([] if g.has_node(me.id) else [me])


def _active_beliefs(
    memory: MemoryView, subject_id: str, key: str, scope: str | None, now: datetime
) -> list[tuple[Node, Edge]]:
    """Current beliefs about a subject with this claim key, with their ``about`` edge."""
    st = memory.kb.state
    g = st.graph
    pos = g.pos(subject_id)
    if pos is None or not g.known_relation("about"):
        return []
    flt = g.edge_filter(relation_types=["about"], direction="in", valid_at=now, scope=scope)
    edges, _, sources, _ = g.step(np.array([pos], dtype=np.int64), flt)
    if not len(edges):
        return []
    ids = [g.node_ids[int(s)] for s in sources]
    nodes = {n.id: n for n in st.store.get_nodes(ids)}
    recs = {e.id: e for e in st.store.get_edges([g.edge_ids[int(e)] for e in edges])}
    out = []
    for e, nid in zip(edges.tolist(), ids, strict=True):
        n = nodes.get(nid)
        rec = recs.get(g.edge_ids[e])
        if n is None or rec is None or not memory.registry.is_a(n.label, NodeKind.BELIEF.value):
            continue
        if n.properties.get("claim_key") == key and n.properties.get("status") != "superseded":
            out.append((n, rec))
    out.sort(key=lambda x: (-float(x[0].properties.get("confidence", 0.0)), x[0].id))
    return out


def _belief_node(
    obs: Observation, obs_id: str, claim: Claim, subject_id: str, scope: str | None, observed: str
) -> Node:
    cred = obs.source.weight
    return Node(
        id=f"belief:{new_id()}",
        label=NodeKind.BELIEF.value,
        properties={
            "name": obs.text[:200],
            "statement": obs.text[:1000],
            "subject": subject_id,
            "claim_key": claim.key,
            "value": claim.value,
            "negated": claim.negated,
            "functional": claim.functional,
            "confidence": combine_confidence([cred]),
            "status": "active",
            "support": [cred],
            "contra": [],
            "supporting": [obs_id],
            "contradicted_by": [],
            "source_types": [obs.source.type.value],
            "verified": obs.source.type in (SourceType.OBSERVED, SourceType.EXTERNAL_API),
            "first_observed": observed,
        },
        content=obs.text[:1000],
        scope=scope,
    )


def reconcile(memory: MemoryView, obs: Observation) -> UpdateResult:
    """Fold one observation into the beliefs about its subject (module docstring of cef.memory.beliefs)."""
    scope = obs.scope
    # when we learned it: when the source said it (a replay of past observations), else now
    now = obs.observed_at or memory.now()
    observed_at = now
    valid_from = obs.valid_from or observed_at
    observed = observed_at.isoformat()
    cred = obs.source.weight
    subject_id, span, new_nodes = _find_subject(memory, obs, scope)
    claim = parse_claim(
        obs.text, span, attribute=obs.attribute, value=obs.value, negated=obs.negated, change=obs.change
    )
    obs_id = f"obs:{new_id()}"
    obs_node = Node(
        id=obs_id,
        label=NodeKind.OBSERVATION.value,
        properties={
            "name": obs.text[:200],
            "text": obs.text,
            "source_type": obs.source.type.value,
            "source_id": obs.source.id,
            "credibility": cred,
            "observed_at": observed,
            "subject": subject_id,
            "claim_key": claim.key,
            "negated": claim.negated,
            "value": claim.value,
        },
        content=obs.text[:1000],
        scope=scope,
    )

    def edge(rel: str, src: str, dst: str, **kw: Any) -> Edge:
        return Edge(relation_type=rel, source=src, target=dst, scope=scope, recorded_at=now, **kw)

    nodes: list[Node] = [*new_nodes, obs_node]
    edges: list[Edge] = [edge("about", obs_id, subject_id, valid_from=observed_at)]
    existing = _active_beliefs(memory, subject_id, claim.key, scope, now)
    superseded: list[str] = []
    contradicted: list[str] = []
    if not existing:
        belief = _belief_node(obs, obs_id, claim, subject_id, scope, observed)
        nodes.append(belief)
        edges += [
            edge(
                "about",
                belief.id,
                subject_id,
                valid_from=valid_from,
                confidence=belief.properties["confidence"],
            ),
            edge("supports", obs_id, belief.id),
        ]
        action = "created"
    else:
        old, about = existing[0]
        p = dict(old.properties)
        agrees = bool(p.get("negated")) == claim.negated and (
            not claim.functional or p.get("value") == claim.value
        )
        if agrees:
            p["support"] = [*p.get("support", []), cred]
            p["supporting"] = [*p.get("supporting", []), obs_id]
            p["source_types"] = list(dict.fromkeys([*p.get("source_types", []), obs.source.type.value]))
            p["verified"] = bool(p.get("verified")) or obs.source.type in (
                SourceType.OBSERVED,
                SourceType.EXTERNAL_API,
            )
            p["confidence"] = combine_confidence(p["support"], p.get("contra", []))
            belief = old.model_copy(update={"properties": p})
            nodes.append(belief)
            edges += [
                about.model_copy(update={"confidence": p["confidence"]}),
                edge("supports", obs_id, old.id),
            ]
            action = "reinforced"
        elif (claim.change or claim.functional) and cred >= SUPERSEDE_RATIO * float(p.get("confidence", 1.0)):
            p["status"] = "superseded"
            nodes.append(old.model_copy(update={"properties": p}))
            marked, closed = supersession(about, at=now, valid_to=valid_from)
            belief = _belief_node(obs, obs_id, claim, subject_id, scope, observed)
            nodes.append(belief)
            edges += [
                marked,
                closed,
                edge(
                    "about",
                    belief.id,
                    subject_id,
                    valid_from=valid_from,
                    confidence=belief.properties["confidence"],
                ),
                edge("supports", obs_id, belief.id),
                edge("supersedes", belief.id, old.id),
            ]
            superseded.append(old.id)
            action = "superseded"
        else:
            p["contra"] = [*p.get("contra", []), cred]
            p["contradicted_by"] = [*p.get("contradicted_by", []), obs_id]
            p["confidence"] = combine_confidence(p.get("support", []), p["contra"])
            p["status"] = "contested"
            belief = old.model_copy(update={"properties": p})
            nodes.append(belief)
            edges += [
                about.model_copy(update={"confidence": p["confidence"]}),
                edge("contradicts", obs_id, old.id),
            ]
            contradicted.append(old.id)
            action = "contradicted"
    memory.kb.indexer.upsert_batch(Batch(nodes=nodes, edges=edges))
    return UpdateResult(
        observation_id=obs_id,
        belief_id=belief.id,
        subject_id=subject_id,
        action=action,  # type: ignore[arg-type]
        confidence=float(belief.properties["confidence"]),
        claim=claim.key
        + (f" = {claim.value}" if claim.value else "")
        + (" (negated)" if claim.negated else ""),
        superseded=superseded,
        contradicted=contradicted,
    )


# ----------------------------------------------------------------- documents
def _edge_key(e: Edge) -> tuple[str, str, str]:
    return (e.source, e.relation_type, e.target)


def _same_payload(a: Edge, b: Edge) -> bool:
    skip = {SOURCE_DOCUMENT, SUPERSEDED_AT}
    pa = {k: v for k, v in a.properties.items() if k not in skip}
    pb = {k: v for k, v in b.properties.items() if k not in skip}
    return pa == pb and a.confidence == b.confidence and a.weight == b.weight


def write_documents(
    memory: MemoryView, items: Sequence[tuple[Batch, IngestContext]], now: datetime
) -> list[str]:
    """Write parsed documents as their new versions, all in one transaction; returns their node ids."""
    kb = memory.kb
    store = kb.store
    nodes: dict[str, Node] = {}
    edges: dict[str, Edge] = {}
    chunks: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    remove_chunks: list[str] = []
    relation_types = {}
    touched: list[str] = []
    for batch, ctx in items:
        doc = ctx.document_id
        scope = ctx.scope
        for rt in batch.relation_types:
            relation_types[rt.name] = rt
        doc_nodes: list[str] = []
        for n in batch.nodes:
            if n.id in nodes:
                continue
            props = (
                n.properties if SOURCE_DOCUMENT in n.properties else {**n.properties, SOURCE_DOCUMENT: doc}
            )
            nodes[n.id] = n.model_copy(
                update={"properties": props, "scope": n.scope if n.scope is not None else scope}
            )
            doc_nodes.append(n.id)
        new_edges: dict[tuple[str, str, str], Edge] = {}
        for e in batch.edges:
            stamped = e.model_copy(
                update={
                    "properties": {**e.properties, SOURCE_DOCUMENT: doc},
                    "scope": e.scope if e.scope is not None else scope,
                    "recorded_at": now,
                }
            )
            new_edges.setdefault(_edge_key(stamped), stamped)
        doc_chunks = []
        for c in batch.chunks:
            if c.id in chunks:
                continue
            chunks[c.id] = c.model_copy(
                update={
                    "metadata": {**c.metadata, SOURCE_DOCUMENT: doc},
                    "scope": c.scope if c.scope is not None else scope,
                }
            )
            doc_chunks.append(c.id)
        manifest = store.get_meta(DOC_META + doc) or {}
        previous = [
            e
            for e in store.get_edges(manifest.get("edges", []))
            if SUPERSEDED_AT not in e.properties and e.valid_to is None
        ]
        kept: list[str] = []
        for old in previous:
            new = new_edges.pop(_edge_key(old), None)
            if new is not None and _same_payload(old, new):
                kept.append(old.id)
                continue
            marked, closed = supersession(old, at=now, valid_to=now)
            edges[marked.id] = marked
            edges[closed.id] = closed
            if new is not None:
                new = new.model_copy(
                    update={"id": new_id() if new.id == old.id else new.id, "valid_from": now}
                )
                new_edges[_edge_key(new)] = new
        for e in new_edges.values():
            if e.id in edges or kb.state.graph.edge_pos(e.id) is not None:
                e = e.model_copy(update={"id": new_id()})
            edges[e.id] = e
            kept.append(e.id)
        remove_chunks.extend(c for c in manifest.get("chunks", []) if c not in set(doc_chunks))
        meta[DOC_META + doc] = {
            "sha256": ctx.metadata.get("sha256"),
            "content_type": ctx.content_type,
            "nodes": doc_nodes,
            "chunks": doc_chunks,
            "edges": kept,
            "ingested_at": now.isoformat(),
        }
        touched.extend(doc_nodes)
    memory.registry.validate(list(nodes.values()), [])
    kb.indexer.upsert_batch(
        Batch(
            relation_types=list(relation_types.values()),
            nodes=list(nodes.values()),
            edges=list(edges.values()),
            chunks=list(chunks.values()),
        ),
        remove_chunks=[c for c in remove_chunks if c not in chunks],
        meta=meta,
    )
    return list(dict.fromkeys(touched))
