"""JSON Lines corpora: one passage per line, optionally gzip-compressed.

Each non-blank line is an object::

    {"id": "doc-1", "title": "Aspirin", "text": "Aspirin is ..."}

``id`` (or ``_id``, as in BEIR corpora; a string or an integer) is required and
kept as the chunk id; the text is ``text`` or ``content`` (exactly one). Every
other key (``title`` included) goes into the chunk's metadata, together with
``path`` and ``line``; a ``metadata`` object is merged in. With
``ParseOptions.title_nodes`` each distinct title also becomes a node (label
``ParseOptions.title_node_label``, id ``title:<title>``, property ``title``)
that its chunks link to. ``.jsonl.gz`` files (any file starting with the gzip
magic bytes) are decompressed on the fly. A bad line raises
:class:`~cef.errors.ParseError` with its line number, and nothing of the file
is returned: a parse succeeds whole or not at all.

:meth:`JsonLinesParser.parse_batches` reads a file as a stream (never whole) and
yields it ``batch_size`` lines at a time, each part ending on the number of the
last line it read (:attr:`~cef.ingest.parsers.base.ParsedDocument.position`), so
an ingest can commit a large corpus part by part and resume after the last part
it committed.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO, cast

from pydantic import ValidationError as PydanticValidationError

from cef.ingest.parsers.base import ParseContext, ParsedDocument
from cef.model import Batch, Chunk, Node, stable_id

__all__ = ["JsonLinesParser"]

_GZIP_MAGIC = b"\x1f\x8b"
_RESERVED = ("id", "_id", "text", "content", "metadata")


def _lines(stream: BinaryIO, ctx: ParseContext) -> Iterator[tuple[int, bytes]]:
    """Numbered lines of a stream, gunzipped on the fly when it starts with the gzip magic bytes."""
    head = stream.read(2)
    reader = cast(BinaryIO, _Prefixed(head, stream))
    if head == _GZIP_MAGIC:
        reader = cast(BinaryIO, gzip.GzipFile(fileobj=reader, mode="rb"))
    number = 0
    try:
        for number, raw in enumerate(reader, 1):
            yield number, raw
    except (OSError, EOFError, zlib.error) as exc:
        raise ctx.error(f"corrupt gzip data after line {number}: {exc}", number + 1) from None


class _Prefixed(io.RawIOBase):
    """A stream that gives ``head`` (bytes already read from ``rest``) again, then ``rest``."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)

    def __iter__(self) -> Iterator[bytes]:
        return iter(io.BufferedReader(self, buffer_size=1 << 16))


class JsonLinesParser:
    """``.jsonl``/``.ndjson`` (and ``.gz``) corpora: one chunk per line."""

    name = "jsonl"
    extensions: tuple[str, ...] = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
    content_types: tuple[str, ...] = ("application/jsonl", "application/x-ndjson", "application/jsonlines")
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        chunks: list[Chunk] = []
        nodes: list[Node] = []
        for line_chunks, line_nodes, _ in self._records(io.BytesIO(data), ctx, 0):
            chunks.extend(line_chunks)
            nodes.extend(line_nodes)
        warnings = [] if chunks else [f"{ctx.path}: no lines"]
        batch = Batch(nodes=nodes, chunks=chunks)
        return ParsedDocument(batch=batch, parser=self.name, warnings=warnings)

    def parse_batches(
        self, stream: BinaryIO, ctx: ParseContext, batch_size: int, *, start: int = 0
    ) -> Iterator[ParsedDocument]:
        """The file ``batch_size`` records at a time, read from ``stream`` as it goes (bounded memory).

        Lines up to ``start`` (a ``position`` a previous part ended on) are skipped
        without being parsed. Each part's ``position`` is the number of the last
        line it read; the last part ends on the last line of the file. A bad line
        raises :class:`~cef.errors.ParseError` when the reading reaches it, after
        the parts before it were given (validate a file first for all-or-nothing).
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        chunks: list[Chunk] = []
        nodes: list[Node] = []
        position = start
        given = False
        # a full part is given when the next record arrives, so blank lines after a part belong to it
        for line_chunks, line_nodes, number in self._records(stream, ctx, start):
            if line_chunks and len(chunks) >= batch_size:
                yield ParsedDocument(
                    batch=Batch(nodes=nodes, chunks=chunks), parser=self.name, position=position
                )
                chunks, nodes, given = [], [], True
            chunks.extend(line_chunks)
            nodes.extend(line_nodes)
            position = number
        if chunks or not given:
            warnings = [] if chunks or start else [f"{ctx.path}: no lines"]
            yield ParsedDocument(
                batch=Batch(nodes=nodes, chunks=chunks),
                parser=self.name,
                warnings=warnings,
                position=position,
            )

    def _records(
        self, stream: BinaryIO, ctx: ParseContext, start: int
    ) -> Iterator[tuple[list[Chunk], list[Node], int]]:
        """Per line after ``start``: its chunk (none for a blank line), the title node it introduces
        (the first line naming a title; after a resume, the first one after ``start``) and its number."""
        opts = ctx.options
        title_nodes: set[str] = set()
        seen: dict[str, int] = {}
        number = 0
        for number, raw in _lines(stream, ctx):
            if number <= start:
                continue
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                yield [], [], number
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ctx.error(f"not valid UTF-8 (byte {exc.start} of the line)", number) from None
            try:
                item = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ctx.error(f"invalid JSON: {exc.msg} (column {exc.colno})", number) from None
            except RecursionError:
                raise ctx.error("JSON nested too deeply", number) from None
            if not isinstance(item, dict):
                raise ctx.error(f"each line must be a JSON object, not {type(item).__name__}", number)
            chunk_id = self._id(item, ctx, number)
            first = seen.setdefault(chunk_id, number)
            if first != number:
                raise ctx.error(f"duplicate id {chunk_id!r} (first on line {first})", number)
            content = self._text(item, ctx, number)
            metadata: dict[str, Any] = {k: v for k, v in item.items() if k not in _RESERVED}
            extra = item.get("metadata")
            if extra is not None:
                if not isinstance(extra, dict):
                    raise ctx.error("'metadata' must be an object", number)
                metadata = {**extra, **metadata}
            metadata.update({"path": ctx.path, "line": number})
            node_id = None
            new_nodes: list[Node] = []
            title = item.get("title")
            if opts.title_nodes and isinstance(title, str) and title.strip():
                node_id = f"title:{title}" if len(title) <= 400 else stable_id("title", title)
                if node_id not in title_nodes:
                    title_nodes.add(node_id)
                    new_nodes.append(
                        Node(
                            id=node_id,
                            label=opts.title_node_label,
                            properties={"title": title},
                            scope=opts.scope,
                        )
                    )
            try:
                chunk = Chunk(
                    id=chunk_id, content=content, node_id=node_id, metadata=metadata, scope=opts.scope
                )
            except PydanticValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise ctx.error(f"{where}: {str(err['msg']).removeprefix('Value error, ')}", number) from None
            yield [chunk], new_nodes, number

    @staticmethod
    def _id(item: dict[str, Any], ctx: ParseContext, number: int) -> str:
        if "id" in item and "_id" in item:
            raise ctx.error("give 'id' or '_id', not both", number)
        value = item.get("id", item.get("_id"))
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            raise ctx.error("each line needs an 'id' (a non-empty string or an integer)", number)
        return str(value)

    @staticmethod
    def _text(item: dict[str, Any], ctx: ParseContext, number: int) -> str:
        if "text" in item and "content" in item:
            raise ctx.error("give 'text' or 'content', not both", number)
        value = item.get("text", item.get("content"))
        if not isinstance(value, str) or not value.strip():
            raise ctx.error("each line needs a non-empty 'text' (or 'content') string", number)
        return value
