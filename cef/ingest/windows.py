"""Texts longer than an extractor takes, read in windows (spaCy refuses a million characters, E088)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from cef.extract.base import Mention

__all__ = ["in_windows", "windows"]


def windows(text: str, size: int) -> list[tuple[int, str]]:
    """``text`` cut into pieces of at most ``size`` characters, each ending at whitespace where one
    lies in its second half, as ``(offset, piece)``; together they are the text."""
    out: list[tuple[int, str]] = []
    start = 0
    while True:
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            end = cut if cut > start else end
        out.append((start, text[start:end]))
        if end >= len(text):
            return out
        start = end


def in_windows(
    extract: Callable[[list[str], list[str | None]], list[list[Mention]]],
    texts: Sequence[str],
    titles: Sequence[str | None],
    size: int,
) -> list[list[Mention]]:
    """``extract(texts, titles)`` for texts of any length: each text is read in :func:`windows` of
    ``size`` characters and its mentions' offsets moved back to their place in the whole text."""
    pieces: list[str] = []
    owners: list[tuple[int, int]] = []  # (text index, offset of the piece in it)
    for i, text in enumerate(texts):
        for offset, piece in windows(text, size):
            pieces.append(piece)
            owners.append((i, offset))
    found = extract(pieces, [titles[i] for i, _ in owners])
    out: list[list[Mention]] = [[] for _ in texts]
    for (i, offset), mentions in zip(owners, found, strict=True):
        out[i].extend(
            m
            if m.start < 0 or not offset
            else dataclasses.replace(m, start=m.start + offset, end=m.end + offset)
            for m in mentions
        )
    return out
