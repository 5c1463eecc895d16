"""The embedding port: texts in, L2-normalized float32 vectors out.

:class:`Embedder` is what the engine depends on. :class:`BatchedEmbedder` is
the shared base of the adapters: it validates input, splits it into batches,
reports progress to a :class:`Progress` callback, and checks and normalizes
what each adapter's ``_embed_batch`` returns, so an adapter only talks to its
model or server.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from cef.errors import ConfigurationError, EmbeddingError, ValidationError

__all__ = ["BatchedEmbedder", "Embedder", "Progress", "Vectors", "normalize_rows"]

Vectors = NDArray[np.float32]


class Progress(Protocol):
    """Told after each batch how many of ``total`` texts are embedded."""

    def __call__(self, done: int, total: int) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors of a fixed dimension.

    ``name`` identifies the embedding space (vectors from embedders with
    different names are not comparable); ``dim`` is the vector length.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, progress: Progress | None = None) -> Vectors:
        """A float32 array of shape ``(len(texts), dim)``, rows L2-normalized; ``(0, dim)`` for no texts."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """One text's vector, shape ``(dim,)``."""
        ...


def normalize_rows(vectors: NDArray[np.floating] | Sequence[Sequence[float]]) -> Vectors:
    """``vectors`` as float32 with every row scaled to unit length.

    Raises :class:`~cef.errors.EmbeddingError` for non-finite values or an
    all-zero row (it has no direction to keep).
    """
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"vectors are not a rectangular array of numbers: {exc}") from exc
    if arr.ndim != 2:
        raise EmbeddingError(f"expected a 2-D array of vectors, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise EmbeddingError(f"vector {bad} contains NaN or infinity")
    norms = np.linalg.norm(arr.astype(np.float64), axis=1)
    if arr.shape[0] and (norms == 0).any():
        zero = int(np.flatnonzero(norms == 0)[0])
        raise EmbeddingError(f"vector {zero} is all zeros and cannot be normalized")
    out: Vectors = (arr / norms[:, None]).astype(np.float32)
    return out


def check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str | bytes):
        raise ValidationError("embed() takes a sequence of texts; use embed_query() for a single text")
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise ValidationError(f"text {i} is a {type(t).__name__}, not a str")
    return items


class BatchedEmbedder(ABC):
    """Base of the adapters: batching, progress, shape checks, normalization.

    Subclasses set ``name``, provide ``dim`` and implement :meth:`_embed_batch`.
    """

    name: str
    #: batch texts of similar length together (local models pad each batch to its longest text); short
    #: ones (entity names) may go in larger batches, up to ``SHORT_BATCH_FACTOR`` x ``batch_size`` texts
    #: while a batch holds at most ``batch_size`` x ``SHORT_CHARS`` characters of its longest text. The
    #: factor is 1 (off): 4 measured no gain (bench/README.md, issue 25) and ``batch_size`` stays the
    #: batch size a caller sets
    sort_by_length: bool = False
    SHORT_CHARS = 128
    SHORT_BATCH_FACTOR = 1

    def __init__(self, batch_size: int = 64) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigurationError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        self.batch_size = batch_size

    @property
    @abstractmethod
    def dim(self) -> int: ...

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> NDArray[np.floating] | Sequence[Sequence[float]]:
        """Raw vectors for one batch (any float dtype, not necessarily normalized)."""

    def embed(self, texts: Sequence[str], *, progress: Progress | None = None) -> Vectors:
        items = check_texts(texts)
        total = len(items)
        if total == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        order: NDArray[np.intp] | None = None
        bounds = [*range(0, total, self.batch_size), total]
        if self.sort_by_length and total > self.batch_size:
            lengths = np.fromiter(map(len, items), dtype=np.int64, count=total)
            order = np.argsort(lengths, kind="stable")
            items = [items[i] for i in order]
            bounds = self._length_bounds(lengths[order].tolist())
        parts: list[Vectors] = []
        for start, stop in itertools.pairwise(bounds):
            batch = items[start:stop]
            raw = self._embed_batch(batch)
            vecs = normalize_rows(raw)
            if vecs.shape != (len(batch), self.dim):
                raise EmbeddingError(
                    f"{self.name}: expected {len(batch)} vectors of {self.dim} dimensions, "
                    f"got shape {vecs.shape}"
                )
            parts.append(vecs)
            if progress is not None:
                progress(start + len(batch), total)
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
        if order is not None:
            unsorted = np.empty_like(out)
            unsorted[order] = out
            out = unsorted
        return out

    def _length_bounds(self, lengths: list[int]) -> list[int]:
        """Batch boundaries over texts sorted by length: ``batch_size`` texts, more while they are short."""
        size, budget = self.batch_size, self.batch_size * self.SHORT_CHARS
        most = size * self.SHORT_BATCH_FACTOR
        bounds, start, total = [0], 0, len(lengths)
        while start < total:
            stop = min(start + size, total)
            while stop < total and stop - start < most and lengths[stop] * (stop - start + 1) <= budget:
                stop += 1
            bounds.append(stop)
            start = stop
        return bounds

    def embed_query(self, text: str) -> Vectors:
        if not isinstance(text, str):
            raise ValidationError(f"embed_query() takes a str, got {type(text).__name__}")
        vec: Vectors = self.embed([text])[0]
        return vec

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, batch_size={self.batch_size})"
