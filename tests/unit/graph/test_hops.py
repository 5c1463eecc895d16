"""hop_keys: the hops leaving a frontier, from per-node masks, equal what walking the edges finds."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.graph.hops import hop_keys, hop_keys_many
from cef.graph.index import GraphIndex
from cef.model import Edge, Node, RelationType

RELS = [
    RelationType(name="R0"),
    RelationType(name="R1", inverse="R1_INV"),
    RelationType(name="R2", bidirectional=True),
    RelationType(name="R3"),
]
PAST, FUTURE = datetime(2001, 1, 1, tzinfo=UTC), datetime(2090, 1, 1, tzinfo=UTC)


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(40, 90))
    m = draw(st.integers(0, 160))
    edges = [
        (
            draw(st.integers(0, n - 1)),
            draw(st.integers(0, n - 1)),
            draw(st.sampled_from([r.name for r in RELS])),
            draw(st.sampled_from(["always", "expired", "future"])),
        )
        for _ in range(m)
    ]
    return n, edges


def _walked(g: GraphIndex, frontier: np.ndarray, flt, exclude: int | None = None) -> list[int]:  # type: ignore[no-untyped-def]
    edges, _, targets, fwd = g.step(frontier, flt)
    if exclude is not None:
        edges, fwd = edges[targets != exclude], fwd[targets != exclude]
    codes = g.e_rel.view[edges].astype(np.int64)
    return sorted(set((codes * 2 + (fwd | g._rel_bidir[codes]).astype(np.int64)).tolist()))


@settings(max_examples=60, deadline=None)
@given(
    graphs(),
    st.integers(0, 2**32 - 1),
    st.integers(0, 3),  # how many edges to delete after compaction
    st.integers(0, 3),  # how many edges to add after compaction (kept in the delta lists)
    st.sampled_from([None, ["R0", "R2"], ["R1_INV"], ["R3", "R1"]]),
    st.sampled_from(["both", "outgoing", "incoming"]),
    st.sampled_from([datetime(2001, 6, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC), FUTURE]),
)
def test_keys_from_masks_equal_keys_from_walking(data, seed, deletes, adds, wanted, direction, when) -> None:  # type: ignore[no-untyped-def]
    n, spec = data
    rng = np.random.default_rng(seed)
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label="T") for i in range(n)])
    window = {
        "always": (None, None),
        "expired": (PAST, datetime(2002, 1, 1, tzinfo=UTC)),
        "future": (FUTURE, None),
    }
    g.add_edges(
        [
            Edge(id=f"e{k}", relation_type=r, source=f"n{s}", target=f"n{t}",
                 valid_from=window[w][0], valid_to=window[w][1])
            for k, (s, t, r, w) in enumerate(spec)
        ]
    )  # fmt: skip
    g.compact()
    if spec and deletes:
        g.remove_edges([f"e{k}" for k in rng.choice(len(spec), size=min(deletes, len(spec)), replace=False)])
    g.add_nodes([Node(id=f"new{k}", label="T") for k in range(adds)])  # nodes after the compaction
    g.add_edges(
        [Edge(id=f"x{k}", relation_type=RELS[k % 4].name, source=f"n{rng.integers(n)}", target=f"n{rng.integers(n)}")
         for k in range(adds)]
        + [Edge(id=f"y{k}", relation_type=RELS[(k + 1) % 4].name, source=f"new{k}", target=f"n{rng.integers(n)}")
           for k in range(adds)]
    )  # fmt: skip
    n_all = n + adds
    if rng.random() < 0.3:
        g.remove_nodes([f"n{rng.integers(n)}"])
    flt = g.edge_filter(relation_types=wanted, direction=direction, valid_at=when)
    frontiers = [
        np.unique(rng.choice(n_all, size=min(size, n_all), replace=False)).astype(np.int64)
        for size in (1, 3, 12, n_all)
    ]
    start = int(rng.integers(n_all))
    for frontier in frontiers:
        assert hop_keys(g, frontier, flt).tolist() == _walked(g, frontier, flt)
        # moves to the start of the paths do not count: exactly as walking without them
        assert hop_keys(g, frontier, flt, exclude=start).tolist() == _walked(g, frontier, flt, start)
    # all the frontiers of a level at once (overlapping, some holding the start): each as walking finds
    many = hop_keys_many(g, [*frontiers, np.asarray([start], dtype=np.int64)], flt, exclude=start)
    assert [k.tolist() for k in many] == [
        _walked(g, f, flt, start) for f in [*frontiers, np.asarray([start], dtype=np.int64)]
    ]


def test_a_change_to_the_graph_rebuilds_the_masks() -> None:
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes([Node(id=f"n{i}", label="T") for i in range(40)])
    g.add_edges(
        [Edge(id=f"e{i}", relation_type="R0", source=f"n{i}", target=f"n{(i + 1) % 40}") for i in range(40)]
    )
    g.compact()
    frontier = np.arange(40, dtype=np.int64)
    flt = g.edge_filter()
    before = hop_keys(g, frontier, flt).tolist()
    assert before == _walked(g, frontier, flt) == [0, 1]
    g.remove_edges([f"e{i}" for i in range(40)])
    assert hop_keys(g, frontier, flt).tolist() == []
