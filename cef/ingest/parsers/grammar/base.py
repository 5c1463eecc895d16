"""Grammar-driven parsers on the ANTLR 4 runtime (``pip install 'cef-context[grammar]'``).

For formats with real structure (reports, DSLs, proprietary text formats)
write an ANTLR grammar, generate its Python lexer and parser once with
:mod:`cef.ingest.parsers.grammar.tool`, commit them, and subclass
:class:`GrammarParser`: say how to build the lexer and parser, which rule
starts, and how to turn the parse tree into records. The base class decodes
the bytes, wires ANTLR's error reporting to :class:`~cef.errors.ParseError`
(naming the file, line and column of the first syntax error) and only calls
:meth:`GrammarParser.build` on a tree free of syntax errors, so a parse
succeeds whole or raises.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from cef.errors import MissingExtraError
from cef.ingest.parsers.base import ParseContext, ParsedDocument, decode_text

__all__ = ["GrammarParser", "SyntaxErrorCollector", "import_antlr"]


def import_antlr() -> Any:
    """The ``antlr4`` runtime module, or :class:`MissingExtraError` naming the ``grammar`` extra."""
    try:
        import antlr4
    except ImportError as exc:
        raise MissingExtraError("Grammar-based parsing", "grammar", "antlr4-python3-runtime") from exc
    return antlr4


class SyntaxErrorCollector:
    """An ANTLR error listener (duck-typed, so this module imports without ANTLR) that records errors."""

    def __init__(self) -> None:
        self.errors: list[tuple[int, int, str]] = []

    def syntaxError(
        self, recognizer: Any, offendingSymbol: Any, line: int, column: int, msg: str, e: Any
    ) -> None:
        self.errors.append((line, column, msg))

    def reportAmbiguity(self, *args: Any) -> None:
        return None

    def reportAttemptingFullContext(self, *args: Any) -> None:
        return None

    def reportContextSensitivity(self, *args: Any) -> None:
        return None


class GrammarParser(ABC):
    """Base of ANTLR-driven parsers. Subclasses set the class attributes and implement three methods."""

    name: str = "grammar"
    extensions: tuple[str, ...] = ()
    content_types: tuple[str, ...] = ()
    priority: int = 100
    #: the grammar rule a document is parsed with (a method of the generated parser)
    start_rule: str = ""

    @abstractmethod
    def make_lexer(self, stream: Any) -> Any:
        """The generated lexer over an ``antlr4.InputStream``."""

    @abstractmethod
    def make_parser(self, tokens: Any) -> Any:
        """The generated parser over an ``antlr4.CommonTokenStream``."""

    @abstractmethod
    def build(self, tree: Any, text: str, ctx: ParseContext) -> ParsedDocument:
        """Turn a syntactically valid parse tree into records. Raise ``ctx.error(...)`` for bad values."""

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        antlr4 = import_antlr()
        if not self.start_rule:
            raise TypeError(f"{type(self).__name__} must set start_rule")
        text = decode_text(data, ctx)
        errors = SyntaxErrorCollector()
        lexer = self.make_lexer(antlr4.InputStream(text))
        lexer.removeErrorListeners()
        lexer.addErrorListener(errors)
        parser = self.make_parser(antlr4.CommonTokenStream(lexer))
        parser.removeErrorListeners()
        parser.addErrorListener(errors)
        try:
            tree = getattr(parser, self.start_rule)()
        except RecursionError:
            raise ctx.error("input nested too deeply for the grammar") from None
        if errors.errors:
            line, column, message = errors.errors[0]
            more = f" (and {len(errors.errors) - 1} more)" if len(errors.errors) > 1 else ""
            raise ctx.error(f"syntax error at column {column + 1}: {message}{more}", line)
        return self.build(tree, text, ctx)
