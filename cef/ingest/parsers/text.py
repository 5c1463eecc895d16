"""Markdown and plain-text documents: one document node and its chunks.

The document node has label ``Document`` (``ParseOptions.document_label``; a
Markdown one is a note, ``Note`` (``ParseOptions.note_label``), named by its
title, with its sections and links: :mod:`cef.ingest.notelinks`) and
properties ``title`` and ``path`` (plus ``uri``, ``content_type`` and
``ParseContext.metadata``; for Markdown, scalar front-matter keys). Its id is
``doc:<path>`` unless ``ParseContext.document_id`` says otherwise.

Markdown is split at ATX headings (outside fenced code), then each section at
paragraphs, sentences and words as needed, so that no chunk exceeds
``chunk_size`` (characters, or tokens with ``token_counter``) and no word is
cut. Consecutive chunks of a section share up to ``chunk_overlap``. Plain text
is split the same way without headings. Each chunk is a contiguous slice of the
text, linked to the document node, with metadata ``path``, ``title``,
``headings`` (the heading trail), ``char_start``/``char_end`` (character
offsets in the decoded text, with CRLF line ends read as LF) and ``ordinal``
(0-based position in the document). Chunk ids are ``<document id>#<ordinal>``.
Only ATX headings (``#`` … ``######``) split Markdown; setext underlines do not.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from cef.ingest.chunking import Section, TextSplitter, markdown_sections, split_front_matter
from cef.ingest.notelinks import note_graph
from cef.ingest.parsers.base import ParseContext, ParsedDocument, decode_text
from cef.ingest.parsers.graphfile import TextDatesLoader
from cef.model import Batch, Chunk, Node

__all__ = ["MarkdownParser", "PlainTextParser", "build_document", "document_node", "make_splitter"]

_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


def _aliases(value: Any) -> list[str]:
    """Front matter ``aliases`` (Obsidian): a list of names, or one name."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


def _json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def make_splitter(ctx: ParseContext) -> TextSplitter:
    opts = ctx.options
    return TextSplitter(opts.chunk_size, opts.chunk_overlap, opts.token_counter)


def document_node(ctx: ParseContext, title: str, extra: dict[str, Any] | None = None) -> Node:
    """The node standing for the file: id from the context, properties title/path/uri and metadata."""
    properties: dict[str, Any] = {}
    for key, value in (extra or {}).items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            continue
        properties[key] = value
    properties.update(ctx.metadata)
    properties.update({"title": title, "path": ctx.path})
    if ctx.source:
        properties["source"] = ctx.source
    if ctx.uri:
        properties["uri"] = ctx.uri
    if ctx.content_type:
        properties["content_type"] = ctx.content_type
    return Node(
        id=ctx.doc_id(), label=ctx.options.document_label, properties=properties, scope=ctx.options.scope
    )


def build_document(
    text: str,
    sections: list[Section],
    ctx: ParseContext,
    title: str,
    parser: str,
    node_properties: dict[str, Any] | None = None,
    chunk_metadata: dict[str, Any] | None = None,
) -> ParsedDocument:
    """A document node plus chunks of ``sections`` of ``text`` (shared by the text-like parsers)."""
    node = document_node(ctx, title, node_properties)
    splitter = make_splitter(ctx)
    warnings: list[str] = []
    chunks: list[Chunk] = []
    for section in sections:
        spans, notes = splitter.split(text, section.start, section.end)
        warnings.extend(f"{ctx.path}: {note}" for note in notes)
        for start, end in spans:
            ordinal = len(chunks)
            metadata: dict[str, Any] = {
                "path": ctx.path,
                "title": title,
                "headings": list(section.headings),
                "char_start": start,
                "char_end": end,
                "ordinal": ordinal,
            }
            metadata.update(chunk_metadata or {})
            chunks.append(
                Chunk(
                    id=f"{node.id}#{ordinal}",
                    content=text[start:end],
                    node_id=node.id,
                    metadata=metadata,
                    scope=ctx.options.scope,
                )
            )
    if not chunks:
        warnings.append(f"{ctx.path}: no text to chunk")
    return ParsedDocument(
        batch=Batch(nodes=[node], chunks=chunks), document_id=node.id, parser=parser, warnings=warnings
    )


class MarkdownParser:
    """``.md``/``.markdown``.

    Title: front matter ``title``, else the first ``# heading``, else the file name.
    """

    name = "markdown"
    extensions: tuple[str, ...] = (".md", ".markdown", ".mdx")
    content_types: tuple[str, ...] = ("text/markdown", "text/x-markdown")
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        text = decode_text(data, ctx).replace("\r\n", "\n")
        front_text, body_start = split_front_matter(text)
        front: dict[str, Any] = {}
        aliases: list[str] = []
        warnings: list[str] = []
        if front_text is not None:
            try:
                loaded = yaml.load(front_text, Loader=TextDatesLoader)
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                line = int(mark.line) + 2 if mark is not None else 1
                raise ctx.error(f"invalid YAML front matter: {getattr(exc, 'problem', exc)}", line) from None
            if isinstance(loaded, dict):
                front = {str(k): v for k, v in loaded.items() if _json_scalar(v)}
                aliases = _aliases(loaded.get("aliases"))
            elif loaded is not None:
                warnings.append(f"{ctx.path}: front matter is not a mapping; ignored")
        title = front.pop("title", None)
        if not isinstance(title, str) or not title.strip():
            h1 = _H1.search(text, body_start)
            title = h1.group(1).strip() if h1 else ctx.stem
        sections = markdown_sections(text, body_start)
        doc = build_document(text, sections, ctx, title, self.name, node_properties=front)
        doc.warnings[:0] = warnings
        return note_graph(doc, text, title, aliases, ctx.options.note_label)


class PlainTextParser:
    """``.txt`` and other plain text: title from ``ParseContext.metadata['title']`` or the file name."""

    name = "text"
    extensions: tuple[str, ...] = (".txt", ".text")
    content_types: tuple[str, ...] = ("text/plain",)
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        text = decode_text(data, ctx).replace("\r\n", "\n")
        title = ctx.metadata.get("title")
        if not isinstance(title, str) or not title.strip():
            title = ctx.stem
        return build_document(text, [Section(0, len(text), ())], ctx, title, self.name)
