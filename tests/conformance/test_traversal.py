"""Traversal gives the same nodes, hops and paths on every backend (pushed down or in memory)."""

from __future__ import annotations

from cef import Batch, Edge, Node

from . import data
from .backends import Deployment

EXPECTED_A3 = [
    ("a", 0, []),
    ("b", 1, ["e-ab"]),
    ("e", 1, ["e-ae"]),
    ("f", 1, ["e-fa"]),
    ("c", 2, ["e-ab", "e-bc"]),
    ("d", 3, ["e-ab", "e-bc", "e-cd"]),
]


def test_neighbourhood(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    g = deployment.graph(kb)
    assert g.neighbourhood(["a"], 3, None, 100) == EXPECTED_A3
    assert g.neighbourhood(["a"], 1, None, 100) == EXPECTED_A3[:4]
    assert g.neighbourhood(["a"], 0, None, 100) == [("a", 0, [])]
    assert g.neighbourhood(["a"], 3, None, 3) == EXPECTED_A3[:3]
    assert g.neighbourhood(["a"], 4, ["LINKS"], 100) == [
        ("a", 0, []),
        ("b", 1, ["e-ab"]),
        ("c", 2, ["e-ab", "e-bc"]),
        ("d", 3, ["e-ab", "e-bc", "e-cd"]),
        ("e", 3, ["e-ab", "e-bc", "e-ec"]),
        ("h", 4, ["e-ab", "e-bc", "e-cd", "e-dh"]),
    ]
    assert g.neighbourhood(["a"], 3, [], 100) == [("a", 0, [])]
    assert g.neighbourhood(["a"], 2, ["NO_SUCH_RELATION"], 100) == [("a", 0, [])]
    # several seeds, a missing seed, an isolated node
    assert g.neighbourhood(["d", "missing", "g"], 1, None, 100) == [
        ("d", 0, []),
        ("g", 0, []),
        ("c", 1, ["e-cd"]),
        ("h", 1, ["e-dh"]),
    ]


def test_shortest_path(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    g = deployment.graph(kb)
    assert g.shortest_path("a", "d", 5) == ["e-ab", "e-bc", "e-cd"]
    assert g.shortest_path("f", "h", 10) == ["e-fa", "e-ab", "e-bc", "e-cd", "e-dh"]
    assert g.shortest_path("f", "h", 4) is None
    assert g.shortest_path("a", "a", 3) == []
    assert g.shortest_path("a", "g", 10) is None
    assert g.shortest_path("a", "missing", 10) is None
    assert g.shortest_path("a", "e", 5, ["LINKS"]) == ["e-ab", "e-bc", "e-ec"]


def test_traversal_follows_writes(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    g = deployment.graph(kb)
    kb.index_batch(
        Batch(
            nodes=[Node(id="q", label="Q")],
            edges=[Edge(id="e-gq", relation_type="LINKS", source="g", target="q")],
        )
    )
    assert g.neighbourhood(["g"], 2, None, 10) == [("g", 0, []), ("q", 1, ["e-gq"])]
    kb.delete_edge("e-gq")
    assert g.neighbourhood(["g"], 2, None, 10) == [("g", 0, [])]
    kb.update_node("q", {"name": "Q renamed"})
    assert g.neighbourhood(["q"], 1, None, 10) == [("q", 0, [])]


def test_engine_navigation_is_backend_independent(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    # the engine walks edges valid now: e-cd (valid until 2025-06-30) is not followed
    assert sorted(n.id for n in kb.get_neighbors("c")) == ["b", "e"]
    path = kb.find_path("f", "c")
    assert path is not None and path.node_ids == ["f", "a", "b", "c"]
    assert kb.find_path("f", "h") is None
    ctx = kb.extract_context("a", depth=2)
    assert {n.id for n in [*ctx.root_nodes, *ctx.related_nodes]} >= {"a", "b", "e", "f", "c"}
