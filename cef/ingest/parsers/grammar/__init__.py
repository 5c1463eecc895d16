"""Grammar-driven parsing on the ANTLR 4 runtime: :class:`GrammarParser` and a worked example.

The worked example, a parser of ``.lab`` lab reports from the grammar
``LabReport.g4``, is a plugin outside the package: ``examples/grammar/labreport``
(load it with ``cef ingest --parser examples/grammar/labreport`` or
:func:`cef.ingest.parsers.load_parser`).
"""

from cef.ingest.parsers.grammar.base import GrammarParser, SyntaxErrorCollector, import_antlr

__all__ = ["GrammarParser", "SyntaxErrorCollector", "import_antlr"]
