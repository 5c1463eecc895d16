"""Split text into chunks by structure (headings, paragraphs, sentences) under a size limit.

Every chunk is a contiguous slice ``text[start:end]`` of the input, so its
character offsets point back into the source. Chunks never cut a word: a
single word longer than the limit becomes its own (oversized) chunk and a
warning says so. Consecutive chunks of one section share up to ``overlap``
of text, starting at a word boundary.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Section", "TextSplitter", "markdown_sections", "split_front_matter"]

_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_WORD = re.compile(r"\S+")
_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


@dataclass(frozen=True, slots=True)
class Section:
    """A heading-delimited slice of a Markdown text; ``headings`` is the trail (``("Guide", "Install")``)."""

    start: int
    end: int
    headings: tuple[str, ...]


class TextSplitter:
    """Greedy structural splitter.

    ``max_size`` and ``overlap`` are in characters, or in tokens when ``counter``
    (a ``str -> int`` callable such as a tokenizer's length) is given.
    """

    def __init__(self, max_size: int, overlap: int = 0, counter: Callable[[str], int] | None = None) -> None:
        if max_size < 1:
            raise ValueError(f"max_size must be positive, not {max_size}")
        if not 0 <= overlap < max_size:
            raise ValueError(f"overlap must be within 0..{max_size - 1}, not {overlap}")
        self.max_size = max_size
        self.overlap = overlap
        self._counter = counter

    def measure(self, text: str) -> int:
        return self._counter(text) if self._counter is not None else len(text)

    def split(
        self, text: str, start: int = 0, end: int | None = None
    ) -> tuple[list[tuple[int, int]], list[str]]:
        """Chunk ``text[start:end]``: the ``(start, end)`` offsets of each chunk, and warnings."""
        end = len(text) if end is None else end
        warnings: list[str] = []
        pieces = self._pieces(text, start, end, warnings)
        chunks: list[tuple[int, int]] = []
        i = 0
        carry: int | None = None  # where the overlap with the previous chunk starts
        while i < len(pieces):
            first_start, first_end = pieces[i]
            c_start = first_start
            if carry is not None:
                c_start = self._fit_start(text, carry, first_start, first_end)
            c_end = first_end
            j = i + 1
            while j < len(pieces) and self.measure(text[c_start : pieces[j][1]]) <= self.max_size:
                c_end = pieces[j][1]
                j += 1
            if j < len(pieces) and j - 1 > i and _is_heading(text, *pieces[j - 1]):
                j -= 1  # a heading starts the next chunk rather than ending this one
                c_end = pieces[j - 1][1]
            chunks.append((c_start, c_end))
            heading_only = j == i + 1 and _is_heading(text, *pieces[i])
            more = j < len(pieces) and self.overlap > 0 and not heading_only
            carry = self._overlap_start(text, c_start, c_end) if more else None
            i = j
        return chunks, warnings

    # -- pieces: the atoms that chunks are packed from ---------------------------------------

    def _pieces(self, text: str, start: int, end: int, warnings: list[str]) -> list[tuple[int, int]]:
        pieces: list[tuple[int, int]] = []
        for b_start, b_end in _blocks(text, start, end):
            if self.measure(text[b_start:b_end]) <= self.max_size:
                pieces.append((b_start, b_end))
                continue
            for s_start, s_end in _sentences(text, b_start, b_end):
                if self.measure(text[s_start:s_end]) <= self.max_size:
                    pieces.append((s_start, s_end))
                    continue
                for match in _WORD.finditer(text, s_start, s_end):  # packing regroups the words
                    if self.measure(match.group(0)) > self.max_size:
                        warnings.append(
                            f"a single word of {match.end() - match.start()} characters at offset "
                            f"{match.start()} exceeds the chunk size {self.max_size}; kept whole in one chunk"
                        )
                    pieces.append(match.span())
        return pieces

    # -- overlap -----------------------------------------------------------------------------

    def _overlap_start(self, text: str, c_start: int, c_end: int) -> int | None:
        """The earliest word start after ``c_start`` whose tail ``text[w:c_end]`` fits the overlap."""
        starts = [m.start() for m in _WORD.finditer(text, c_start, c_end) if m.start() > c_start]
        lo, hi = 0, len(starts)
        while lo < hi:  # the tail shrinks as w grows: find the first that fits
            mid = (lo + hi) // 2
            if self.measure(text[starts[mid] : c_end]) <= self.overlap:
                hi = mid
            else:
                lo = mid + 1
        return starts[lo] if lo < len(starts) else None

    def _fit_start(self, text: str, carry: int, first_start: int, first_end: int) -> int:
        """Shrink the overlap (moving its start to later words) until the first piece fits with it."""
        if self.measure(text[carry:first_end]) <= self.max_size:
            return carry
        starts = [m.start() for m in _WORD.finditer(text, carry, first_start)]
        idx = bisect_left(starts, carry)
        for w in starts[idx:]:
            if self.measure(text[w:first_end]) <= self.max_size:
                return w
        return first_start


def _is_heading(text: str, start: int, end: int) -> bool:
    return "\n" not in text[start:end] and _ATX.match(text[start:end]) is not None


def _closes(fence: str, match: re.Match[str] | None) -> bool:
    """Whether a fence line ends the open code block (same character, at least as long)."""
    return match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)


def _blocks(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Paragraph spans (blank-line separated, trimmed); a fenced code block stays one block."""
    blocks: list[tuple[int, int]] = []
    b_start: int | None = None
    b_end = start
    fence: str | None = None
    for match in _LINE.finditer(text, start, end):
        line = match.group(0)
        stripped = line.strip()
        fence_match = _FENCE.match(line)
        if fence is not None:
            if _closes(fence, fence_match):
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        elif not stripped:
            if b_start is not None:
                blocks.append((b_start, b_end))
                b_start = None
            continue
        if b_start is None:
            b_start = match.start() + (len(line) - len(line.lstrip()))
        b_end = match.start() + len(line.rstrip())
    if b_start is not None:
        blocks.append((b_start, b_end))
    return [(s, e) for s, e in blocks if e > s]


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    s_start = start
    for match in _SENTENCE_END.finditer(text, start, end):
        out.append((s_start, match.end()))
        s_start = match.end()
        while s_start < end and text[s_start].isspace():
            s_start += 1
    if s_start < end:
        out.append((s_start, end))
    return [(s, e) for s, e in out if text[s:e].strip()]


def split_front_matter(text: str) -> tuple[str | None, int]:
    """A leading ``---`` YAML front-matter block: its text and where the body starts (0 if none)."""
    if not text.startswith("---"):
        return None, 0
    first = text.find("\n")
    if first < 0 or text[:first].strip() != "---":
        return None, 0
    pos = first + 1
    for match in _LINE.finditer(text, pos):
        if match.group(0).strip() in ("---", "..."):
            return text[pos : match.start()], match.end()
    return None, 0


def markdown_sections(text: str, start: int = 0) -> list[Section]:
    """Split Markdown at ATX headings (``#`` … ``######``) outside fenced code.

    A section holding only its heading is merged into the next one, so headings
    are never chunks of their own.
    """
    raw: list[Section] = []
    trail: list[tuple[int, str]] = []
    sec_start = start
    fence: str | None = None
    for match in _LINE.finditer(text, start):
        line = match.group(0).rstrip("\n")
        fence_match = _FENCE.match(line)
        if fence is not None:
            if _closes(fence, fence_match):
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            continue
        heading = _ATX.match(line)
        if heading is None:
            continue
        if match.start() > sec_start:
            raw.append(Section(sec_start, match.start(), tuple(t for _, t in trail)))
        level = len(heading.group(1))
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, (heading.group(2) or "").strip()))
        sec_start = match.start()
    if len(text) > sec_start:
        raw.append(Section(sec_start, len(text), tuple(t for _, t in trail)))

    merged: list[Section] = []
    pending: int | None = None
    for sec in raw:
        body = text[sec.start : sec.end]
        begin = sec.start if pending is None else pending
        if not body.strip():
            continue
        lines = body.strip().split("\n")
        if len(lines) == 1 and _ATX.match(lines[0]):  # heading only: carry it into the next section
            pending = begin
            continue
        merged.append(Section(begin, sec.end, sec.headings))
        pending = None
    if pending is not None:  # the text ends with headings only
        merged.append(Section(pending, len(text), raw[-1].headings if raw else ()))
    return merged
