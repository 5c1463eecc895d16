"""Grammar-driven parsing on the ANTLR 4 runtime: :class:`GrammarParser` and a worked example.

``LabReportParser`` (in :mod:`cef.ingest.parsers.grammar.labreport`) reads the
``.lab`` format of ``labreport/LabReport.g4``. It is not in the default
registry; register it to use it.
"""

from cef.ingest.parsers.grammar.base import GrammarParser, SyntaxErrorCollector, import_antlr

__all__ = ["GrammarParser", "SyntaxErrorCollector", "import_antlr"]
