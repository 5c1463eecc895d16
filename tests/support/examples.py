"""The example plugins of ``examples/`` (outside the package), loaded by path as a user loads theirs."""

from __future__ import annotations

from pathlib import Path

from cef.ingest.parsers import Parser, load_parser
from cef.memory import SemanticMemoryExtension, load_extension

ROOT = Path(__file__).resolve().parents[2]
#: the example domain extensions, one file each
EXTENSION_DIR = ROOT / "examples" / "memory" / "extensions"
DOMAINS = ("code", "education", "fitness", "pharma", "rpg")
#: the worked example of a grammar-driven parser (a package folder)
LABREPORT_DIR = ROOT / "examples" / "grammar" / "labreport"


def example_extension(domain: str) -> SemanticMemoryExtension:
    """A new instance of an example domain's extension (``examples/memory/extensions/<domain>.py``)."""
    return load_extension(EXTENSION_DIR / f"{domain}.py", root=ROOT)


def labreport_parser() -> Parser:
    """The lab-report parser of ``examples/grammar/labreport``."""
    return load_parser(str(LABREPORT_DIR), root=ROOT)
