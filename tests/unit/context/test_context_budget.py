"""Packing to a token budget: the budget holds for the rendered text, cuts are marked at sentence boundaries."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cef.context.budget import BudgetTooSmallError, Candidate, pack
from cef.context.cuts import TRUNCATION_MARKER, cut_text, split_sentences
from cef.context.formats import (
    ContextChunk,
    ContextDocument,
    ContextEntity,
    ContextFormat,
    ContextRelationship,
    render,
)
from cef.context.tokens import TokenCounter, make_token_counter
from cef.errors import ValidationError

COUNTERS = ["cl100k", "wordpiece", "estimate"]
FORMATS = list(ContextFormat)

SENTENCES = [
    "Warfarin is an anticoagulant.",
    "Dr. Chen prescribed it in March 2021, e.g. for atrial fibrillation.",
    "The INR target is 2.0-3.0!",
    "Does ibuprofen raise the bleeding risk?",
    "東京の病院で治療を受けた。",
    "Émile's naïve café note — with “quotes”.",
    "Short.",
    "A much longer sentence that goes on and on about kidney function, eGFR values below 30, "
    "metformin, lactic acidosis and the need to review every prescription once a year.",
]

chunk_texts = st.one_of(
    st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=8).map(" ".join),
    st.text(min_size=1, max_size=400).filter(lambda t: t.strip() != ""),
)
budgets = st.integers(min_value=1, max_value=700)
prop = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", params=COUNTERS)
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    return make_token_counter(request.param)


def chunk_candidates(texts: list[str]) -> list[Candidate]:
    return [
        Candidate(
            section="chunks",
            item=ContextChunk(id=f"c{i}", content=t, score=1.0 - i / 100, queries=[1]),
            key=f"chunk:c{i}",
            text_field="content",
        )
        for i, t in enumerate(texts)
    ]


def frame_tokens(counter: TokenCounter, fmt: ContextFormat, budget: int) -> int:
    doc = ContextDocument(queries=["q"], token_budget=budget, total_tokens=budget, truncated=True)
    return counter.count(render(doc, fmt))


# ------------------------------------------------------------------ the budget
@prop
@given(texts=st.lists(chunk_texts, max_size=12), budget=budgets, fmt=st.sampled_from(FORMATS))
def test_counted_tokens_never_exceed_the_budget(
    counter: TokenCounter, texts: list[str], budget: int, fmt: ContextFormat
) -> None:
    base = ContextDocument(queries=["q"])
    try:
        packed = pack(base, chunk_candidates(texts), counter=counter, fmt=fmt, budget=budget)
    except BudgetTooSmallError as exc:
        assert exc.needed > budget
        assert frame_tokens(counter, fmt, budget) > budget
        return
    assert counter.count(packed.text) == packed.total_tokens <= budget
    # the header states the truth about the text it is in
    if packed.document.total_tokens is not None:
        assert packed.document.total_tokens == packed.total_tokens
    # something left out or cut <=> the flag is set
    assert packed.truncated == (
        len(packed.document.chunks) < len(texts) or any(c.truncated for c in packed.document.chunks)
    )


@prop
@given(texts=st.lists(chunk_texts, min_size=1, max_size=8), budget=st.integers(min_value=60, max_value=400))
def test_cut_chunks_are_marked_and_end_at_a_sentence_or_word_boundary(
    counter: TokenCounter, texts: list[str], budget: int
) -> None:
    originals = {f"c{i}": t for i, t in enumerate(texts)}
    packed = pack(
        ContextDocument(), chunk_candidates(texts), counter=counter, fmt=ContextFormat.PLAIN, budget=budget
    )
    for ch in packed.document.chunks:
        original = originals[ch.id]
        if not ch.truncated:
            assert ch.content == original
            continue
        assert ch.content.endswith(TRUNCATION_MARKER)
        prefix = ch.content[: -len(TRUNCATION_MARKER)]
        assert prefix and original.startswith(prefix) and len(prefix) < len(original.rstrip())
        sentences = split_sentences(original)
        at_sentence = any(prefix == "".join(sentences[:k]).rstrip() for k in range(1, len(sentences)))
        first = sentences[0]
        at_word = first.startswith(prefix) and (len(prefix) == len(first) or first[len(prefix)].isspace())
        assert at_sentence or at_word
        assert f"{ch.id} (" in packed.text and TRUNCATION_MARKER in packed.text


def test_a_chunk_that_does_not_fit_is_cut_at_a_sentence_boundary() -> None:
    counter = make_token_counter("cl100k")
    long = " ".join(SENTENCES[:4] * 5)
    whole = pack(ContextDocument(), chunk_candidates([long]), counter=counter, fmt="plain", budget=5000)
    assert not whole.truncated
    packed = pack(ContextDocument(), chunk_candidates([long]), counter=counter, fmt="plain", budget=80)
    (ch,) = packed.document.chunks
    assert ch.truncated and packed.truncated
    assert ch.content.endswith("." + TRUNCATION_MARKER) or ch.content.endswith("!" + TRUNCATION_MARKER)
    assert packed.cut == ["chunk:c0"]
    assert packed.total_tokens <= 80


def test_cutting_can_be_disabled() -> None:
    counter = make_token_counter("cl100k")
    long = " ".join(SENTENCES * 3)
    packed = pack(
        ContextDocument(), chunk_candidates([long]), counter=counter, fmt="plain", budget=80, allow_cut=False
    )
    assert packed.document.chunks == [] and packed.truncated


def test_higher_priority_first_and_smaller_later_ones_fill_the_gap() -> None:
    counter = make_token_counter("cl100k")
    texts = ["Alpha fact. " * 30, "Beta fact is longer than it needs to be. " * 30, "Gamma."]
    packed = pack(
        ContextDocument(),
        chunk_candidates(texts),
        counter=counter,
        fmt="markdown",
        budget=220,
        allow_cut=False,
    )
    ids = [c.id for c in packed.document.chunks]
    assert ids == ["c0", "c2"]  # c1 does not fit whole; the small c2 after it does


def test_budget_too_small_for_the_frame_is_a_clear_error() -> None:
    counter = make_token_counter("cl100k")
    with pytest.raises(BudgetTooSmallError, match="too small") as info:
        pack(ContextDocument(queries=["a question"]), [], counter=counter, fmt="json", budget=5)
    assert isinstance(info.value, ValidationError)
    with pytest.raises(ValidationError, match="integer >= 1"):
        pack(ContextDocument(), [], counter=counter, fmt="json", budget=0)


def test_duplicate_candidate_keys_are_refused() -> None:
    counter = make_token_counter("estimate")
    cands = chunk_candidates(["one.", "two."])
    with pytest.raises(ValidationError, match="twice"):
        pack(ContextDocument(), [cands[0], cands[0]], counter=counter, fmt="plain", budget=100)


def test_requirements_and_caps() -> None:
    """A relationship waits for its entities; caps bound a group in the first pass only."""
    counter = make_token_counter("cl100k")
    ent = Candidate(
        section="entities",
        item=ContextEntity(id="a", type="Drug", name="Warfarin " * 40),
        key="entity:a",
    )
    rel = Candidate(
        section="relationships",
        item=ContextRelationship(
            id="e1", source="a", source_name="Warfarin", relation="TREATS", target="b", target_name="AF"
        ),
        key="rel:e1",
        requires_all=frozenset({"entity:a"}),
    )
    # the relationship comes first in priority but must wait for its entity
    packed = pack(ContextDocument(), [rel, ent], counter=counter, fmt="plain", budget=400)
    assert [c.key for c in packed.selected] == ["entity:a", "rel:e1"]
    # without room for the entity, the relationship is left out too
    small = pack(ContextDocument(), [ent, rel], counter=counter, fmt="plain", budget=40)
    assert small.selected == [] and small.truncated
    # a cap keeps the entity out of the first pass; the second pass still uses the room
    capped = pack(
        ContextDocument(), [ent, rel], counter=counter, fmt="plain", budget=400, caps={"entities": 10}
    )
    assert [c.key for c in capped.selected] == ["entity:a", "rel:e1"]


def test_json_header_reports_its_own_token_count() -> None:
    counter = make_token_counter("cl100k")
    packed = pack(
        ContextDocument(queries=["q"]), chunk_candidates(SENTENCES), counter=counter, fmt="json", budget=120
    )
    meta = json.loads(packed.text)["meta"]
    assert meta["total_tokens"] == counter.count(packed.text) == packed.total_tokens
    assert meta["token_budget"] == 120
    assert meta["truncated"] is True


# ------------------------------------------------------------------ sentences
@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=300), st.lists(st.sampled_from(SENTENCES), max_size=6).map(" ".join)))
def test_sentences_partition_the_text(text: str) -> None:
    parts = split_sentences(text)
    assert "".join(parts) == text
    assert all(p.strip() for p in parts[:-1])


def test_sentence_boundaries() -> None:
    text = "Dr. Maria Chen saw him. INR 2.0-3.0 is the target! Is it? e.g. not here.\nNew line"
    assert split_sentences(text) == [
        "Dr. Maria Chen saw him. ",
        "INR 2.0-3.0 is the target! ",
        "Is it? e.g. not here.\n",
        "New line",
    ]


def test_cut_text_prefers_sentences_then_words() -> None:
    text = "First sentence here. Second one follows. Third."
    assert (
        cut_text(text, lambda t: len(t) <= 60)
        == "First sentence here. Second one follows." + TRUNCATION_MARKER
    )
    one_long = "a very long single sentence without any full stop in it at all"
    cut = cut_text(one_long, lambda t: len(t) <= 30)
    assert cut is not None and cut.endswith(TRUNCATION_MARKER)
    assert one_long.startswith(cut[: -len(TRUNCATION_MARKER)])
    assert cut_text(one_long, lambda t: len(t) <= 30, words_fallback=False) is None
    assert cut_text("word", lambda t: True) is None  # nothing shorter to cut to


@pytest.mark.parametrize("fmt", ["markdown", "json", "yaml", "plain"])
def test_a_header_echoing_many_long_queries_is_shortened_before_a_budget_is_refused(fmt: str) -> None:
    """The smallest budget the schema allows always holds a context: the echo of 20 long queries (305
    tokens in markdown) is shortened, then left out, instead of a 422 for a schema-valid request."""
    from cef.context.request import MIN_TOKEN_BUDGET

    counter = make_token_counter("cl100k")
    queries = [f"question number {i} about a rather long subject " * 3 for i in range(20)]
    packed = pack(ContextDocument(queries=queries), chunk_candidates(["one.", "two."]), counter=counter,
                  fmt=fmt, budget=MIN_TOKEN_BUDGET)  # fmt: skip
    assert counter.count(packed.text) <= MIN_TOKEN_BUDGET
    assert "question number 0 about a rather long subject question" not in packed.text
    roomy = pack(ContextDocument(queries=queries), [], counter=counter, fmt=fmt, budget=4000)
    assert "question number 19 about a rather long subject" in roomy.text  # echoed whole when it fits
