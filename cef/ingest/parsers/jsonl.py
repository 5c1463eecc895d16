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
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from cef.ingest.parsers.base import ParseContext, ParsedDocument
from cef.model import Batch, Chunk, Node, stable_id

__all__ = ["JsonLinesParser"]

_GZIP_MAGIC = b"\x1f\x8b"
_RESERVED = ("id", "_id", "text", "content", "metadata")


def _lines(data: bytes, ctx: ParseContext) -> Iterator[tuple[int, bytes]]:
    if data.startswith(_GZIP_MAGIC):
        stream: io.BufferedIOBase = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
    else:
        stream = io.BytesIO(data)
    number = 0
    try:
        with stream:
            for number, raw in enumerate(stream, 1):
                yield number, raw
    except (OSError, EOFError, zlib.error) as exc:
        raise ctx.error(f"corrupt gzip data after line {number}: {exc}", number + 1) from None


class JsonLinesParser:
    """``.jsonl``/``.ndjson`` (and ``.gz``) corpora: one chunk per line."""

    name = "jsonl"
    extensions: tuple[str, ...] = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
    content_types: tuple[str, ...] = ("application/jsonl", "application/x-ndjson", "application/jsonlines")
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        opts = ctx.options
        chunks: list[Chunk] = []
        nodes: dict[str, Node] = {}
        seen: dict[str, int] = {}
        for number, raw in _lines(data, ctx):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
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
            title = item.get("title")
            if opts.title_nodes and isinstance(title, str) and title.strip():
                node_id = f"title:{title}" if len(title) <= 400 else stable_id("title", title)
                if node_id not in nodes:
                    nodes[node_id] = Node(
                        id=node_id, label=opts.title_node_label, properties={"title": title}, scope=opts.scope
                    )
            try:
                chunks.append(
                    Chunk(id=chunk_id, content=content, node_id=node_id, metadata=metadata, scope=opts.scope)
                )
            except PydanticValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise ctx.error(f"{where}: {str(err['msg']).removeprefix('Value error, ')}", number) from None
        warnings = [] if chunks else [f"{ctx.path}: no lines"]
        batch = Batch(nodes=list(nodes.values()), chunks=chunks)
        return ParsedDocument(batch=batch, parser=self.name, warnings=warnings)

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
