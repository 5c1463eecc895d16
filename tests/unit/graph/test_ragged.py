"""Ragged rows, string rows and the sorted-array index: the same answers as the lists and dict they replace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cef.graph.arrays import Ragged, RaggedStrings, RowMap, SortedIndex, sorted_unique, spans

rows = st.lists(st.lists(st.integers(-5, 50), max_size=6), max_size=12)


def _ptr(lists: list[list[int]] | list[list[str]]) -> np.ndarray:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lists], out=ptr[1:])
    return ptr


@given(rows)
def test_ragged_rows_are_the_lists(lists: list[list[int]]) -> None:
    flat = np.asarray([x for r in lists for x in r], dtype=np.int64)
    rag = Ragged(flat, _ptr(lists))
    assert len(rag) == len(lists)
    assert [r.tolist() for r in rag] == lists
    assert [r.tolist() for r in rag[1:3]] == lists[1:3]
    if lists:
        assert rag[-1].tolist() == lists[-1]
    with pytest.raises(IndexError):
        rag[len(lists)]


@given(st.lists(st.lists(st.text(max_size=4), max_size=4), max_size=8))
def test_string_rows_are_the_lists(lists: list[list[str]]) -> None:
    rag = RaggedStrings([x for r in lists for x in r], _ptr(lists))
    assert list(rag) == lists
    with pytest.raises(IndexError):
        rag[len(lists)]


def test_pointers_must_cover_the_data() -> None:
    with pytest.raises(ValueError, match="row pointers end at 2"):
        Ragged(np.arange(3), np.asarray([0, 2]))


@given(st.sets(st.integers(0, 10_000), max_size=40), st.lists(st.integers(-3, 10_003), max_size=20))
def test_sorted_index_is_the_dict(values: set[int], probes: list[int]) -> None:
    arr = np.asarray(sorted(values), dtype=np.int64)
    want = {v: i for i, v in enumerate(arr.tolist())}
    got = SortedIndex(arr)
    assert len(got) == len(want) and list(got) == list(want) and got == want
    for p in probes:
        assert (p in got) == (p in want)
        assert (np.int64(p) in got) == (p in want)
        if p in want:
            assert got[p] == want[p]
        else:
            with pytest.raises(KeyError):
                got[p]
    assert "1" not in got


@given(
    st.dictionaries(st.text(max_size=4), st.lists(st.integers(), max_size=3)), st.lists(st.text(max_size=4))
)
def test_row_map_is_the_dict_and_makes_only_what_is_read(d: dict[str, list[int]], probes: list[str]) -> None:
    values = list(d.values())
    made: list[int] = []

    def make(i: int) -> list[int]:
        made.append(i)
        return list(values[i])

    m = RowMap(dict(zip(d, range(len(d)), strict=True)), make)
    assert len(m) == len(d) and list(m) == list(d)
    assert made == []  # nothing made until read
    for p in probes:
        assert (p in m) == (p in d)
        assert m.get(p) == d.get(p)
    assert len(made) == sum(p in d for p in probes)
    assert m == d and dict(m.items()) == d


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 6)), max_size=20))
def test_spans_are_the_concatenated_ranges(pairs: list[tuple[int, int]]) -> None:
    starts = np.asarray([s for s, _ in pairs], dtype=np.int64)
    counts = np.asarray([c for _, c in pairs], dtype=np.int64)
    want = [i for s, c in pairs for i in range(s, s + c)]
    assert spans(starts, counts).tolist() == want


@given(st.lists(st.integers(-(2**62), 2**62)))
def test_sorted_unique_is_np_unique(values: list[int]) -> None:
    arr = np.asarray(values, dtype=np.int64)
    got = sorted_unique(arr)
    assert got.dtype == arr.dtype and got.tolist() == np.unique(arr).tolist()
