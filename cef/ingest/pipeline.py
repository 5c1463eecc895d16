"""Ingest sources into a knowledge base: list → fingerprint → parse → enrich → upsert.

A file is one transaction, except a large file whose parser reads streams
(:class:`~cef.ingest.parsers.base.BatchParser`, JSON Lines): it is validated
in one streaming pass (a bad line rejects the file before anything is
written), then read and committed ``batch_size`` records at a time, so memory
stays bounded whatever its size.

A manifest per file (stored in the knowledge base's meta, written in the same
transaction as the file's records; see :mod:`cef.ingest.manifest`) remembers
its fingerprint, the ids it produced and whether all of it is in, so
re-ingesting a source skips unchanged complete files, resumes a file an
interrupted ingest left incomplete after its last committed part, replaces
changed ones (records no longer produced are removed at the end) and deletes
files that disappeared from a folder or prefix.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cef.engine.kb import KnowledgeBase
from cef.engine.state import ProgressFn
from cef.errors import (
    CefError,
    MissingNodeError,
    ParseError,
    UnknownNodeTypeError,
    UnknownRelationTypeError,
    UnsupportedFileError,
)
from cef.ingest.manifest import (
    KINDS,
    FileManifest,
    check_collisions,
    claimed_elsewhere,
    file_key,
    is_part,
    iter_entries,
    manifest_entries,
    manifest_key,
    part_key,
    source_key,
    source_name,
    union_ids,
)
from cef.ingest.merge import merge_extracted
from cef.ingest.order import hidden, in_dependency_order, link_notes_of
from cef.ingest.parsers.base import BatchParser, ParseContext, ParsedDocument, ParseOptions, Parser
from cef.ingest.parsers.registry import ParserRegistry, default_registry
from cef.ingest.sources import DataSource, ResourceInfo, open_source
from cef.model import Batch
from cef.schema.textgraph import SHARED_LABELS

if TYPE_CHECKING:
    from cef.llm.base import LLMClient

log = logging.getLogger(__name__)

#: records per transaction of a streamed file (JSON Lines) by default
DEFAULT_BATCH_SIZE = 5000

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
    status: str  # "ingested" | "replaced" | "skipped" | "deleted" | "failed" | "unsupported"
    nodes: int = 0
    edges: int = 0
    chunks: int = 0
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    entities: dict[str, int] = field(default_factory=dict)  # linked / new / merged (entity resolution)
    #: failed on a relation type, node type or node that another file of the same ingest may define
    waits: bool = False


@dataclass
class IngestReport:
    """What an ingest did, per file."""

    outcomes: list[FileOutcome] = field(default_factory=list)
    seconds: float = 0.0
    links: int = 0  # LINKS_TO edges between notes after the ingest

    def _count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failures(self) -> list[str]:
        return [o.message for o in self.outcomes if o.status == "failed"]

    @property
    def unsupported(self) -> list[str]:
        """Files no parser reads, each with why (skipped, never silently)."""
        return [o.message for o in self.outcomes if o.status == "unsupported"]

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
            f"{self._count('skipped')} unchanged, {self._count('deleted')} deleted, {self._count('failed')} failed"
            + (f", {self._count('unsupported')} skipped (unsupported)" if self._count("unsupported") else ""),
            f"records written: {t['nodes']} nodes, {t['edges']} edges, {t['chunks']} chunks "
            f"in {self.seconds:.1f} s" + (f"; {self.links} links between notes" if self.links else ""),
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
    batch_size: int = DEFAULT_BATCH_SIZE,
    index_entities: bool = True,
) -> IngestReport:
    """Ingest every file of every source; a bad file is reported and the others still go in.

    ``batch_size``: records per transaction of a file read as a stream (JSON
    Lines); a file with at most that many records is one transaction.
    ``index_entities``: when something changed, build a big graph's entity index
    at the end and save it beside the store, so the next query reads it (False
    for ingests that run back to back: the first query after them builds it).
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise CefError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    t0 = time.perf_counter()
    registry = registry or default_registry()
    report = IngestReport()
    if enricher is None and extract:
        enricher = _default_enricher()
    with ExitStack() as stack:
        jobs: list[tuple[str, DataSource, str, ResourceInfo]] = []
        trees: list[tuple[str, set[str]]] = []
        for uri in sources:
            try:
                source, files, is_tree = _open(uri)
            except CefError as exc:
                report.outcomes.append(FileOutcome(uri, "failed", message=str(exc)))
                continue
            stack.enter_context(source)
            key = source_key(uri if is_tree else str(Path(uri).parent))
            usable = [f for f in files if registry.for_path(f.path) is not None]
            report.outcomes.extend(
                FileOutcome(f.path, "unsupported", message=f"{f.path}: no parser reads this kind of file")
                for f in files
                if registry.for_path(f.path) is None and not hidden(f.path)
            )
            jobs.extend((uri, source, key, info) for info in usable)
            if is_tree:
                trees.append((key, {f.path for f in usable}))

        def run(job: tuple[str, DataSource, str, ResourceInfo]) -> FileOutcome:
            return _FileJob(kb, *job[1:], registry, options, enricher, progress, batch_size).run()

        report.outcomes.extend(in_dependency_order(jobs, run, progress))
        for key, seen in trees:
            report.outcomes.extend(_delete_missing(kb, key, seen))
    if any(o.status in ("ingested", "replaced", "deleted") for o in report.outcomes):
        links = link_notes_of(kb, progress)
        report.links = links.edges
        if links.unresolved:  # links to notes that do not exist: warnings
            report.outcomes.append(FileOutcome("(links)", "linked", warnings=links.unresolved))
        if progress is not None:
            progress("embedding relation paths", 0, 1)
        kb.retriever.prepare_paths()  # a query then embeds only its question
        if progress is not None:
            progress("embedding relation paths", 1, 1)
        if index_entities:  # a big graph's entity index is built here (and saved), not by the next query
            kb.retriever.prepare_entities(progress)
    report.seconds = time.perf_counter() - t0
    return report


@dataclass
class _FileJob:
    """The ingest of one file: skipped when unchanged and complete, else written whole (one
    transaction) or, for a large streamed file, part by part (resuming an interrupted ingest)."""

    kb: KnowledgeBase
    source: DataSource
    key: str
    info: ResourceInfo
    registry: ParserRegistry
    options: ParseOptions | None
    enricher: Enricher | None
    progress: ProgressFn | None
    batch_size: int
    outcome: FileOutcome = field(init=False)

    def run(self) -> FileOutcome:
        info = self.info
        self.mkey = manifest_key(self.key, info.path)
        self.previous = FileManifest.from_meta(self.mkey, self.kb.store.get_meta(self.mkey))
        prev = self.previous
        if prev is not None and prev.complete and prev.fingerprint == info.fingerprint:
            return FileOutcome(info.path, "skipped")
        parser = self.registry.for_path(info.path)
        assert parser is not None
        self.parser: Parser = parser
        self.ctx = ParseContext(
            path=info.path,
            source=source_name(self.key),
            uri=f"{self.source.uri.rstrip('/')}/{info.path}",
            content_type=info.content_type,
            options=self.options or ParseOptions(),
        )
        self.outcome = FileOutcome(info.path, "replaced" if prev is not None else "ingested")
        try:
            if isinstance(parser, BatchParser):
                self._streamed(parser)
            else:
                self._whole(parser.parse(self.source.read_bytes(info.path), self.ctx))
        except UnsupportedFileError as exc:
            return FileOutcome(info.path, "unsupported", message=str(exc))
        except ParseError as exc:
            return FileOutcome(info.path, "failed", message=str(exc))
        except (UnknownRelationTypeError, UnknownNodeTypeError, MissingNodeError) as exc:
            return FileOutcome(info.path, "failed", message=f"{info.path}: {exc}", waits=True)
        except CefError as exc:
            return FileOutcome(info.path, "failed", message=f"{info.path}: {exc}")
        except (ValueError, TypeError, RecursionError, MemoryError, UnicodeError) as exc:
            # a record a library refuses: this file fails (nothing of this transaction written), the rest go on
            log.warning("ingest of %s failed", info.path, exc_info=True)
            return FileOutcome(info.path, "failed", message=f"{info.path}: {type(exc).__name__}: {exc}")
        return self.outcome

    # ------------------------------------------------------------------ one transaction
    def _whole(self, doc: ParsedDocument) -> None:
        """Write the whole file in one transaction, replacing what its previous version wrote."""
        doc = self._enrich(doc)
        batch = doc.batch
        ids = _ids(batch)
        prev = self.previous
        old = self._old_ids(prev.parts[0], prev.parts[1], header=True) if prev is not None else None
        manifest = FileManifest(
            self.mkey, self.info.fingerprint, self.parser.name, complete=True, position=doc.position, ids=ids
        )
        meta: dict[str, Any] = {key: None for key in (prev.part_keys() if prev is not None else [])}
        meta[self.mkey] = manifest.to_meta()
        self._write(doc, ids, old, meta)

    # ------------------------------------------------------------------ streamed parts
    def _streamed(self, parser: BatchParser) -> None:
        prev = self.previous
        info = self.info
        resume = (
            prev is not None and not prev.complete and prev.fingerprint == info.fingerprint and bool(prev.run)
        )
        start = prev.position or 0 if resume and prev is not None else 0
        with self.source.open(info.path) as stream:
            parts = parser.parse_batches(stream, self.ctx, self.batch_size, start=start)
            head = [next(parts)]
            nxt = next(parts, None)
            if nxt is None and not resume:  # small enough for one transaction
                self._whole(head[0])
                return
            if nxt is not None:
                head.append(nxt)
            if resume:
                assert prev is not None
                lo, hi = prev.parts
                run_from, run = prev.run_from, prev.run
                carried: dict[str, Any] = {}
                total = prev.lines
            else:
                total = self._validate(parser)  # a bad line rejects the file before anything is written
                lo, hi = prev.parts if prev is not None else (0, 0)
                carried = {}
                if prev is not None and any(prev.ids.values()):  # ids of a one-transaction version
                    carried[part_key(self.mkey, hi)] = {k: prev.ids.get(k, []) for k in KINDS}
                    hi += 1
                run_from = hi
                basis = f"{info.fingerprint}\x1f{prev.run if prev else ''}\x1f{lo}:{hi}"
                run = hashlib.sha256(basis.encode()).hexdigest()[:16]
            for doc, last in _with_last(_chain(head, parts)):
                header = FileManifest(
                    self.mkey,
                    info.fingerprint,
                    parser.name,
                    complete=last,
                    position=doc.position,
                    parts=(run_from if last else lo, hi + 1),
                    run_from=run_from,
                    run=run,
                    lines=total,
                )
                doc = self._enrich(doc, run)
                ids = _ids(doc.batch)
                meta: dict[str, Any] = {**carried, part_key(self.mkey, hi): ids, self.mkey: header.to_meta()}
                old: dict[str, set[str]] | None = None
                if last and run_from > lo:  # the version replaced: what the new one no longer has goes
                    old = self._old_ids(lo, run_from, header=False)
                    new = self._old_ids(run_from, hi, header=False)
                    for k in KINDS:
                        old[k] -= new[k]
                    meta.update(dict.fromkeys(_part_keys(self.mkey, lo, run_from)))
                self._write(doc, ids, old, meta)
                carried = {}
                hi += 1
                if self.progress is not None and doc.position is not None:
                    self.progress(f"ingesting {info.path} (lines)", min(doc.position, total), total)

    def _validate(self, parser: BatchParser) -> int:
        """Read the whole file once (streamed, nothing kept): a bad line raises; returns its line count."""
        position = 0
        with self.source.open(self.info.path) as stream:
            for part in parser.parse_batches(stream, self.ctx, self.batch_size):
                position = part.position or position
        return position

    # ------------------------------------------------------------------ shared
    def _enrich(self, doc: ParsedDocument, run: str | None = None) -> ParsedDocument:
        enricher = self.enricher
        if isinstance(enricher, ProgressEnricher):
            doc = enricher.enrich(self.kb, doc, progress=self.progress)
        elif enricher is not None:
            doc = enricher(self.kb, doc)
        if run is not None:
            from cef.ingest.enrich import merge_cooccurrence

            batch = doc.batch
            doc = doc.model_copy(
                update={
                    "batch": batch.model_copy(update={"edges": merge_cooccurrence(self.kb, batch.edges, run)})
                }
            )
        return doc

    def _old_ids(self, lo: int, hi: int, *, header: bool) -> dict[str, set[str]]:
        """Ids listed by parts ``lo..hi-1`` of this file (and its header's own, with ``header``)."""
        entries: list[dict[str, Any]] = []
        if hi > lo:
            entries = [
                value
                for key, value in iter_entries(self.kb.store.meta_items(part_key(self.mkey, 0)[:-6]))
                if lo <= _part_index(key) < hi
            ]
        if header and self.previous is not None:
            entries.append({k: self.previous.ids.get(k, []) for k in KINDS})
        return union_ids(entries)

    def _write(
        self,
        doc: ParsedDocument,
        ids: dict[str, list[str]],
        old: dict[str, set[str]] | None,
        meta: dict[str, Any],
    ) -> None:
        """Upsert one transaction's records with their manifest entries, removing what ``old`` lists
        and the new records no longer produce."""
        kb, batch, mkey = self.kb, doc.batch, self.mkey
        old = old or {}
        check_collisions(kb, ids["chunks"], old.get("chunks", set()), mkey)
        remove_edges = _gone(old.get("edges"), ids["edges"])
        merge = merge_extracted(kb, batch, mkey)
        if merge.merged:
            doc.entities["merged"] = len(merge.merged)
            batch = merge.repoint(batch)
        kb.indexer.upsert_batch(
            batch.model_copy(update={"edges": [*batch.edges, *merge.edges]}) if merge.edges else batch,
            remove_nodes=[
                *_shared_removals(kb, _gone(old.get("nodes"), ids["nodes"], kb, mkey), remove_edges, batch),
                *merge.merged,
            ],
            remove_edges=remove_edges,
            remove_chunks=_gone(old.get("chunks"), ids["chunks"]),
            meta={**merge.manifests, **meta},
            progress=self.progress,
        )
        out = self.outcome
        out.nodes += len(batch.nodes)
        out.edges += len(batch.edges)
        out.chunks += len(batch.chunks)
        out.warnings.extend(doc.warnings)
        for k, v in doc.entities.items():
            out.entities[k] = out.entities.get(k, 0) + v


def _part_keys(mkey: str, lo: int, hi: int) -> list[str]:
    return [part_key(mkey, i) for i in range(lo, hi)]


def _part_index(key: str) -> int:
    return int(key.rsplit(":", 1)[1])


def _ids(batch: Batch) -> dict[str, list[str]]:
    return {
        "nodes": [n.id for n in batch.nodes],
        "edges": [e.id for e in batch.edges],
        "chunks": [c.id for c in batch.chunks],
    }


def _chain(head: list[ParsedDocument], rest: Iterator[ParsedDocument]) -> Iterator[ParsedDocument]:
    yield from head
    yield from rest


def _with_last(items: Iterator[ParsedDocument]) -> Iterator[tuple[ParsedDocument, bool]]:
    """Each item with whether it is the last one (one item of lookahead)."""
    cur = next(items, None)
    while cur is not None:
        nxt = next(items, None)
        yield cur, nxt is None
        cur = nxt


def _gone(
    old: Iterable[str] | None, new: Iterable[str], kb: KnowledgeBase | None = None, mkey: str = ""
) -> list[str]:
    """Ids a file produced before and no longer does (nodes still claimed by other files are kept)."""
    if not old:
        return []
    gone = set(old) - set(new)
    if kb is not None and gone:
        gone -= claimed_elsewhere(kb, gone, mkey)
    return sorted(gone)


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


def _delete_missing(kb: KnowledgeBase, key: str, seen: set[str]) -> list[FileOutcome]:
    prefix = manifest_key(key, "")
    outcomes = []
    entries = [(k, v) for k, v in manifest_entries(kb) if k.startswith(prefix)]
    for mkey, _ in entries:
        if is_part(mkey) or mkey[len(prefix) :] in seen:
            continue
        path = mkey[len(prefix) :]
        own = [(k, v) for k, v in entries if file_key(k) == mkey]
        ids = union_ids(v for _, v in own)
        nodes = ids["nodes"] - claimed_elsewhere(kb, ids["nodes"], mkey)
        edges = sorted(ids["edges"])
        kb.indexer.upsert_batch(
            Batch(),
            remove_nodes=_shared_removals(kb, sorted(nodes), edges, Batch()),
            remove_edges=edges,
            remove_chunks=sorted(ids["chunks"]),
            meta=dict.fromkeys(k for k, _ in own),
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
    return json.dumps({k: v.get("fingerprint") for k, v in manifest_entries(kb)}, indent=2)
