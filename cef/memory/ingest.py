"""Ingestion pipelines: content → parser → decomposer → records, reconciled with the document's last version.

A pipeline is registered per content type (``text`` is built in). The parser
turns one document's content into a :class:`~cef.model.Batch`; the optional
decomposer adds to it (entities found in the text, mentions). The memory then
writes the batch as the document's new version in one transaction: nodes are
upserted, chunks replaced, and edges diffed bi-temporally — an edge the new
version no longer has is closed (``valid_to``) rather than deleted, a new one
is recorded now, an unchanged one is left alone — so "what changed since T"
covers re-ingested documents too.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING, Any

from cef.ingest.chunking import TextSplitter
from cef.model import Batch, Chunk, Edge, Node
from cef.schema.pipelines import IngestContext

if TYPE_CHECKING:
    pass

__all__ = [
    "SOURCE_DOCUMENT",
    "EntityDecomposer",
    "TextParser",
    "document_id_for",
]

log = logging.getLogger(__name__)

#: property (metadata for chunks) naming the document a record came from
SOURCE_DOCUMENT = "source_document"


def document_id_for(content: str, content_type: str, metadata: dict[str, Any], scope: str | None) -> str:
    """A stable id for a document: ``metadata['id']``, else its path, else a hash of its content."""
    if metadata.get("id"):
        return str(metadata["id"])
    key = metadata.get("path") or metadata.get("source") or metadata.get("uri")
    if key:
        base = f"doc:{content_type}:{key}"
    else:
        base = "doc:" + hashlib.sha1(content.encode("utf-8", "replace")).hexdigest()[:16]
    return base if scope is None else f"{base}@{scope}"


class TextParser:
    """Plain text: a ``document`` node and its text in chunks linked to it."""

    def __init__(self, chunk_chars: int = 800, overlap: int = 80) -> None:
        self.splitter = TextSplitter(chunk_chars, overlap)

    def parse(self, content: str, context: IngestContext) -> Batch:
        meta = context.metadata
        title = str(
            meta.get("title") or meta.get("name") or context.path or _first_line(content) or "document"
        )
        props: dict[str, Any] = {"name": title, "content_type": context.content_type}
        for key in ("path", "author", "source"):
            if meta.get(key) is not None:
                props[key] = meta[key]
        doc = Node(
            id=context.document_id,
            label="document",
            properties=props,
            content=f"{title}: {content[:300]}",
            scope=context.scope,
        )
        spans, _ = self.splitter.split(content)
        chunks = [
            Chunk(
                id=f"{context.document_id}#{i}",
                content=content[a:b],
                node_id=doc.id,
                metadata={"start": a, "end": b},
                scope=context.scope,
            )
            for i, (a, b) in enumerate(spans)
            if content[a:b].strip()
        ]
        return Batch(nodes=[doc], chunks=chunks)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return " ".join(line.split())[:80]
    return ""


#: spaCy entity labels → entity_type property of entity nodes
_NER_TYPES = {"PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place"}


class EntityDecomposer:
    """Entities in a document's chunks (the memory's extractor): linked to existing nodes by name,
    or created as ``entity`` nodes; the document ``mentions`` each one."""

    def decompose(self, batch: Batch, context: IngestContext) -> Batch:
        extractor = context.extractor
        doc_ids = [n.id for n in batch.nodes if n.label == "document"]
        if extractor is None or not doc_ids or not batch.chunks:
            return batch
        doc_id = doc_ids[0]
        found = extractor.extract([c.content for c in batch.chunks])
        nodes = list(batch.nodes)
        edges = list(batch.edges)
        have = {n.id for n in nodes}
        linked: dict[str, float] = {}
        for mentions in found:
            for m in mentions:
                if m.source == "title" or not m.normalized:
                    continue
                target = context.resolve(m.text)
                if target is None:
                    scope_part = f"{context.scope}:" if context.scope else ""
                    target = f"entity:{scope_part}{m.normalized}"
                    if target not in have and not context.exists(target):
                        nodes.append(
                            Node(
                                id=target,
                                label="entity",
                                properties={
                                    "name": m.text,
                                    "entity_type": _NER_TYPES.get(m.type, m.type.lower()),
                                },
                                scope=context.scope,
                            )
                        )
                        have.add(target)
                if target != doc_id:
                    linked[target] = max(linked.get(target, 0.0), m.confidence)
        for target, conf in linked.items():
            edges.append(
                Edge(
                    id=f"{doc_id}|mentions|{target}",
                    relation_type="mentions",
                    source=doc_id,
                    target=target,
                    confidence=conf,
                    scope=context.scope,
                )
            )
        return Batch(relation_types=batch.relation_types, nodes=nodes, edges=edges, chunks=batch.chunks)
