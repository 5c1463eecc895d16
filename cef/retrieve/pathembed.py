"""The embedding half of :class:`~cef.retrieve.pathscore.PathScorer`: a path's cosine terms.

A path is compared with the masked question by three texts (:meth:`PathScorer.texts_of`: its
words, its distinct relations, its last hop's example answers). Warm-up embeds the texts of the
paths the schema allows up to 3 hops; a deeper path is first guessed from lookups
(:meth:`PathEmbedding._estimate`), then scored from vectors composed of its parts
(:meth:`PathEmbedding.composed_vectors`). Each text's cosine with the question is computed once
per ranking (:class:`_Cosines`): a big graph's hundreds of candidate paths share most of their
relation and answer texts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cef.retrieve.pathtypes import EmbedMany
from cef.retrieve.pathwords import Hop, RelationPath
from cef.retrieve.presets import PathSettings

__all__ = ["PathEmbedding"]


class _Cosines:
    """Cosines of embedded texts with one question vector, each computed once."""

    def __init__(self, qv: np.ndarray, vectors: dict[str, np.ndarray]) -> None:
        self.qv = qv
        self.vectors = vectors
        self.got: dict[str, float] = {}

    def __call__(self, text: str) -> float | None:
        """The text's cosine; None while the text is not embedded."""
        got = self.got.get(text)
        if got is None:
            v = self.vectors.get(text)
            if v is None:
                return None
            got = self.got[text] = float(v @ self.qv)
        return got


class PathEmbedding:
    """The embedding half of :class:`~cef.retrieve.pathscore.PathScorer` (a base it inherits); the
    fields are the scorer's."""

    settings: PathSettings
    vectors: dict[str, np.ndarray]

    def texts_of(self, path: RelationPath) -> tuple[str, str, str]:
        raise NotImplementedError  # PathScorer.texts_of

    def _vectors(self, texts: Sequence[str], embed: EmbedMany) -> np.ndarray | None:
        raise NotImplementedError  # PathScorer._vectors

    def _with_vectors(
        self, qv: np.ndarray, paths: Sequence[RelationPath], lexical: list[float], embed: EmbedMany
    ) -> list[tuple[float, RelationPath]]:
        """Word scores plus the embedding terms. A path whose texts are embedded (warm-up embeds
        those of the paths the schema allows, up to 3 hops) is scored from them; a deeper one, when
        a quick guess (:meth:`_estimate`) puts it within ``score_margin`` + ``estimate_slack``
        of the best embedded path, from vectors composed of its parts (:meth:`_composed`), so that
        answering embeds no path text beyond the few hop texts a graph has; the others are left
        out. The ``embed_limit`` best of the composed are then embedded and scored exactly (default
        none: the composition ranked MetaQA's and the services' paths the same, at no encoder call)."""
        s = self.settings
        texts = [self.texts_of(p) for p in paths]
        cos = _Cosines(qv, self.vectors)
        out: list[tuple[float, RelationPath]] = []
        fresh: list[int] = []
        for i, (p, t) in enumerate(zip(paths, texts, strict=True)):
            full, distinct, answer = cos(t[0]), cos(t[1]), cos(t[2])
            if full is not None and distinct is not None and answer is not None:
                out.append((lexical[i] + (full + s.distinct * distinct + s.answer * answer), p))
            else:
                fresh.append(i)
        if not fresh:
            return out
        best = max((x for x, _ in out), default=None)
        if best is not None:  # first a bound from lookups alone: only paths that may come near the best
            floor = best - s.score_margin - s.estimate_slack
            fresh = [i for i in fresh if lexical[i] + self._estimate(cos, paths[i], texts[i]) >= floor]
        hops = dict.fromkeys(h for i in fresh for h in paths[i])
        if self._vectors([x for h in hops for x in self.texts_of((h,))], embed) is None:
            out.extend((lexical[i], paths[i]) for i in fresh)
            return out
        guess = {i: lexical[i] + self._composed(qv, paths[i], texts[i]) for i in fresh}
        exact = sorted(fresh, key=lambda i: -guess[i])[: s.embed_limit]
        if exact and self._vectors([x for i in exact for x in texts[i]], embed) is not None:
            out.extend((lexical[i] + self._terms(qv, texts[i]), paths[i]) for i in exact)
            done = set(exact)
            fresh = [i for i in fresh if i not in done]
        out.extend((guess[i], paths[i]) for i in fresh)
        return out

    def _terms(self, qv: np.ndarray, texts: tuple[str, str, str]) -> float:
        """The embedding terms of a path whose three texts are embedded."""
        full, distinct, answer = (float(self.vectors[t] @ qv) for t in texts)
        return full + self.settings.distinct * distinct + self.settings.answer * answer

    def _estimate(self, cos: _Cosines, path: RelationPath, texts: tuple[str, str, str]) -> float:
        """A quick guess at the embedding terms of a path whose texts are not embedded (dictionary
        lookups only): each text's cosine is its own, else its longest embedded prefix's."""
        n = self._embedded_prefix(path)
        prefix = self.texts_of(path[:n]) if n else None
        parts = []
        for k, t in enumerate(texts):
            c = cos(t)
            if c is None and prefix is not None:
                c = cos(prefix[k])
            parts.append(c if c is not None else 0.0)
        return parts[0] + self.settings.distinct * parts[1] + self.settings.answer * parts[2]

    def _composed(self, qv: np.ndarray, path: RelationPath, texts: tuple[str, str, str]) -> float:
        """The embedding terms of a path whose texts are not embedded, from :meth:`composed_vectors`."""
        full, distinct, answer = (float(v @ qv) for v in self.composed_vectors(path))
        return full + self.settings.distinct * distinct + self.settings.answer * answer

    def composed_vectors(self, path: RelationPath) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectors for the three texts of ``path`` (:meth:`texts_of`): each one's own when it is
        embedded, else composed of embedded parts. The encoder mean-pools its tokens, so a text's
        vector is close to the word-weighted mean of its parts' vectors: the path's words are its
        longest embedded prefix's words plus each later hop's (:meth:`hop_text`), its distinct
        relations are each relation's words, and its answer text is its last hop's. Each hop's own
        texts (``texts_of((hop,))``) must be embedded."""
        vec = self.vectors
        texts = self.texts_of(path)

        def mean(parts: Sequence[str]) -> np.ndarray:
            w = np.asarray([max(1, len(t.split())) for t in parts], dtype=np.float32)
            v = (w[:, None] * np.stack([vec[t] for t in parts])).sum(axis=0)
            return v / max(float(np.linalg.norm(v)), 1e-12)

        full_v = vec.get(texts[0])
        if full_v is None:
            n = self._embedded_prefix(path)
            head = [self.texts_of(path[:n])[0]] if n else []
            full_v = mean(head + [self.texts_of((h,))[0] for h in path[n:]])
        distinct_v = vec.get(texts[1])
        if distinct_v is None:
            rels = dict.fromkeys(h.relation for h in path)
            distinct_v = mean([self.texts_of((Hop(r, True),))[1] for r in rels])
        return full_v, distinct_v, vec[self.texts_of(path[-1:])[2]]

    def _embedded_prefix(self, path: RelationPath) -> int:
        """Hops of the longest proper prefix of ``path`` whose words are embedded (0: none)."""
        return next((n for n in range(len(path) - 1, 0, -1) if self.texts_of(path[:n])[0] in self.vectors), 0)
