"""The parser port: bytes of one file in, a :class:`~cef.model.Batch` out.

Parsers never touch a store. The engine that writes batches decides what to
do with them (replace the previous version of the document, embed chunks...).
A parse either succeeds for the whole file or raises
:class:`~cef.errors.ParseError` naming the file (and the line where there is one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any, BinaryIO, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cef.errors import ParseError
from cef.model import Batch, stable_id

__all__ = [
    "BatchParser",
    "ParseContext",
    "ParseOptions",
    "ParsedDocument",
    "Parser",
    "decode_text",
]

TokenCounter = Callable[[str], int]


class ParseOptions(BaseModel):
    """Settings a parser may read. Unknown parser-specific settings go in ``extra``."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    chunk_size: int = Field(default=1000, ge=16, description="largest chunk, in characters or tokens")
    chunk_overlap: int = Field(default=100, ge=0, description="text repeated from the previous chunk")
    token_counter: TokenCounter | None = Field(
        default=None, description="if given, chunk_size and chunk_overlap count tokens with it"
    )
    csv_kind: Literal["nodes", "edges"] | None = Field(default=None, description="force the CSV kind")
    csv_columns: dict[str, str] = Field(
        default_factory=dict, description="CSV header name → canonical column (id, label, source...)"
    )
    csv_delimiter: str | None = Field(default=None, min_length=1, max_length=1)
    title_nodes: bool = Field(default=False, description="JSON Lines: one node per distinct title")
    title_node_label: str = Field(default="Document", min_length=1)
    document_label: str = Field(default="Document", min_length=1)
    note_label: str = Field(
        default="Note",
        min_length=1,
        description="label of a Markdown document: a note, named by its title and linked to the notes it links",
    )
    scope: str | None = Field(default=None, description="scope given to records that have none")
    extra: dict[str, Any] = Field(default_factory=dict, description="settings for user parsers")

    @model_validator(mode="after")
    def _overlap(self) -> ParseOptions:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})"
            )
        return self


class ParseContext(BaseModel):
    """What a parser knows about the file besides its bytes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(min_length=1, description="path relative to the source root; names the file in errors")
    uri: str | None = Field(default=None, description="full location (file:///..., s3://...)")
    content_type: str | None = None
    options: ParseOptions = Field(default_factory=ParseOptions)
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="document metadata, copied to the document node's properties"
    )
    document_id: str | None = Field(
        default=None, description="id of the document node (default: doc:<source>/<path>)"
    )
    source: str | None = Field(
        default=None,
        description="name of the source root the path is relative to (its folder's name); part of the "
        "document's identity, so the same relative path under two folders names two documents",
    )

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name

    @property
    def stem(self) -> str:
        """The file name without its suffixes (``notes.md.gz`` → ``notes``)."""
        name = self.name
        return name.split(".", 1)[0] or name

    def doc_id(self) -> str:
        """The document node's id: ``document_id`` if set, else ``doc:<source>/<path>`` (``doc:<path>``
        without a source; hashed if very long)."""
        if self.document_id:
            return self.document_id
        key = f"{self.source}/{self.path}" if self.source else self.path
        return stable_id("doc", key) if len(key) > 400 else f"doc:{key}"

    def error(self, message: str, line: int | None = None) -> ParseError:
        """A :class:`ParseError` naming this file (and ``line``, 1-based)."""
        return ParseError(message, file=self.path, line=line)


class ParsedDocument(BaseModel):
    """One parsed file: the records to write, the document node (if any) and warnings."""

    model_config = ConfigDict(extra="forbid")

    batch: Batch
    document_id: str | None = Field(default=None, description="the node standing for the file, if any")
    parser: str = ""
    warnings: list[str] = Field(default_factory=list)
    entities: dict[str, int] = Field(
        default_factory=dict,
        description="entity resolution counts of the enricher: linked (existing nodes mentioned), new "
        "(entity nodes created), merged (extracted entities folded into a curated node), by_<tier>",
    )
    position: int | None = Field(
        default=None,
        description="a part of a streamed file: the number of the last line (record) it read, where "
        "reading resumes after a commit (see BatchParser)",
    )


@runtime_checkable
class Parser(Protocol):
    """Turns the bytes of one file into records.

    ``extensions`` are lower-case suffixes with the dot (``.md``, ``.jsonl.gz``);
    ``content_types`` are MIME types. ``priority``: lower runs first, so a
    parser with a smaller number overrides another for the same extension.
    """

    name: str
    extensions: tuple[str, ...]
    content_types: tuple[str, ...]
    priority: int

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument: ...


@runtime_checkable
class BatchParser(Protocol):
    """A parser that can also read a file as a stream, ``batch_size`` records at a time.

    Each part it yields carries a ``position`` (the last line read); given a
    ``start`` position, reading skips everything up to it. The ingest pipeline
    commits such a file part by part with bounded memory and resumes an
    interrupted ingest after the last part it committed.
    """

    name: str

    def parse_batches(
        self, stream: BinaryIO, ctx: ParseContext, batch_size: int, *, start: int = 0
    ) -> Iterator[ParsedDocument]: ...


def decode_text(data: bytes, ctx: ParseContext) -> str:
    """UTF-8 text (a BOM is dropped); undecodable bytes raise :class:`ParseError` with their line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ctx.error(f"not valid UTF-8 text (byte {exc.start}): {exc.reason}", line) from None
