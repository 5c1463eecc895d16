"""Which question words name a relation or a type: the one matcher of paths, memory and context.

A question word names a word of a relation's name (``directed_by``) or of a node type
(``SearchIndex``) by general English morphology, no word list (:func:`stem_match`): the same
lemma or Snowball (Porter2) stem, one stem extended by a derivational ending, the head of a closed
compound, a "co-" word. The path scorer (:mod:`cef.retrieve.pathwords` and its users), the
memory's question understanding (:mod:`cef.memory.understand`) and the graph context provider
(:mod:`cef.context.graph_provider`) all ask here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from cef import text

__all__ = ["names", "names_type", "relation_share", "relation_words", "stem_match"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def relation_words(name: str) -> list[str]:
    """``directed_by`` → ``["directed", "by"]``; ``hasGenre`` → ``["has", "genre"]``."""
    return [w.lower() for w in _CAMEL.sub("_", name).replace("-", "_").split("_") if w]


def names(word: str, name_word: str) -> bool:
    """The question word ``word`` names ``name_word`` (a word of a relation or type name), their
    lemmas read from the dictionary lemmatizer (:mod:`cef.extract.lemmas`)."""
    a, b = word.lower(), name_word.lower()
    return stem_match(a, b, _lemma(a), _lemma(b))


def names_type(question_words: Iterable[str], label: str) -> bool:
    """Every word of the type ``label`` (``SearchIndex``: search, index) is named by a question word
    ("which search indexes" names ``SearchIndex``; "medications" names ``Medication``)."""
    asked = list(question_words)
    parts = relation_words(label)
    return bool(parts) and all(any(names(w, p) for w in asked) for p in parts)


def relation_share(question_words: Sequence[str], relation: str) -> float:
    """The share of the relation name's content words (function words left out) that a question
    word names: ``PRESCRIBED_FOR`` and "what was prescribed" give 1.0; 0.0: none."""
    parts = [p for p in relation_words(relation) if p not in text.FUNCTION_WORDS]
    if not parts:
        return 0.0
    return sum(1 for p in parts if any(names(w, p) for w in question_words)) / len(parts)


@lru_cache(maxsize=65_536)
def _lemma(word: str) -> str:
    from cef.extract.lemmas import default_lemmatizer

    got = default_lemmatizer()(word)
    return got[0][1] if len(got) == 1 else word


def stem_match(a: str, b: str, la: str, lb: str) -> bool:
    """``a`` (a question word, lemma ``la``) names ``b`` (a relation word, lemma ``lb``).

    General English morphology, no word list: the same lemma or the same Snowball (Porter2) stem
    ("starred"/"stars", "produced"/"producer"); one stem extended by a derivational ending
    (:func:`_derived`: "acted"/"actors", "written"/"writer", "specialty"/"specializes"); a compound
    whose head, its last part, names ``b`` (English compounds are head-final: a "screenwriter" is a
    writer); a "co-" word names what it joins ("co-wrote" names ``written``). Not a shared first
    syllable: "relies" does not name ``release``, nor "runs" ``runbook``."""
    return la == lb or a == b or _names(a, b, la, lb)


@lru_cache(maxsize=262_144)
def _names(a: str, b: str, la: str, lb: str) -> bool:
    """:func:`stem_match` past equal words and lemmas (kept: a question's words meet the same
    relation words question after question)."""
    if la == lb or a == b:
        return True
    if a.startswith("co-") and len(a) > 4:
        return stem_match(a[3:], b, la[3:] if la.startswith("co-") else la, lb)
    sa, sb = {_stem(a), _stem(la)}, {_stem(b), _stem(lb)}
    if not sa.isdisjoint(sb) or any(_derived(x, y) or _derived(y, x) for x in sa for y in sb):
        return True
    return _compound_head(a, b, lb)


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    return str(_english_stemmer().stemWord(word))


@lru_cache(maxsize=1)
def _english_stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


#: the longest derivational ending :func:`_derived` reads past a stem: one syllable of at most two
#: letters, what the Snowball stemmer leaves of English suffixes ("-er", "-or", "-ty" as "ti")
_DERIVED_REST = 2


def _derived(short: str, long: str) -> bool:
    """``long`` is the stem ``short`` (3+ letters) plus a derivational ending the stemmer leaves
    on: a syllable of at most :data:`_DERIVED_REST` letters ("act" + "or", "special" + "ti"), or
    an "r" after a final vowel ("write" + "r"). A suffix is a syllable, so it holds a vowel; a
    lone consonant or a longer rest makes another word or root ("plan" / "plant", "run" /
    "runbook", "reli" / "releas": the stems differ before the end of either)."""
    if len(short) < 3 or not long.startswith(short) or long == short:
        return False
    rest = long[len(short) :]
    if len(rest) > _DERIVED_REST:
        return False
    return any(c in _VOWELS for c in rest) or (rest == "r" and short[-1] in _VOWELS)


_VOWELS = frozenset("aeiouy")


def _compound_head(a: str, b: str, lb: str) -> bool:
    """``a`` is a closed compound whose head (its last part, 4+ letters after a first part of 3+)
    names ``b``: "screenwriter" names ``written``. The head is matched like a word of its own."""
    if len(a) < 7 or "-" in a:
        return False
    sb = {_stem(b), _stem(lb)}
    for k in range(3, len(a) - 3):
        head = a[k:]
        sh = _stem(head)
        if sh in sb or any(_derived(sh, y) or _derived(y, sh) for y in sb):
            return True
    return False
