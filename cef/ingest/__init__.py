"""Ingestion: data sources (where files come from) and parsers (files → records).

The pieces here never touch a store: a source yields bytes, a parser turns
them into a :class:`~cef.model.Batch`; the ingest pipeline writes batches.
"""

from cef.ingest.parsers import (
    ParseContext,
    ParsedDocument,
    ParseOptions,
    Parser,
    ParserRegistry,
    default_registry,
)
from cef.ingest.sources import DataSource, FileSystemSource, ResourceInfo, S3Source, open_source

__all__ = [
    "DataSource",
    "FileSystemSource",
    "ParseContext",
    "ParseOptions",
    "ParsedDocument",
    "Parser",
    "ParserRegistry",
    "ResourceInfo",
    "S3Source",
    "default_registry",
    "open_source",
]
