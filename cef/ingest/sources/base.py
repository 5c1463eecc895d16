"""The data-source port: where raw documents come from.

A :class:`DataSource` is a read-only view of a tree of files (a folder, an S3
prefix...). Paths are always POSIX-style and relative to the source's root;
a path that would leave the root (``..``, an absolute path, a symlink pointing
outside) is refused with :class:`~cef.errors.PathEscapeError`.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath, PureWindowsPath
from types import TracebackType
from typing import BinaryIO, Protocol, Self, runtime_checkable

from cef.errors import PathEscapeError

__all__ = [
    "DataSource",
    "ResourceInfo",
    "SourceBase",
    "check_prefix",
    "check_relative_path",
    "glob_prefix",
    "glob_to_regex",
    "guess_content_type",
    "refuse_escape",
]

#: content types the standard library does not know (or guesses differently on some systems)
_EXTRA_TYPES: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/jsonl",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".txt": "text/plain",
    ".pdf": "application/pdf",
}


def guess_content_type(path: str) -> str | None:
    """A MIME type guessed from the file name (``.jsonl.gz`` → ``application/jsonl``)."""
    name = PurePosixPath(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = PurePosixPath(name).suffix
    if suffix in _EXTRA_TYPES:
        return _EXTRA_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """What a source knows about one file, without reading it.

    ``path`` is relative to the source root, POSIX-style (``docs/intro.md``).
    ``fingerprint`` changes whenever the content does: ``sha256:<hex>`` for
    local files, ``etag:<etag>`` for S3 objects. Compare it to skip unchanged
    files on re-ingest.
    """

    path: str
    size: int
    modified: datetime | None
    fingerprint: str
    content_type: str | None = None

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name

    @property
    def extension(self) -> str:
        """The lower-cased last suffix with its dot (``.gz`` for ``a.jsonl.gz``), or ``""``."""
        return PurePosixPath(self.path).suffix.lower()


@runtime_checkable
class DataSource(Protocol):
    """A read-only tree of files. Use it as a context manager or call :meth:`close`."""

    @property
    def uri(self) -> str:
        """Where the source points (``file:///...``, ``s3://bucket/prefix/``), for provenance."""
        ...

    def list(self, prefix: str = "") -> Iterator[ResourceInfo]:
        """Every file whose path starts with ``prefix``, in lexicographic path order."""
        ...

    def glob(self, pattern: str) -> Iterator[ResourceInfo]:
        """Files matching a glob (``*`` within a segment, ``**`` across segments, ``?``, ``[ab]``)."""
        ...

    def open(self, path: str) -> BinaryIO:
        """A binary stream of the file's content; the caller closes it."""
        ...

    def read_bytes(self, path: str) -> bytes:
        """The whole content of the file."""
        ...

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a file in this source (raises if the path would escape)."""
        ...

    def info(self, path: str) -> ResourceInfo:
        """Metadata of one file; :class:`~cef.errors.NotFoundError` if it does not exist."""
        ...

    def close(self) -> None:
        """Release connections; idempotent."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class SourceBase:
    """Shared behaviour of the built-in sources: context manager, ``read_bytes`` and ``glob``."""

    @property
    def uri(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden where there is something to close
        return None

    def list(self, prefix: str = "") -> Iterator[ResourceInfo]:  # pragma: no cover - abstract
        raise NotImplementedError

    def open(self, path: str) -> BinaryIO:  # pragma: no cover - abstract
        raise NotImplementedError

    def read_bytes(self, path: str) -> bytes:
        with self.open(path) as stream:
            return stream.read()

    def glob(self, pattern: str) -> Iterator[ResourceInfo]:
        refuse_escape(pattern, self.uri, what="glob pattern")
        regex = glob_to_regex(pattern)
        for info in self.list(glob_prefix(pattern)):
            if regex.fullmatch(info.path):
                yield info


def refuse_escape(path: str, root: str, *, what: str = "path") -> None:
    """Raise :class:`~cef.errors.PathEscapeError` if ``path`` could leave the root.

    Refused: absolute paths (POSIX or Windows), ``..`` segments, backslashes
    and NUL bytes.
    """
    if not isinstance(path, str):
        raise TypeError(f"{what} must be a str, got {type(path).__name__}")
    problem = None
    if "\x00" in path:
        problem = "contains a NUL byte"
    elif "\\" in path:
        problem = "contains a backslash"
    elif path.startswith("/") or PureWindowsPath(path).drive or PureWindowsPath(path).is_absolute():
        problem = "is absolute"
    elif ".." in path.split("/"):
        problem = "contains '..'"
    if problem is not None:
        raise PathEscapeError(f"{what} {path!r} {problem}: it must stay inside the source root {root}")


def check_relative_path(path: str, root: str) -> str:
    """Normalize a file path relative to a source root (``./a//b`` → ``a/b``), refusing escapes."""
    refuse_escape(path, root)
    normalized = "/".join(p for p in path.split("/") if p not in ("", "."))
    if not normalized:
        raise PathEscapeError(f"path {path!r} names the source root {root} itself, not a file in it")
    return normalized


def check_prefix(prefix: str, root: str) -> str:
    """Normalize a listing prefix, keeping a trailing slash (``docs/`` vs ``docs``), refusing escapes."""
    refuse_escape(prefix, root, what="prefix")
    normalized = "/".join(p for p in prefix.split("/") if p not in ("", "."))
    if normalized and prefix.endswith("/"):
        normalized += "/"
    return normalized


def glob_prefix(pattern: str) -> str:
    """The literal directory part of a glob (``docs/a/*.md`` → ``docs/a/``), to narrow listing."""
    literal: list[str] = []
    for segment in pattern.split("/")[:-1]:
        if any(ch in segment for ch in "*?["):
            break
        literal.append(segment)
    return "/".join(literal) + "/" if literal else ""


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob: ``*`` and ``?`` stay within one segment; ``**`` spans segments."""
    segments = pattern.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_translate_segment(segment))
        if not last:
            out.append("/")
    return re.compile("".join(out), re.DOTALL)


def _translate_segment(segment: str) -> str:
    res: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        ch = segment[i]
        i += 1
        if ch == "*":
            while i < n and segment[i] == "*":
                i += 1
            res.append("[^/]*")
        elif ch == "?":
            res.append("[^/]")
        elif ch == "[":
            j = i
            if j < n and segment[j] in "!^":
                j += 1
            if j < n and segment[j] == "]":
                j += 1
            while j < n and segment[j] != "]":
                j += 1
            if j >= n:
                res.append(re.escape("["))
                continue
            body = segment[i:j]
            i = j + 1
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\")
            res.append(f"[^/{body}]" if negate else f"[{body}]")
        else:
            res.append(re.escape(ch))
    return "".join(res)
