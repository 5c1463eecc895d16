"""A small clinical graph built straight into a GraphIndex, and an executor over it.

Ann(70) -HAS_CONDITION(w2, c.9)-> RA <-HAS_CONDITION(w1, c.5)- Bob(40)
Cat(30) -HAS_CONDITION-> Diabetes
Bob -TAKES-> Methotrexate -TREATS-> RA        (TREATED_BY is TREATS' inverse)
Ann -TAKES-> Prednisone  -TREATS-> RA
Cat -TAKES-> Insulin     -TREATS-> Diabetes
Ann -KNOWS- Bob  (bidirectional; valid 2020..2022)
Dr House -TREATS_PATIENT-> Ann, Bob
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from cef.graph.index import GraphIndex
from cef.model import Edge, Node, RelationType
from cef.patterns import InMemoryNodeLookup, PatternExecutor

RELS = [
    RelationType(name="HAS_CONDITION", inverse="CONDITION_OF"),
    RelationType(name="TAKES"),
    RelationType(name="TREATS", inverse="TREATED_BY"),
    RelationType(name="KNOWS", bidirectional=True),
    RelationType(name="TREATS_PATIENT"),
]

NODES = [
    Node(id="ann", label="Patient", properties={"name": "Ann", "age": 70, "tags": ["smoker", "senior"]}),
    Node(id="bob", label="Patient", properties={"name": "Bob", "age": 40, "address": {"city": "Lyon"}}),
    Node(id="cat", label="Patient", properties={"name": "Cat", "age": 30, "address": {"city": "Paris"}}),
    Node(id="ra", label="Condition", properties={"name": "Rheumatoid arthritis", "code": "M05"}),
    Node(id="dia", label="Condition", properties={"name": "Diabetes", "code": "E11"}),
    Node(id="mtx", label="Drug", properties={"name": "Methotrexate", "status": "approved"}),
    Node(id="pred", label="Drug", properties={"name": "Prednisone", "status": "approved"}),
    Node(id="ins", label="Drug", properties={"name": "Insulin", "status": "withdrawn"}),
    Node(id="house", label="Doctor", properties={"name": "Dr House"}),
]


def _t(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


EDGES = [
    Edge(id="e_ann_ra", relation_type="HAS_CONDITION", source="ann", target="ra", weight=2.0, confidence=0.9),
    Edge(id="e_bob_ra", relation_type="HAS_CONDITION", source="bob", target="ra", weight=1.0, confidence=0.5),
    Edge(id="e_cat_dia", relation_type="HAS_CONDITION", source="cat", target="dia"),
    Edge(id="e_bob_mtx", relation_type="TAKES", source="bob", target="mtx", confidence=0.8),
    Edge(id="e_ann_pred", relation_type="TAKES", source="ann", target="pred", confidence=0.7),
    Edge(id="e_cat_ins", relation_type="TAKES", source="cat", target="ins"),
    Edge(id="e_mtx_ra", relation_type="TREATS", source="mtx", target="ra", weight=3.0),
    Edge(id="e_pred_ra", relation_type="TREATS", source="pred", target="ra", weight=0.5),
    Edge(id="e_ins_dia", relation_type="TREATS", source="ins", target="dia"),
    Edge(
        id="e_ann_bob",
        relation_type="KNOWS",
        source="ann",
        target="bob",
        valid_from=_t(2020),
        valid_to=_t(2022),
    ),
    Edge(id="e_h_ann", relation_type="TREATS_PATIENT", source="house", target="ann"),
    Edge(id="e_h_bob", relation_type="TREATS_PATIENT", source="house", target="bob"),
]


def build_graph() -> GraphIndex:
    g = GraphIndex()
    g.set_relation_types(RELS)
    g.add_nodes(NODES)
    g.add_edges(EDGES)
    return g


@pytest.fixture
def graph() -> GraphIndex:
    return build_graph()


class RowLookup:
    """Properties one node at a time only (no columns), like a store-backed lookup."""

    def __init__(self, inner: InMemoryNodeLookup) -> None:
        self.inner = inner

    def properties(self, positions: np.ndarray) -> Sequence[Mapping[str, Any] | None]:
        return self.inner.properties(positions)


@pytest.fixture(params=["columns", "rows"])
def executor(request: pytest.FixtureRequest, graph: GraphIndex) -> PatternExecutor:
    """An executor over the clinical graph, with a columnar lookup and with a row-only one."""
    lookup = InMemoryNodeLookup(graph, NODES)
    return PatternExecutor(graph, lookup if request.param == "columns" else RowLookup(lookup))


def random_graph(n: int, m: int, *, seed: int = 7, labels: int = 1) -> GraphIndex:
    """``n`` nodes (labels ``L0``..), ``m`` random ``R`` edges with random weight/confidence, bulk-loaded."""
    rng = np.random.default_rng(seed)
    g = GraphIndex()
    g.set_relation_types([RelationType(name="R")])
    ids = [f"n{i}" for i in range(n)]
    g.add_node_arrays(ids, [f"L{i % labels}" for i in range(n)], [None] * n)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    g.add_edge_arrays(
        [f"e{i}" for i in range(m)],
        [ids[s] for s in src],
        [ids[t] for t in dst],
        ["R"] * m,
        rng.uniform(0.1, 2.0, m).tolist(),
        rng.uniform(0.1, 1.0, m).tolist(),
        [-math.inf] * m,
        [math.inf] * m,
        [0.0] * m,
        [None] * m,
    )
    return g
