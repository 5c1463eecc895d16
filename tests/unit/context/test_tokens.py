"""Token counters: exact counts on known strings, truncation invariants (Hypothesis), the factory."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cef.context.tokens import (
    CharEstimateCounter,
    TiktokenCounter,
    TokenCounter,
    WordPieceCounter,
    make_token_counter,
    token_counter_names,
)
from cef.errors import ConfigurationError, MissingExtraError, ValidationError

COUNTERS = ["wordpiece", "cl100k", "estimate"]

# text that exercises word boundaries, punctuation, accents, CJK, emoji and special-token strings
texts = st.one_of(
    st.text(max_size=300),
    st.lists(
        st.sampled_from(
            [
                "hello",
                "world",
                " ",
                "  ",
                "\n",
                "unbelievable",
                "é",
                "e\u0301",
                "naïve",
                "東京",
                "🙂",
                "👩‍🔬",
                ",",
                "!!",
                "<|endoftext|>",
                "[CLS]",
                "tokenization",
                "123456",
                "\t",
                "ab",
            ]
        ),
        max_size=60,
    ).map("".join),
)
budgets = st.integers(min_value=0, max_value=80)
prop_settings = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", params=COUNTERS)
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    return make_token_counter(request.param)


def test_counters_satisfy_the_protocol(counter: TokenCounter) -> None:
    assert isinstance(counter, TokenCounter)
    assert counter.name
    assert counter.count("") == 0
    assert counter.truncate("", 5) == ""
    assert counter.truncate("some words here", 0) == ""


@prop_settings
@given(text=texts, n=budgets)
def test_truncate_never_exceeds_the_budget(counter: TokenCounter, text: str, n: int) -> None:
    cut = counter.truncate(text, n)
    assert counter.count(cut) <= n
    assert text.startswith(cut)
    if counter.count(text) <= n:
        assert cut == text


@prop_settings
@given(a=texts, b=texts)
def test_joined_chunks_cost_at_most_the_parts_plus_two(counter: TokenCounter, a: str, b: str) -> None:
    """Context is assembled from chunks joined by a separator: the parts bound the whole."""
    assert counter.count(a + "\n\n" + b) <= counter.count(a) + counter.count(b) + 2


@prop_settings
@given(a=texts, b=texts)
def test_raw_concatenation_is_bounded_for_the_estimate(a: str, b: str) -> None:
    counter = make_token_counter("estimate")
    assert counter.count(a + b) <= counter.count(a) + counter.count(b) + 2


def test_bpe_raw_concatenation_can_cost_more_than_the_parts() -> None:
    """Like WordPiece, byte-level BPE merges differently across a glued boundary: join with a separator."""
    bpe = make_token_counter("cl100k")
    a, b = "Schema", "discover"
    assert bpe.count(a + b) > bpe.count(a) + bpe.count(b)
    assert bpe.count(a + "\n\n" + b) <= bpe.count(a) + bpe.count(b) + 2


def test_wordpiece_raw_concatenation_can_cost_more_than_the_parts() -> None:
    """WordPiece is greedy per word: gluing two words makes a new word. Join with a separator."""
    wp = make_token_counter("wordpiece")
    assert wp.count("0") == 1 and wp.count("UNBELIEVABLE") == 1
    assert wp.count("0UNBELIEVABLE") > 4
    assert wp.count("0 UNBELIEVABLE") == 2


@prop_settings
@given(text=texts, n=st.integers(min_value=1, max_value=80))
def test_truncate_uses_the_budget(counter: TokenCounter, text: str, n: int) -> None:
    """A cut text nearly fills its budget, and a larger budget never gives a shorter prefix.

    (A byte-level BPE can split one character over up to 4 tokens; a cut never
    splits a character, so up to 3 tokens of budget can stay unused.)
    """
    cut = counter.truncate(text, n)
    if cut != text:
        assert counter.count(cut) >= n - 3
    assert len(counter.truncate(text, n + 3)) >= len(cut)


def test_wordpiece_counts_known_strings() -> None:
    wp = make_token_counter("wordpiece")
    assert isinstance(wp, WordPieceCounter)
    # lowercased, accents stripped, punctuation split: hello , world !
    assert wp.count("Héllo, wörld!") == 4
    assert wp.count("the cat sat on the mat") == 6
    # no [CLS]/[SEP] and no truncation at the tokenizer's default 128
    long_text = "word " * 1000
    assert wp.count(long_text) == 1000
    assert wp.truncate(long_text, 300) == ("word " * 300).rstrip()


def test_wordpiece_truncates_at_a_subword_boundary() -> None:
    wp = WordPieceCounter()
    text = "tokenization is fun"
    n_first_word = wp.count("tokenization")
    assert n_first_word >= 2  # split into word pieces
    cut = wp.truncate(text, 1)
    assert cut and "tokenization".startswith(cut) and cut != "tokenization"
    assert wp.truncate(text, n_first_word) == "tokenization"


def test_cl100k_counts_known_strings() -> None:
    enc = make_token_counter("cl100k")
    assert isinstance(enc, TiktokenCounter)
    assert enc.name == "tiktoken(cl100k_base)"
    assert enc.count("hello world") == 2
    assert enc.truncate("hello world, how are you", 2) == "hello world"
    # special-token text is ordinary text, not an error
    assert enc.count("<|endoftext|>") > 1


def test_cl100k_never_cuts_inside_a_character() -> None:
    enc = make_token_counter("cl100k")
    text = "東京都🙂👩‍🔬 naïve café " * 20
    for n in range(0, 40):
        cut = enc.truncate(text, n)
        assert "\ufffd" not in cut
        assert text.startswith(cut)
        assert enc.count(cut) <= n


def test_estimate_is_named_as_an_estimate() -> None:
    est = make_token_counter("estimate")
    assert isinstance(est, CharEstimateCounter)
    assert "estimate" in est.name
    assert est.count("abcde") == 2
    assert est.truncate("abcdefghij", 2) == "abcdefgh"
    assert CharEstimateCounter(3).count("abcdefg") == 3


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_bad_budgets_are_rejected(counter: TokenCounter, bad: object) -> None:
    with pytest.raises(ValidationError, match="max_tokens"):
        counter.truncate("hello", bad)  # type: ignore[arg-type]


def test_factory_maps_model_names_to_encodings() -> None:
    assert make_token_counter("gpt-4").name == "tiktoken(cl100k_base)"
    assert make_token_counter("text-embedding-3-small").name == "tiktoken(cl100k_base)"
    assert make_token_counter("all-MiniLM-L6-v2").name == WordPieceCounter.name
    assert make_token_counter("CL100K") is make_token_counter("cl100k_base")
    assert set(token_counter_names()) == {"wordpiece", "cl100k", "o200k", "estimate"}


def test_o200k_works_offline_or_says_what_is_missing() -> None:
    import tiktoken

    if "o200k_base_offline" in tiktoken.list_encoding_names():
        assert make_token_counter("gpt-4o").name == "tiktoken(o200k_base)"
    else:
        with pytest.raises(ConfigurationError, match="o200k_base"):
            make_token_counter("gpt-4o")
        with pytest.raises(ConfigurationError, match="allow_download"):
            make_token_counter("o200k")


def test_unknown_counter_names_the_choices() -> None:
    with pytest.raises(ConfigurationError, match=r"wordpiece") as info:
        make_token_counter("no-such-tokenizer")
    assert "gpt-4o" in str(info.value)


def test_missing_tiktoken_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(MissingExtraError, match=r"cef-context\[tokens\]"):
        TiktokenCounter("cl100k_base")


def test_missing_tokenizers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    counter = WordPieceCounter()  # lazy: constructing needs nothing
    with pytest.raises(MissingExtraError, match="tokenizers"):
        counter.count("hello")
