"""The best-first walk as the route's anchored traversal stage (``walk.order``) and as the memory's."""

from __future__ import annotations

from pathlib import Path

import pytest

import cef
from cef import Batch, Chunk, Edge, GraphQuery, Node, RelationType, ResolutionTarget, TraversalHint
from cef.errors import ValidationError
from cef.model import SearchStrategy


def _kb(path: Path) -> cef.KnowledgeBase:
    kb = cef.open(path, embedder=None)
    # alpha -0.9-> strong -0.9-> deep, and alpha -0.2-> weak: breadth-first takes every neighbour
    # before a node two hops away; best first, the strong path goes on before the weak hop
    names = ("alpha", "weak", "strong", "deep")
    nodes = [Node(id=n, label="Thing", properties={"name": n.title()}) for n in names]
    edges = [
        Edge(id="e1", relation_type="LINKS", source="alpha", target="weak", confidence=0.2),
        Edge(id="e2", relation_type="LINKS", source="alpha", target="strong", confidence=0.9),
        Edge(id="e3", relation_type="LINKS", source="strong", target="deep", confidence=0.9),
    ]
    chunks = [Chunk(id=f"c-{n.id}", content=f"Notes on {n.id} and alpha.", node_id=n.id) for n in nodes]
    kb.index_batch(
        Batch(relation_types=[RelationType(name="LINKS")], nodes=nodes, edges=edges, chunks=chunks)
    )
    return kb


def _reached(kb: cef.KnowledgeBase, order: str | None, min_path_confidence: float = 0.0) -> set[str]:
    # one node expanded at a time (the default expands the best 8 of the queue together)
    options = {"walk": {"batch": 1, **({"order": order} if order else {})}}
    res = kb.retrieve(
        GraphQuery(
            query="alpha",
            strategy=SearchStrategy.HYBRID,
            targets=[ResolutionTarget(description="Alpha")],
            traversal=TraversalHint(depth=2, min_path_confidence=min_path_confidence),
            max_graph_nodes=3,
            min_results=1,
            options=options,
        )
    )
    ctx = res.reasoning_context
    assert ctx is not None
    return {n.id for n in [*ctx.root_nodes, *ctx.related_nodes]}


def test_the_route_walks_best_first_unless_its_settings_say_breadth(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        assert _reached(kb, "breadth") == {"alpha", "strong", "weak"}  # every neighbour first
        assert _reached(kb, "best") == {"alpha", "strong", "deep"}  # the likelier path first
        assert _reached(kb, None) == {"alpha", "strong", "deep"}  # the default: best first


def test_a_path_below_the_minimum_confidence_stops_either_way(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb:
        # alpha -> strong -> deep: 0.9 then 0.81; alpha -> weak: 0.2
        assert _reached(kb, "breadth", 0.85) == {"alpha", "strong"}
        assert _reached(kb, "best", 0.85) == {"alpha", "strong"}


def test_an_unknown_walk_order_is_refused(tmp_path: Path) -> None:
    with _kb(tmp_path / "kb.db") as kb, pytest.raises(ValidationError):
        _reached(kb, "random")
