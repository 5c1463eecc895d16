"""A deterministic bag-of-words embedder for the conformance suite (no model download, no randomness).

Each word maps to a fixed pseudo-random direction (seeded by its CRC32); a
text is the normalized sum of its words' directions, so texts sharing words
are similar and identical texts have cosine 1.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

from cef.embed.base import Progress, Vectors


class HashEmbedder:
    """Implements :class:`cef.embed.base.Embedder`."""

    def __init__(self, dim: int = 32) -> None:
        self._dim = dim
        self._cache: dict[str, np.ndarray] = {}

    @property
    def name(self) -> str:
        return f"test-hash-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _word(self, w: str) -> np.ndarray:
        v = self._cache.get(w)
        if v is None:
            v = np.random.default_rng(zlib.crc32(w.encode())).standard_normal(self._dim).astype(np.float32)
            self._cache[w] = v
        return v

    def _one(self, text: str) -> np.ndarray:
        words = re.findall(r"\w+", text.lower()) or ["<empty>"]
        v = np.sum([self._word(w) for w in words], axis=0)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed(self, texts: Sequence[str], *, progress: Progress | None = None) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        out = np.stack([self._one(t) for t in texts])
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def embed_query(self, text: str) -> Vectors:
        return self._one(text)
