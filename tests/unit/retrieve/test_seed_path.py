"""The 3-hop explanation path's middle passage: found by binary search in blocks, the same as a set intersection."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cef.extract.spacy_ner import Gazetteer
from cef.retrieve import ppr
from cef.retrieve.entityindex import EntityIndex

lists = st.sets(st.integers(0, 3000), max_size=400).map(sorted)


def index_of(a: list[int], b: list[int]) -> EntityIndex:
    """Entities 0 and 1 mentioned by passages ``a`` and ``b``; edge ids 1000 + passage (a), 5000 + passage (b)."""
    index = EntityIndex(stamp=(0, 0), gazetteer=Gazetteer(), key_index={}, names={}, types={})
    index.ent_ptr = np.asarray([0, len(a), len(a) + len(b)], dtype=np.int64)
    index.ent_passage = np.asarray([*a, *b], dtype=np.int64)
    index.ent_weight = np.ones(len(a) + len(b))
    index.ent_edge = np.asarray([*(1000 + p for p in a), *(5000 + p for p in b)], dtype=np.int64)
    return index


@given(lists, lists, st.integers(0, 3000))
def test_common_passages_match_the_intersection(a: list[int], b: list[int], skip: int) -> None:
    index = index_of(a, b)
    both = sorted((set(a) & set(b)) - {skip})
    got, ea, eb = ppr._common_passages(index, 0, 1, skip)
    assert set(got.tolist()) <= set(both)
    assert ea.tolist() == [1000 + p for p in got.tolist()]  # the edges to entity 0 ...
    assert eb.tolist() == [5000 + p for p in got.tolist()]  # ... and to entity 1, whichever list was shorter
    if both:
        assert len(got) and int(got[0]) == both[0]  # the first common passage is always among them
    else:
        assert not len(got)
    # the order of the two entities does not matter
    got2, eb2, ea2 = ppr._common_passages(index, 1, 0, skip)
    assert got2.tolist() == got.tolist() and ea2.tolist() == ea.tolist() and eb2.tolist() == eb.tolist()


@given(lists, st.integers(0, 3000))
def test_mention_edge_is_a_binary_search(a: list[int], p: int) -> None:
    index = index_of(a, [])
    assert ppr._mention_edge(index, 0, p) == (1000 + p if p in a else None)
    assert ppr._mention_edge(index, 1, p) is None
