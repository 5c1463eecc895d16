"""TextSplitter and markdown_sections: size limits, word boundaries, overlap and offsets."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.ingest.chunking import TextSplitter, markdown_sections, split_front_matter

WORDS = st.text(alphabet="abcdefghij", min_size=1, max_size=12)
SEPARATORS = st.sampled_from([" ", " ", " ", "\n", "\n\n", ". ", "! ", "\n\n\n"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=0, max_size=120))
    out = []
    for w in words:
        out.append(w)
        out.append(draw(SEPARATORS))
    return "".join(out)


def _word_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


@settings(max_examples=200, deadline=None)
@given(texts(), st.integers(min_value=8, max_value=80), st.data())
def test_split_invariants(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    chunks, warnings = TextSplitter(size, overlap).split(text)
    words = _word_spans(text)
    starts = {s for s, _ in words}
    ends = {e for _, e in words}
    for start, end in chunks:
        piece = text[start:end]
        assert piece.strip() == piece and piece  # trimmed, non-empty
        assert start in starts and end in ends  # never cuts a word
        if len(piece) > size:  # only a single over-long word may exceed the limit
            assert len(piece.split()) == 1 and warnings
    # every word is in some chunk, and chunks advance
    for ws, we in words:
        assert any(s <= ws and we <= e for s, e in chunks)
    assert [s for s, _ in chunks] == sorted({s for s, _ in chunks})
    for (_, e1), (s2, _) in pairwise(chunks):
        if s2 < e1:  # overlapping part is within the overlap budget
            assert e1 - s2 <= overlap


def test_overlap_repeats_the_tail_of_the_previous_chunk() -> None:
    text = " ".join(f"w{i:02d}" for i in range(40))  # 40 words of 3 chars
    chunks, _ = TextSplitter(40, 12).split(text)
    assert len(chunks) > 3
    for (s1, e1), (s2, _) in pairwise(chunks):
        assert s1 < s2 < e1  # overlaps, starts later
        assert len(text[s2:e1]) <= 12
        assert text[s2:e1] == text[s1:e1][-len(text[s2:e1]) :]


def test_no_overlap_means_disjoint_chunks() -> None:
    text = " ".join(f"word{i}" for i in range(100))
    chunks, _ = TextSplitter(50, 0).split(text)
    for (_, e1), (s2, _) in pairwise(chunks):
        assert s2 > e1


def test_paragraphs_are_kept_together_when_they_fit() -> None:
    text = "First paragraph here.\n\nSecond one.\n\nThird paragraph is a little longer."
    chunks, _ = TextSplitter(40, 0).split(text)
    assert [text[s:e] for s, e in chunks] == [
        "First paragraph here.\n\nSecond one.",
        "Third paragraph is a little longer.",
    ]


def test_long_paragraph_splits_at_sentences() -> None:
    text = "One two three. Four five six. Seven eight nine."
    chunks, _ = TextSplitter(30, 0).split(text)
    assert [text[s:e] for s, e in chunks] == ["One two three. Four five six.", "Seven eight nine."]


def test_overlong_word_is_kept_whole_with_a_warning() -> None:
    text = "short " + "x" * 50 + " tail"
    chunks, warnings = TextSplitter(20, 0).split(text)
    assert text[chunks[1][0] : chunks[1][1]] == "x" * 50
    assert warnings and "50 characters" in warnings[0]


def test_token_counter_limits_tokens_not_characters() -> None:
    text = " ".join(["supercalifragilistic"] * 30)
    chunks, _ = TextSplitter(5, 1, counter=lambda s: len(s.split())).split(text)
    assert all(len(text[s:e].split()) <= 5 for s, e in chunks)
    assert max(e - s for s, e in chunks) > 5 * 10  # far more than 5 characters


def test_invalid_sizes() -> None:
    with pytest.raises(ValueError):
        TextSplitter(10, 10)
    with pytest.raises(ValueError):
        TextSplitter(0)


def test_markdown_sections_trail_and_fences() -> None:
    text = (
        "Preamble.\n"
        "# Guide\n"
        "Intro.\n"
        "## Install\n"
        "```sh\n"
        "# not a heading\n"
        "```\n"
        "### Linux\n"
        "apt.\n"
        "## Use\n"
        "Run.\n"
        "# Other\n"
        "## Empty\n"
        "Body.\n"
    )
    secs = markdown_sections(text)
    assert [s.headings for s in secs] == [
        (),
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Linux"),
        ("Guide", "Use"),
        ("Other", "Empty"),
    ]
    assert "# not a heading" in text[secs[2].start : secs[2].end]
    # a heading-only section is merged into the next one, heading text included
    assert text[secs[-1].start : secs[-1].end] == "# Other\n## Empty\nBody.\n"
    # sections tile the text
    assert secs[0].start == 0 and all(a.end == b.start for a, b in pairwise(secs))


def test_front_matter() -> None:
    fm, body = split_front_matter("---\ntitle: X\n---\n# H\n")
    assert fm == "title: X\n" and body == len("---\ntitle: X\n---\n")
    assert split_front_matter("--- not front matter\n") == (None, 0)
    assert split_front_matter("---\nunterminated\n") == (None, 0)
