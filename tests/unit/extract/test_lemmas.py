"""The relation-path lemmatizer: dictionary lemmas, no model to load."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from cef.extract.lemmas import WORD, default_lemmatizer, dictionary_lemmas


def test_irregular_and_inflected_forms_reach_their_lemma() -> None:
    got = dict(
        dictionary_lemmas("Who wrote the films directed by her? They were written, starred and taking")
    )
    assert got["wrote"] == "write"
    assert got["written"] == "write"
    assert got["directed"] == "direct"
    assert got["films"] == "film"
    assert got["starred"] == "star"
    assert got["taking"] == "take"
    assert got["were"] == "be"


def test_tokens_are_lower_case_words_without_punctuation() -> None:
    assert [t for t, _ in dictionary_lemmas("Which drugs, if any, interact with Warfarin?!")] == [
        "which",
        "drugs",
        "if",
        "any",
        "interact",
        "with",
        "warfarin",
    ]


def test_unknown_words_are_their_own_lemma() -> None:
    assert dictionary_lemmas("xyzzqwv CHA2DS2") == [("xyzzqwv", "xyzzqwv"), ("cha2ds2", "cha2ds2")]


@given(st.text(max_size=80))
def test_one_pair_per_word(text: str) -> None:
    pairs = dictionary_lemmas(text)
    assert [t for t, _ in pairs] == [w.lower() for w in WORD.findall(text)]
    assert all(lemma == lemma.lower() and lemma for _, lemma in pairs)


def test_the_default_lemmatizer_loads_no_language_model() -> None:
    """The relation-path scorer runs in every cold `cef query`: its lemmatizer must not import
    spaCy (which imports thinc and torch: seconds of start-up)."""
    code = (
        "import sys\n"
        "from cef.extract.lemmas import default_lemmatizer\n"
        "assert default_lemmatizer()('films directed by him')[1] == ('directed', 'direct')\n"
        "print(sorted(m for m in ('spacy', 'thinc', 'torch') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert default_lemmatizer() is dictionary_lemmas
