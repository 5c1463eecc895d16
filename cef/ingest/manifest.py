"""The file manifest of an ingest: what each ingested file wrote, and whether all of it is in.

One meta entry per file, ``ingest:<source>::<path>`` (the *header*), written in
the same transaction as the file's records. A file written in one transaction
lists its ids in the header. A large file streamed in parts (see
:class:`~cef.ingest.parsers.base.BatchParser`) lists the ids of each committed
part in a *part* entry of its own, ``<header key>\\x1fpart:<index>``, written
with that part's records, so no entry grows with the file and a kill between
two commits leaves every written record listed.

Header fields:

* ``fingerprint``, ``parser`` — the version of the file the records come from;
* ``complete`` — ``False`` until the commit of the file's last part: a file is
  never marked complete before all of it is in, and an incomplete file is not
  skipped by the next ingest (it resumes, or replaces it);
* ``position`` — the last line committed (where a resumed ingest starts);
* ``parts`` — ``[lo, hi]``: the part indices listed (``hi`` exclusive);
* ``run_from`` — parts ``lo..run_from-1`` hold the version being replaced
  while a replacement is under way (removed when it completes);
* ``run`` — a token of the ingest run writing the parts (co-occurrence counts
  of parts of one run add up; see :func:`cef.ingest.enrich.merge_cooccurrence`);
* ``lines`` — the file's line count (the total of the progress report);
* ``nodes``, ``edges``, ``chunks`` — ids written in one transaction.

Manifests without ``complete`` (written before parts existed) are complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from cef.errors import ConflictError

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = [
    "KINDS",
    "MANIFEST_PREFIX",
    "FileManifest",
    "check_collisions",
    "claimed_elsewhere",
    "file_key",
    "is_part",
    "iter_entries",
    "manifest_entries",
    "manifest_key",
    "owner_file",
    "part_key",
    "source_key",
    "source_name",
    "union_ids",
]

MANIFEST_PREFIX = "ingest:"
#: separates a header key from the index of one of its parts (never in a file path)
PART_SEP = "\x1fpart:"
KINDS = ("nodes", "edges", "chunks")


def part_key(mkey: str, index: int) -> str:
    """The meta key of part ``index`` of the file whose header key is ``mkey``."""
    return f"{mkey}{PART_SEP}{index:06d}"


def is_part(key: str) -> bool:
    return PART_SEP in key


def file_key(key: str) -> str:
    """The header key of a manifest entry (itself for a header)."""
    return key.split(PART_SEP, 1)[0]


@dataclass
class FileManifest:
    """A file's header entry, read from meta (see the module docs for the fields)."""

    key: str
    fingerprint: str | None = None
    parser: str = ""
    complete: bool = True
    position: int | None = None
    parts: tuple[int, int] = (0, 0)
    run_from: int = 0
    run: str = ""
    lines: int = 0
    ids: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_meta(cls, key: str, value: Any) -> FileManifest | None:
        if not isinstance(value, dict):
            return None
        raw_parts = value.get("parts")
        parts = (
            (int(raw_parts[0]), int(raw_parts[1]))
            if isinstance(raw_parts, list) and len(raw_parts) == 2
            else (0, 0)
        )
        position = value.get("position")
        return cls(
            key=key,
            fingerprint=value.get("fingerprint"),
            parser=str(value.get("parser", "")),
            complete=bool(value.get("complete", True)),
            position=position if isinstance(position, int) else None,
            parts=parts,
            run_from=int(value.get("run_from", parts[0])),
            run=str(value.get("run", "")),
            lines=int(value.get("lines", 0)),
            ids={k: list(value.get(k) or []) for k in KINDS},
        )

    def to_meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fingerprint": self.fingerprint,
            "parser": self.parser,
            "complete": self.complete,
        }
        if self.position is not None:
            out["position"] = self.position
        if self.parts != (0, 0):
            out["parts"] = list(self.parts)
            out["run_from"] = self.run_from
            out["run"] = self.run
            out["lines"] = self.lines
        out.update({k: list(self.ids.get(k, [])) for k in KINDS})
        return out

    def part_keys(self, lo: int | None = None, hi: int | None = None) -> list[str]:
        """Keys of the parts ``lo..hi-1`` (default: every part listed)."""
        start = self.parts[0] if lo is None else lo
        end = self.parts[1] if hi is None else hi
        return [part_key(self.key, i) for i in range(start, end)]


def union_ids(entries: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """The ids listed by manifest entries (headers or parts), per kind."""
    out: dict[str, set[str]] = {k: set() for k in KINDS}
    for entry in entries:
        for k in KINDS:
            out[k].update(entry.get(k) or [])
    return out


def iter_entries(items: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The manifest entries (headers and parts) among meta items."""
    for key, value in items:
        if key.startswith(MANIFEST_PREFIX) and isinstance(value, dict):
            yield key, value


def manifest_entries(kb: KnowledgeBase) -> list[tuple[str, dict[str, Any]]]:
    """Every manifest entry of the knowledge base: file headers and the parts of streamed files."""
    return list(iter_entries(kb.store.meta_items(MANIFEST_PREFIX)))


# ------------------------------------------------------------------ which file owns what
def owner_file(mkey: str) -> str:
    """The file a manifest key names (``<source root>/<path>``)."""
    source, _, path = file_key(mkey).removeprefix(MANIFEST_PREFIX).partition("::")
    return f"{source.rstrip('/')}/{path}"


def check_collisions(kb: KnowledgeBase, chunk_ids: Sequence[str], own: set[str], mkey: str) -> None:
    """Refuse a write whose chunks another file wrote (two folders holding the same relative path, two
    files with the same record ids): it would silently replace that file's text. Nothing is written."""
    fresh = [c for c in chunk_ids if c not in own]
    if not fresh:
        return
    existing = {c.id for c in kb.store.get_chunks(fresh)}
    if not existing:
        return
    me = file_key(mkey)
    for key, manifest in manifest_entries(kb):
        if file_key(key) == me:
            continue
        clash = existing.intersection(manifest.get("chunks", []))
        if clash:
            raise ConflictError(
                f"chunk {sorted(clash)[0]!r} (and {len(clash) - 1} more) is already ingested from "
                f"{owner_file(key)}, and {owner_file(mkey)} gives the same ids: two files with the same relative "
                "path in two folders, or the same record ids. Nothing of this file was written; ingest the "
                "two folders into separate knowledge bases, rename one file, or give its records ids "
                "of their own"
            )


def claimed_elsewhere(kb: KnowledgeBase, ids: set[str], mkey: str) -> set[str]:
    """Node ids some other file's manifest still lists (shared entities, nodes referenced by many files)."""
    claimed: set[str] = set()
    for key, manifest in manifest_entries(kb):
        if file_key(key) != mkey:
            claimed.update(ids.intersection(manifest.get("nodes", [])))
    return claimed


def source_key(uri: str) -> str:
    """What identifies a source in the manifests: its URI, or a local folder's resolved path."""
    if "://" in uri:
        return uri.rstrip("/")
    return str(Path(uri).resolve())


def source_name(source_key: str) -> str | None:
    """The name a source root gives its documents' ids: the folder's (or the URI's last segment's) name."""
    if "://" in source_key:
        return PurePosixPath(source_key.split("://", 1)[1]).name or None
    return Path(source_key).name or None


def manifest_key(source_key: str, path: str) -> str:
    """The store's meta key of one file's manifest."""
    return f"{MANIFEST_PREFIX}{source_key}::{path}"
