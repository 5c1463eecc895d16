"""Ingest sources into a knowledge base: list → fingerprint → parse → enrich → upsert, one transaction per file.

A manifest entry per file (stored in the knowledge base's meta, written in the
same transaction as the file's records) remembers its fingerprint and the ids
it produced, so re-ingesting a source skips unchanged files, replaces changed
ones (records no longer produced are removed) and deletes files that
disappeared from a folder or prefix.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cef.engine.kb import KnowledgeBase
from cef.engine.state import ProgressFn
from cef.errors import CefError, ParseError
from cef.extract.normalize import alias_keys
from cef.ingest.parsers.base import ParseContext, ParsedDocument, ParseOptions
from cef.ingest.parsers.registry import ParserRegistry, default_registry
from cef.ingest.sources import DataSource, ResourceInfo, open_source
from cef.model import Batch, Edge, stable_id
from cef.schema.textgraph import CONTAINER_LABELS, MENTIONS, SHARED_LABELS

if TYPE_CHECKING:
    from cef.llm.base import LLMClient

log = logging.getLogger(__name__)

MANIFEST_PREFIX = "ingest:"

#: turns a parsed document into a richer one (entity extraction); given the knowledge base for its gazetteer
Enricher = Callable[[KnowledgeBase, ParsedDocument], ParsedDocument]


@runtime_checkable
class ProgressEnricher(Protocol):
    """An enricher that reports progress (records done / total) while it works on a document."""

    def enrich(
        self, kb: KnowledgeBase, doc: ParsedDocument, *, progress: ProgressFn | None = None
    ) -> ParsedDocument: ...


@dataclass
class FileOutcome:
    path: str
    status: str  # "ingested" | "replaced" | "skipped" | "deleted" | "failed"
    nodes: int = 0
    edges: int = 0
    chunks: int = 0
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    entities: dict[str, int] = field(default_factory=dict)  # linked / new / merged (entity resolution)


@dataclass
class IngestReport:
    """What an ingest did, per file."""

    outcomes: list[FileOutcome] = field(default_factory=list)
    seconds: float = 0.0

    def _count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failures(self) -> list[str]:
        return [o.message for o in self.outcomes if o.status == "failed"]

    @property
    def warnings(self) -> list[str]:
        """What went wrong without failing a file (e.g. passages an LLM answered badly), per file."""
        return [f"{o.path}: {w}" for o in self.outcomes for w in o.warnings]

    @property
    def succeeded(self) -> int:
        return sum(1 for o in self.outcomes if o.status in ("ingested", "replaced"))

    def totals(self) -> dict[str, int]:
        return {
            "nodes": sum(o.nodes for o in self.outcomes),
            "edges": sum(o.edges for o in self.outcomes),
            "chunks": sum(o.chunks for o in self.outcomes),
        }

    def entity_totals(self) -> dict[str, int]:
        """Entity resolution over all files: linked, new, merged, and by fuzzy / partial / embedding tier."""
        out: dict[str, int] = {"linked": 0, "new": 0, "merged": 0}
        for o in self.outcomes:
            for k, v in o.entities.items():
                out[k] = out.get(k, 0) + v
        return out

    def summary_lines(self) -> list[str]:
        t = self.totals()
        return [
            f"files: {self._count('ingested')} ingested, {self._count('replaced')} replaced, "
            f"{self._count('skipped')} unchanged, {self._count('deleted')} deleted, {self._count('failed')} failed",
            f"records written: {t['nodes']} nodes, {t['edges']} edges, {t['chunks']} chunks "
            f"in {self.seconds:.1f} s",
            *self._entity_line(),
        ]

    def _entity_line(self) -> list[str]:
        e = self.entity_totals()
        if not any(e.values()):
            return []
        tiers = ", ".join(f"{v} {k.removeprefix('by_')}" for k, v in e.items() if k.startswith("by_") and v)
        return [
            f"entities: {e['linked']} linked to existing nodes, {e['new']} new, {e['merged']} merged"
            + (f" (resolved by {tiers})" if tiers else "")
        ]


def _source_key(uri: str) -> str:
    if "://" in uri:
        return uri.rstrip("/")
    return str(Path(uri).resolve())


def _manifest_key(source_key: str, path: str) -> str:
    return f"{MANIFEST_PREFIX}{source_key}::{path}"


def _open(uri: str) -> tuple[DataSource, list[ResourceInfo], bool]:
    """The source to read and the files to ingest; ``True`` when it is a folder/prefix (deletions apply)."""
    if "://" not in uri:
        p = Path(uri)
        if p.is_file():
            src = open_source(str(p.parent))
            return src, [src.info(p.name)], False
        if not p.exists():
            raise CefError(f"no such file or folder: {uri}")
    src = open_source(uri)
    return src, list(src.list()), True


def ingest_sources(
    kb: KnowledgeBase,
    sources: Sequence[str],
    *,
    progress: ProgressFn | None = None,
    extract: bool = True,
    registry: ParserRegistry | None = None,
    options: ParseOptions | None = None,
    enricher: Enricher | None = None,
) -> IngestReport:
    """Ingest every file of every source; a bad file is reported and the others still go in."""
    t0 = time.perf_counter()
    registry = registry or default_registry()
    report = IngestReport()
    if enricher is None and extract:
        enricher = _default_enricher()
    for uri in sources:
        try:
            source, files, is_tree = _open(uri)
        except CefError as exc:
            report.outcomes.append(FileOutcome(uri, "failed", message=str(exc)))
            continue
        with source:
            key = _source_key(uri if is_tree else str(Path(uri).parent))
            files = [f for f in files if registry.for_path(f.path) is not None]
            seen: set[str] = set()
            for i, info in enumerate(files, 1):
                seen.add(info.path)
                report.outcomes.append(
                    _ingest_file(kb, source, key, info, registry, options, enricher, progress)
                )
                if progress is not None and len(files) > 1:  # one file: its records are counted instead
                    progress(f"ingesting {uri} (files)", i, len(files))
            if is_tree:
                report.outcomes.extend(_delete_missing(kb, key, seen))
    report.seconds = time.perf_counter() - t0
    return report


def _ingest_file(
    kb: KnowledgeBase,
    source: DataSource,
    key: str,
    info: ResourceInfo,
    registry: ParserRegistry,
    options: ParseOptions | None,
    enricher: Enricher | None,
    progress: ProgressFn | None = None,
) -> FileOutcome:
    mkey = _manifest_key(key, info.path)
    previous: dict[str, Any] | None = kb.store.get_meta(mkey)
    if previous is not None and previous.get("fingerprint") == info.fingerprint:
        return FileOutcome(info.path, "skipped")
    parser = registry.for_path(info.path)
    assert parser is not None
    ctx = ParseContext(
        path=info.path,
        uri=f"{source.uri.rstrip('/')}/{info.path}",
        content_type=info.content_type,
        options=options or ParseOptions(),
    )
    try:
        doc = parser.parse(source.read_bytes(info.path), ctx)
        if isinstance(enricher, ProgressEnricher):
            doc = enricher.enrich(kb, doc, progress=progress)
        elif enricher is not None:
            doc = enricher(kb, doc)
        batch = doc.batch
        ids = {
            "nodes": [n.id for n in batch.nodes],
            "edges": [e.id for e in batch.edges],
            "chunks": [c.id for c in batch.chunks],
        }
        old = previous or {}
        manifest = {"fingerprint": info.fingerprint, "parser": parser.name, **ids}
        remove_edges = _gone(old.get("edges"), ids["edges"])
        merge = merge_extracted(kb, batch, mkey)
        if merge.merged:
            doc.entities["merged"] = len(merge.merged)
        kb.indexer.upsert_batch(
            batch.model_copy(update={"edges": [*batch.edges, *merge.edges]}) if merge.edges else batch,
            remove_nodes=[
                *_shared_removals(kb, _gone(old.get("nodes"), ids["nodes"], kb, mkey), remove_edges, batch),
                *merge.merged,
            ],
            remove_edges=remove_edges,
            remove_chunks=_gone(old.get("chunks"), ids["chunks"]),
            meta={**merge.manifests, mkey: manifest},
            progress=progress,
        )
    except ParseError as exc:
        return FileOutcome(info.path, "failed", message=str(exc))
    except CefError as exc:
        return FileOutcome(info.path, "failed", message=f"{info.path}: {exc}")
    return FileOutcome(
        info.path,
        "replaced" if previous is not None else "ingested",
        nodes=len(batch.nodes),
        edges=len(batch.edges),
        chunks=len(batch.chunks),
        warnings=list(doc.warnings),
        entities=dict(doc.entities),
    )


@dataclass
class Merge:
    """Extracted entities folded into curated nodes that arrived later: their edges re-pointed
    (``edges``), the entities to remove (``merged``) and other files' manifests renamed."""

    edges: list[Edge] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    manifests: dict[str, Any] = field(default_factory=dict)


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
                eid = entity_id(key)
                pos = g.pos(eid)
                if eid != node.id and pos is not None and g.label_of(pos) in SHARED_LABELS:
                    targets.setdefault(eid, node.id)
    if not targets:
        return out
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
    for key, manifest in _manifests(kb):
        if key == mkey:
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


def _gone(
    old: Iterable[str] | None, new: Iterable[str], kb: KnowledgeBase | None = None, mkey: str = ""
) -> list[str]:
    """Ids a file produced before and no longer does (nodes still claimed by other files are kept)."""
    if not old:
        return []
    gone = set(old) - set(new)
    if kb is not None and gone:
        gone -= _claimed_elsewhere(kb, gone, mkey)
    return sorted(gone)


def _claimed_elsewhere(kb: KnowledgeBase, ids: set[str], mkey: str) -> set[str]:
    """Node ids some other file's manifest still lists (shared entities, nodes referenced by many files)."""
    claimed: set[str] = set()
    for key, manifest in _manifests(kb):
        if key != mkey:
            claimed.update(ids.intersection(manifest.get("nodes", [])))
    return claimed


def _shared_removals(
    kb: KnowledgeBase, remove_nodes: Sequence[str], remove_edges: Sequence[str], batch: Batch
) -> list[str]:
    """The nodes a write removes, with the reference rule applied to shared (extracted entity) nodes.

    A shared node is removed only when nothing references it after the write: a
    file that created an entity keeps it alive while another file's MENTIONS
    (or any other) edge points to it, and the write that removes the last edge
    to an entity removes the entity too, whichever file created it.
    """
    with kb.state.reading():
        g = kb.state.graph

        def shared(node_id: str) -> bool:
            pos = g.pos(node_id)
            return pos is not None and g.label_of(pos) in SHARED_LABELS

        plain = [n for n in remove_nodes if not shared(n)]
        doomed = set(remove_edges)
        if plain:
            doomed.update(kb.store.edges_for_nodes(plain))
        candidates = {n for n in remove_nodes if shared(n)}
        for eid in doomed:
            p = g.edge_pos(eid)
            if p is None or not g.e_alive[p]:
                continue
            for end in (int(g.e_src[p]), int(g.e_dst[p])):
                if shared(g.node_ids[end]):
                    candidates.add(g.node_ids[end])
        if not candidates:
            return sorted(plain)
        kept = {n.id for n in batch.nodes}
        kept.update(x for e in batch.edges for x in (e.source, e.target))
        kept.update(c.node_id for c in batch.chunks if c.node_id)
        linked = kb.store.chunks_for_nodes(sorted(candidates))
        out = set(plain)
        for node_id in candidates - kept:
            if linked.get(node_id):
                continue
            pos = g.pos(node_id)
            live = {g.edge_ids[e] for e in g.incident_edges(pos)} if pos is not None else set()
            if not live - doomed:
                out.add(node_id)
        return sorted(out)


def _manifests(kb: KnowledgeBase) -> list[tuple[str, dict[str, Any]]]:
    return [(k, v) for k, v in kb.store.meta_items(MANIFEST_PREFIX) if isinstance(v, dict)]


def _delete_missing(kb: KnowledgeBase, key: str, seen: set[str]) -> list[FileOutcome]:
    prefix = _manifest_key(key, "")
    outcomes = []
    for mkey, manifest in _manifests(kb):
        if not mkey.startswith(prefix) or mkey[len(prefix) :] in seen:
            continue
        path = mkey[len(prefix) :]
        nodes = set(manifest.get("nodes", [])) - _claimed_elsewhere(kb, set(manifest.get("nodes", [])), mkey)
        kb.indexer.upsert_batch(
            Batch(),
            remove_nodes=_shared_removals(kb, sorted(nodes), manifest.get("edges", []), Batch()),
            remove_edges=manifest.get("edges", []),
            remove_chunks=manifest.get("chunks", []),
            meta={mkey: None},
        )
        outcomes.append(FileOutcome(path, "deleted"))
    return outcomes


def make_enricher(llm: LLMClient | None = None, **options: Any) -> Enricher | None:
    """The entity enricher ingest runs on document text: spaCy NER offline, or ``llm`` when given.

    ``options`` go to :class:`~cef.ingest.enrich.EntityEnricher` (for instance
    ``min_entity_confidence`` / ``min_relation_confidence``). Without an LLM and
    without the NLP extra, extraction is off (``None``) and a warning says why.
    """
    try:
        from cef.ingest.enrich import EntityEnricher
    except ImportError:  # pragma: no cover - the enrichment module is optional
        return None
    if llm is not None:
        from cef.extract.llm import LLMExtractor

        return EntityEnricher(LLMExtractor(llm), **options)
    try:
        return EntityEnricher(**options)
    except CefError as exc:
        log.warning("entity extraction disabled: %s", exc)
        return None


def _default_enricher() -> Enricher | None:
    """Entity extraction on document text when the NLP extra is installed (graph from text)."""
    return make_enricher()


def manifest_summary(kb: KnowledgeBase) -> str:
    return json.dumps({k: v.get("fingerprint") for k, v in _manifests(kb)}, indent=2)
