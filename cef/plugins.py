"""Plugins: code a user adds to cef by file path or by a package's entry point.

Two kinds of plugins extend cef without living in its package: memory
extensions (:class:`~cef.schema.specs.SemanticMemoryExtension`, entry-point
group :data:`MEMORY_EXTENSIONS`) and file parsers
(:class:`~cef.ingest.parsers.base.Parser`, group :data:`PARSERS`). Each is
named by a *spec*, one of::

    path/to/file.py            the one plugin class the file defines
    path/to/file.py:Class      that class of the file
    path/to/package            a folder with an __init__.py (its relative imports work)
    package.module:Class       an installed module's class
    name                       an installed package's entry point in the group

A path is read relative to ``root`` (default: the current folder) and must
stay inside it once symlinks are resolved; a spec that cannot be loaded raises
:class:`~cef.errors.ConfigurationError` (:class:`~cef.errors.PathEscapeError`
for a path outside its root) with a one-line message. A file is loaded once
per process (the same path gives the same classes); its objects are named
``<file>:<qualname>`` by :func:`object_ref`, so a knowledge base that records
a plugin can load it again in another process.

A package publishes a plugin in its ``pyproject.toml``::

    [project.entry-points."cef.memory_extensions"]
    pharma = "my_package.pharma:PharmaExtension"
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from cef.errors import ConfigurationError, PathEscapeError

__all__ = [
    "MEMORY_EXTENSIONS",
    "PARSERS",
    "entry_point_names",
    "is_file_ref",
    "load_entry_point",
    "load_module",
    "load_object",
    "load_plugin_class",
    "object_ref",
]

#: entry-point group of memory extensions (``SemanticMemoryExtension`` subclasses)
MEMORY_EXTENSIONS = "cef.memory_extensions"
#: entry-point group of file parsers (``Parser`` classes or instances), added to every default registry
PARSERS = "cef.parsers"

#: modules loaded from files are named ``cef_plugin_<stem>_<hash of the path>``
_MODULE_PREFIX = "cef_plugin_"


def is_file_ref(spec: str) -> bool:
    """Whether ``spec`` names a file or folder rather than ``module:qualname`` or an entry-point name (a
    plain word): it has a path separator, ends in ``.py``, or has a dot and no ``:qualname``."""
    where, qualname = _split(spec)
    return "/" in where or "\\" in where or where.endswith(".py") or (qualname is None and "." in where)


def _split(spec: str) -> tuple[str, str | None]:
    """``(where, qualname or None)``: the part after the last ``:`` is a qualname when it is one."""
    where, sep, name = spec.rpartition(":")
    if sep and where and re.fullmatch(r"[A-Za-z_][\w.]*", name):
        return where, name
    return spec, None


def _inside(path: str, root: str | Path | None) -> Path:
    """``path`` (relative to ``root``, default the current folder) resolved, refused if it leaves ``root``."""
    try:
        base = Path(root if root is not None else ".").resolve()
        given = Path(path)
        resolved = (given if given.is_absolute() else base / given).resolve()
    except (OSError, ValueError) as exc:  # a NUL byte, a symlink loop
        raise ConfigurationError(f"plugin path {path!r} cannot be read: {_one_line(exc)}") from exc
    if not resolved.is_relative_to(base):
        raise PathEscapeError(f"plugin path {path!r} is outside {base}: plugins load only from inside it")
    if not resolved.exists():
        raise ConfigurationError(f"plugin path {path!r} does not exist (looked in {base})")
    return resolved


def load_module(path: str | Path, *, root: str | Path | None = None) -> ModuleType:
    """The module of a ``.py`` file, or of a package folder (its ``__init__.py``), loaded once per process."""
    resolved = _inside(str(path), root)
    init = resolved / "__init__.py" if resolved.is_dir() else resolved
    if resolved.is_dir() and not init.is_file():
        raise ConfigurationError(f"plugin folder {str(path)!r} has no __init__.py")
    if init.suffix != ".py":
        raise ConfigurationError(f"plugin file {str(path)!r} is not a Python file (.py)")
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", resolved.stem)
    name = f"{_MODULE_PREFIX}{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    package = [str(resolved)] if resolved.is_dir() else None
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=package)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"plugin {str(path)!r} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    module.__cef_plugin_path__ = str(resolved)  # type: ignore[attr-defined]
    sys.modules[name] = module  # before running it: relative imports and dataclasses look it up
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
        raise ConfigurationError(
            f"plugin {str(path)!r} failed to load: {type(exc).__name__}: {_one_line(exc)}"
        ) from exc
    return module


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def object_ref(obj: object) -> str | None:
    """How to find a module-level class or function again: ``module:qualname``, or ``<file>:qualname`` for
    one loaded from a file; None for what cannot be found by name (a local class, ``__main__``)."""
    target = obj if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")) else type(obj)
    module_name = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    if not module_name or not qualname or "<" in qualname or module_name == "__main__":
        return None
    try:
        found: Any = importlib.import_module(module_name)
        origin = getattr(found, "__cef_plugin_path__", None)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    if found is not target or (origin is None and module_name.startswith(_MODULE_PREFIX)):
        return None  # not this object, or in a submodule of a plugin package (no file of its own)
    return f"{origin}:{qualname}" if origin is not None else f"{module_name}:{qualname}"


def load_object(ref: str) -> Any:
    """The object ``module:qualname`` or ``<file>:qualname`` names, as :func:`object_ref` writes them (an
    absolute file is loaded where it is; a relative one from inside the current folder).

    Raises ImportError / AttributeError for a module or name that is not there, and
    :class:`~cef.errors.ConfigurationError` for a file that cannot be loaded."""
    where, qualname = _split(ref)
    if is_file_ref(ref):
        found: Any = load_module(where, root=Path(where).parent if Path(where).is_absolute() else None)
    else:
        found = importlib.import_module(where)
    for part in qualname.split(".") if qualname else ():
        found = getattr(found, part)
    return found


@cache
def _entry_points(group: str) -> dict[str, EntryPoint]:
    """The installed entry points of ``group`` by name (read once per process)."""
    return {ep.name: ep for ep in entry_points(group=group)}


def entry_point_names(group: str) -> list[str]:
    """Names of the installed plugins of an entry-point group, sorted."""
    return sorted(_entry_points(group))


def load_entry_point(group: str, name: str) -> Any:
    """The object the installed entry point ``name`` of ``group`` names (ConfigurationError if it fails)."""
    ep = _entry_points(group).get(name)
    if ep is None:
        raise ConfigurationError(f"no plugin {name!r} in entry-point group {group!r}")
    try:
        return ep.load()
    except Exception as exc:
        raise ConfigurationError(f"plugin {name!r} ({ep.value}) failed to load: {_one_line(exc)}") from exc


def load_plugin_class(
    spec: str, *, group: str, what: str, accepts: Callable[[type], bool], root: str | Path | None = None
) -> type:
    """The plugin class ``spec`` names (see the module docstring); ``accepts`` tells a plugin class of
    this kind (``what``, e.g. "memory extension") from the file's other classes."""
    if not spec.strip():
        raise ConfigurationError(f"empty {what} spec")
    where, qualname = _split(spec)
    if is_file_ref(spec):
        module = load_module(where, root=root)
        found: Any = (
            _attribute(module, qualname, spec) if qualname else _the_one_class(module, accepts, what, spec)
        )
    elif qualname is not None:
        try:
            found = load_object(spec)
        except (ImportError, AttributeError) as exc:
            raise ConfigurationError(f"cannot import {what} {spec!r}: {exc}") from exc
    elif spec in _entry_points(group):
        found = load_entry_point(group, spec)
    else:
        installed = ", ".join(entry_point_names(group)) or "none installed"
        raise ConfigurationError(
            f"unknown {what} {spec!r}: give a file (path.py or path.py:Class), module:Class, or the name "
            f"of an installed {group!r} entry point ({installed})"
        )
    if not isinstance(found, type) or not accepts(found):
        raise ConfigurationError(f"{spec!r} is not a {what} class")
    return found


def _attribute(module: ModuleType, qualname: str, spec: str) -> Any:
    found: Any = module
    for part in qualname.split("."):
        if not hasattr(found, part):
            raise ConfigurationError(f"plugin {spec!r}: {qualname!r} is not defined in that file")
        found = getattr(found, part)
    return found


def _the_one_class(module: ModuleType, accepts: Callable[[type], bool], what: str, spec: str) -> type:
    """The one plugin class a file defines (not one it imports)."""
    defined = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and obj.__module__ == module.__name__ and accepts(obj)
    ]
    if len(defined) != 1:
        names = ", ".join(sorted(c.__name__ for c in defined)) or "none"
        raise ConfigurationError(
            f"plugin {spec!r} defines {len(defined)} {what} classes ({names}): name one as path.py:Class"
        )
    return defined[0]
