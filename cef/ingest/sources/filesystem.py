"""A local folder (or a single file) as a :class:`~cef.ingest.sources.base.DataSource`."""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Literal

from cef.errors import ConfigurationError, NotFoundError, PathEscapeError
from cef.ingest.sources.base import (
    ResourceInfo,
    SourceBase,
    check_prefix,
    check_relative_path,
    guess_content_type,
)

__all__ = ["FileSystemSource"]

logger = logging.getLogger(__name__)

_HASH_BLOCK = 1 << 20


class FileSystemSource(SourceBase):
    """Files under a local ``root`` folder, confined to it.

    * Paths are relative to ``root`` and POSIX-style. ``..``, absolute paths and
      symlinks that resolve outside ``root`` raise :class:`~cef.errors.PathEscapeError`
      naming the path and the root.
    * Hidden files and folders (name starting with ``.``) are skipped unless
      ``include_hidden``; symlinked folders are never descended into (no cycles,
      no duplicates); symlinked files are listed only if they resolve inside ``root``.
    * Listing order is lexicographic by path, so runs are reproducible.
    * ``fingerprint="sha256"`` (default) hashes content; ``"stat"`` uses
      size and mtime only (cheaper, but a touch counts as a change).

    ``root`` may also be a single file: the source then holds just that file.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        include_hidden: bool = False,
        fingerprint: Literal["sha256", "stat"] = "sha256",
    ) -> None:
        given = Path(root)
        try:
            resolved = given.resolve(strict=True)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise ConfigurationError(f"data source root {str(given)!r} does not exist") from exc
        self._only: str | None = None
        if resolved.is_file():
            self._only = resolved.name
            resolved = resolved.parent
        elif not resolved.is_dir():
            raise ConfigurationError(f"data source root {str(given)!r} is neither a folder nor a file")
        self._root = resolved
        self._include_hidden = include_hidden
        if fingerprint not in ("sha256", "stat"):
            raise ConfigurationError(f"fingerprint must be 'sha256' or 'stat', not {fingerprint!r}")
        self._fingerprint = fingerprint
        #: (path, size, mtime_ns) → fingerprint, so list() then info() hashes once
        self._hashes: dict[tuple[str, int, int], str] = {}

    @property
    def root(self) -> Path:
        return self._root

    @property
    def uri(self) -> str:
        base = self._root.as_uri()
        return f"{base}/{self._only}" if self._only else base + "/"

    def __repr__(self) -> str:
        return f"FileSystemSource({self.uri!r})"

    # -- path safety -------------------------------------------------------------------------

    def _resolve(self, path: str) -> tuple[str, Path]:
        """The normalized relative path and the real file path, refusing escapes."""
        rel = check_relative_path(path, str(self._root))
        full = (self._root / rel).resolve(strict=False)
        if not full.is_relative_to(self._root):
            raise PathEscapeError(
                f"path {path!r} resolves to {str(full)!r}, outside the source root {str(self._root)!r}"
            )
        return rel, full

    def _visible(self, rel: str) -> bool:
        if self._only is not None and rel != self._only:
            return False
        return self._include_hidden or not any(part.startswith(".") for part in rel.split("/"))

    # -- reading -----------------------------------------------------------------------------

    def open(self, path: str) -> BinaryIO:
        rel, full = self._resolve(path)
        if not self._visible(rel):
            raise NotFoundError(f"{rel!r} is not in the data source {self.uri}")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(full, flags)
        except FileNotFoundError as exc:
            raise NotFoundError(f"no file {rel!r} in the data source {self.uri}") from exc
        except IsADirectoryError as exc:
            raise NotFoundError(f"{rel!r} is a folder, not a file, in the data source {self.uri}") from exc
        except OSError as exc:
            if Path(full).is_symlink():  # swapped for a symlink after we resolved it
                raise PathEscapeError(f"path {path!r} changed to a symlink while opening it") from exc
            raise
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise NotFoundError(f"{rel!r} is {what} in the data source {self.uri}")
        return os.fdopen(fd, "rb")

    def exists(self, path: str) -> bool:
        rel, full = self._resolve(path)
        return self._visible(rel) and full.is_file()

    def info(self, path: str) -> ResourceInfo:
        rel, full = self._resolve(path)
        if not self._visible(rel):
            raise NotFoundError(f"{rel!r} is not in the data source {self.uri}")
        try:
            st = full.stat()
        except FileNotFoundError as exc:
            raise NotFoundError(f"no file {rel!r} in the data source {self.uri}") from exc
        if not stat.S_ISREG(st.st_mode):
            raise NotFoundError(f"{rel!r} is not a regular file in the data source {self.uri}")
        return self._info(rel, full, st)

    def _info(self, rel: str, full: Path, st: os.stat_result) -> ResourceInfo:
        return ResourceInfo(
            path=rel,
            size=st.st_size,
            modified=datetime.fromtimestamp(st.st_mtime, tz=UTC),
            fingerprint=self._fingerprint_of(rel, full, st),
            content_type=guess_content_type(rel),
        )

    def _fingerprint_of(self, rel: str, full: Path, st: os.stat_result) -> str:
        if self._fingerprint == "stat":
            return f"stat:{st.st_size}-{st.st_mtime_ns}"
        key = (rel, st.st_size, st.st_mtime_ns)
        cached = self._hashes.get(key)
        if cached is None:
            digest = hashlib.sha256()
            with open(full, "rb") as fh:
                while block := fh.read(_HASH_BLOCK):
                    digest.update(block)
            cached = self._hashes[key] = f"sha256:{digest.hexdigest()}"
        return cached

    # -- listing -----------------------------------------------------------------------------

    def list(self, prefix: str = "") -> Iterator[ResourceInfo]:
        prefix = check_prefix(prefix, str(self._root))
        if self._only is not None:
            if self._only.startswith(prefix):
                yield self.info(self._only)
            return
        # start from the deepest folder the prefix names, then filter by the string prefix
        start_dir = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = self._root / start_dir if start_dir else self._root
        if start_dir and not self._include_hidden and any(p.startswith(".") for p in start_dir.split("/")):
            return
        if start_dir:
            real = start.resolve(strict=False)
            if not real.is_relative_to(self._root):
                raise PathEscapeError(
                    f"prefix {prefix!r} resolves outside the source root {str(self._root)!r}"
                )
            if start.is_symlink() or not start.is_dir():
                return
        yield from self._walk(start, start_dir, prefix)

    def _walk(self, folder: Path, rel_folder: str, prefix: str) -> Iterator[ResourceInfo]:
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            logger.warning("cannot list %s: %s", folder, exc)
            return
        keyed: list[tuple[str, os.DirEntry[str], bool]] = []
        for entry in entries:
            if not self._include_hidden and entry.name.startswith("."):
                continue
            if "\\" in entry.name:
                logger.warning("skipping %r: backslashes are not allowed in source paths", entry.name)
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            # sorting "name/" for folders makes the walk yield paths in global lexicographic order
            keyed.append((entry.name + "/" if is_dir else entry.name, entry, is_dir))
        keyed.sort(key=lambda item: item[0])
        for _key, entry, is_dir in keyed:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            if is_dir:
                sub = rel + "/"
                if sub.startswith(prefix) or prefix.startswith(sub):
                    yield from self._walk(Path(entry.path), rel, prefix)
                continue
            if not rel.startswith(prefix):
                continue
            try:
                if entry.is_symlink():
                    target = Path(entry.path).resolve(strict=False)
                    if not target.is_relative_to(self._root):
                        logger.warning("skipping %r: symlink to %s is outside the source root", rel, target)
                        continue
                    if not target.is_file():
                        continue
                    st = target.stat()
                else:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                info = self._info(rel, Path(entry.path), st)
            except OSError as exc:  # removed or unreadable while we listed
                logger.warning("skipping %r: %s", rel, exc)
                continue
            yield info
