"""Graph context provider: the entities, relationships, domain rules and claims relevant to a query.

::

    from cef.context import GraphContextProvider, KnowledgeContextOptions

    provider = GraphContextProvider(kb, counter="cl100k")
    ctx = provider.get_context("Which medications interact with warfarin?",
                               KnowledgeContextOptions(max_tokens=800, include_claims=True))
    prompt_part = ctx.formatted_context

1. **Candidates**: nodes whose names match the query (full-text index), nodes
   near it in embedding space, and every node of a type the query names
   (``medications`` → ``Medication``). Rule and claim bookkeeping nodes are
   never entities.
2. **Ranking** (:class:`EntityRelevanceRanker`): name, type and property
   matches of the query's terms, plus the cosine of the query to each node's
   embedding; the matched terms are reported.
3. **Selection within the budget**: entities by relevance, then the
   relationships among and around them (up to ``relationship_depth`` hops,
   currently valid edges only), the axioms of their types, their claims and
   (optionally) their chunks — packed so the rendered text fits ``max_tokens``.

Errors never escape as exceptions for a well-formed request: an unavailable
graph or a query with no match gives an empty context with a ``reason``; an
unknown entity id is skipped and listed in ``skipped_ids``; a budget that
cuts anything sets ``truncated``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.context.budget import Candidate, Packed, pack
from cef.context.formats import (
    SECTIONS,
    ContextAxiom,
    ContextChunk,
    ContextClaim,
    ContextDocument,
    ContextEntity,
    ContextRelationship,
    score_of,
)
from cef.context.knowledge import (
    DEFAULT_SHARES,
    DocumentInput,
    KnowledgeContext,
    KnowledgeContextOptions,
    RankedEntity,
)
from cef.context.provider import resolve_counter
from cef.context.ranking import EntityRelevanceRanker, query_terms
from cef.context.rules import (
    META_LABELS,
    RULE_RELATIONS,
    axiom_rule,
    claim_statement,
    find_axioms,
    find_claims,
    unique,
)
from cef.context.tokens import TokenCounter
from cef.errors import EmbeddingError, StoreError
from cef.model import Chunk, Edge, Node, in_scope, utcnow
from cef.retrieve.anchors import node_vector_hits
from cef.retrieve.qwords import names_type

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_SHARES",
    "DocumentInput",
    "EntityRelevanceRanker",
    "GraphContextProvider",
    "KnowledgeContext",
    "KnowledgeContextOptions",
    "RankedEntity",
    "query_terms",
]


# ----------------------------------------------------------------- provider
@dataclass
class _Selection:
    """Candidate entities, in priority order, with their scores."""

    nodes: list[Node]
    scores: dict[str, float | None]
    matched: dict[str, list[str]] = field(default_factory=dict)


class GraphContextProvider:
    """Knowledge-graph context for a query, for given entities, or for a document."""

    def __init__(
        self,
        kb: KnowledgeBase,
        counter: TokenCounter | str | None = None,
        ranker: EntityRelevanceRanker | None = None,
    ) -> None:
        self.kb = kb
        self.counter = resolve_counter(counter)
        self.ranker = ranker or EntityRelevanceRanker()

    # ------------------------------------------------------------ front doors
    def get_context(self, query: str, options: KnowledgeContextOptions | None = None) -> KnowledgeContext:
        """Entities relevant to ``query`` and what the graph says about them, within ``max_tokens``."""
        opts = options or KnowledgeContextOptions()
        t0 = time.perf_counter()
        if not isinstance(query, str) or not query.strip():
            return self._empty("empty query", query=query, options=opts)
        try:
            vec = self._embed(query)
            ranked, n_candidates = self._rank_candidates(query, vec, opts)
            if not ranked:
                return self._empty("no match: no entity is relevant to the query", query=query, options=opts)
            sel = _Selection(
                nodes=[r.node for r in ranked],
                scores={r.node.id: r.score for r in ranked},
                matched={r.node.id: r.matched_terms for r in ranked},
            )
            ctx = self._assemble(sel, opts, query=query, query_vector=vec, title_query=query)
        except (StoreError, EmbeddingError) as exc:
            log.warning("graph context unavailable: %s", exc)
            return self._empty(f"knowledge graph unavailable: {exc}", query=query, options=opts)
        ctx.metadata.update(
            {"candidates": n_candidates, "duration_ms": round((time.perf_counter() - t0) * 1000, 3)}
        )
        return ctx

    def get_context_for_entities(
        self,
        ids: Sequence[str],
        options: KnowledgeContextOptions | None = None,
        *,
        query: str | None = None,
    ) -> KnowledgeContext:
        """Context for the given entities (in the given order); unknown ids are skipped and reported.

        ``query``, when given, scores the entities and orders their claims and chunks.
        """
        opts = options or KnowledgeContextOptions()
        t0 = time.perf_counter()
        wanted: list[str] = []
        skipped: list[str] = []
        warnings: list[str] = []
        for raw in ids:
            if not isinstance(raw, str) or not raw.strip():
                skipped.append(str(raw))
                warnings.append(f"entity id {raw!r} is not a valid id; skipped")
            elif raw not in wanted:
                wanted.append(raw)
        try:
            found = {n.id: n for n in self.kb.store.get_nodes(wanted)} if wanted else {}
            nodes: list[Node] = []
            for i in wanted:
                node = found.get(i)
                if node is None or not in_scope(node.scope, opts.scope):
                    skipped.append(i)
                    warnings.append(f"entity {i!r} does not exist; skipped")
                elif node.label in META_LABELS:
                    skipped.append(i)
                    warnings.append(f"{i!r} is a {node.label} node, not an entity; skipped")
                else:
                    nodes.append(node)
            if len(nodes) > opts.max_entities:
                warnings.append(
                    f"{len(nodes)} entities given; the first {opts.max_entities} (max_entities) are used"
                )
                nodes = nodes[: opts.max_entities]
            if not nodes:
                return self._empty(
                    "none of the given entity ids exist",
                    query=query,
                    options=opts,
                    skipped_ids=skipped,
                    warnings=warnings,
                )
            vec = self._embed(query) if query else None
            scores: dict[str, float | None] = dict.fromkeys((n.id for n in nodes), None)
            matched: dict[str, list[str]] = {}
            if query:
                sims = self._node_similarities(vec, [n.id for n in nodes])
                terms = query_terms(query)
                for n in nodes:
                    r = self.ranker.score(terms, n, sims.get(n.id))
                    scores[n.id] = r.score
                    matched[n.id] = r.matched_terms
            sel = _Selection(nodes=nodes, scores=scores, matched=matched)
            title = query if query else "entities: " + ", ".join(n.name for n in nodes)
            ctx = self._assemble(sel, opts, query=query, query_vector=vec, title_query=title)
        except (StoreError, EmbeddingError) as exc:
            log.warning("graph context unavailable: %s", exc)
            return self._empty(
                f"knowledge graph unavailable: {exc}",
                query=query,
                options=opts,
                skipped_ids=skipped,
                warnings=warnings,
            )
        ctx.skipped_ids = skipped
        ctx.warnings = warnings + ctx.warnings
        ctx.metadata["duration_ms"] = round((time.perf_counter() - t0) * 1000, 3)
        return ctx

    def get_context_from_document(
        self, document: DocumentInput | Chunk | str, options: KnowledgeContextOptions | None = None
    ) -> KnowledgeContext:
        """Context for a document: its linked entities when it has any, else its text as the query.

        A :class:`~cef.model.Chunk` is linked to its ``node_id`` (and to the ids in
        ``metadata["entities"]``, if any); a plain string has no links.
        """
        if isinstance(document, str):
            document = DocumentInput(content=document) if document.strip() else DocumentInput(content=" ")
        elif isinstance(document, Chunk):
            linked = [document.node_id] if document.node_id else []
            extra = document.metadata.get("entities")
            if isinstance(extra, list):
                linked += [e for e in extra if isinstance(e, str)]
            document = DocumentInput(content=document.content, linked_entities=unique(linked))
        text = document.content.strip()
        query = text[:10_000] if text else None
        if document.linked_entities:
            return self.get_context_for_entities(document.linked_entities, options, query=query)
        return self.get_context(query or "", options)

    def _empty(
        self,
        reason: str,
        *,
        query: str | None = None,
        options: KnowledgeContextOptions | None = None,
        skipped_ids: Sequence[str] = (),
        warnings: Sequence[str] = (),
    ) -> KnowledgeContext:
        """No knowledge: the empty frame of the format (header only) and why."""
        opts = options or KnowledgeContextOptions()
        ctx = KnowledgeContext.empty(
            reason, query=query, options=opts, skipped_ids=skipped_ids, warnings=warnings
        )
        base = ContextDocument(
            title="Knowledge context",
            queries=[query] if isinstance(query, str) and query.strip() else [],
        )
        packed = pack(base, [], counter=self.counter, fmt=opts.format, budget=opts.max_tokens)
        ctx.formatted_context = packed.text
        ctx.token_count = packed.total_tokens
        ctx.document = packed.document
        return ctx

    # --------------------------------------------------------------- ranking
    def _embed(self, text: str | None) -> np.ndarray | None:
        emb = self.kb.embedder
        if emb is None or not text or not len(self.kb.state.node_vectors):
            return None
        return np.asarray(emb.embed_query(text[:10_000]), dtype=np.float32)

    def _node_similarities(self, vec: np.ndarray | None, ids: Sequence[str]) -> dict[str, float]:
        if vec is None or not ids:
            return {}
        with self.kb.state.reading():
            sims = self.kb.state.node_vectors.similarities(vec, list(ids))  # 0 where a node has no vector
        return {i: float(s) for i, s in zip(ids, sims.tolist(), strict=True)}

    def _rank_candidates(
        self, query: str, vec: np.ndarray | None, opts: KnowledgeContextOptions
    ) -> tuple[list[RankedEntity], int]:
        k = max(opts.max_entities * 3, 20)
        st = self.kb.state
        terms = query_terms(query)
        ids: dict[str, None] = {}
        with st.reading():
            g = st.graph
            for hit in st.store.search_text("node", query, k, scope=opts.scope):
                ids[hit.id] = None
            if vec is not None:  # searched inside the scope: a small scope is not hidden behind others
                types = set(opts.entity_types) if opts.entity_types else None
                for node_id, _ in node_vector_hits(
                    g, st.node_vectors, vec, k, scope=opts.scope, labels=types
                ):
                    ids[node_id] = None
            # every node of a type the query names ("medications" -> Medication)
            for label in list(g.labels.names):
                if label in META_LABELS or not terms:
                    continue
                if names_type(terms, label):
                    for p in g.nodes_with_label(label)[:k]:
                        ids[g.node_ids[int(p)]] = None
            nodes = st.store.get_nodes(list(ids))
        allowed = set(opts.entity_types) if opts.entity_types else None
        nodes = [
            n
            for n in nodes
            if n.label not in META_LABELS
            and (allowed is None or n.label in allowed)
            and in_scope(n.scope, opts.scope)
        ]
        sims = self._node_similarities(vec, [n.id for n in nodes])
        ranked = [
            r for r in self.ranker.rank(query, nodes, sims) if r.score >= opts.min_relevance and r.score > 0
        ]
        return ranked[: opts.max_entities], len(nodes)

    # -------------------------------------------------------------- assembly
    def _assemble(
        self,
        sel: _Selection,
        opts: KnowledgeContextOptions,
        *,
        query: str | None,
        query_vector: np.ndarray | None,
        title_query: str,
    ) -> KnowledgeContext:
        t0 = time.perf_counter()
        candidates: list[Candidate] = []
        for n in sel.nodes:
            item = _entity(n, opts.max_properties_per_entity, sel.scores.get(n.id), sel.matched.get(n.id, []))
            candidates.append(Candidate(section="entities", item=item, key=f"entity:{n.id}"))
        if opts.include_relationships and opts.max_relationships:
            candidates += self._relationship_candidates(sel, opts)
        if opts.include_axioms:
            candidates += self._axiom_candidates(sel, opts)
        if opts.include_claims and opts.max_claims_per_entity:
            candidates += self._claim_candidates(sel, opts)
        if opts.include_chunks and opts.max_chunks_per_entity:
            candidates += self._chunk_candidates(sel, opts, query_vector)
        base = ContextDocument(
            title="Knowledge context",
            queries=[title_query] if title_query else [],
        )
        caps = {name: int(opts.max_tokens * share) for name, share in opts.section_shares.items()}
        packed = pack(
            base, candidates, counter=self.counter, fmt=opts.format, budget=opts.max_tokens, caps=caps
        )
        return self._result(packed, candidates, opts, query, t0)

    def _relationship_candidates(self, sel: _Selection, opts: KnowledgeContextOptions) -> list[Candidate]:
        """The edges among the entities, then the graph index's breadth-first expansion around them
        (``relationship_depth`` hops), both under one edge filter: valid at ``as_of`` (now), current
        knowledge (superseded versions skipped), the scope, never a rule relation nor into a rule or
        claim node. A node is reached once, by its most confident path (ties: from the better-ranked
        entity); an edge further out needs the edge that reached its near end."""
        st = self.kb.state
        entity_ids = [n.id for n in sel.nodes]
        rank = {nid: i for i, nid in enumerate(entity_ids)}
        found: list[
            tuple[tuple[Any, ...], str, frozenset[str], frozenset[str]]
        ] = []  # sort key, edge id, all, any
        with st.reading():
            g = st.graph
            flt = g.edge_filter(
                valid_at=opts.as_of or utcnow(),
                scope=opts.scope,
                exclude_relations=RULE_RELATIONS,
                exclude_labels=META_LABELS,
            )
            pos_of = {nid: p for nid in entity_ids if (p := g.pos(nid)) is not None}
            for e in g.edges_among(list(pos_of.values()), flt).tolist():
                u, v = g.node_ids[int(g.e_src[e])], g.node_ids[int(g.e_dst[e])]
                eid = g.edge_ids[e]
                key: tuple[Any, ...] = (0, min(rank[u], rank[v]), max(rank[u], rank[v]), eid)
                found.append((key, eid, frozenset({f"entity:{u}", f"entity:{v}"}), frozenset()))
            origin: dict[int, int] = {p: rank[nid] for nid, p in pos_of.items()}
            via: dict[int, str] = {}  # reached node -> key of the edge that reached it
            exp = g.expand(
                list(origin),
                opts.relationship_depth,
                flt,
                max_nodes=max(len(g.node_ids), 1),
                seed_rank=list(origin.values()),
            )
            for v, u, e, depth in zip(
                exp.nodes.tolist(),
                exp.parent.tolist(),
                exp.parent_edge.tolist(),
                exp.depth.tolist(),
                strict=True,
            ):
                if e < 0:  # an entity (a seed of the walk)
                    continue
                origin[v] = origin[u]  # discovery order: a node's parent comes first
                eid = g.edge_ids[e]
                needs = frozenset({via[u]}) if u in via else frozenset()
                via[v] = f"rel:{eid}"
                key = (depth, origin[u], -float(g.e_conf[e]), eid)
                found.append((key, eid, needs, frozenset({f"entity:{entity_ids[origin[u]]}"})))
        found.sort(key=lambda f: f[0])
        found = found[: opts.max_relationships]
        edges = {e.id: e for e in st.store.get_edges([f[1] for f in found])}
        ends = {x for e in edges.values() for x in (e.source, e.target)}
        names = {n.id: n.name for n in st.store.get_nodes(list(ends))}
        out = []
        for _, eid, needs_all, needs_any in found:
            edge = edges.get(eid)
            if edge is None:
                continue
            out.append(
                Candidate(
                    section="relationships",
                    item=_relationship(edge, names),
                    key=f"rel:{eid}",
                    requires_all=needs_all,
                    requires_any=needs_any,
                )
            )
        return out

    def _axiom_candidates(self, sel: _Selection, opts: KnowledgeContextOptions) -> list[Candidate]:
        out = []
        for m in find_axioms(self.kb, sel.nodes, as_of=opts.as_of, scope=opts.scope):
            sev = m.axiom.properties.get("severity")
            item = ContextAxiom(
                id=m.axiom.id,
                name=m.axiom.name,
                rule=axiom_rule(m.axiom),
                applies_to=m.via,
                severity=sev if isinstance(sev, str) else None,
            )
            keys = frozenset(f"entity:{e}" for e in m.entity_ids)
            out.append(Candidate(section="axioms", item=item, key=f"axiom:{m.axiom.id}", requires_any=keys))
        return out

    def _claim_candidates(self, sel: _Selection, opts: KnowledgeContextOptions) -> list[Candidate]:
        out = []
        matches = find_claims(
            self.kb,
            [n.id for n in sel.nodes],
            per_entity=opts.max_claims_per_entity,
            as_of=opts.as_of,
            scope=opts.scope,
        )
        for m in matches:
            item = ContextClaim(
                id=m.claim.id,
                statement=claim_statement(m.claim),
                about=m.about,
                source=m.source,
                confidence=m.confidence,
            )
            keys = frozenset(f"entity:{e}" for e in m.entity_ids)
            out.append(
                Candidate(
                    section="claims",
                    item=item,
                    key=f"claim:{m.claim.id}",
                    requires_any=keys,
                    text_field="statement",
                )
            )
        return out

    def _chunk_candidates(
        self, sel: _Selection, opts: KnowledgeContextOptions, query_vector: np.ndarray | None
    ) -> list[Candidate]:
        st = self.kb.state
        with st.reading():
            linked = st.store.chunks_for_nodes([n.id for n in sel.nodes])
            all_ids = unique(c for n in sel.nodes for c in linked.get(n.id, []))
            chunks = {c.id: c for c in st.store.get_chunks(all_ids)}
            sims: dict[str, float] = {}
            if query_vector is not None and all_ids:
                sims = dict(
                    zip(all_ids, st.chunk_vectors.similarities(query_vector, all_ids).tolist(), strict=True)
                )
        out: list[Candidate] = []
        placed: set[str] = set()
        for n in sel.nodes:
            ids = [c for c in linked.get(n.id, []) if c in chunks and c not in placed]
            ids = [c for c in ids if in_scope(chunks[c].scope, opts.scope)]
            if sims:
                ids.sort(key=lambda c: -sims.get(c, 0.0))
            for cid in ids[: opts.max_chunks_per_entity]:
                placed.add(cid)
                ch = chunks[cid]
                item = ContextChunk(
                    id=cid, content=ch.content, score=score_of(sims.get(cid)), node_id=ch.node_id
                )
                out.append(
                    Candidate(
                        section="chunks",
                        item=item,
                        key=f"chunk:{cid}",
                        requires_any=frozenset({f"entity:{n.id}"}),
                        text_field="content",
                    )
                )
        return out

    def _result(
        self,
        packed: Packed,
        candidates: Sequence[Candidate],
        opts: KnowledgeContextOptions,
        query: str | None,
        t0: float,
    ) -> KnowledgeContext:
        doc = packed.document
        counts = {name: sum(1 for c in candidates if c.section == name) for name in SECTIONS}
        chosen = {name: sum(1 for c in packed.selected if c.section == name) for name in SECTIONS}
        metadata: dict[str, Any] = {
            "tokenizer": self.counter.name,
            "token_utilization": round(packed.total_tokens / opts.max_tokens, 4),
            "content_utilization": round(packed.content_tokens / opts.max_tokens, 4),
            "candidates_by_section": {k: v for k, v in counts.items() if v},
            "selected_by_section": {k: v for k, v in chosen.items() if v},
            "dropped": len(packed.dropped),
            "cut": list(packed.cut),
            "assembly_ms": round((time.perf_counter() - t0) * 1000, 3),
        }
        reason = "nothing fits the token budget" if doc.is_empty() else None
        if reason:
            metadata["reason"] = reason
        return KnowledgeContext(
            entities=list(doc.entities),
            relationships=list(doc.relationships),
            axioms=list(doc.axioms),
            claims=list(doc.claims),
            chunks=list(doc.chunks),
            formatted_context=packed.text,
            token_count=packed.total_tokens,
            token_budget=opts.max_tokens,
            format=opts.format,
            original_query=query,
            truncated=packed.truncated,
            reason=reason,
            metadata=metadata,
            document=doc,
        )


# ------------------------------------------------------------------ helpers
def _entity(node: Node, max_props: int, score: float | None, matched: Sequence[str]) -> ContextEntity:
    props: dict[str, Any] = {}
    for key, value in node.properties.items():
        if key in ("name", "title", "label_text") or len(props) >= max_props:
            continue
        props[key] = value
    return ContextEntity(
        id=node.id,
        type=node.label,
        name=node.name,
        properties=props,
        score=score_of(score),
        matched_terms=list(matched),
    )


def _relationship(edge: Edge, names: Mapping[str, str]) -> ContextRelationship:
    return ContextRelationship(
        id=edge.id,
        source=edge.source,
        source_name=names.get(edge.source, edge.source),
        relation=edge.relation_type,
        target=edge.target,
        target_name=names.get(edge.target, edge.target),
        properties=dict(edge.properties),
        confidence=edge.confidence,
        valid_from=edge.valid_from,
        valid_to=edge.valid_to,
    )
