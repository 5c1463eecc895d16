"""The one scope- and label-filtered node vector search that retrieval and the memory anchor on."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.graph.index import GraphIndex
from cef.model import Node, in_scope
from cef.retrieve.anchors import node_vector_hits, node_visible
from cef.retrieve.search import search_visible
from cef.vectors.exact import ExactVectorIndex

SCOPES = [None, "a", "b"]
LABELS = ["Person", "Place"]


def build(spec: list[tuple[int, int, bool]], seed: int) -> tuple[GraphIndex, ExactVectorIndex]:
    """Nodes n0.. of (scope index, label index, deleted?) with random unit vectors."""
    g = GraphIndex()
    nodes = [
        Node(id=f"n{i}", label=LABELS[lab], properties={"name": f"n{i}"}, scope=SCOPES[sc])
        for i, (sc, lab, _) in enumerate(spec)
    ]
    g.add_nodes(nodes)
    g.remove_nodes([n.id for n, (_, _, gone) in zip(nodes, spec, strict=True) if gone])
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((len(spec), 8)).astype(np.float32)
    index = ExactVectorIndex(8)
    index.upsert([n.id for n in nodes], vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    return g, index


def brute_force(
    g: GraphIndex,
    index: ExactVectorIndex,
    vec: np.ndarray,
    k: int,
    scope: str | None,
    labels: set[str] | None,
) -> list[str]:
    ids = [
        nid
        for p, nid in enumerate(g.node_ids)
        if g.node_alive[p]
        and (scope is None or int(g.node_scope[p]) == -1 or g.scopes.names[int(g.node_scope[p])] == scope)
        and (labels is None or g.label_of(p) in labels)
    ]
    sims = index.similarities(vec, ids)
    order = sorted(range(len(ids)), key=lambda i: -float(sims[i]))
    return [ids[i] for i in order[:k]]


@settings(max_examples=60, deadline=None)
@given(
    spec=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.booleans()), min_size=1, max_size=40),
    seed=st.integers(0, 1000),
    k=st.integers(1, 6),
    scope=st.sampled_from(SCOPES),
    labels=st.sampled_from([None, {"Person"}, {"Person", "Place"}]),
)
def test_hits_are_the_exact_top_k_among_the_visible_nodes(
    spec: list[tuple[int, int, bool]], seed: int, k: int, scope: str | None, labels: set[str] | None
) -> None:
    """Whichever path it takes (search the allowed ids, or search all and drop others), the hits
    are the k most similar live nodes inside the scope (or unscoped) and of the labels."""
    g, index = build(spec, seed)
    vec = np.random.default_rng(seed + 1).standard_normal(8).astype(np.float32)
    got = node_vector_hits(g, index, vec, k, scope=scope, labels=labels)
    assert [i for i, _ in got] == brute_force(g, index, vec, k, scope, labels)


def test_a_small_scope_finds_its_nodes_behind_many_closer_ones() -> None:
    """Twenty scope-"a" nodes closer to the question than scope "b"'s one node do not hide it from
    a scope-"b" search (a global top-k then a scope check would: retrieval's anchors did)."""
    g = GraphIndex()
    g.add_nodes(
        [Node(id=f"a{i}", label="Person", scope="a") for i in range(20)]
        + [Node(id="b0", label="Person", scope="b")]
    )
    index = ExactVectorIndex(2)
    close = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (20, 1))
    index.upsert([f"a{i}" for i in range(20)], close)
    index.upsert(["b0"], np.array([[0.6, 0.8]], dtype=np.float32))
    q = np.array([1.0, 0.0], dtype=np.float32)
    assert [i for i, _ in node_vector_hits(g, index, q, 5, scope="b")] == ["b0"]
    assert "b0" not in [i for i, _ in node_vector_hits(g, index, q, 5, scope="a")]
    assert len(node_vector_hits(g, index, q, 5)) == 5


@given(
    spec=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.booleans()), min_size=1, max_size=20),
    scope=st.sampled_from([*SCOPES, "c"]),
)
def test_graph_positions_and_records_agree_on_scope(
    spec: list[tuple[int, int, bool]], scope: str | None
) -> None:
    """One scope rule: a live node is visible by its graph position exactly when its record is."""
    g, _ = build(spec, 0)
    mask = g.visible_nodes(None if scope is None else [scope])
    some = np.arange(len(spec))[::2]
    assert g.visible_nodes(None if scope is None else [scope], some).tolist() == mask[some].tolist()
    for p, (sc, _, gone) in enumerate(spec):
        assert node_visible(g, p, scope) == bool(mask[p]) == (not gone and in_scope(SCOPES[sc], scope))
    assert in_scope("a", None) and in_scope(None, "a") and in_scope("a", "a") and not in_scope("b", "a")


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 120),
    keep_every=st.integers(1, 40),
    k=st.integers(1, 8),
    seed=st.integers(0, 1000),
)
def test_search_visible_is_the_exact_top_k_of_what_keep_lets_through(
    n: int, keep_every: int, k: int, seed: int
) -> None:
    """However few ids ``keep`` lets through, widening finds the k best of them (retrieval's chunk
    search, the memory's passage anchors and node search all go through it)."""
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, 8)).astype(np.float32)
    index = ExactVectorIndex(8)
    ids = [f"c{i}" for i in range(n)]
    index.upsert(ids, vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    kept = {i for j, i in enumerate(ids) if j % keep_every == 0}
    q = rng.standard_normal(8).astype(np.float32)
    got = search_visible(index, q, k, lambda found: kept.intersection(found))
    sims = index.similarities(q, sorted(kept))
    want = [i for _, i in sorted(zip((-sims).tolist(), sorted(kept), strict=True))][:k]
    assert [i for i, _ in got] == want
    assert [i for i, _ in search_visible(index, q, k)] == [i for i, _ in index.search(q, k)]
