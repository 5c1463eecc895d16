"""JSON Lines corpora: one chunk per line, gzip, title nodes, all-or-nothing errors with line numbers."""

from __future__ import annotations

import gzip
import json

import pytest

from cef.errors import ParseError
from cef.ingest.parsers import JsonLinesParser, ParseContext, ParseOptions
from cef.ingest.parsers.base import ParsedDocument

LINES = [
    {"id": "d1", "title": "Aspirin", "text": "Aspirin is an analgesic."},
    {"_id": 2, "title": "Aspirin", "content": "It also thins blood.", "year": 2020},
    {"id": "d3", "text": "No title here.", "metadata": {"lang": "en"}},
]


def _data(lines: list[object]) -> bytes:
    return ("\n".join(json.dumps(x) for x in lines) + "\n").encode()


def _parse(data: bytes, path: str = "corpus.jsonl", **options: object) -> ParsedDocument:
    return JsonLinesParser().parse(data, ParseContext(path=path, options=ParseOptions(**options)))  # type: ignore[arg-type]


def _error(data: bytes, path: str = "corpus.jsonl") -> ParseError:
    with pytest.raises(ParseError) as err:
        _parse(data, path)
    assert err.value.file == path
    return err.value


def test_one_chunk_per_line() -> None:
    doc = _parse(_data(LINES))
    chunks = doc.batch.chunks
    assert [c.id for c in chunks] == ["d1", "2", "d3"]
    assert [c.content for c in chunks] == [
        "Aspirin is an analgesic.",
        "It also thins blood.",
        "No title here.",
    ]
    assert chunks[0].metadata == {"title": "Aspirin", "path": "corpus.jsonl", "line": 1}
    assert chunks[1].metadata == {"title": "Aspirin", "year": 2020, "path": "corpus.jsonl", "line": 2}
    assert chunks[2].metadata == {"lang": "en", "path": "corpus.jsonl", "line": 3}
    assert all(c.node_id is None for c in chunks) and doc.batch.nodes == []


def test_title_nodes() -> None:
    doc = _parse(_data(LINES), title_nodes=True, title_node_label="Article")
    (node,) = doc.batch.nodes
    assert (node.id, node.label, node.properties) == ("title:Aspirin", "Article", {"title": "Aspirin"})
    assert [c.node_id for c in doc.batch.chunks] == ["title:Aspirin", "title:Aspirin", None]


def test_gzip_and_blank_lines_and_bom() -> None:
    raw = b"\xef\xbb\xbf" + _data(LINES).replace(b"\n", b"\n\n", 1)
    doc = _parse(gzip.compress(raw), path="corpus.jsonl.gz")
    assert [c.id for c in doc.batch.chunks] == ["d1", "2", "d3"]
    assert doc.batch.chunks[1].metadata["line"] == 3  # blank line counted


def test_bad_line_fails_the_whole_file_with_its_number() -> None:
    data = _data(LINES[:2]) + b'{"id": "d3", "text": "broken\n' + _data(LINES[2:])
    err = _error(data)
    assert err.line == 3 and "invalid JSON" in str(err)
    assert str(err).startswith("corpus.jsonl:3: ")


def test_bad_items() -> None:
    assert _error(_data([LINES[0], {"title": "x", "text": "t"}])).line == 2
    assert "'id'" in str(_error(_data([{"id": True, "text": "t"}])))
    assert "'text'" in str(_error(_data([{"id": "a", "text": ""}])))
    assert "not both" in str(_error(_data([{"id": "a", "text": "t", "content": "c"}])))
    assert "not both" in str(_error(_data([{"id": "a", "_id": "b", "text": "t"}])))
    assert "object" in str(_error(_data([[1, 2]])))
    assert "metadata" in str(_error(_data([{"id": "a", "text": "t", "metadata": 3}])))
    err = _error(_data([LINES[0], LINES[2], {"id": "d1", "text": "again"}]))
    assert err.line == 3 and "first on line 1" in str(err)
    err = _error(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xff"}\n')
    assert err.line == 2 and "UTF-8" in str(err)


def test_corrupt_gzip() -> None:
    data = gzip.compress(_data(LINES * 50))
    err = _error(data[: len(data) // 2], path="c.jsonl.gz")
    assert "gzip" in str(err) and err.line is not None


def test_empty_corpus_warns() -> None:
    assert _parse(b"\n\n").warnings
