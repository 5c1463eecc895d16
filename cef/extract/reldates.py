"""Time expressions in what someone said, resolved against when they said it.

"I went to a support group yesterday", said on 8 May 2023, happened on 7 May
2023. :func:`resolve_dates` finds the time expressions of a text ("yesterday",
"last Saturday", "two weeks ago", "next month", "in 2022") with the
``dateparser`` library, resolved against the date the text was said, and
returns each with its absolute date and how precise it is (``day``, ``week``,
``month`` or ``year``).

Searching a sentence for dates, ``dateparser`` also reads a few ordinary words
as dates ("we" as Wednesday, "may", "sun"): a one-word match counts only when
the word is a date by itself (a relative day word such as "yesterday", or a
year), and a text is searched at all only when it holds a digit or a word of
dateparser's own English date vocabulary (month and day names, units,
relative words), which keeps the parser off most sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

__all__ = ["ResolvedDate", "resolve_dates"]

#: words that are a date on their own (dateparser resolves them relative to the base date)
_DAY_WORDS = frozenset({"yesterday", "today", "tomorrow", "tonight"})
#: words dateparser may take for a date that mostly are not one, alone
_WORD = re.compile(r"[a-z]+")
_YEAR = re.compile(r"^(1[89]|20)\d\d$")
#: date words that are more often ordinary words ("we may", "the sun"): not enough for a match
_AMBIGUOUS = frozenset(
    {
        "may",
        "sun",
        "sat",
        "wed",
        "mar",
        "march",
        "second",
        "mon",
        "fri",
        "tue",
        "thu",
        "we",
        "after",
        "before",
        "now",
    }
)
#: words that often glue onto a match ("yesterday and"): trimmed from a match's ends
_GLUE = frozenset(
    {"a", "an", "and", "or", "but", "the", "at", "on", "in", "of", "to", "from", "by", "so", "for", "with"}
)


@dataclass(frozen=True)
class ResolvedDate:
    """A time expression of a text and the absolute date it names (``period``: its precision)."""

    text: str
    date: datetime
    period: str

    def iso(self) -> str:
        """The date at its precision: ``2023-05-07``, ``2023-05`` or ``2023``; a week gives its Monday."""
        if self.period == "year":
            return f"{self.date.year:04d}"
        if self.period == "month":
            return f"{self.date.year:04d}-{self.date.month:02d}"
        return self.date.date().isoformat()

    def readable(self) -> str:
        """``7 May 2023``, ``the week of 1 May 2023``, ``May 2023`` or ``2023``."""
        d = self.date
        if self.period == "year":
            return str(d.year)
        if self.period == "month":
            return f"{d:%B} {d.year}"
        day = f"{d.day} {d:%B} {d.year}"
        return f"the week of {day}" if self.period == "week" else day


@cache
def _vocabulary() -> frozenset[str]:
    """dateparser's English date words (months, weekdays, units, relative words), lower case."""
    from dateparser.languages.loader import default_loader

    info: dict[str, Any] = default_loader.get_locale("en").info
    words: set[str] = set()

    def add(value: Any) -> None:
        if isinstance(value, str):
            words.update(w for w in _WORD.findall(value.lower()) if len(w) > 2)
        elif isinstance(value, list | tuple):
            for v in value:
                add(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                add(k)
                add(v)

    for key in (
        *(
            [
                "january",
                "february",
                "march",
                "april",
                "may",
                "june",
                "july",
                "august",
                "september",
                "october",
                "november",
                "december",
            ]
        ),
        *["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
        *["year", "month", "week", "day", "hour", "minute"],
        "relative-type",
        "ago",
        "in",
    ):
        add(info.get(key))
    words -= {"in", "the", "this", "ago", "and"}  # glue words on their own say nothing
    words |= _DAY_WORDS | {"ago", "weekend", "weeks", "months", "years", "days"}
    return frozenset(words)


def _may_hold_date(text: str) -> bool:
    low = text.lower()
    if any(ch.isdigit() for ch in low):
        return True
    vocab = _vocabulary()
    return any(w in vocab for w in _WORD.findall(low))


def _trim(span: str) -> str:
    words = span.split()
    while words and words[-1].lower().strip(".,!?;:") in _GLUE:
        words.pop()
    while words and words[0].lower().strip(".,!?;:") in _GLUE - {"in"}:
        words.pop(0)
    return " ".join(words).strip(".,!?;:")


def _kept(span: str) -> bool:
    """A match worth keeping: more than one word, or one word that is a date by itself."""
    words = [w.strip(".,!?;:") for w in span.lower().split()]
    words = [w for w in words if w]
    if len(words) > 1:
        if words[0] in ("in", "of", "by", "since", "until") and len(words) == 2:
            return True  # "in May", "since 2019"
        return any(
            any(ch.isdigit() for ch in w) or (w in _vocabulary() and w not in _AMBIGUOUS) for w in words
        )
    if not words:
        return False
    w = words[0]
    return w in _DAY_WORDS or bool(_YEAR.match(w))


#: dateparser's periods, and the precision each stands for here
_PERIODS = {
    "year": "year",
    "month": "month",
    "week": "week",
    "day": "day",
    "time": "day",
    "part_of_day": "day",
}


def _period(span: str, at: datetime) -> tuple[datetime, str] | None:
    """The date ``span`` names when said at ``at``, and its precision (None: not a date)."""
    from dateparser.date import DateDataParser

    parser = DateDataParser(
        languages=["en"],
        settings={"RELATIVE_BASE": at, "PREFER_DATES_FROM": "past", "RETURN_TIME_AS_PERIOD": True},
    )
    data = parser.get_date_data(span)
    if data.date_obj is None:
        return None
    return data.date_obj, _PERIODS.get(str(data.period), "day")


def resolve_dates(text: str, at: datetime) -> list[ResolvedDate]:
    """The time expressions of ``text`` with the absolute dates they name when said at ``at``.

    Relative expressions ("yesterday", "last Saturday", "two weeks ago", "next
    month", "last year") resolve against ``at``; absolute ones ("in 2022", "on
    5 June") are read as written. Future-looking words ("next", "tomorrow",
    "in two weeks") resolve forward, the rest to the most recent past date.
    """
    if not text.strip() or not _may_hold_date(text):
        return []
    from dateparser.search import search_dates

    base = at.replace(tzinfo=None)
    plain, where = _plain(text)
    found = search_dates(
        plain,
        languages=["en"],
        settings={"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False},
    )
    out: list[ResolvedDate] = []
    seen: set[str] = set()
    cursor = 0
    for span, _ in found or []:
        span = _trim(span)
        if not span or span.lower() in seen or not _kept(span):
            continue
        seen.add(span.lower())
        resolved = _period(span, base)
        if resolved is None:
            continue
        date, period = resolved
        start = plain.find(span, cursor)
        said = span
        if start >= 0:  # the words as said ("two weekends ago", read as "two weeks ago")
            cursor = start + len(span)
            said = text[where[start] : where[cursor]]
        out.append(ResolvedDate(said, date.replace(hour=0, minute=0, second=0, microsecond=0), period))
    return out


#: spoken forms dateparser does not read, and the ones it does: "a couple of" / "a few" before a
#: unit ("a couple of weeks ago": 2, "a few days ago": 3, the smallest "few" that is not "a couple"),
#: and a weekend as its week ("last weekend", "two weekends ago": the week that holds it)
_SPOKEN = re.compile(
    r"\ba (couple of|few)(?= (?:days|weeks|weekends|months|years)\b)|\bweekend(?=s?\b)", re.IGNORECASE
)
_AS = {"couple of": "2", "few": "3"}


def _plain(text: str) -> tuple[str, list[int]]:
    """``text`` with its :data:`_SPOKEN` forms rewritten for dateparser, and for each of its
    characters (and its end) the position in ``text`` it stands for."""
    parts: list[str] = []
    where: list[int] = []
    last = 0
    for m in _SPOKEN.finditer(text):
        parts.append(text[last : m.start()])
        where.extend(range(last, m.start()))
        new = _AS.get((m.group(1) or "").lower(), "week")
        parts.append(new)
        where.extend([m.start()] * len(new))
        last = m.end()
    parts.append(text[last:])
    where.extend(range(last, len(text) + 1))
    return "".join(parts), where
