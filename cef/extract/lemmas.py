"""Tokens and their lemmas, for matching question words with relation words."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

__all__ = ["WORD", "Lemmatize", "default_lemmatizer", "dictionary_lemmas", "known_word", "surface_tokens"]

#: text -> (lower-case token, lemma) pairs, punctuation left out
Lemmatize = Callable[[str], list[tuple[str, str]]]

#: a word: letters and digits, with inner apostrophes or hyphens
WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*", re.UNICODE)


def surface_tokens(text: str) -> list[tuple[str, str]]:
    """(token, lemma) pairs without a lemmatizer: the lemma is the lower-case token."""
    return [(w.lower(), w.lower()) for w in WORD.findall(text)]


@lru_cache(maxsize=65_536)
def _lemma(word: str) -> str:
    import simplemma

    return str(simplemma.lemmatize(word, lang="en")).lower()


def dictionary_lemmas(text: str) -> list[tuple[str, str]]:
    """(token, lemma) pairs from simplemma's English dictionary: no tagger, no model to load, a
    dictionary read once (~0.3 s) and a lookup per word ("directed" -> "direct", "written" ->
    "write", "films" -> "film"). A word the dictionary does not know is its own lemma."""
    return [(w, _lemma(w)) for w in (m.lower() for m in WORD.findall(text))]


@lru_cache(maxsize=1)
def default_lemmatizer() -> Lemmatize:
    """The dictionary lemmatizer; lower-case tokens when simplemma is not installed."""
    try:
        import simplemma  # noqa: F401
    except ImportError:
        return surface_tokens
    return dictionary_lemmas


@lru_cache(maxsize=65_536)
def known_word(word: str) -> bool:
    """Whether simplemma's English dictionary holds ``word`` (a lower-case token); False when
    simplemma is not installed."""
    try:
        import simplemma
    except ImportError:
        return False
    return bool(simplemma.is_known(word, lang="en"))
