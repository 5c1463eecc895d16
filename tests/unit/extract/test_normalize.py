from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.extract import Mention, dedupe_mentions, group_pairs, near_duplicates, normalize_name
from cef.extract.normalize import alias_keys, is_useful_name, strip_disambiguation, unique_keys


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("The Beatles", "beatles"),
        ("the  beatles'", "beatles"),
        ("Beatles", "beatles"),
        ("Ångström Café", "angstrom cafe"),
        ("O'Brien's", "o brien"),
        ("Hello Love's", "hello love"),
        ("U.S.A.", "u s a"),
        ("ＦＵＬＬ width", "full width"),
        ("An", "an"),
        ("A Day of Roses in August", "day of roses in august"),
        ("...", ""),
    ],
)
def test_normalize_name(raw: str, key: str) -> None:
    assert normalize_name(raw) == key


def test_articles_can_be_kept() -> None:
    assert normalize_name("The Who", drop_articles=False) == "the who"


def test_alias_keys_and_disambiguation() -> None:
    assert strip_disambiguation("WUIN (FM)") == "WUIN"
    assert alias_keys("WUIN (FM)") == ["wuin fm", "wuin"]
    assert alias_keys("Paris, Texas") == ["paris texas", "paris"]
    assert alias_keys("Queen Jeongsun (Wonjong)") == ["queen jeongsun wonjong", "queen jeongsun"]


def test_is_useful_name() -> None:
    assert is_useful_name("paris")
    assert not is_useful_name("1999")
    assert not is_useful_name("a")
    assert not is_useful_name("the", stopwords=frozenset({"the"}))


def test_dedupe_mentions_keeps_longest_then_most_confident() -> None:
    ms = [
        Mention("New York", "new york", "GPE", 0, 8, 0.8, "spacy"),
        Mention("New York City", "new york city", "GPE", 0, 13, 0.7, "gazetteer"),
        Mention("York", "york", "GPE", 4, 8, 1.0, "gazetteer"),
        Mention("Boston", "boston", "GPE", 20, 26, 0.5, "spacy"),
        Mention("Boston", "boston", "GPE", 20, 26, 0.9, "gazetteer"),
    ]
    kept = dedupe_mentions(ms)
    assert [(m.text, m.source) for m in kept] == [("New York City", "gazetteer"), ("Boston", "gazetteer")]
    assert unique_keys(ms) == ["new york", "new york city", "york", "boston"]


def test_near_duplicates_and_groups() -> None:
    names = ["nyc", "new york city", "paris", "big apple"]
    emb = np.array([[1.0, 0.0, 0.0], [0.98, 0.2, 0.0], [0.0, 0.0, 1.0], [0.95, 0.0, 0.3]])
    pairs = near_duplicates(names, emb, threshold=0.9)
    got = {(p.left, p.right) for p in pairs}
    assert ("nyc", "new york city") in got
    assert all("paris" not in (p.left, p.right) for p in pairs)
    assert pairs == sorted(pairs, key=lambda p: -p.similarity)
    assert all(0.9 <= p.similarity <= 1.0 for p in pairs)
    groups = group_pairs(pairs)
    assert {"nyc", "new york city", "big apple"} in groups


def test_near_duplicates_checks_shapes() -> None:
    with pytest.raises(ValueError):
        near_duplicates(["a", "b"], np.zeros((3, 2)))
    assert near_duplicates(["a"], np.ones((1, 2))) == []


def _reference_key(name: str) -> str:
    """normalize_name as specified, without its shortcuts: NFKC, accents folded, lower, possessives,
    non-word runs to spaces, spaces squeezed, a leading article dropped."""
    import re
    import unicodedata

    s = unicodedata.normalize("NFKC", name)
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c)).lower().strip()
    s = re.sub(r"(?<=\w)(?:'s|’s|'|’)(?=\s|$)", "", s)
    s = re.sub(r"[^\w]+", " ", s).replace("_", " ")
    s = re.sub(r"\s+", " ", s).strip()
    for art in ("the ", "a ", "an "):
        if s.startswith(art) and len(s) > len(art):
            return s[len(art) :]
    return s


def _reference_alias_keys(name: str) -> list[str]:
    keys: list[str] = []
    for variant in (name, strip_disambiguation(name)):
        for v in (variant, variant.split(",")[0] if "," in variant else variant):
            key = _reference_key(v)
            if key and key not in keys:
                keys.append(key)
    return keys


names = st.one_of(
    st.text(max_size=30),
    st.text(alphabet="abcÅéü ,()'’-_.ΩΣ", max_size=30),
    st.builds(lambda a, b: f"{a} ({b})", st.text("AbCé ,", max_size=10), st.text("xy, ", max_size=6)),
)


@settings(max_examples=400, deadline=None)
@given(names)
def test_shortcuts_give_the_specified_keys(name: str) -> None:
    """The ASCII fast path and the deduplicated variants change no key and no key order."""
    assert normalize_name(name) == _reference_key(name)
    assert alias_keys(name) == _reference_alias_keys(name)
