"""Name normalization, alias keys, mention dedupe and near-duplicate grouping.

``normalize_name`` is the one match key used everywhere (graph node names,
gazetteer entries, query mentions): NFKC, accents folded, lower case,
possessives and leading articles dropped, punctuation turned into spaces,
whitespace collapsed. ``"The Beatles'"``, ``"the  beatles"`` and
``"Beatles"`` share the key ``"beatles"``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from cef.extract.base import Mention

_ARTICLES = ("the ", "a ", "an ")
_POSSESSIVE = re.compile(r"(?<=\w)(?:'s|’s|'|’)(?=\s|$)")
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_PAREN = re.compile(r"\s*\([^)]*\)\s*")
_SPACES = re.compile(r"\s+")


def fold_accents(text: str) -> str:
    """``"Ångström café"`` → ``"Angstrom cafe"`` (combining marks removed after NFKD)."""
    if text.isascii():  # nothing to decompose (the common case: a graph's names are mostly ASCII)
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalize_name(name: str, *, drop_articles: bool = True) -> str:
    """The match key of a name (see module docstring). Empty when nothing word-like is left."""
    s = name if name.isascii() else fold_accents(unicodedata.normalize("NFKC", name))
    s = s.lower().strip()
    s = _POSSESSIVE.sub("", s)
    s = _NON_WORD.sub(" ", s).replace("_", " ")
    s = _SPACES.sub(" ", s).strip()
    if drop_articles:
        for art in _ARTICLES:
            if s.startswith(art) and len(s) > len(art):
                s = s[len(art) :]
                break
    return s


def strip_disambiguation(title: str) -> str:
    """``"WUIN (FM)"`` → ``"WUIN"``; ``"Paris, Texas"`` stays (a comma is part of many names)."""
    stripped = _PAREN.sub(" ", title).strip()
    return stripped or title.strip()


def alias_keys(name: str) -> list[str]:
    """Normalized keys a name may be written as: itself, without a parenthesised
    disambiguation, and without a trailing ``", Region"`` part. Deduplicated, in that order."""
    keys: list[str] = []
    variants = [name, strip_disambiguation(name)]
    variants = [w for v in variants for w in (v, v.split(",")[0])] if "," in name else variants
    for v in dict.fromkeys(variants):  # a plain name is one variant, normalized once
        key = normalize_name(v)
        if key and key not in keys:
            keys.append(key)
    return keys


def is_useful_name(key: str, *, min_chars: int = 2, stopwords: frozenset[str] | None = None) -> bool:
    """A normalized key worth a graph node: not empty, not a bare number, not a stopword."""
    if len(key) < min_chars:
        return False
    if key.replace(" ", "").isdigit():
        return False
    return not (stopwords and key in stopwords)


def dedupe_mentions(mentions: Iterable[Mention]) -> list[Mention]:
    """Drop repeated and overlapping mentions: on overlap keep the longer span, then the
    higher confidence. Output is sorted by start offset."""
    ordered = sorted(mentions, key=lambda m: (-(m.end - m.start), -m.confidence, m.start))
    kept: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for m in ordered:
        if any(m.start < e and s < m.end for s, e in taken):
            continue
        kept.append(m)
        taken.append((m.start, m.end))
    kept.sort(key=lambda m: (m.start, m.end))
    return kept


def unique_keys(mentions: Iterable[Mention]) -> list[str]:
    """The distinct normalized keys of some mentions, in first-seen order."""
    return list(dict.fromkeys(m.normalized for m in mentions if m.normalized))


@dataclass(frozen=True, slots=True)
class SynonymPair:
    """Two names judged the same entity; ``similarity`` is the cosine (use it as edge confidence)."""

    left: str
    right: str
    similarity: float


def near_duplicates(
    names: Sequence[str],
    embeddings: np.ndarray,
    *,
    threshold: float = 0.9,
    max_neighbors: int = 5,
    block: int = 2048,
) -> list[SynonymPair]:
    """Pairs of names whose embeddings have cosine ≥ ``threshold`` (each name keeps at
    most ``max_neighbors`` partners). ``embeddings`` rows align with ``names``; they
    are L2-normalized here. Pairs are reported once (left index < right index),
    best first — record them as SYNONYM edges with ``confidence=similarity``."""
    n = len(names)
    if n != len(embeddings):
        raise ValueError(f"{n} names but {len(embeddings)} embeddings")
    if n < 2:
        return []
    raw = np.asarray(embeddings, dtype=np.float32)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    x: np.ndarray = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    k = min(max_neighbors + 1, n)
    found: dict[tuple[int, int], float] = {}
    for lo in range(0, n, block):
        sims = x[lo : lo + block] @ x.T
        for r in range(sims.shape[0]):
            sims[r, lo + r] = -1.0
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for r in range(sims.shape[0]):
            i = lo + r
            for j in top[r].tolist():
                s = float(sims[r, j])
                if s >= threshold and names[i] != names[j]:
                    key = (i, j) if i < j else (j, i)
                    found[key] = max(found.get(key, -1.0), s)
    pairs = [SynonymPair(names[i], names[j], round(s, 6)) for (i, j), s in found.items()]
    pairs.sort(key=lambda p: -p.similarity)
    return pairs


def group_pairs(pairs: Iterable[SynonymPair]) -> list[set[str]]:
    """Union-find the pairs into groups of names (each group has ≥ 2 names)."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        parent.setdefault(a, a)
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for p in pairs:
        ra, rb = find(p.left), find(p.right)
        if ra != rb:
            parent[rb] = ra
    groups: dict[str, set[str]] = {}
    for a in list(parent):
        groups.setdefault(find(a), set()).add(a)
    return [g for g in groups.values() if len(g) > 1]
