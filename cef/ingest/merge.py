"""Extracted entities folded into the curated nodes that arrive after them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cef.extract.normalize import alias_keys
from cef.ingest.manifest import file_key, manifest_entries
from cef.model import Batch, Edge, stable_id
from cef.schema.textgraph import CONTAINER_LABELS, MENTIONS, SHARED_LABELS

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = ["Merge", "merge_extracted"]


@dataclass
class Merge:
    """Extracted entities folded into curated nodes that arrived later: their edges re-pointed
    (``edges``), the entities to remove (``merged``) and other files' manifests renamed."""

    edges: list[Edge] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    manifests: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, str] = field(default_factory=dict)  # entity id -> curated node id

    def repoint(self, batch: Batch) -> Batch:
        """``batch`` with its own edges and chunks that point to a merged entity moved to the curated
        node (the file's text may mention the entity its own curated node replaces); self loops go."""
        if not self.targets:
            return batch
        t = self.targets
        edges = []
        for edge in batch.edges:
            src, dst = t.get(edge.source, edge.source), t.get(edge.target, edge.target)
            if src == dst:
                continue
            edges.append(
                edge
                if (src, dst) == (edge.source, edge.target)
                else edge.model_copy(update={"source": src, "target": dst})
            )
        chunks = [
            c.model_copy(update={"node_id": t[c.node_id]}) if c.node_id in t else c for c in batch.chunks
        ]
        return batch.model_copy(update={"edges": edges, "chunks": chunks})


def merge_extracted(kb: KnowledgeBase, batch: Batch, mkey: str) -> Merge:
    """Fold ``Entity`` nodes extracted from text earlier into the curated nodes of ``batch`` that
    carry the same name (or alias): every edge of the entity moves to the curated node (self
    loops dropped), the entity goes, and the manifests of the files that wrote those edges and
    that entity are renamed so that their next re-ingest replaces them cleanly."""
    from cef.schema.textgraph import entity_id, is_extracted

    out = Merge()
    g = kb.state.graph
    targets: dict[str, str] = {}  # entity id -> curated node id
    for node in batch.nodes:
        if is_extracted(node) or node.label in CONTAINER_LABELS:
            continue
        for name in [node.name, *node.aliases]:
            for key in alias_keys(name):
                eid = entity_id(key, node.scope)  # entities of the node's own scope
                pos = g.pos(eid)
                if eid != node.id and pos is not None and g.label_of(pos) in SHARED_LABELS:
                    targets.setdefault(eid, node.id)
    if not targets:
        return out
    out.targets = targets
    renamed: dict[str, str] = {}
    for edge in kb.store.get_edges(kb.store.edges_for_nodes(sorted(targets))):
        src = targets.get(edge.source, edge.source)
        dst = targets.get(edge.target, edge.target)
        if src == dst:
            continue
        chunk_id = edge.properties.get("chunk_id")
        if edge.relation_type == MENTIONS and isinstance(chunk_id, str):
            new_id = stable_id("mentions", chunk_id, dst)  # what re-ingesting the chunk gives
        else:
            new_id = stable_id("merged", edge.id, src, dst)
        renamed[edge.id] = new_id
        out.edges.append(edge.model_copy(update={"id": new_id, "source": src, "target": dst}))
    out.merged = sorted(targets)
    for key, manifest in manifest_entries(kb):
        if file_key(key) == mkey:
            continue
        edges = manifest.get("edges", [])
        nodes = manifest.get("nodes", [])
        if any(e in renamed for e in edges) or any(n in targets for n in nodes):
            out.manifests[key] = {
                **manifest,
                "edges": list(dict.fromkeys(renamed.get(e, e) for e in edges)),
                "nodes": [n for n in nodes if n not in targets],
            }
    return out
