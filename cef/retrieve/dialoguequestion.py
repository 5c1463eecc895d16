"""How a question to a conversation reads: whether it asks about several occasions, when, or a
plan; the calendar dates and the one speaker it names; the question without the speakers' names.

General English only (no data set's vocabulary); :mod:`cef.retrieve.dialogue` weighs the turns by
what these say.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from cef.retrieve.english import COPULAS, HAVE, MODALS
from cef.text import QUERY_STOP_WORDS, words

__all__ = [
    "asked_dates",
    "asks_ahead",
    "asks_several",
    "asks_when",
    "named_speaker",
    "same_date",
    "without_speakers",
]


#: question words that ask for what (or where, who) happened, and those that ask for a thing
_WH = frozenset(["what", "which", "where", "who"])
_WH_THING = frozenset(["what", "which"])
_VERBAL = MODALS | COPULAS | HAVE


def asks_several(question: str) -> bool:
    """Whether a question asks about several occasions, by general English: a count ("how many"),
    "both", a present perfect after its wh-word ("what has Melanie painted", "where have they
    camped"), or a plural noun right after "what" / "which" (one word may come between: "what
    European countries") followed by its clause's auxiliary or "of" (a plural, not a verb:
    "what books has she read", not "what motivates her")."""
    toks = words(question)
    if not toks:
        return False
    if "both" in toks or any(pair == ("how", "many") for pair in itertools.pairwise(toks)):
        return True
    if toks[0] not in _WH:
        return False
    for i, t in enumerate(toks[1:-1], 1):
        if t in MODALS:
            break  # "what did she have for dinner": the main verb is "have"
        if t in ("has", "have") and toks[i + 1] != "to":
            return True
    if toks[0] in _WH_THING:  # the noun, then its clause's auxiliary: "what books has", "which types of"
        for t, after in itertools.pairwise(toks[1:4]):
            if t in _VERBAL:
                return False
            if _plural(t) and (after in _VERBAL or after == "of"):
                return True
    return False


#: nouns of time a "what" / "which" question asks for ("what year", "which month")
_TIME_NOUNS = frozenset(["year", "month", "day", "date", "week", "weekend"])


def asks_when(question: str) -> bool:
    """Whether a question asks when something happened, by general English: "when" opens it or a
    clause of it ("… and when did she …"), "what" / "which" asks for a time ("what year", "which
    month"), or "how long ago"."""
    toks = words(question)
    if toks[:1] == ["when"] or any(a in ("and", "but") and b == "when" for a, b in itertools.pairwise(toks)):
        return True
    if any(a in _WH_THING and b in _TIME_NOUNS for a, b in itertools.pairwise(toks)):
        return True
    return any(t == ("how", "long", "ago") for t in zip(toks, toks[1:], toks[2:], strict=False))


#: words that put a question's event ahead of the time it is asked about ("when will", "is going to")
_AHEAD = frozenset(["will", "going", "plan", "plans", "planning"])


def asks_ahead(question: str) -> bool:
    """Whether a question asks about something planned ("when will …", "when is she going to …",
    "when does he plan to …") rather than something that happened."""
    return any(t in _AHEAD for t in words(question))


def _plural(word: str) -> bool:
    """A regular English plural noun, by its ending ("books", "cities"; not "glass", "bus", "this")."""
    return len(word) > 3 and word.isalpha() and word.endswith("s") and not word.endswith(("ss", "us", "is"))


_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")


def asked_dates(question: str) -> list[tuple[int | None, int | None, int | None]]:
    """The calendar dates a question names ("in June", "on 13 October 2023", "in 2022") as
    (year, month, day), None where the question leaves a part open. Relative expressions are
    left out: a question is asked after the conversation, its "last week" is not a turn's."""
    from datetime import datetime

    from cef.extract.reldates import resolve_dates

    out: list[tuple[int | None, int | None, int | None]] = []
    for r in resolve_dates(question, datetime(2000, 1, 1)):
        low = r.text.lower()
        if any(w in low.split() for w in ("ago", "last", "next", "this", "yesterday", "today", "tomorrow")):
            continue
        year = r.date.year if _YEAR.search(r.text) else None
        if r.period == "year":
            out.append((year, None, None))
        elif r.period == "month":
            out.append((year, r.date.month, None))
        else:
            out.append((year, r.date.month, r.date.day))
    return out


def same_date(iso: str, asked: tuple[int | None, int | None, int | None]) -> bool:
    """Whether an ISO date (``2023-05-07``, ``2023-05`` or ``2023``) falls within the asked date."""
    parts = [int(x) for x in iso.split("-")[:3] if x.isdigit()]
    for have, want in zip(parts, asked, strict=False):
        if want is not None and have != want:
            return False
    return all(want is None for want in asked[len(parts) :])


def without_speakers(question: str, speakers: frozenset[str]) -> str:
    """The question without the speakers' names (and their possessive ``'s``); the question itself
    when nothing else is left."""
    names = sorted((sp for sp in speakers if sp.strip()), key=len, reverse=True)
    if not names:
        return question
    pattern = r"\b(?:" + "|".join(re.escape(sp) for sp in names) + r")(?:['’]s)?\b"
    rest = " ".join(re.sub(pattern, " ", question, flags=re.IGNORECASE).split())
    return rest if any(w not in QUERY_STOP_WORDS for w in words(rest)) else question


_NAME_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def named_speaker(question: str, speakers: Iterable[str]) -> str | None:
    """The one speaker whose name the question says (every word of it, or its first word: "Alice" names
    "Alice Moss"; any case, a possessive 's aside), else None (no speaker named, or several). The one
    reading of a named speaker, for the dialogue stage and the relevance credit alike."""
    said = set(_NAME_WORD.findall(re.sub(r"['’]s\b", "", question.lower())))
    named = [
        sp
        for sp in dict.fromkeys(speakers)
        if (parts := _NAME_WORD.findall(sp.lower())) and (set(parts) <= said or parts[0] in said)
    ]
    return named[0] if len(named) == 1 else None
