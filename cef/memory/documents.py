"""Documents into a semantic memory: the pipeline of a content type, unchanged ones skipped, files of a folder.

:meth:`SemanticMemory.ingest_many <cef.memory.memory.SemanticMemory.ingest_many>` and
:meth:`~cef.memory.memory.SemanticMemory.ingest_path` delegate here:
:func:`ingest_documents` runs the parser (and decomposer) registered for a
content type over the documents whose content changed since their last ingest
(a sha256 per document id, kept in the store's metadata) and writes them in one
transaction; :func:`collect_documents` reads the files of a path, grouped by
content type. Both take a :class:`DocumentMemory` (what they read of the
memory), not the facade, so the facade depends on them and never the other way.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cef.errors import ConfigurationError
from cef.memory.constraints import normalize_scope
from cef.memory.ingest import document_id_for
from cef.memory.view import MemoryView
from cef.schema.pipelines import IngestContext

if TYPE_CHECKING:
    from cef.schema.registry import SchemaRegistry

__all__ = [
    "DOC_META",
    "DocumentMemory",
    "IngestReport",
    "collect_documents",
    "ingest_documents",
    "pipeline_for",
]

#: the store metadata key prefix of a document's manifest (its sha256 and node ids)
DOC_META = "memory.doc."


@dataclass
class IngestReport:
    """What a folder (or file) ingest did."""

    documents: int = 0
    skipped: int = 0
    nodes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


class DocumentMemory(MemoryView, Protocol):
    """What document ingest reads of a memory besides a :class:`MemoryView`: a registry refresh."""

    def refresh(self) -> None: ...


def pipeline_for(registry: SchemaRegistry, content_type: str) -> tuple[Any, Any]:
    """The (parser, decomposer) registered for ``content_type``; raises naming the registered ones."""
    pipe = registry.pipeline(content_type)
    if pipe is None:
        known = ", ".join(sorted(registry.pipelines)) or "(none)"
        raise ConfigurationError(
            f"no ingestion pipeline for content type {content_type!r}: register one with "
            f"register_ingestion_pipeline (registered: {known})"
        )
    return pipe


def ingest_documents(
    memory: DocumentMemory,
    documents: Sequence[tuple[str, dict[str, Any]]],
    content_type: str,
    *,
    scope: str | dict[str, str] | None = None,
) -> IngestReport:
    """Ingest several documents of one content type (a parser with ``parse_many`` sees them together).

    This is :meth:`SemanticMemory.ingest_many <cef.memory.SemanticMemory.ingest_many>` (``memory`` is the
    memory); see :meth:`~cef.memory.SemanticMemory.ingest` for one document.

    Args:
        documents: ``(content, metadata)`` pairs; ``metadata['path']`` or ``['id']`` identify a document.
        content_type: a registered pipeline.
        scope: the scope their records belong to.

    Returns:
        Documents ingested and skipped (unchanged), node ids, failures, seconds.

    Raises:
        ConfigurationError: no pipeline is registered for ``content_type``.
        ParseError: the pipeline's parser refused a document (nothing is written).
    """
    from cef.memory.reconcile import write_documents

    t0 = time.perf_counter()
    memory.refresh()
    key = content_type.strip().lower()
    parser, decomposer = pipeline_for(memory.registry, content_type)
    s = normalize_scope(scope)
    now = memory.now()

    def resolve(name: str) -> str | None:
        return memory.resolve_name(name, s)

    contexts = [
        (
            content,
            IngestContext(
                content_type=key,
                document_id=document_id_for(content, key, meta, s),
                metadata=dict(meta),
                scope=s,
                now=now,
                registry=memory.registry,
                extractor=memory.extractor,
                resolve=resolve,
                exists=memory.kb.state.graph.has_node,
            ),
        )
        for content, meta in documents
    ]
    report = IngestReport()
    todo = []
    for content, ctx in contexts:
        digest = hashlib.sha256(content.encode("utf-8", "replace")).hexdigest()
        manifest = memory.kb.store.get_meta(DOC_META + ctx.document_id)
        if manifest is not None and manifest.get("sha256") == digest:
            report.skipped += 1
            report.nodes.extend(manifest.get("nodes", []))
            continue
        ctx.metadata.setdefault("sha256", digest)
        todo.append((content, ctx))
    if todo:
        parse_many = getattr(parser, "parse_many", None)
        if callable(parse_many) and len(todo) > 1:
            batches = parse_many(todo)
        else:
            batches = [parser.parse(content, ctx) for content, ctx in todo]
        if decomposer is not None:
            batches = [decomposer.decompose(b, ctx) for b, (_, ctx) in zip(batches, todo, strict=True)]
        report.nodes.extend(
            write_documents(memory, [(b, ctx) for b, (_, ctx) in zip(batches, todo, strict=True)], now)
        )
        report.documents += len(todo)
    report.seconds = time.perf_counter() - t0
    return report


def _files(registry: SchemaRegistry, p: Path, content_type: str | None) -> list[Path]:
    """``p`` itself, or the files of folder ``p`` the content type's pipeline (or any pipeline) reads."""
    if not p.is_dir():
        return [p]
    suffixes: set[str] = set()
    if content_type is not None:
        spec = registry.pipelines.get(content_type.strip().lower())
        suffixes = set(spec.extensions) if spec else set()
    return sorted(
        f
        for f in p.rglob("*")
        if f.is_file()
        and "__pycache__" not in f.parts
        and (
            f.suffix.lower() in suffixes
            if suffixes
            else registry.content_type_for_suffix(f.suffix) is not None
        )
    )


def collect_documents(
    registry: SchemaRegistry,
    p: Path,
    content_type: str | None,
    metadata: Mapping[str, Any] | None,
    root: str | Path | None,
) -> tuple[dict[str, list[tuple[str, dict[str, Any]]]], list[str]]:
    """The documents of a file or folder grouped by content type, and the files that could not be read.

    Paths in metadata are relative to ``root`` (default: the path's parent).
    """
    base = Path(root) if root else p.parent
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    failures: list[str] = []
    for f in _files(registry, p, content_type):
        ctype = content_type or registry.content_type_for_suffix(f.suffix) or "text"
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            failures.append(f"{f}: {exc}")
            continue
        meta = {**dict(metadata or {}), "path": f.relative_to(base).as_posix()}
        groups.setdefault(ctype, []).append((text, meta))
    return groups, failures
