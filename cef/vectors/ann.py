"""Approximate nearest-neighbour search for big collections, persisted beside the store.

:class:`AnnVectorIndex` is an :class:`~cef.vectors.exact.ExactVectorIndex`
(the float32 rows stay in memory: exact cosines for :meth:`similarities`,
exact search restricted to ``allowed`` ids, and the exact re-ranking of ANN
candidates) plus an HNSW graph (the ``usearch`` library) over the same rows
once the collection holds ``threshold`` vectors or more. A top-k search then
asks the HNSW graph for ``max(8k, 100)`` candidates and ranks them by their
exact cosine. Below the threshold every search is exact.

Chosen by measurement (``bench/README.md``, "Vector index"): at 50,000
passage-like vectors hnswlib and usearch gave the same recall at the same
settings; usearch restores a saved index without rebuilding it, keeps
deleted keys out of results, is released regularly, and can store the
graph's vectors as float16 or int8 (``dtype``; the exact re-ranking keeps
the float32 rows, so the reduced precision costs only candidate recall).

Persistence (:func:`save_index` / :func:`load_index`): the rows, ids and the
HNSW graph go to two files written atomically next to the store, with the
store's change seq they hold; the engine replays later changes on open, so
opening a big store reads the files instead of every vector row and rebuilds
nothing. The engine saves on close and, while writing, again each time a
quarter of the index changed (``EngineState.CHECKPOINT_SHARE``), so a writer
killed mid-ingest leaves files that miss at most that share.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cef.errors import ConfigurationError, EmbeddingError
from cef.vectors.exact import ExactVectorIndex, normalize

__all__ = ["DEFAULT_THRESHOLD", "AnnVectorIndex", "load_index", "save_index"]

#: collections smaller than this are searched exactly (a BLAS scan of 50K × 384 takes a few ms)
DEFAULT_THRESHOLD = 50_000
_FORMAT = 1
_warned = False
log = logging.getLogger(__name__)
_SEP = "\x00"


def _require_usearch() -> Any:
    try:
        from usearch.index import Index
    except ImportError as exc:  # pragma: no cover - the dependency is declared
        raise ConfigurationError(
            "the ANN vector index needs the 'usearch' package: pip install 'cef-context[ann]'"
        ) from exc
    return Index


class AnnVectorIndex(ExactVectorIndex):
    """Exact below ``threshold`` vectors, HNSW candidates + exact re-ranking above it."""

    def __init__(
        self,
        dim: int,
        capacity: int = 1024,
        *,
        threshold: int | None = None,
        dtype: str = "i8",
        connectivity: int = 32,
        expansion_add: int = 200,
        expansion_search: int = 256,
    ) -> None:
        super().__init__(dim, capacity)
        if dtype not in ("f32", "f16", "i8"):
            raise ConfigurationError(f"ANN vector dtype must be 'f32', 'f16' or 'i8', got {dtype!r}")
        self.threshold = DEFAULT_THRESHOLD if threshold is None else threshold
        self.dtype = dtype
        self.connectivity = connectivity
        self.expansion_add = expansion_add
        self.expansion_search = expansion_search
        self._ann: Any = None
        #: whether this process built the HNSW graph (False when it was loaded from disk)
        self.built_here = False
        #: bumped by every change (the engine saves a changed index on close)
        self.version = 0
        #: rows upserted or removed so far (the engine re-saves a big index once enough of it changed)
        self.rows_changed = 0

    @property
    def approximate(self) -> bool:
        """Whether searches go through the HNSW graph (the collection reached the threshold)."""
        return self._ann is not None

    def _new_ann(self) -> Any:
        index_cls = _require_usearch()
        return index_cls(
            ndim=self.dim,
            metric="ip",
            dtype=self.dtype,
            connectivity=self.connectivity,
            expansion_add=self.expansion_add,
            expansion_search=self.expansion_search,
        )

    def _build_ann(self) -> None:
        global _warned
        try:
            ann = self._new_ann()
        except ConfigurationError as exc:  # without the extra a big collection is still searched exactly
            if not _warned:
                log.warning("%s; searching %d vectors exactly", exc, len(self))
                _warned = True
            return
        self.built_here = True
        rows = np.flatnonzero(self._alive[: len(self._ids)])
        if len(rows):
            ann.add(rows.astype(np.uint64), self._m[rows], threads=os.cpu_count() or 1)
        self._ann = ann

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        with self._lock:
            super().upsert(ids, vectors)
            self.version += 1
            self.rows_changed += len(ids)
            if self._ann is None:
                if len(self) >= self.threshold:
                    self._build_ann()
                return
            rows = np.fromiter((self._row[i] for i in ids), dtype=np.uint64, count=len(ids))
            rows = np.unique(rows)
            present = np.asarray([self._ann.contains(int(r)) for r in rows.tolist()], dtype=bool)
            if present.any():
                self._ann.remove(rows[present])
            self._ann.add(rows, self._m[rows.astype(np.int64)], threads=os.cpu_count() or 1)

    def remove(self, ids: Sequence[str]) -> None:
        with self._lock:
            rows = [self._row[i] for i in ids if i in self._row]
            super().remove(ids)
            if not rows:
                return
            self.version += 1
            self.rows_changed += len(rows)
            if self._ann is not None:
                if len(self) < self.threshold // 2:
                    self._ann = None  # small again: exact search
                else:
                    self._ann.remove(np.asarray(rows, dtype=np.uint64))

    def search(
        self, vector: np.ndarray, k: int, allowed: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        if self._ann is None or allowed is not None or k <= 0:
            return super().search(vector, k, allowed)
        q = normalize(np.asarray(vector, dtype=np.float32))
        if q.shape != (self.dim,):
            raise EmbeddingError(f"query vector has shape {q.shape}, the index holds dimension {self.dim}")
        with self._lock:
            found = self._ann.search(q, max(8 * k, 100))
            rows = np.asarray(found.keys, dtype=np.int64)
            rows = rows[(rows >= 0) & (rows < len(self._ids))]
            rows = rows[self._alive[rows]]
            if not len(rows):
                return []
            scores = self._m[rows] @ q
            top = np.argsort(-scores, kind="stable")[:k]
            out = []
            for t in top.tolist():
                ident = self._ids[int(rows[t])]
                if ident is not None:
                    out.append((ident, float(scores[t])))
            return out


# ----------------------------------------------------------------------------- persistence
def save_index(index: AnnVectorIndex, path: Path, header: dict[str, Any]) -> None:
    """Write the index to ``path`` (rows, ids, header) and ``path.<token>.hnsw`` (the HNSW graph), atomically.

    The graph file is written first under a fresh name; the rows file, renamed
    into place last, names it, so a reader sees the old pair or the new one.
    """
    with index._lock:
        n = len(index._ids)
        ids = ["" if i is None else i for i in index._ids]
        text = _SEP.join(ids)
        if text.count(_SEP) != max(0, n - 1):
            raise ConfigurationError("a vector id contains a NUL character; it cannot be saved")
        token = uuid.uuid4().hex[:12] if index._ann is not None else None
        head = {
            **header,
            "format": _FORMAT,
            "dim": index.dim,
            "count": n,
            "threshold": index.threshold,
            "dtype": index.dtype,
            "hnsw": token,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        graph_file = path.with_name(f"{path.name}.{token}.hnsw") if token else None
        if graph_file is not None:
            index._ann.save(str(graph_file))
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(
                    f,
                    matrix=index._m[:n],
                    alive=index._alive[:n],
                    ids=np.frombuffer(text.encode("utf-8"), dtype=np.uint8),
                    header=np.frombuffer(json.dumps(head).encode("utf-8"), dtype=np.uint8),
                )
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if graph_file is not None:
                with contextlib.suppress(OSError):
                    graph_file.unlink()
            raise
    for old in path.parent.glob(f"{path.name}.*.hnsw"):  # graphs of earlier saves
        if graph_file is None or old != graph_file:
            with contextlib.suppress(OSError):
                old.unlink()


def read_header(path: Path) -> dict[str, Any]:
    with np.load(path) as data:
        head: dict[str, Any] = json.loads(data["header"].tobytes().decode("utf-8"))
    return head


def load_index(path: Path, **options: Any) -> tuple[AnnVectorIndex, dict[str, Any]]:
    """An index saved by :func:`save_index` and its header (OSError / ValueError / KeyError when unusable)."""
    with np.load(path) as data:
        head = json.loads(data["header"].tobytes().decode("utf-8"))
        if head.get("format") != _FORMAT:
            raise ValueError(f"vector index {path} has format {head.get('format')}, expected {_FORMAT}")
        matrix = data["matrix"]
        alive = data["alive"]
        text = data["ids"].tobytes().decode("utf-8")
    n = int(head["count"])
    ids = text.split(_SEP) if n else []
    if len(ids) != n or matrix.shape != (n, int(head["dim"])) or len(alive) != n:
        raise ValueError(f"vector index {path} is inconsistent (header says {n} rows)")
    options.setdefault("threshold", int(head["threshold"]))
    options.setdefault("dtype", str(head["dtype"]))
    index = AnnVectorIndex(int(head["dim"]), **options)
    if n:  # the rows read are the matrix (no second copy); ids, rows and free rows in C-level passes
        index._m = np.ascontiguousarray(matrix, dtype=np.float32)
        index._alive = np.array(alive, dtype=np.bool_)
    if alive.all():
        index._ids = list(ids)
        index._row = dict(zip(ids, range(n), strict=True))
        index._free = []
    else:
        keep = alive.tolist()
        live = np.flatnonzero(alive).tolist()
        index._ids = [i if a else None for i, a in zip(ids, keep, strict=True)]
        index._row = dict(zip(itertools.compress(ids, keep), live, strict=True))
        index._free = np.flatnonzero(~alive).tolist()
    token = head.get("hnsw")
    if token and len(index) >= index.threshold:
        ann = index._new_ann()
        ann.load(str(path.with_name(f"{path.name}.{token}.hnsw")))
        ann.expansion_search = index.expansion_search  # a search setting: this build's, not the file's
        if len(ann) != len(index):
            raise ValueError(
                f"vector index {path}: the HNSW graph holds {len(ann)} vectors, the rows {len(index)}"
            )
        index._ann = ann
    elif len(index) >= index.threshold:
        index._build_ann()
    return index, head
