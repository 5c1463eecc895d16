"""candidate_paths (one array pass per level) equals walking every path's frontier node by node."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.graph.index import GraphIndex
from cef.model import Edge, Node, RelationType
from cef.retrieve.pathwalk import _distinct_moves, _next_level, candidate_paths
from cef.retrieve.pathwords import Hop

RELS = [
    RelationType(name="R0"),
    RelationType(name="R1", inverse="R1_INV"),
    RelationType(name="R2", bidirectional=True),
]


def _naive(g: GraphIndex, start: int, flt, max_hops: int) -> set[tuple[Hop, ...]]:  # type: ignore[no-untyped-def]
    names = g.relations.names
    out: set[tuple[Hop, ...]] = set()
    level: dict[tuple[Hop, ...], set[int]] = {(): {start}}
    for _ in range(max_hops):
        nxt: dict[tuple[Hop, ...], set[int]] = {}
        for path, frontier in level.items():
            for node in frontier:
                edges, _, targets, fwd = g.step(np.asarray([node], dtype=np.int64), flt)
                for e, t, f in zip(edges.tolist(), targets.tolist(), fwd.tolist(), strict=True):
                    if t == start:
                        continue  # walks never come back to the start
                    code = int(g.e_rel.view[e])
                    hop = Hop(names[code], bool(f or g._rel_bidir[code]))
                    nxt.setdefault((*path, hop), set()).add(t)
        out |= set(nxt)
        level = nxt
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 30), st.integers(0, 60), st.integers(1, 4))
def test_candidate_paths_equal_walking_each_frontier(seed: int, n: int, m: int, max_hops: int) -> None:
    rng = np.random.default_rng(seed)
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label="T") for i in range(n)])
    g.add_edges(
        [
            Edge(id=f"e{k}", relation_type=RELS[int(rng.integers(3))].name,
                 source=f"n{rng.integers(n)}", target=f"n{rng.integers(n)}")
            for k in range(m)
        ]
    )  # fmt: skip
    flt = g.edge_filter()
    start = int(rng.integers(n))
    got = candidate_paths(g, start, flt, max_hops)
    assert len(got) == len(set(got))  # each path once
    assert set(got) == _naive(g, start, flt, max_hops)


class _Stop(Exception):
    pass


def test_the_walk_checks_before_each_level_and_a_raising_check_stops_it() -> None:
    """``check`` (a query's deadline) runs before every level after the first, so a wide graph's
    walk stops between levels rather than after its last one."""
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label="T") for i in range(6)])
    g.add_edges([Edge(id=f"e{i}", relation_type="R0", source=f"n{i}", target=f"n{i + 1}") for i in range(5)])
    flt = g.edge_filter()
    start = g.pos("n0")
    assert start is not None
    calls: list[int] = []
    got = candidate_paths(g, start, flt, 4, check=lambda: calls.append(1))
    assert max(map(len, got)) == 4 and len(calls) == 3  # before levels 2, 3 and 4
    seen: list[int] = []

    def stop_at_second() -> None:
        seen.append(1)
        if len(seen) == 2:
            raise _Stop

    with pytest.raises(_Stop):
        candidate_paths(g, start, flt, 4, check=stop_at_second)
    assert len(seen) == 2


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 30), st.integers(0, 60))
def test_each_level_reaches_what_walking_each_frontier_reaches(seed: int, n: int, m: int) -> None:
    """The nodes a level's paths reach (sorted, each once) are those a node-by-node walk reaches."""
    rng = np.random.default_rng(seed)
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label="T") for i in range(n)])
    g.add_edges(
        [
            Edge(id=f"e{k}", relation_type=RELS[int(rng.integers(3))].name,
                 source=f"n{rng.integers(n)}", target=f"n{rng.integers(n)}")
            for k in range(m)
        ]
    )  # fmt: skip
    flt = g.edge_filter()
    start = int(rng.integers(n))
    level: dict[tuple[Hop, ...], np.ndarray] = {(): np.asarray([start], dtype=np.int64)}
    for _ in range(3):
        out: list[tuple[Hop, ...]] = []
        nxt = _next_level(g, level, flt, start, out)
        assert out == list(nxt)
        for path, reached in nxt.items():
            want: set[int] = set()
            for node in level[path[:-1]].tolist():
                edges, _, targets, fwd = g.step(np.asarray([node], dtype=np.int64), flt)
                for e, t, f in zip(edges.tolist(), targets.tolist(), fwd.tolist(), strict=True):
                    code = int(g.e_rel.view[e])
                    if t != start and Hop(g.relations.names[code], bool(f or g._rel_bidir[code])) == path[-1]:
                        want.add(t)
            assert reached.tolist() == sorted(want)
        level = nxt


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9), st.integers(0, 40)), max_size=80))
def test_distinct_moves_sort_and_dedupe_with_either_method(moves: list[tuple[int, int, int]]) -> None:
    """One sort of a packed integer and the three-key lexsort (taken when the packing would not fit
    in 63 bits) give the distinct (path, key, target) triples in order."""
    arr = np.asarray(moves, dtype=np.int64).reshape(-1, 3)
    want = sorted(set(moves))
    for n_nodes in (41, 2**61):  # packed; too big to pack
        path, key, target = _distinct_moves(arr[:, 0], arr[:, 1], arr[:, 2], 7, n_nodes)
        assert list(zip(path.tolist(), key.tolist(), target.tolist(), strict=True)) == want
