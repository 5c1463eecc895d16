"""Graph schema discovery: what node types, properties and relations a knowledge base holds.

The schema is read from the knowledge base's registry (``kb.schema``: node
types with their kind and description, relation types with semantics,
inverse, allowed endpoint types, description) and from the data (counts,
property names, examples, observed source→target labels per relation). Front doors publish it (``get_graph_schema``,
``GET /api/v1/schema``) and inject it into tool descriptions so an LLM can
write a correct query; :class:`SchemaTracker` tells when it changed.

A key bound to data scopes sees the schema of what it may read: its scopes'
records and the shared (unscoped) ones (``discover_schema(kb, scopes=...)``),
so one tenant cannot learn another's labels, property names, relation types
or counts.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from cef.model import RelationSemantics
from cef.schema.checks import META_PREFIX

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.model import Node, RelationType
    from cef.schema.registry import SchemaRegistry
    from cef.store.base import RecordStore, WriteSet

__all__ = [
    "EndpointInfo",
    "EngineReads",
    "GraphSchema",
    "KnowledgeSource",
    "NodeTypeInfo",
    "RelationTypeInfo",
    "SchemaTracker",
    "describe_schema",
    "discover_schema",
    "label_counts",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeTypeInfo(_Model):
    label: str
    kind: str | None = Field(default=None, description="the universal kind above it (None: not known)")
    description: str = ""
    count: int = Field(ge=0, description="nodes with this label")
    properties: list[str] = Field(default_factory=list, description="property names seen on these nodes")
    examples: list[str] = Field(default_factory=list, description="names of a few nodes with this label")


class EndpointInfo(_Model):
    source: str = Field(description="label of the source node")
    target: str = Field(description="label of the target node")
    count: int = Field(ge=0)


class RelationTypeInfo(_Model):
    name: str
    semantics: RelationSemantics
    description: str = ""
    bidirectional: bool = False
    inverse: str | None = None
    source_types: list[str] = Field(default_factory=list, description="allowed source types (empty: any)")
    target_types: list[str] = Field(default_factory=list, description="allowed target types (empty: any)")
    endpoints: list[EndpointInfo] = Field(
        default_factory=list, description="source→target labels observed in the data, most frequent first"
    )
    count: int = Field(default=0, ge=0, description="edges of this type")


class GraphSchema(_Model):
    """Node types with their properties and counts; relation types with semantics and endpoints."""

    node_types: list[NodeTypeInfo] = Field(default_factory=list)
    relation_types: list[RelationTypeInfo] = Field(default_factory=list)

    def labels(self) -> list[str]:
        return [n.label for n in self.node_types]

    def relation_names(self) -> list[str]:
        return [r.name for r in self.relation_types]

    def node_type(self, label: str) -> NodeTypeInfo | None:
        return next((n for n in self.node_types if n.label == label), None)

    def fingerprint(self) -> str:
        """Changes when labels, property names, relation types or endpoint pairs change (not counts)."""
        shape = {
            "n": sorted(
                (n.label, n.kind or "", n.description, sorted(n.properties)) for n in self.node_types
            ),
            "r": sorted(
                (
                    r.name,
                    r.semantics.value,
                    r.bidirectional,
                    r.inverse or "",
                    r.description,
                    r.source_types,
                    r.target_types,
                )
                for r in self.relation_types
            ),
            "e": sorted((r.name, e.source, e.target) for r in self.relation_types for e in r.endpoints),
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]


class EngineReads(Protocol):
    """The engine state as schema discovery reads it (:class:`~cef.engine.state.EngineState` is one)."""

    graph: GraphIndex
    store: RecordStore
    seq: int
    listeners: list[Callable[[WriteSet], None]]

    def reading(self) -> AbstractContextManager[None]: ...


class KnowledgeSource(Protocol):
    """What schema discovery reads (a :class:`~cef.engine.kb.KnowledgeBase` is one)."""

    @property
    def state(self) -> EngineReads: ...

    @property
    def store(self) -> RecordStore: ...

    @property
    def schema(self) -> SchemaRegistry: ...

    def find_nodes_by_label(self, label: str, limit: int = 1000) -> list[Node]: ...


#: nodes per label read for their property names (as the stores' ``property_names`` do)
PROPERTY_SAMPLE = 200


def discover_schema(
    kb: KnowledgeSource, *, samples: int = 2, scopes: Collection[str] | None = None
) -> GraphSchema:
    """Read the live schema of ``kb`` (one consistent read).

    ``scopes``: only what the records of these scopes and the shared (unscoped)
    records show — what a key bound to these scopes may read. Labels, counts,
    property names and examples come from those nodes; relation types are the
    registered ones with at least one such edge between two such nodes.
    ``None``: everything: the labels of the nodes and the declared node types, with every
    registered relation type.
    """
    if scopes is not None:
        return _scoped_schema(kb, samples, scopes)
    with kb.state.reading():
        store, registry = kb.store, kb.schema
        node_types = []
        counts = dict(store.labels())
        # the labels of the nodes (most first), then the declared node types no node has yet (a label
        # only ever written leaves the schema with its last node, as it came with its first)
        for label in [*counts, *sorted(set(registry.declared_node_types) - set(counts))]:
            count = counts.get(label, 0)
            examples = (
                [n.name for n in kb.find_nodes_by_label(label, limit=samples)] if samples and count else []
            )
            properties = store.property_names(label) if count else []
            node_types.append(_node_type(registry, label, count, properties, examples))
        endpoints: dict[str, list[EndpointInfo]] = {}
        for rel, src, dst, n in store.relation_endpoints():
            endpoints.setdefault(rel, []).append(EndpointInfo(source=src, target=dst, count=n))
        relation_types = [
            _relation_type(rt, endpoints.get(rt.name, []))
            for rt in sorted(registry.relation_types.values(), key=lambda r: r.name)
        ]
    return GraphSchema(node_types=node_types, relation_types=relation_types)


def _node_type(
    registry: SchemaRegistry, label: str, count: int, properties: list[str], examples: list[str]
) -> NodeTypeInfo:
    """A label as the schema shows it: its registered kind and description, and what its nodes show."""
    spec = registry.node_type(label)
    kind = registry.kind_of(label)
    return NodeTypeInfo(
        label=label,
        kind=kind.value if kind is not None else None,
        description=spec.description if spec is not None else "",
        count=count,
        properties=properties,
        examples=examples,
    )


def _relation_type(rt: RelationType, endpoints: list[EndpointInfo]) -> RelationTypeInfo:
    """A registered relation type with the endpoints observed in the data."""
    return RelationTypeInfo(
        name=rt.name,
        semantics=rt.semantics,
        description=rt.description,
        bidirectional=rt.bidirectional,
        inverse=rt.inverse,
        source_types=list(rt.source_types),
        target_types=list(rt.target_types),
        endpoints=endpoints,
        count=sum(e.count for e in endpoints),
    )


def label_counts(kb: KnowledgeSource, scopes: Collection[str] | None = None) -> dict[str, int]:
    """Nodes per label, most frequent first; with ``scopes``, only nodes of those scopes or of none."""
    if scopes is None:
        return dict(kb.store.labels())
    with kb.state.reading():
        g = kb.state.graph
        counts = np.bincount(
            g.node_label.view[: len(g.node_ids)][g.visible_nodes(scopes)], minlength=len(g.labels)
        )
        codes = sorted(np.flatnonzero(counts), key=lambda c: (-int(counts[c]), g.labels.names[c]))
        return {g.labels.names[c]: int(counts[c]) for c in codes}


def _scoped_schema(kb: KnowledgeSource, samples: int, scopes: Collection[str]) -> GraphSchema:
    """The schema over the records of ``scopes`` and the unscoped ones, read from the graph index."""
    with kb.state.reading():
        g = kb.state.graph
        allowed = np.array([-1, *(c for s in scopes if (c := g.scopes.get(s)) is not None)], dtype=np.int32)
        n, m = len(g.node_ids), len(g.edge_ids)
        seen = g.visible_nodes(scopes)
        node_label = g.node_label.view[:n]
        counts = np.bincount(node_label[seen], minlength=len(g.labels))
        node_types = []
        for code in sorted(np.flatnonzero(counts), key=lambda c: (-int(counts[c]), g.labels.names[c])):
            positions = np.flatnonzero(seen & (node_label == code))[:PROPERTY_SAMPLE]
            nodes = kb.store.get_nodes([g.node_ids[p] for p in positions])
            names: dict[str, None] = {}
            for node in nodes:
                names.update(dict.fromkeys(node.properties))
            node_types.append(
                _node_type(
                    kb.schema,
                    g.labels.names[code],
                    int(counts[code]),
                    list(names),
                    [node.name for node in nodes[:samples]],
                )
            )
        src, dst = g.e_src.view[:m], g.e_dst.view[:m]
        ok = g.e_alive.view[:m] & np.isin(g.e_scope.view[:m], allowed)
        ok[ok] = seen[src[ok]] & seen[dst[ok]]
        triples = np.stack([g.e_rel.view[:m][ok], node_label[src[ok]], node_label[dst[ok]]], axis=1)
        endpoints: dict[str, list[EndpointInfo]] = {}
        if len(triples):
            found, sizes = np.unique(triples, axis=0, return_counts=True)
            order = sorted(range(len(found)), key=lambda i: -int(sizes[i]))
            for i in order:
                rel, s_code, t_code = (int(x) for x in found[i])
                endpoints.setdefault(g.relations.names[rel], []).append(
                    EndpointInfo(
                        source=g.labels.names[s_code], target=g.labels.names[t_code], count=int(sizes[i])
                    )
                )
        relation_types = [
            _relation_type(rt, endpoints[rt.name])
            for rt in sorted(kb.schema.relation_types.values(), key=lambda r: r.name)
            if rt.name in endpoints
        ]
    return GraphSchema(node_types=node_types, relation_types=relation_types)


def describe_schema(schema: GraphSchema, *, max_node_types: int = 60, max_relation_types: int = 80) -> str:
    """The schema as compact text for an LLM (what tool descriptions and prompts embed)."""
    if not schema.node_types and not schema.relation_types:
        return "The knowledge base is empty: no node types or relation types yet."
    lines = ["Node types (label: property names; example names):"]
    for n in schema.node_types[:max_node_types]:
        props = ", ".join(n.properties) if n.properties else "no properties"
        examples = "; e.g. " + ", ".join(json.dumps(e) for e in n.examples) if n.examples else ""
        kind = f" [{n.kind}]" if n.kind and n.kind != n.label else ""
        desc = f" — {n.description}" if n.description else ""
        lines.append(f"- {n.label}{kind}: {props}{examples}{desc}")
    if len(schema.node_types) > max_node_types:
        lines.append(f"- ... and {len(schema.node_types) - max_node_types} more (call get_graph_schema)")
    lines.append("Relation types (name [semantics]: source → target):")
    for r in schema.relation_types[:max_relation_types]:
        tags = r.semantics.value + (", bidirectional" if r.bidirectional else "")
        allowed = " or ".join(r.source_types) or "any", " or ".join(r.target_types) or "any"
        declared = f"allows {allowed[0]} → {allowed[1]}" if r.source_types or r.target_types else ""
        ends = ", ".join(f"{e.source} → {e.target}" for e in r.endpoints[:4]) or declared or "not used yet"
        extra = f" (inverse: {r.inverse})" if r.inverse else ""
        desc = f" — {r.description}" if r.description else ""
        lines.append(f"- {r.name} [{tags}]: {ends}{extra}{desc}")
    if len(schema.relation_types) > max_relation_types:
        lines.append(
            f"- ... and {len(schema.relation_types) - max_relation_types} more (call get_graph_schema)"
        )
    return "\n".join(lines)


class SchemaTracker:
    """Keeps the current schema and says when a write may have changed it.

    Registered as a write listener (``kb.state.listeners``), it marks itself
    *dirty* only when a write could change the schema: new relation types,
    deletions, a node with a new label or property name, an edge with a new
    (relation, source label, target label) triple. :meth:`refresh` re-reads
    the schema and returns True when its :meth:`GraphSchema.fingerprint`
    changed. Writes by other processes are caught by :meth:`poll`, which
    refreshes when the knowledge base's change sequence moved.
    """

    def __init__(self, kb: KnowledgeSource, *, samples: int = 2) -> None:
        self.kb = kb
        self.samples = samples
        self._lock = threading.Lock()
        self._dirty = True
        self._seq = -1
        self.schema = GraphSchema()
        self.fingerprint = ""
        self._labels: dict[str, set[str]] = {}
        self._triples: set[tuple[str, str, str]] = set()
        self._relations: set[str] = set()

    # ------------------------------------------------------------ listening
    def attach(self) -> None:
        if self.on_write not in self.kb.state.listeners:
            self.kb.state.listeners.append(self.on_write)

    def detach(self) -> None:
        if self.on_write in self.kb.state.listeners:
            self.kb.state.listeners.remove(self.on_write)

    def on_write(self, writes: WriteSet) -> None:
        """Runs in the writer's thread right after a commit (the engine lock is held)."""
        if self._dirty or self._may_change(writes):
            self._dirty = True

    def _may_change(self, w: WriteSet) -> bool:
        if w.relation_types or w.delete_nodes or w.delete_edges:
            return True
        if any(key.startswith(META_PREFIX) for key in w.meta):  # a registration (node type, description)
            return True
        for n in (*w.nodes, *w.updated_nodes):
            known = self._labels.get(n.label)
            if known is None or not known.issuperset(n.properties):
                return True
        if w.edges:
            g = self.kb.state.graph
            for e in w.edges:
                src, dst = g.pos(e.source), g.pos(e.target)
                if src is None or dst is None:
                    return True
                if (e.relation_type, g.label_of(src), g.label_of(dst)) not in self._triples:
                    return True
        return False

    @property
    def dirty(self) -> bool:
        return self._dirty

    # ------------------------------------------------------------ refreshing
    def refresh(self, *, force: bool = False) -> bool:
        """Re-read the schema if a write may have changed it; True when it did change."""
        with self._lock:
            if not (force or self._dirty):
                return False
            self._dirty = False
            seq = self.kb.state.seq
            schema = discover_schema(self.kb, samples=self.samples)
            self._seq = max(seq, self.kb.state.seq)
            self._labels = {n.label: set(n.properties) for n in schema.node_types}
            self._triples = {(r.name, e.source, e.target) for r in schema.relation_types for e in r.endpoints}
            self._relations = {r.name for r in schema.relation_types}
            fingerprint = schema.fingerprint()
            changed = fingerprint != self.fingerprint
            if changed:  # keep descriptions (and their examples) stable unless the shape changed
                self.schema = schema
                self.fingerprint = fingerprint
            return changed

    def poll(self) -> bool:
        """Catch up with other processes' commits; True when the schema changed."""
        with self.kb.state.reading():
            seq = self.kb.state.seq
        if seq != self._seq:
            self._dirty = True
        return self.refresh()
