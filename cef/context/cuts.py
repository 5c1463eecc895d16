"""Cutting a text to fit: sentence boundaries first, then word boundaries, marked as truncated.

:func:`split_sentences` splits prose without losing a character;
:func:`cut_points` lists where a text may be cut, longest prefix first;
:class:`TextCuts` offers an item's cut forms to the packer
(:mod:`cef.context.budget`), which keeps the longest that fits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, overload

__all__ = [
    "TRUNCATION_MARKER",
    "LazyForms",
    "TextCuts",
    "cut_points",
    "cut_text",
    "first_fit",
    "marked",
    "split_sentences",
]

#: appended to a text cut to fit the budget (counted in the budget)
TRUNCATION_MARKER = " …[truncated]"

# ------------------------------------------------------------------ sentences
_ABBREVIATIONS = frozenset(
    [
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "cf",
        "fig",
        "no",
        "approx",
        "dept",
        "inc",
        "ltd",
        "co",
        "al",
    ]
)
_BOUNDARY = re.compile(r"([.!?…]+[\"'”’)\]]*)(\s+)|(\n\s*)")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences; ``"".join(result) == text``.

    A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with closing quotes or
    brackets) followed by whitespace, unless the word before the dot is a
    common abbreviation (``Dr.``, ``e.g.``) or a single letter; a line break
    also ends one. Each piece keeps the whitespace that follows it.
    """
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end()
        if m.group(3) is None:
            punct_start = m.start(1)
            word = re.search(r"([\w.]+)$", text[start:punct_start] + m.group(1).rstrip("\"'”’)]"))
            w = (word.group(1) if word else "").lower().rstrip(".")
            if m.group(1).startswith(".") and (w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha())):
                continue
            nxt = text[end : end + 1]
            if nxt and nxt.islower():
                continue
        if end > start and text[start:end].strip():
            pieces.append(text[start:end])
            start = end
    if start < len(text):
        if pieces and not text[start:].strip():
            pieces[-1] += text[start:]
        else:
            pieces.append(text[start:])
    return pieces


def cut_points(text: str, *, words_fallback: bool = True) -> list[int]:
    """Where ``text`` may be cut, longest prefix first: after each sentence but the last, then
    (with ``words_fallback``) after each word of the first sentence but its last."""
    sentences = split_sentences(text)
    ends: list[int] = []
    at = 0
    for s in sentences[:-1]:
        at += len(s)
        ends.append(at)
    points = ends[::-1]
    if words_fallback:
        first = sentences[0] if sentences else text
        words = [m.end() for m in re.finditer(r"\S+", first)]
        points.extend(reversed(words[:-1]))
    return points


def marked(prefix: str) -> str:
    """A cut text: the prefix without trailing space, then :data:`TRUNCATION_MARKER`."""
    return prefix.rstrip() + TRUNCATION_MARKER


def cut_text(text: str, fits: Callable[[str], bool], *, words_fallback: bool = True) -> str | None:
    """The longest marked prefix of ``text`` for which ``fits`` holds, or None.

    Tries whole sentences first; when not even the first sentence fits, whole
    words. The result ends with :data:`TRUNCATION_MARKER`.
    """
    points = cut_points(text, words_fallback=words_fallback)
    best = first_fit(len(points), lambda i: fits(marked(text[: points[i]])))
    return None if best is None else marked(text[: points[best]])


def first_fit(n: int, ok: Callable[[int], bool]) -> int | None:
    """The smallest i in 0..n-1 with ok(i), assuming ok is monotone (false..., true...); None if none.

    The last one is tried first: when even it does not fit, nothing does.
    """
    if n == 0 or not ok(n - 1):
        return None
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


class LazyForms(Sequence[Any]):
    """Shorter forms of an item, each built when read (:meth:`_form`); a slice builds its forms."""

    def _form(self, i: int) -> Any:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._form(range(len(self))[i])


class TextCuts(LazyForms):
    """The shorter forms of an item whose text field is cut at :func:`cut_points` (longest first).

    Each form is built when asked for; it ends with the marker and is flagged ``truncated``.
    """

    def __init__(self, item: Any, field: str) -> None:
        self.item = item
        self.field = field
        self.text: str = getattr(item, field)
        self.points = cut_points(self.text)

    def __len__(self) -> int:
        return len(self.points)

    def _form(self, i: int) -> Any:
        cut = marked(self.text[: self.points[i]])
        return self.item.model_copy(update={self.field: cut, "truncated": True})
