"""Graph schema discovery: what node types, properties and relations a knowledge base holds.

The schema is read from the data (labels, property names, observed
source→target labels per relation) plus the registered relation types
(semantics, inverse, description). Front doors publish it (``get_graph_schema``,
``GET /api/v1/schema``) and inject it into tool descriptions so an LLM can
write a correct query; :class:`SchemaTracker` tells when it changed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from cef.model import RelationSemantics

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase
    from cef.store.base import WriteSet

__all__ = [
    "EndpointInfo",
    "GraphSchema",
    "NodeTypeInfo",
    "RelationTypeInfo",
    "SchemaTracker",
    "describe_schema",
    "discover_schema",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeTypeInfo(_Model):
    label: str
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
            "n": sorted((n.label, sorted(n.properties)) for n in self.node_types),
            "r": sorted(
                (r.name, r.semantics.value, r.bidirectional, r.inverse or "", r.description)
                for r in self.relation_types
            ),
            "e": sorted((r.name, e.source, e.target) for r in self.relation_types for e in r.endpoints),
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]


def discover_schema(kb: KnowledgeBase, *, samples: int = 2) -> GraphSchema:
    """Read the live schema of ``kb`` (one consistent read)."""
    with kb.state.reading():
        store = kb.store
        node_types = []
        for label, count in store.labels():
            examples = [n.name for n in kb.find_nodes_by_label(label, limit=samples)] if samples else []
            node_types.append(
                NodeTypeInfo(
                    label=label, count=count, properties=store.property_names(label), examples=examples
                )
            )
        endpoints: dict[str, list[EndpointInfo]] = {}
        for rel, src, dst, count in store.relation_endpoints():
            endpoints.setdefault(rel, []).append(EndpointInfo(source=src, target=dst, count=count))
        relation_types = [
            RelationTypeInfo(
                name=rt.name,
                semantics=rt.semantics,
                description=rt.description,
                bidirectional=rt.bidirectional,
                inverse=rt.inverse,
                endpoints=endpoints.get(rt.name, []),
                count=sum(e.count for e in endpoints.get(rt.name, [])),
            )
            for rt in sorted(kb.state.graph.rel_types.values(), key=lambda r: r.name)
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
        lines.append(f"- {n.label}: {props}{examples}")
    if len(schema.node_types) > max_node_types:
        lines.append(f"- ... and {len(schema.node_types) - max_node_types} more (call get_graph_schema)")
    lines.append("Relation types (name [semantics]: source → target):")
    for r in schema.relation_types[:max_relation_types]:
        tags = r.semantics.value + (", bidirectional" if r.bidirectional else "")
        ends = ", ".join(f"{e.source} → {e.target}" for e in r.endpoints[:4]) or "not used yet"
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

    def __init__(self, kb: KnowledgeBase, *, samples: int = 2) -> None:
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
