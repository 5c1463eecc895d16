"""Markdown and plain-text parsers: the document node, chunks, metadata and errors."""

from __future__ import annotations

from itertools import pairwise

import pytest

from cef.errors import ParseError
from cef.ingest.parsers import MarkdownParser, ParseContext, ParseOptions, PlainTextParser

GUIDE = """---
title: The Guide
author: Ann
reviewed: 2024-05-01
tags: [a, b]
---
# Ignored H1 title

Welcome to the guide. It explains things.

## Install

Install with pip. Then run the command.

```
# a comment in code, not a heading

more code
```

## Usage

Use it well.
"""


def _ctx(path: str = "docs/guide.md", **options: object) -> ParseContext:
    return ParseContext(path=path, uri=f"file:///data/{path}", options=ParseOptions(**options))  # type: ignore[arg-type]


def test_markdown_document_node() -> None:
    doc = MarkdownParser().parse(GUIDE.encode(), _ctx())
    node, *sections = doc.batch.nodes
    assert [(s.id, s.label, s.name) for s in sections] == [
        ("doc:docs/guide.md§install", "Section", "Install"),
        ("doc:docs/guide.md§usage", "Section", "Usage"),
    ]
    assert doc.document_id == node.id == "doc:docs/guide.md"
    assert (
        node.label == "Note" and node.name == "The Guide"
    )  # a Markdown document is a note, named by its title
    assert node.properties["title"] == "The Guide"  # front matter wins over the H1
    assert node.properties["path"] == "docs/guide.md"
    assert node.properties["uri"] == "file:///data/docs/guide.md"
    assert node.properties["author"] == "Ann" and node.properties["reviewed"] == "2024-05-01"
    assert "tags" not in node.properties  # only scalar front-matter values are kept
    assert doc.parser == "markdown"


def test_markdown_chunks_follow_headings() -> None:
    text = GUIDE
    doc = MarkdownParser().parse(text.encode(), _ctx())
    chunks = doc.batch.chunks
    assert [c.metadata["headings"] for c in chunks] == [
        ["Ignored H1 title"],
        ["Ignored H1 title", "Install"],
        ["Ignored H1 title", "Usage"],
    ]
    holders = ["doc:docs/guide.md", "doc:docs/guide.md§install", "doc:docs/guide.md§usage"]
    for i, chunk in enumerate(chunks):
        meta = chunk.metadata
        assert chunk.id == f"doc:docs/guide.md#{i}" and meta["ordinal"] == i
        assert chunk.node_id == holders[i]  # a chunk under a heading is held by its section
        assert text[meta["char_start"] : meta["char_end"]] == chunk.content  # offsets point into the text
        assert meta["path"] == "docs/guide.md" and meta["title"] == "The Guide"
    assert "# a comment in code" in chunks[1].content  # fenced code stays with its section
    assert "title: The Guide" not in "".join(c.content for c in chunks)  # front matter is not chunked


def test_markdown_title_falls_back_to_h1_then_file_name() -> None:
    assert MarkdownParser().parse(b"# Hello World\n\ntext\n", _ctx()).batch.nodes[0].properties["title"] == (
        "Hello World"
    )
    assert MarkdownParser().parse(b"just text\n", _ctx("notes/todo.md")).batch.nodes[0].properties[
        "title"
    ] == ("todo")


def test_markdown_respects_the_size_limit_and_overlap() -> None:
    para = " ".join(f"word{i}" for i in range(300))
    text = f"# Big\n\n{para}\n"
    doc = MarkdownParser().parse(text.encode(), _ctx(chunk_size=120, chunk_overlap=20))
    chunks = doc.batch.chunks
    assert len(chunks) > 10
    assert all(len(c.content) <= 120 for c in chunks)
    assert chunks[0].content.startswith("# Big")
    for a, b in pairwise(chunks):
        assert b.metadata["char_start"] < a.metadata["char_end"]  # overlap
        assert a.metadata["char_end"] - b.metadata["char_start"] <= 20
    words = set(para.split())
    assert words <= {w for c in chunks for w in c.content.split()}


def test_markdown_token_counter_option() -> None:
    text = "# T\n\n" + " ".join(["tokenization"] * 100)
    doc = MarkdownParser().parse(
        text.encode(), _ctx(chunk_size=20, chunk_overlap=0, token_counter=lambda s: len(s.split()))
    )
    assert all(len(c.content.split()) <= 20 for c in doc.batch.chunks)
    assert any(len(c.content) > 100 for c in doc.batch.chunks)


def test_markdown_bad_front_matter_names_file_and_line() -> None:
    with pytest.raises(ParseError) as err:
        MarkdownParser().parse(b"---\ntitle: ok\nbad: [unclosed\n---\nbody\n", _ctx())
    assert err.value.file == "docs/guide.md" and err.value.line is not None and err.value.line >= 3
    assert str(err.value).startswith("docs/guide.md:")


def test_invalid_utf8_names_the_line() -> None:
    with pytest.raises(ParseError) as err:
        PlainTextParser().parse(b"fine\nalso fine\nbad \xff byte\n", _ctx("a.txt"))
    assert (err.value.file, err.value.line) == ("a.txt", 3)


def test_plain_text() -> None:
    text = "First paragraph.\n\nSecond paragraph, a bit longer than the first.\r\n\r\nThird.\n"
    doc = PlainTextParser().parse(text.encode(), ParseContext(path="notes/a.txt", metadata={"lang": "en"}))
    (node,) = doc.batch.nodes
    assert node.properties == {"lang": "en", "title": "a", "path": "notes/a.txt"}
    assert [c.content for c in doc.batch.chunks] == [
        "First paragraph.\n\nSecond paragraph, a bit longer than the first.\n\nThird."
    ]
    assert doc.batch.chunks[0].metadata["headings"] == []


def test_plain_text_document_id_and_scope_and_label_options() -> None:
    ctx = ParseContext(
        path="a.txt",
        document_id="custom-id",
        metadata={"title": "Given"},
        options=ParseOptions(scope="tenant", document_label="Note"),
    )
    doc = PlainTextParser().parse(b"hello", ctx)
    node = doc.batch.nodes[0]
    assert (node.id, node.label, node.scope, node.properties["title"]) == (
        "custom-id",
        "Note",
        "tenant",
        "Given",
    )
    assert doc.batch.chunks[0].id == "custom-id#0" and doc.batch.chunks[0].scope == "tenant"


def test_empty_text_gives_a_node_and_a_warning() -> None:
    doc = PlainTextParser().parse(b"  \n\n ", _ctx("e.txt"))
    assert len(doc.batch.nodes) == 1 and doc.batch.chunks == []
    assert doc.warnings and "no text" in doc.warnings[0]


def test_overlap_must_be_smaller_than_size() -> None:
    with pytest.raises(ValueError, match="chunk_overlap"):
        ParseOptions(chunk_size=100, chunk_overlap=100)
