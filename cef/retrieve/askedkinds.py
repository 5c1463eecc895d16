"""The words of a question that say what kind of answer it asks, read with general English only
(:mod:`cef.retrieve.relevance`): "what *year*", "the *person* who", "what is the *job* of" name no
thing the knowledge base must hold (its text says "in 2019", "an oceanographer"); nor does an
adverb ("*physically* kept"). "What *year*" is held where a result shows a year, "how *tall* is" /
"how *long* are" where it shows a quantity in a unit of that dimension ("240 m", "15 minutes"; "how
*old* is": an age or the year it was built or born), "how *many* X" where it shows a number of X, "how
*much*" where it shows a sum of money when the question speaks of money ("how much do we *pay*", "how
much *revenue*"; "how much *time*": no sum), else any quantity ("how much memory"): a result that does
not show it does not answer."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cef.retrieve.english import (
    ANSWER_KINDS,
    ASKED_KIND,
    MEASURE_SHOWN,
    MONEY,
    MONEY_WORDS,
    QUANTITY,
    YEAR,
    adverb,
    count_of,
    name_shown,
)
from cef.retrieve.questionterms import Term, read_terms

__all__ = ["AMOUNT", "COUNTED", "NAMED", "asked_terms", "asks_title", "name_asked", "named_nouns"]

#: the key under which "how *many* X" asks a result to show a count of X (no word of the question)
COUNTED = "#count"
#: the key under which "what is the *name* of X" asks a result to show a name (or a title)
NAMED = "#name"
_NAME_ASKED = re.compile(
    r"\bwhat(?:['’]s|\s+is|\s+was|\s+are|\s+were)\s+the\s+(?:names?|titles?)\s+of\b"
    r"|\bwhat(?:['’]s|\s+is|\s+was|\s+are|\s+were)\s+(?:[\w.'’-]+\s+){0,3}?[\w-]+['’]s\s+(?:names?|titles?)\W*$",
    re.I,
)
#: the key under which "how *much*" asks a result to show an amount (a sum of money, a quantity)
AMOUNT = "#amount"
_HOW_MUCH = re.compile(r"\bhow\s+much\b(?:\s+([\w-]+))?", re.I)
#: "how much *time*", "how much *more*": a duration or a comparison, no amount to show
_COMPARED = frozenset(["time", "more", "less", "of"])
#: "how much *does* it weigh": no noun says what is measured
_VERBAL = frozenset(
    ["do", "does", "did", "is", "are", "was", "were", "will", "would", "can", "could", "should"]
)
_HOW_MANY = re.compile(r"\bhow\s+many\s+([\w-]+)(?:\s+([\w-]+))?", re.I)


def asked_terms(
    question: str, heads: set[str], phrase_words: int
) -> tuple[dict[str, Term], dict[str, re.Pattern[str]]]:
    """The question's content words (:func:`~cef.retrieve.questionterms.read_terms`), the words for
    the kind of answer and the adverbs marked as naming no thing, and the words a result holds only
    where it shows what they ask (by match key: the pattern it must hold)."""
    terms = read_terms(question, heads, phrase_words)
    kinds = {w.lower() for pair in ASKED_KIND.findall(question) for w in pair if w}
    shown: dict[str, re.Pattern[str]] = {}
    for t in terms.values():
        kind = t.form in kinds and t.lemma in ANSWER_KINDS
        t.names_thing = t.names_thing and (t.proper or not (kind or adverb(t.form)))
        if kind and t.lemma in ("year", "date"):
            shown[t.key] = YEAR
        elif t.form in MEASURE_SHOWN and re.search(
            rf"\bhow\s+{t.form}\s+(?:is|are|was|were)\b", question, re.I
        ):
            shown[t.key], t.names_thing = MEASURE_SHOWN[t.form], False
    many = _HOW_MANY.search(question)
    # "how many *times*" asks how often: the text tells each time, it need not say the number
    if many is not None and many.group(1).lower() not in (
        "times",
        "time",
    ):  # "how many grey seals were counted": a result shows a number of seals
        by_form = {t.form: t for t in terms.values()}
        counted = [by_form[w.lower()] for w in many.groups() if w and w.lower() in by_form]
        if counted:
            shown[COUNTED] = count_of([k for t in counted for k in (t.key, t.form)])  # "people": person
    if _NAME_ASKED.search(question) or _CALLED.search(question):
        shown[NAMED] = name_asked(question)
    amount = _amount(question)
    if amount is not None:
        shown[AMOUNT] = amount
    return terms, shown


_NAME_OF = re.compile(
    r"\b(?:names?|titles?)\s+of\s+(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+|[\w-]+['’]s\s+)?((?:[\w-]+\s+){0,2}[\w-]+)"
    r"|['’]s\s+((?:[\w-]+\s+){0,1}[\w-]+)['’]s\s+names?\b|\b(?:what|which)(?:['’]s|\s+\w+)\s+(?:[\w-]+\s+){0,3}?[\w-]+['’]s\s+names?",
    re.I,
)


#: "what is Jon's dance studio *called*": the name of the thing between the copula and "called"
_CALLED = re.compile(
    r"\bwhat(?:['’]s|\s+is|\s+was|\s+are|\s+were)\s+((?:[\w.'’-]+\s+){0,5}?[\w'’-]+)\s+(?:called|named)\W*$",
    re.I,
)

#: determiners, possessives and relative words: no noun of the thing named
_NOT_NOUNS = frozenset(
    ["the", "a", "an", "this", "these", "those", "who", "that", "which", "where", "when", "whose", "whom",
     "his", "her", "their", "its", "my", "your", "our"]
)  # fmt: skip


def name_asked(question: str, speakers: Sequence[str] = ()) -> re.Pattern[str]:
    """What "what is the *name* of X" asks a result to show (:func:`~cef.retrieve.english.name_shown`):
    a name by X's nouns, not one the question or a dialogue's ``speakers`` say."""
    return name_shown([question, *speakers], named_nouns(question), asks_title(question))


def asks_title(question: str) -> bool:
    """Whether "what is the *title* of" asks a title (a quoted one answers), not a name."""
    return re.search(r"\btitles?\b", question, re.I) is not None


def named_nouns(question: str) -> list[str]:
    """The nouns whose name "what is the *name* of X" or "what is X *called*" asks: the words of X
    after its determiner or possessor ("the name of John's *wife*", "the title of the *inspiring
    book*", "Melanie's *husband's* name", "what is Jon's *dance studio* called"); a name stands right
    after one of them in a text that gives it."""
    m = _NAME_OF.search(question)
    if m is not None:
        got = m.group(1) or m.group(2) or ""
    else:
        called = _CALLED.search(question)
        if called is None:
            return []
        got = called.group(1)
    return [w.lower() for w in got.split() if w.islower() and w not in _NOT_NOUNS]


def _amount(question: str) -> re.Pattern[str] | None:
    """What "how *much*" asks a result to show: a sum of money when the question speaks of money
    ("how much do we *pay* CardNet", "how much *revenue* did we lose"), else a quantity ("how much
    memory"); nothing for "how much *time*" or "how much *more*" (a duration, a comparison)."""
    much = _HOW_MUCH.search(question)
    if much is None:
        return None
    following = (much.group(1) or "").lower()
    if following in _COMPARED or following.endswith("er"):
        return None  # "how much *time* did she spend", "how much *longer*"
    if {w.lower() for w in re.findall(r"[\w-]+", question[much.start(0) :])} & MONEY_WORDS:
        return MONEY
    if not following or following in _VERBAL:
        return None  # "how much does X weigh": the verb says what is measured, read elsewhere
    return QUANTITY
