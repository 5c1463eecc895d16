"""PDF parser: page text → chunks with page numbers; malformed input; the missing extra."""

from __future__ import annotations

import sys

import pytest

from cef.errors import MissingExtraError, ParseError
from cef.ingest.parsers import ParseContext, ParseOptions, PdfParser
from tests.unit.ingest.pdfgen import make_pdf

pytest.importorskip("pypdf")


def test_pages_become_chunks_with_page_numbers() -> None:
    data = make_pdf(
        [
            ["Warfarin is an anticoagulant.", "It interacts with aspirin."],
            ["Page two talks about metformin."],
        ],
        title="Drug notes",
    )
    doc = PdfParser().parse(data, ParseContext(path="docs/notes.pdf"))
    (node,) = doc.batch.nodes
    assert doc.document_id == node.id == "doc:docs/notes.pdf"
    assert node.properties["title"] == "Drug notes" and node.properties["page_count"] == 2
    chunks = doc.batch.chunks
    assert [c.metadata["page"] for c in chunks] == [1, 2]
    assert "Warfarin is an anticoagulant." in chunks[0].content and "aspirin" in chunks[0].content
    assert "metformin" in chunks[1].content
    assert all(c.node_id == node.id for c in chunks)
    assert [c.metadata["ordinal"] for c in chunks] == [0, 1]


def test_long_page_is_split_and_never_crosses_pages() -> None:
    lines = [f"Sentence number {i} is here." for i in range(40)]
    data = make_pdf([lines, ["Short second page."]])
    doc = PdfParser().parse(
        data, ParseContext(path="long.pdf", options=ParseOptions(chunk_size=200, chunk_overlap=0))
    )
    pages = [c.metadata["page"] for c in doc.batch.chunks]
    assert pages.count(1) > 3 and pages[-1] == 2 and pages == sorted(pages)
    assert all(len(c.content) <= 200 for c in doc.batch.chunks)
    assert doc.batch.nodes[0].properties["title"] == "long"  # no /Title: the file name


def test_pdf_without_text_warns() -> None:
    doc = PdfParser().parse(make_pdf([[]]), ParseContext(path="scan.pdf"))
    assert doc.batch.chunks == [] and any("no extractable text" in w for w in doc.warnings)


@pytest.mark.parametrize("data", [b"not a pdf at all", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", b""])
def test_malformed_pdf_raises_parse_error_naming_the_file(data: bytes) -> None:
    with pytest.raises(ParseError) as err:
        PdfParser().parse(data, ParseContext(path="broken.pdf"))
    assert err.value.file == "broken.pdf" and str(err.value).startswith("broken.pdf: ")


def test_missing_pypdf_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with pytest.raises(MissingExtraError, match=r"cef-context\[pdf\]") as err:
        PdfParser().parse(make_pdf([["x"]]), ParseContext(path="a.pdf"))
    assert err.value.extra == "pdf" and "pypdf" in str(err.value)
