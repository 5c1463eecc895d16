"""Words of a text: tokens, stop words and stems, in one place.

Every part of cef that matches words (query terms against node names,
belief claims against each other, relation names against questions) uses
these, so a word is the same word everywhere:

* :func:`words` — lower-case word tokens (letters, digits, inner ``'``/``-``/``_``);
* stop-word sets, composed from named groups: :data:`FUNCTION_WORDS`
  (articles, prepositions, conjunctions, auxiliaries, pronouns),
  :data:`QUESTION_WORDS`, :data:`REQUEST_WORDS` (how a question asks) and
  :data:`REPORTING_WORDS` (how a statement is attributed);
* :func:`stem` — the Snowball (Porter 2) English stemmer (``snowballstemmer``),
  cached; :func:`stem_phrase` stems every word of a phrase;
* :func:`terms` — the distinct stems of a text's content words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import snowballstemmer

__all__ = [
    "FUNCTION_WORDS",
    "QUERY_STOP_WORDS",
    "QUESTION_WORDS",
    "REPORTING_WORDS",
    "REQUEST_WORDS",
    "STOP_WORDS",
    "stem",
    "stem_phrase",
    "terms",
    "words",
]

#: articles, prepositions, conjunctions, auxiliaries and modals, pronouns, determiners
FUNCTION_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "by",
        "from",
        "as",
        "into",
        "about",
        "over",
        "under",
        "between",
        "and",
        "or",
        "but",
        "nor",
        "so",
        "than",
        "then",
        "yet",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "it",
        "its",
        "it's",
        "he",
        "she",
        "they",
        "them",
        "his",
        "her",
        "their",
        "we",
        "our",
        "us",
        "you",
        "your",
        "i",
        "me",
        "my",
        "mine",
        "all",
        "any",
        "each",
        "some",
        "other",
        "no",
        "not",
        "yes",
    ]
)
#: words that ask
QUESTION_WORDS: frozenset[str] = frozenset(
    ["what", "which", "who", "whom", "whose", "when", "where", "why", "how"]
)
#: words a request or question is phrased with, not what it is about
REQUEST_WORDS: frozenset[str] = frozenset(["give", "show", "tell", "first", "next", "now", "currently"])
#: words that attribute a statement to someone ("Ana says ...", "reportedly") or hedge it
REPORTING_WORDS: frozenset[str] = frozenset(
    [
        "says",
        "said",
        "say",
        "told",
        "tells",
        "reported",
        "reports",
        "reportedly",
        "thinks",
        "think",
        "believes",
        "believe",
        "according",
        "feels",
        "feel",
        "seems",
        "seem",
        "apparently",
        "again",
        "also",
        "still",
        "really",
        "very",
        "just",
        "currently",
    ]
)
#: the default stop words: function words and question words
STOP_WORDS: frozenset[str] = FUNCTION_WORDS | QUESTION_WORDS
#: stop words of a question put to the engine
QUERY_STOP_WORDS: frozenset[str] = STOP_WORDS | REQUEST_WORDS

_WORD = re.compile(r"[a-z0-9][a-z0-9'’_\-]*")
_STEMMER = snowballstemmer.stemmer("english")


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (a curly apostrophe becomes a straight one)."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of one word (takes/taking/take → take; medications → medic)."""
    w = word.lower().replace("’", "'").strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    return str(_STEMMER.stemWord(w)) if w else w


def stem_phrase(phrase: str) -> str:
    """Every word of ``phrase`` stemmed, joined by single spaces."""
    return " ".join(stem(w) for w in phrase.lower().split())


def terms(text: str, stop: Iterable[str] = STOP_WORDS, *, min_chars: int = 1) -> list[str]:
    """The distinct stems of the content words of ``text``, in order of first appearance."""
    stop_set = stop if isinstance(stop, frozenset | set) else frozenset(stop)
    out: dict[str, None] = {}
    for w in words(text):
        if len(w) >= min_chars and w not in stop_set:
            out.setdefault(stem(w), None)
    return list(out)
