"""Tokens and their lemmas, for matching question words with relation words."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

__all__ = ["WORD", "Lemmatize", "default_lemmatizer", "surface_tokens"]

#: text -> (lower-case token, lemma) pairs, punctuation left out
Lemmatize = Callable[[str], list[tuple[str, str]]]

#: a word: letters and digits, with inner apostrophes or hyphens
WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*", re.UNICODE)


def surface_tokens(text: str) -> list[tuple[str, str]]:
    """(token, lemma) pairs without a lemmatizer: the lemma is the lower-case token."""
    return [(w.lower(), w.lower()) for w in WORD.findall(text)]


@lru_cache(maxsize=1)
def default_lemmatizer() -> Lemmatize:
    """spaCy's lemmas when the ``nlp`` extra is installed, else lower-case tokens."""
    try:
        import spacy

        from cef.extract.spacy_ner import DEFAULT_MODEL

        nlp = spacy.load(DEFAULT_MODEL, exclude=["parser", "ner"])
    except (ImportError, OSError):
        return surface_tokens

    def lemmas(text: str) -> list[tuple[str, str]]:
        return [(t.text.lower(), t.lemma_.lower()) for t in nlp(text) if not (t.is_punct or t.is_space)]

    return lemmas
