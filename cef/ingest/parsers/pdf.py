"""PDF text via ``pypdf`` (``pip install 'cef-context[pdf]'``), offline.

One document node (as for text documents; title from the PDF's ``/Title`` or
the file name, property ``page_count``) and chunks split per page, so a chunk
never spans two pages; each chunk's metadata carries its 1-based ``page``.
``char_start``/``char_end`` are offsets in that page's extracted text. A PDF
with no extractable text (scanned images) parses to the node alone, with a
warning.
"""

from __future__ import annotations

import io
from typing import Any

from cef.errors import MissingExtraError
from cef.ingest.parsers.base import ParseContext, ParsedDocument
from cef.ingest.parsers.text import document_node, make_splitter
from cef.model import Batch, Chunk

__all__ = ["PdfParser"]


def _import_pypdf() -> Any:
    try:
        import pypdf
    except ImportError as exc:
        raise MissingExtraError("PDF parsing", "pdf", "pypdf") from exc
    return pypdf


class PdfParser:
    """``.pdf``: page text → chunks carrying ``page``."""

    name = "pdf"
    extensions: tuple[str, ...] = (".pdf",)
    content_types: tuple[str, ...] = ("application/pdf",)
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        pypdf = _import_pypdf()
        try:
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise ctx.error("the PDF is encrypted with a password")
            pages = list(reader.pages)
            meta = reader.metadata
            title = str(meta.title).strip() if meta is not None and meta.title else ""
        except pypdf.errors.PyPdfError as exc:
            raise ctx.error(f"invalid PDF: {exc}") from None
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise ctx.error(f"invalid PDF: {type(exc).__name__}: {exc}") from None
        node = document_node(ctx, title or ctx.stem, {"page_count": len(pages)})
        splitter = make_splitter(ctx)
        warnings: list[str] = []
        chunks: list[Chunk] = []
        for number, page in enumerate(pages, 1):
            try:
                text = (page.extract_text() or "").replace("\r\n", "\n")
            except Exception as exc:  # pypdf raises many types on damaged content streams
                raise ctx.error(f"page {number}: cannot extract text: {type(exc).__name__}: {exc}") from None
            spans, notes = splitter.split(text)
            warnings.extend(f"{ctx.path}: page {number}: {note}" for note in notes)
            for start, end in spans:
                ordinal = len(chunks)
                chunks.append(
                    Chunk(
                        id=f"{node.id}#{ordinal}",
                        content=text[start:end],
                        node_id=node.id,
                        metadata={
                            "path": ctx.path,
                            "title": node.properties["title"],
                            "page": number,
                            "char_start": start,
                            "char_end": end,
                            "ordinal": ordinal,
                        },
                        scope=ctx.options.scope,
                    )
                )
        if not chunks:
            warnings.append(f"{ctx.path}: no extractable text (a scanned PDF needs OCR first)")
        return ParsedDocument(
            batch=Batch(nodes=[node], chunks=chunks), document_id=node.id, parser=self.name, warnings=warnings
        )
