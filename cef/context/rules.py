"""Axioms (domain rules) and claims, stored in the knowledge graph itself.

**Axioms.** A domain rule is a node of label ``Axiom`` (properties ``name``,
``rule``, optional ``severity`` and ``source``; its ``content`` is the rule
text, so it is embedded and searchable). It is linked by an ``APPLIES_TO`` edge
to what it governs:

* a *node-type node* — label ``NodeType``, id ``type:<Label>``, name ``<Label>`` —
  for rules about every node of a type (``type:Medication``);
* or any node, for rules about one entity or a class of entities: a rule
  linked to ``class-anticoagulant`` applies to every node below it through
  structural relations (``IS_A``, ``PART_OF``...), up to two levels.

An axiom is returned with the context when an entity in the context has its
type, is its node, or sits below its node.

**Claims.** A statement made by a source is a node of label ``Claim``
(properties ``name`` and ``statement`` = the text, ``confidence``), linked by
``ABOUT`` edges to the entities it is about and, optionally, by a ``CLAIMS``
edge from the node of the document that makes it (a ``Guideline``, a
``Document``...). Claims are returned for the entities in context.

Both can be written with :func:`add_axiom` / :func:`add_claim`, or in a graph
file (see ``examples/clinical/rules.yaml``): declare the relation types
:data:`RULE_RELATION_TYPES`, then the nodes and edges.

These labels and relations are bookkeeping, not domain entities: the graph
context provider never lists ``Axiom``, ``NodeType`` or ``Claim`` nodes as
entities, nor their edges as relationships.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.errors import ValidationError
from cef.model import Batch, Edge, Node, RelationSemantics, RelationType, new_id, utcnow

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase
    from cef.graph.index import GraphIndex

__all__ = [
    "ABOUT",
    "APPLIES_TO",
    "AXIOM_LABEL",
    "CLAIMS",
    "CLAIM_LABEL",
    "META_LABELS",
    "NODE_TYPE_LABEL",
    "RULE_RELATIONS",
    "RULE_RELATION_TYPES",
    "AxiomMatch",
    "ClaimMatch",
    "add_axiom",
    "add_claim",
    "find_axioms",
    "find_claims",
    "type_node_id",
]

AXIOM_LABEL = "Axiom"
NODE_TYPE_LABEL = "NodeType"
CLAIM_LABEL = "Claim"
APPLIES_TO = "APPLIES_TO"
ABOUT = "ABOUT"
CLAIMS = "CLAIMS"

#: labels that hold rules and claims rather than domain entities
META_LABELS = frozenset({AXIOM_LABEL, NODE_TYPE_LABEL, CLAIM_LABEL})
RULE_RELATIONS = frozenset({APPLIES_TO, ABOUT, CLAIMS})

RULE_RELATION_TYPES: tuple[RelationType, ...] = (
    RelationType(
        name=APPLIES_TO,
        semantics=RelationSemantics.REFERENCE,
        description="a domain rule (Axiom) applies to a node type (NodeType node) or to a node",
        source_types=[AXIOM_LABEL],
    ),
    RelationType(
        name=ABOUT,
        semantics=RelationSemantics.REFERENCE,
        description="a claim is about an entity",
        source_types=[CLAIM_LABEL],
    ),
    RelationType(
        name=CLAIMS,
        semantics=RelationSemantics.REFERENCE,
        description="a source document makes a claim",
        target_types=[CLAIM_LABEL],
    ),
)

#: structural levels above an entity whose axioms also apply to it
AXIOM_PARENT_LEVELS = 2


def type_node_id(node_type: str) -> str:
    """The id of the node that stands for a node type in the graph: ``type:<Label>``."""
    return f"type:{node_type}"


def _short_name(text: str, words: int = 8) -> str:
    parts = text.split()
    name = " ".join(parts[:words])
    return name + ("…" if len(parts) > words else "")


def _schema(kb: KnowledgeBase) -> list[RelationType]:
    known = kb.state.graph.rel_types
    return [rt for rt in RULE_RELATION_TYPES if rt.name not in known]


def add_axiom(
    kb: KnowledgeBase,
    node_type: str | None,
    rule_text: str,
    *,
    name: str | None = None,
    applies_to: Sequence[str] = (),
    axiom_id: str | None = None,
    severity: str | None = None,
    source: str | None = None,
    properties: dict[str, Any] | None = None,
    scope: str | None = None,
) -> Node:
    """Store a domain rule that applies to every node of ``node_type`` and/or to the nodes ``applies_to``.

    Creates the ``NodeType`` node and registers the rule relation types when
    missing; everything is written in one transaction (nothing is written when
    a node in ``applies_to`` does not exist). Returns the ``Axiom`` node.
    """
    if not isinstance(rule_text, str) or not rule_text.strip():
        raise ValidationError("add_axiom: rule_text must be a non-empty string")
    targets = list(dict.fromkeys(applies_to))
    if not node_type and not targets:
        raise ValidationError("add_axiom: give a node_type, nodes in applies_to, or both")
    props: dict[str, Any] = {"name": name or _short_name(rule_text), "rule": rule_text.strip()}
    if severity:
        props["severity"] = severity
    if source:
        props["source"] = source
    props.update(properties or {})
    axiom = Node(
        id=axiom_id or f"axiom:{new_id()}",
        label=AXIOM_LABEL,
        properties=props,
        content=rule_text.strip(),
        scope=scope,
    )
    batch = Batch(relation_types=_schema(kb), nodes=[axiom])
    if node_type:
        tid = type_node_id(node_type)
        if kb.find_node(tid) is None:
            batch.nodes.append(Node(id=tid, label=NODE_TYPE_LABEL, properties={"name": node_type}))
        targets.insert(0, tid)
    batch.edges = [Edge(relation_type=APPLIES_TO, source=axiom.id, target=t) for t in targets]
    kb.index_batch(batch)
    return axiom


def add_claim(
    kb: KnowledgeBase,
    statement: str,
    about: str | Sequence[str],
    *,
    source: str | None = None,
    claim_id: str | None = None,
    confidence: float = 1.0,
    properties: dict[str, Any] | None = None,
    scope: str | None = None,
) -> Node:
    """Store a claim about one or more entities, optionally made by the document node ``source``.

    One transaction; nothing is written when an entity or the source does not
    exist. Returns the ``Claim`` node.
    """
    if not isinstance(statement, str) or not statement.strip():
        raise ValidationError("add_claim: statement must be a non-empty string")
    ids = [about] if isinstance(about, str) else list(dict.fromkeys(about))
    if not ids:
        raise ValidationError("add_claim: a claim must be about at least one entity")
    if not 0.0 <= confidence <= 1.0:
        raise ValidationError(f"add_claim: confidence must be between 0 and 1, got {confidence}")
    text = statement.strip()
    props: dict[str, Any] = {"name": _short_name(text, 24), "statement": text, "confidence": confidence}
    props.update(properties or {})
    claim = Node(
        id=claim_id or f"claim:{new_id()}", label=CLAIM_LABEL, properties=props, content=text, scope=scope
    )
    edges = [Edge(relation_type=ABOUT, source=claim.id, target=i, confidence=confidence) for i in ids]
    if source:
        edges.append(Edge(relation_type=CLAIMS, source=source, target=claim.id))
    kb.index_batch(Batch(relation_types=_schema(kb), nodes=[claim], edges=edges))
    return claim


# ------------------------------------------------------------------ lookups
@dataclass
class AxiomMatch:
    """An axiom and the context entities it applies to (and through what)."""

    axiom: Node
    entity_ids: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)  # type names or node names it is attached to


@dataclass
class ClaimMatch:
    """A claim, the context entities it is about, and its source."""

    claim: Node
    entity_ids: list[str] = field(default_factory=list)
    about: list[str] = field(default_factory=list)  # names of every entity it is about
    source: str | None = None  # name of the source node
    confidence: float = 1.0


def _rule_walk(
    g: GraphIndex,
    positions: Sequence[int],
    relation: str,
    *,
    incoming: bool,
    label: str | None,
    at: datetime,
    scope: str | None,
) -> list[tuple[int, int]]:
    """(node, other end) for the ``relation`` edges into (or out of) ``positions``: one step of the
    graph index under one :class:`~cef.graph.filter.EdgeFilter` (valid at ``at``, current knowledge —
    superseded versions skipped —, inside ``scope``), the other end of ``label`` when given."""
    if not positions or relation not in g.rel_types:
        return []
    flt = g.edge_filter(
        relation_types=[relation], direction="in" if incoming else "out", valid_at=at, scope=scope
    )
    _, owners, targets, _ = g.step(np.asarray(positions, dtype=np.int64), flt)
    pairs = zip(owners.tolist(), targets.tolist(), strict=True)
    return [(o, t) for o, t in pairs if label is None or g.label_of(t) == label]


def find_axioms(
    kb: KnowledgeBase,
    entities: Sequence[Node],
    *,
    as_of: datetime | None = None,
    scope: str | None = None,
) -> list[AxiomMatch]:
    """Axioms that apply to ``entities``: through their type, themselves, or a structural parent.

    In the order of the first entity each applies to.
    """
    if APPLIES_TO not in kb.state.graph.rel_types or not entities:
        return []
    at = as_of or utcnow()
    # attachment point (node id) -> entity ids it brings in; plus display names
    attach: dict[str, list[str]] = {}
    for ent in entities:
        points = [type_node_id(ent.label), ent.id, *_ancestors(kb, ent.id, AXIOM_PARENT_LEVELS)]
        for p in points:
            attach.setdefault(p, [])
            if ent.id not in attach[p]:
                attach[p].append(ent.id)
    found: dict[str, AxiomMatch] = {}
    order: dict[str, int] = {e.id: i for i, e in enumerate(entities)}
    with kb.state.reading():
        g = kb.state.graph
        rank = {pos: i for i, point in enumerate(attach) if (pos := g.pos(point)) is not None}
        found_at = _rule_walk(g, list(rank), APPLIES_TO, incoming=True, label=AXIOM_LABEL, at=at, scope=scope)
        found_at.sort(key=lambda pair: rank[pair[0]])  # in the order of the attachment points
        hits = [(g.node_ids[src], g.node_ids[point]) for point, src in found_at]  # (axiom, attachment)
        if not hits:
            return []
        nodes = {n.id: n for n in kb.state.store.get_nodes(list({h[0] for h in hits} | {h[1] for h in hits}))}
    for axiom_id, point in hits:
        node = nodes.get(axiom_id)
        if node is None:
            continue
        m = found.setdefault(axiom_id, AxiomMatch(axiom=node))
        for eid in attach[point]:
            if eid not in m.entity_ids:
                m.entity_ids.append(eid)
        p_node = nodes.get(point)
        label = p_node.name if p_node is not None else point
        if label not in m.via:
            m.via.append(label)
    return sorted(
        found.values(), key=lambda m: (min(order.get(e, 1 << 30) for e in m.entity_ids), m.axiom.id)
    )


def find_claims(
    kb: KnowledgeBase,
    entity_ids: Sequence[str],
    *,
    per_entity: int = 3,
    as_of: datetime | None = None,
    scope: str | None = None,
) -> list[ClaimMatch]:
    """Claims about ``entity_ids``: at most ``per_entity`` per entity (most confident first), in entity order."""
    if ABOUT not in kb.state.graph.rel_types or not entity_ids:
        return []
    at = as_of or utcnow()
    with kb.state.reading():
        g = kb.state.graph
        walk = partial(_rule_walk, g, at=at, scope=scope)
        entity_pos = [p for eid in entity_ids if (p := g.pos(eid)) is not None]
        per: dict[str, list[int]] = {}
        for pos, src in walk(entity_pos, ABOUT, incoming=True, label=CLAIM_LABEL):
            per.setdefault(g.node_ids[pos], []).append(src)
        claim_pos = sorted({c for lst in per.values() for c in lst})
        if not claim_pos:
            return []
        about: dict[int, list[int]] = {c: [] for c in claim_pos}
        for c, dst in walk(claim_pos, ABOUT, incoming=False, label=None):
            about[c].append(dst)
        sources: dict[int, int | None] = dict.fromkeys(claim_pos)
        for c, src in walk(claim_pos, CLAIMS, incoming=True, label=None):
            if sources[c] is None:
                sources[c] = src
        need = {g.node_ids[c] for c in claim_pos}
        need |= {g.node_ids[a] for lst in about.values() for a in lst}
        need |= {g.node_ids[s] for s in sources.values() if s is not None}
        nodes = {n.id: n for n in kb.state.store.get_nodes(list(need))}
    matches: dict[str, ClaimMatch] = {}
    for eid in entity_ids:
        ranked: list[ClaimMatch] = []
        for c in per.get(eid, []):
            cid = g.node_ids[c]
            node = nodes.get(cid)
            if node is None:
                continue
            if cid in matches:
                if eid not in matches[cid].entity_ids:
                    matches[cid].entity_ids.append(eid)
                continue
            made_by = sources[c]
            ranked.append(
                ClaimMatch(
                    claim=node,
                    entity_ids=[eid],
                    about=[nodes[g.node_ids[a]].name for a in about[c] if g.node_ids[a] in nodes],
                    source=nodes[g.node_ids[made_by]].name
                    if made_by is not None and g.node_ids[made_by] in nodes
                    else None,
                    confidence=_confidence(node),
                )
            )
        ranked.sort(key=lambda m: (-m.confidence, m.claim.id))
        for m in ranked[:per_entity]:
            matches[m.claim.id] = m
    return list(matches.values())


def claim_statement(node: Node) -> str:
    value = node.properties.get("statement")
    return value if isinstance(value, str) and value else (node.content or node.name)


def axiom_rule(node: Node) -> str:
    value = node.properties.get("rule")
    return value if isinstance(value, str) and value else (node.content or node.name)


def _confidence(node: Node) -> float:
    value = node.properties.get("confidence")
    if isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
        return float(value)
    return 1.0


def _ancestors(kb: KnowledgeBase, node_id: str, levels: int) -> list[str]:
    out: list[str] = []
    frontier = [node_id]
    seen = {node_id}
    for _ in range(levels):
        nxt: list[str] = []
        for nid in frontier:
            for parent in kb.get_parents(nid):
                if parent.id not in seen:
                    seen.add(parent.id)
                    out.append(parent.id)
                    nxt.append(parent.id)
        frontier = nxt
    return out


def words(text: str) -> list[str]:
    """Lower-case words of ``text`` (camelCase and snake_case split)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w.lower() for w in re.findall(r"[^\W_]+", spaced)]


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
