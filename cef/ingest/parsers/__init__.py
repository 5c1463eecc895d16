"""Parsers: bytes of one file → a :class:`~cef.model.Batch` (no store access).

Built-ins (all at priority 100): YAML/JSON graph files, CSV/TSV nodes or
edges, Markdown, plain text, JSON Lines corpora (optionally gzipped) and PDF
(``pdf`` extra). Register your own with a lower priority to override them::

    registry = default_registry()
    registry.register(MyYamlParser(), priority=10)

Parsers outside the package are plugins: :func:`load_parser` loads one from a
file or folder (``cef ingest --parser path.py``), and a package publishes one
under the ``cef.parsers`` entry-point group, which every default registry adds.
"""

from __future__ import annotations

from cef.ingest.parsers.base import ParseContext, ParsedDocument, ParseOptions, Parser, decode_text
from cef.ingest.parsers.csvfile import CsvParser
from cef.ingest.parsers.graphfile import JsonGraphParser, YamlGraphParser
from cef.ingest.parsers.jsonl import JsonLinesParser
from cef.ingest.parsers.pdf import PdfParser
from cef.ingest.parsers.registry import BUILTIN_PRIORITY, ParserRegistry, default_registry, load_parser
from cef.ingest.parsers.text import MarkdownParser, PlainTextParser

__all__ = [
    "BUILTIN_PRIORITY",
    "CsvParser",
    "JsonGraphParser",
    "JsonLinesParser",
    "MarkdownParser",
    "ParseContext",
    "ParseOptions",
    "ParsedDocument",
    "Parser",
    "ParserRegistry",
    "PdfParser",
    "PlainTextParser",
    "YamlGraphParser",
    "decode_text",
    "default_registry",
    "load_parser",
]
