"""Text vectors in a file beside the store: ``{text: vector}`` for one embedding space, written
atomically (numpy's ``.npz``, no pickles) and read back only for the same space (the embedder's name).
The relation-path scorer keeps its path texts' vectors so (:mod:`~cef.retrieve.pathvectors`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

__all__ = ["read_text_vectors", "write_text_vectors"]

log = logging.getLogger(__name__)


def read_text_vectors(path: Path, space: str) -> dict[str, np.ndarray]:
    """The vectors :func:`write_text_vectors` saved in ``path`` for ``space``; empty when the file is
    absent, from another embedding space, or unreadable (a warning says why)."""
    if not path.exists():
        return {}
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["space"]) != space:
                log.info("saved path vectors %s are from another embedder; embedding again", path)
                return {}
            texts, vectors = data["texts"].tolist(), np.asarray(data["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError) as exc:
        log.warning("ignoring saved path vectors %s: %s", path, exc)
        return {}
    if vectors.ndim != 2 or len(texts) != len(vectors):
        log.warning(
            "ignoring saved path vectors %s: %d texts for %s vectors", path, len(texts), vectors.shape
        )
        return {}
    return {str(t): v for t, v in zip(texts, vectors, strict=True)}


def write_text_vectors(path: Path, space: str, vectors: Mapping[str, np.ndarray]) -> bool:
    """Write ``vectors`` to ``path`` for ``space`` atomically (a temporary file, then a rename);
    False when there is nothing to write or the write failed (a warning says why)."""
    if not vectors:
        return False
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            np.savez(
                f,
                space=np.array(space),
                texts=np.array(list(vectors)),
                vectors=np.stack(list(vectors.values())),
            )
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not save the path vectors to %s: %s", path, exc)
        tmp.unlink(missing_ok=True)
        return False
    return True
