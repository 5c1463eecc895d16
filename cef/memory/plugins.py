"""Memory extensions as plugins: :func:`load_extension` by file path, module or entry point.

The example domains (pharma, RPG, fitness, education, code) are not part of the
package; they live in ``examples/memory/extensions/`` and load like any user's
extension::

    from cef.memory import load_extension, open_memory

    with open_memory("memory.db") as memory:
        memory.register_extension(load_extension("examples/memory/extensions/pharma.py"))

On the command line: ``cef memory load examples/memory/pharma.yaml --extension
examples/memory/extensions/pharma.py``. A package publishes an extension under the
``cef.memory_extensions`` entry-point group and it is then known by name
(``--extension pharma``). A registered extension is recorded in the knowledge base
(``<file>:Class`` for one loaded from a file) and registered again when it is reopened.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from cef.errors import ConfigurationError
from cef.plugins import MEMORY_EXTENSIONS, load_plugin_class
from cef.schema.specs import SemanticMemoryExtension

__all__ = ["load_extension"]


def _is_extension_class(cls: type) -> bool:
    return issubclass(cls, SemanticMemoryExtension) and cls is not SemanticMemoryExtension


def load_extension(spec: str | Path, *, root: str | Path | None = None) -> SemanticMemoryExtension:
    """A memory extension, made with no arguments.

    Args:
        spec: a file (``path.py``, the one extension class it defines, or ``path.py:Class``), a package
            folder, ``module:Class``, or the name of an installed ``cef.memory_extensions`` entry point.
        root: the folder a path is read from and must stay inside (default: the current folder).

    Returns:
        The extension, ready for :meth:`SemanticMemory.register_extension`.

    Raises:
        ConfigurationError: the spec names nothing loadable, or not an extension class (one line).
        PathEscapeError: the path leaves ``root``.
    """
    found = load_plugin_class(
        str(spec), group=MEMORY_EXTENSIONS, what="memory extension", accepts=_is_extension_class, root=root
    )
    try:
        return cast(SemanticMemoryExtension, found())
    except Exception as exc:
        raise ConfigurationError(
            f"memory extension {str(spec)!r} cannot be made without arguments: {type(exc).__name__}: {exc}"
        ) from exc
