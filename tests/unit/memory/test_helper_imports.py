"""The memory's helpers depend on narrow Protocols (cef.memory.view), never on the SemanticMemory facade."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cef.memory

PACKAGE = Path(cef.memory.__file__).parent
HELPERS = ["assemble", "constraints", "reconcile", "retrieval", "understand", "view", "walk"]


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, including under ``if TYPE_CHECKING:`` and inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("helper", HELPERS)
def test_helpers_do_not_import_the_facade(helper: str) -> None:
    imports = imported_modules(PACKAGE / f"{helper}.py")
    assert "cef.memory.memory" not in imports, f"cef/memory/{helper}.py imports cef.memory.memory"
    assert "cef.memory" not in imports, f"cef/memory/{helper}.py imports the cef.memory package (the facade)"
