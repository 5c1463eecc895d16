"""Semantic support: how well the results' evidence says, in any words, what a question asks.

The word-level relevance (:mod:`cef.retrieve.relevance`) counts a question word as held when the
evidence holds the word or a word of its base. A paraphrase ("an *irregular heartbeat*" for atrial
fibrillation) is then held nowhere, and a question that names held things but asks a relation the
knowledge base lacks ("Lucas Brandt's *dentist*") may still find its words somewhere. Semantic support
reads the same evidence with the embedder instead:

* **the remainder** — the question's content words the things it names do not account for (what it
  asks about them; all its content words when it names nothing), in the question's order, embedded as
  one phrase. The named things' own words are left out: their names would make any chunk that
  mentions them look alike whatever is asked;
* **the evidence** — the top results' chunks (their stored vectors), the answer nodes (their stored
  vectors) and the relations on the paths that found them (each relation's name and description,
  embedded once per engine);
* **support** — the best cosine of the remainder with any of them, in [0, 1] (a negative cosine
  counts 0). A question that asks nothing beyond the things it names (``Who is John Miller?``) is
  fully supported (1).

Support is one question-level feature of the calibrated relevance (see
:attr:`~cef.retrieve.presets.RelevanceSettings.calibration`); without an embedder it is not measured
and the lexical calibration applies.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cef.model import RankedChunk, RankedNode
from cef.retrieve.context import QueryContext

__all__ = ["phrase_vectors", "semantic_support", "unit"]

#: the unit vectors of phrases (schema and relation texts), per engine's embedder; these change rarely
_PHRASE_VECTORS: dict[tuple[int, tuple[str, ...]], np.ndarray] = {}


def unit(m: np.ndarray) -> np.ndarray:
    """The rows of ``m`` scaled to length 1 (a zero row stays zero)."""
    m = np.asarray(m, dtype=np.float32)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def phrase_vectors(qc: QueryContext, phrases: tuple[str, ...]) -> np.ndarray | None:
    """The unit vectors of ``phrases`` (one embedder call per new set of phrases, then kept)."""
    key = (id(qc.state.embedder), phrases)
    got = _PHRASE_VECTORS.get(key)
    if got is None:
        vectors = qc.embed_many(list(phrases))
        if vectors is None:
            return None
        if len(_PHRASE_VECTORS) >= 64:
            _PHRASE_VECTORS.clear()
        got = _PHRASE_VECTORS[key] = unit(vectors)
    return got


def _relation_phrases(
    qc: QueryContext, results: Sequence[RankedChunk], nodes: Sequence[RankedNode]
) -> tuple[str, ...]:
    """The name and description of each relation on the paths behind the results, as phrases."""
    g = qc.state.graph
    names: dict[str, None] = {}
    for rc in results:
        if rc.explanation.path is not None:
            names.update(dict.fromkeys(rc.explanation.path.relation_types))
    for rn in nodes:
        if rn.path is not None:
            names.update(dict.fromkeys(rn.path.relation_types))
    out: list[str] = []
    for name in sorted(names):
        rt = g.rel_types.get(name) or next((r for r in g.rel_types.values() if r.inverse == name), None)
        words = name.replace("_", " ").lower()
        out.append(f"{words}: {rt.description}" if rt is not None and rt.description else words)
    return tuple(out)


def semantic_support(
    qc: QueryContext, remainder: Sequence[str], results: Sequence[RankedChunk], nodes: Sequence[RankedNode]
) -> float | None:
    """The best cosine (in [0, 1]) of the question's remainder (its words in order) with the results'
    chunks, the answer nodes and the relations on their paths; 1 when nothing remains to be asked;
    None without an embedder."""
    if qc.state.embedder is None:
        return None
    if not remainder:
        return 1.0
    vec = qc.embed(" ".join(remainder))
    if vec is None:
        return None
    best = 0.0
    chunk_ids = [rc.chunk.id for rc in results]
    if chunk_ids:
        best = max(best, float(np.max(qc.state.chunk_vectors.similarities(vec, chunk_ids))))
    node_ids = [rn.node.id for rn in nodes]
    if node_ids:
        best = max(best, float(np.max(qc.state.node_vectors.similarities(vec, node_ids))))
    phrases = _relation_phrases(qc, results, nodes)
    if phrases:
        known = phrase_vectors(qc, phrases)
        if known is not None and len(known):
            q = unit(vec.reshape(1, -1))[0]
            best = max(best, float(np.max(known @ q)))
    return round(min(max(best, 0.0), 1.0), 4)
