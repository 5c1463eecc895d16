"""How a write's records get their vectors: node texts and chunks embedded in batches, given vectors checked.

The indexer calls these inside its transaction; :func:`embed_texts` is also what
ingest uses for entity names.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cef.embed.base import Embedder
from cef.engine.state import EngineState, ProgressFn
from cef.errors import ConflictError
from cef.model import Chunk, Node
from cef.store.base import WriteSet

__all__ = ["embed_chunk_vectors", "embed_node_vectors", "embed_texts", "embed_writes", "record_embedder"]

#: texts per call of the embedder between two progress reports of a write
EMBED_BATCH = 256


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    what: str,
    progress: ProgressFn | None = None,
    *,
    step: int = 2048,
) -> np.ndarray:
    """Vectors of ``texts`` (in their order), each distinct text embedded once, in order of length.

    Texts of like length go to the embedder together, so its batches carry
    little padding; ``step`` texts at a time between two progress reports
    (``what``, texts done, total)."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    unique = list(dict.fromkeys(texts))
    order = sorted(range(len(unique)), key=lambda i: len(unique[i]))
    vectors = np.empty((len(unique), embedder.dim), dtype=np.float32)
    for start in range(0, len(order), step):
        part = order[start : start + step]
        vectors[part] = embedder.embed([unique[i] for i in part])
        if progress is not None:
            progress(what, min(start + step, len(order)), len(order))
    if len(unique) == len(texts):  # no repeats: ``unique`` is ``texts``
        return vectors
    where = {t: i for i, t in enumerate(unique)}
    return vectors[[where[t] for t in texts]]


def embed_writes(state: EngineState, writes: WriteSet, embed_nodes: str, progress: ProgressFn | None) -> int:
    """Embed the new nodes and chunks of ``writes`` into it; returns how many texts were embedded."""
    return embed_node_vectors(state, embed_nodes, writes, writes.nodes, progress) + embed_chunk_vectors(
        state, writes, writes.chunks, progress
    )


def embed_node_vectors(
    state: EngineState,
    embed_nodes: str,
    writes: WriteSet,
    nodes: Sequence[Node],
    progress: ProgressFn | None = None,
) -> int:
    """Vectors of ``nodes`` into ``writes`` (``embed_nodes``: ``all``, ``content`` or ``none``)."""
    if state.embedder is None or embed_nodes == "none":
        return 0
    todo = [n for n in nodes if embed_nodes == "all" or n.content]
    vecs = _embed(state.embedder, [n.embedding_text() for n in todo], "embedding nodes", progress)
    writes.node_vectors.update({n.id: v for n, v in zip(todo, vecs, strict=True)})
    return len(todo)


def embed_chunk_vectors(
    state: EngineState, writes: WriteSet, chunks: Sequence[Chunk], progress: ProgressFn | None = None
) -> int:
    """Vectors of ``chunks`` into ``writes``: a given ``embedding`` is checked and normalized, the
    others' texts embedded; returns how many were embedded."""
    emb = state.embedder
    if emb is None:
        return 0
    for c in chunks:
        if c.embedding is None:
            continue
        vec = np.asarray(c.embedding, dtype=np.float32)
        if vec.shape != (emb.dim,):  # well formed, but not this store's vectors: 409
            raise ConflictError(
                f"chunk {c.id!r}: embedding has {vec.shape[0]} dimensions, this knowledge base's model "
                f"({emb.name}) has {emb.dim}: send vectors of that model "
                "or leave 'embedding' out to have the text embedded"
            )
        writes.chunk_vectors[c.id] = vec / max(float(np.linalg.norm(vec)), 1e-12)
    todo = [c for c in chunks if c.embedding is None]
    vecs = _embed(emb, [c.content for c in todo], "embedding chunks", progress)
    writes.chunk_vectors.update({c.id: v for c, v in zip(todo, vecs, strict=True)})
    return len(todo)


def _embed(embedder: Embedder, texts: list[str], what: str, progress: ProgressFn | None) -> np.ndarray:
    return embed_texts(embedder, texts, what, progress, step=EMBED_BATCH)


def record_embedder(state: EngineState, writes: WriteSet, force: bool = False) -> None:
    """Record the embedding model's name and dimension in the store's meta (the first time, or ``force``)."""
    emb = state.embedder
    if emb is None:
        return
    if force or state.store.get_meta("embedding.model") is None:
        writes.meta["embedding.model"] = emb.name
        writes.meta["embedding.dim"] = emb.dim
