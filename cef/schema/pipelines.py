"""The ports of an ingestion pipeline: what a parser and a decomposer are given and must return.

A domain registers a pipeline per content type
(:meth:`~cef.schema.registry.SchemaRegistry.register_ingestion_pipeline`);
the semantic memory calls its parser, then its decomposer, with an
:class:`IngestContext` and writes the batch they return.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cef.model import Batch

if TYPE_CHECKING:
    from cef.extract.base import EntityExtractor
    from cef.schema.kinds import NodeKind

__all__ = ["ContentParser", "Decomposer", "IngestContext", "MultiDocumentParser", "NodeTypes"]


class NodeTypes(Protocol):
    """The registered type hierarchy, as a parser sees it (the extension registry satisfies it)."""

    def is_a(self, label: str, ancestor: str) -> bool: ...

    def kind_of(self, label: str) -> NodeKind | None: ...

    def ancestors(self, label: str) -> list[str]: ...


@dataclass
class IngestContext:
    """What a parser or decomposer knows besides the content itself."""

    content_type: str
    document_id: str
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None
    now: datetime | None = None
    registry: NodeTypes | None = None
    extractor: EntityExtractor | None = None
    #: an existing node's id for a name (exact name or alias, in scope), or None
    resolve: Callable[[str], str | None] = lambda name: None
    #: whether a node id exists already
    exists: Callable[[str], bool] = lambda node_id: False

    @property
    def path(self) -> str | None:
        value = self.metadata.get("path")
        return str(value) if value is not None else None


@runtime_checkable
class ContentParser(Protocol):
    """Turns one document's content into records."""

    def parse(self, content: str, context: IngestContext) -> Batch: ...


@runtime_checkable
class MultiDocumentParser(Protocol):
    """A parser that resolves references across documents (e.g. imports between source files)."""

    def parse_many(self, documents: Sequence[tuple[str, IngestContext]]) -> list[Batch]: ...


@runtime_checkable
class Decomposer(Protocol):
    """Adds to a parsed batch: entities, mentions, links to existing nodes."""

    def decompose(self, batch: Batch, context: IngestContext) -> Batch: ...
