"""Which parser reads which file: a registry ordered by priority."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from inspect import isabstract
from pathlib import Path, PurePosixPath
from typing import Any

from cef.errors import ConfigurationError, ParseError
from cef.ingest.parsers.base import ParseContext, ParsedDocument, Parser
from cef.plugins import PARSERS, entry_point_names, load_entry_point, load_plugin_class

__all__ = ["BUILTIN_PRIORITY", "ParserRegistry", "default_registry", "load_parser"]

logger = logging.getLogger(__name__)

#: priority of the built-in parsers; register yours with a lower number to override them
BUILTIN_PRIORITY = 100


@dataclass(frozen=True, slots=True)
class _Entry:
    priority: int
    order: int  # registration order; later registrations win ties
    parser: Parser


class ParserRegistry:
    """Parsers by extension and content type.

    :meth:`for_path` returns the parser with the lowest priority among those
    accepting the file (by extension, case-insensitive, compound ones such as
    ``.jsonl.gz`` included, or by content type); among equal priorities the one
    registered last wins, so registering a parser overrides an earlier one.
    """

    def __init__(self, parsers: list[Parser] | None = None) -> None:
        self._entries: list[_Entry] = []
        self._lock = threading.Lock()
        self._counter = 0
        for parser in parsers or []:
            self.register(parser)

    def register(self, parser: Parser, priority: int | None = None) -> Parser:
        """Add ``parser`` (with ``priority`` instead of its own, if given); returns it."""
        if not isinstance(parser, Parser):
            raise TypeError(
                f"{parser!r} is not a Parser: it needs name, extensions, content_types, priority and parse()"
            )
        bad = [ext for ext in parser.extensions if not ext.startswith(".") or ext != ext.lower()]
        if bad:
            raise ValueError(
                f"parser {parser.name!r}: extensions must be lower-case and start with '.': {bad}"
            )
        with self._lock:
            self._counter += 1
            entry = _Entry(parser.priority if priority is None else priority, self._counter, parser)
            self._entries.append(entry)
            self._entries.sort(key=lambda e: (e.priority, -e.order))
        logger.debug(
            "registered parser %s (priority %d) for %s", parser.name, entry.priority, parser.extensions
        )
        return parser

    def unregister(self, name: str) -> int:
        """Remove every parser called ``name``; returns how many were removed."""
        with self._lock:
            before = len(self._entries)
            self._entries = [e for e in self._entries if e.parser.name != name]
            return before - len(self._entries)

    def parsers(self) -> list[tuple[int, Parser]]:
        """``(priority, parser)`` in the order they are tried."""
        with self._lock:
            return [(e.priority, e.parser) for e in self._entries]

    def for_path(self, path: str, content_type: str | None = None) -> Parser | None:
        """The parser for ``path`` (or ``content_type``), or ``None`` if none accepts it."""
        name = PurePosixPath(path).name.lower()
        ctype = content_type.split(";", 1)[0].strip().lower() if content_type else None
        with self._lock:
            entries = list(self._entries)
        for entry in entries:
            parser = entry.parser
            if any(name.endswith(ext) and len(name) > len(ext) for ext in parser.extensions):
                return parser
            if ctype and ctype in (ct.lower() for ct in parser.content_types):
                return parser
        return None

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        """Parse with the parser :meth:`for_path` picks; :class:`ParseError` if there is none."""
        parser = self.for_path(ctx.path, ctx.content_type)
        if parser is None:
            raise ParseError("no parser accepts this file (register one for its extension)", file=ctx.path)
        return parser.parse(data, ctx)


def default_registry() -> ParserRegistry:
    """A new registry holding the built-in parsers (YAML/JSON graph files, CSV, Markdown,
    plain text, JSON Lines, PDF), each at :data:`BUILTIN_PRIORITY`, then the parsers installed
    packages publish under the ``cef.parsers`` entry-point group (at their own priority)."""
    from cef.ingest.parsers.csvfile import CsvParser
    from cef.ingest.parsers.graphfile import JsonGraphParser, YamlGraphParser
    from cef.ingest.parsers.jsonl import JsonLinesParser
    from cef.ingest.parsers.pdf import PdfParser
    from cef.ingest.parsers.text import MarkdownParser, PlainTextParser

    parsers: list[Parser] = [
        YamlGraphParser(),
        JsonGraphParser(),
        CsvParser(),
        MarkdownParser(),
        PlainTextParser(),
        JsonLinesParser(),
        PdfParser(),
    ]
    parsers += [_parser(load_entry_point(PARSERS, name), name) for name in entry_point_names(PARSERS)]
    return ParserRegistry(parsers)


def _is_parser_class(cls: type) -> bool:
    return (
        not isabstract(cls)
        and callable(getattr(cls, "parse", None))
        and isinstance(getattr(cls, "extensions", None), tuple | list)
    )


def _parser(found: Any, spec: str) -> Parser:
    """A parser instance from a plugin's class (made with no arguments) or instance."""
    try:
        parser = found() if isinstance(found, type) else found
    except Exception as exc:
        raise ConfigurationError(
            f"parser plugin {spec!r} cannot be made: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(parser, Parser):
        raise ConfigurationError(
            f"parser plugin {spec!r} is not a Parser: it needs name, extensions, content_types, priority and parse()"
        )
    return parser


def load_parser(spec: str, *, root: str | Path | None = None) -> Parser:
    """A parser plugin, made with no arguments: ``spec`` is a file (``path.py``, ``path.py:Class``), a
    package folder, ``module:Class`` or the name of a ``cef.parsers`` entry point (see :mod:`cef.plugins`;
    paths stay inside ``root``, default the current folder). Register it on a registry, or pass
    ``--parser SPEC`` to ``cef ingest``::

        registry = default_registry()
        registry.register(load_parser("examples/grammar/labreport"))
    """
    cls = load_plugin_class(spec, group=PARSERS, what="parser", accepts=_is_parser_class, root=root)
    return _parser(cls, spec)
