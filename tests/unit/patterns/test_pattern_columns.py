"""Vectorized (column) and one-by-one (row) constraint evaluation agree on every kind of value."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.graph.index import GraphIndex
from cef.model import Node
from cef.patterns import Constraint, ConstraintType, InMemoryNodeLookup
from cef.patterns.constraints import NodeCheck

from .conftest import RowLookup

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False, allow_infinity=False),
    st.sampled_from(["a", "A", "ab", "ba", "b", "", "2024-01-01"]),
)
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3), st.just({"nested": 1}))
MISSING = object()


@st.composite
def constraints(draw: Any) -> Constraint:
    t = draw(st.sampled_from(list(ConstraintType)))
    if t in (ConstraintType.PROPERTY_IN, ConstraintType.NOT_IN):
        value: Any = draw(st.lists(SCALARS, max_size=3))
    elif t.is_comparison:
        value = draw(
            st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_nan=False), st.sampled_from(["a", "b"]))
        )
    elif t is ConstraintType.REGEX_MATCH:
        value = draw(st.sampled_from(["a", "^a", "b$", ".", "^$"]))
    elif t.is_text:
        value = draw(st.sampled_from(["a", "b", "", "A"]))
    elif t is ConstraintType.CONTAINS:
        value = draw(st.one_of(st.sampled_from(["a", "b", "A"]), st.integers(-3, 3), st.booleans()))
    else:
        value = draw(SCALARS)
    label = draw(st.sampled_from([None, "T0", "T1"]))
    return Constraint(type=t, property="p", value=value, ignore_case=draw(st.booleans()), node_label=label)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(VALUES, st.just(MISSING)), min_size=1, max_size=12), c=constraints())
def test_columns_and_rows_agree(values: list[Any], c: Constraint) -> None:
    g = GraphIndex()
    nodes = [
        Node(id=f"n{i}", label=f"T{i % 2}", properties={} if v is MISSING else {"p": v})
        for i, v in enumerate(values)
    ]
    g.add_nodes(nodes)
    lookup = InMemoryNodeLookup(g, nodes)
    positions = np.arange(len(values), dtype=np.int64)
    by_columns = NodeCheck(g, lookup, constraints=[c])(positions)
    by_rows = NodeCheck(g, RowLookup(lookup), constraints=[c])(positions)
    assert by_columns.tolist() == by_rows.tolist()


def test_columns_follow_updates() -> None:
    g = GraphIndex()
    nodes = [Node(id="a", label="T", properties={"p": 1}), Node(id="b", label="T", properties={"p": 5})]
    g.add_nodes(nodes)
    lookup = InMemoryNodeLookup(g, nodes)
    c = Constraint(type=ConstraintType.GREATER_THAN, property="p", value=2)
    pos = np.array([0, 1])
    assert NodeCheck(g, lookup, constraints=[c])(pos).tolist() == [False, True]
    lookup.update([Node(id="a", label="T", properties={"p": 9})])
    assert NodeCheck(g, lookup, constraints=[c])(pos).tolist() == [True, True]
    g.add_nodes([Node(id="c", label="T", properties={"p": 7})])  # a node the lookup has not seen
    assert NodeCheck(g, lookup, constraints=[c])(np.array([2])).tolist() == [False]
    assert lookup.column("p").codes.shape == (3,)


def test_edge_numbers_beyond_the_column_range_compare_without_overflow() -> None:
    """A schema-valid weight above float32's range (found by the MCP schema test) compares as infinity."""
    import warnings

    from cef.patterns.constraints import _numeric

    column = np.array([1.0, 2.0, 3.0e38], dtype=np.float32)
    big = 3.4028235677973366e38
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = _numeric(Constraint.edge("@weight", ConstraintType.NOT_IN, [big]), column)
        below = _numeric(Constraint.edge("@weight", ConstraintType.LESS_THAN, big), column)
        above = _numeric(Constraint.edge("@weight", ConstraintType.GREATER_THAN, -big), column)
    assert kept.tolist() == [True, True, True]
    assert below.tolist() == [True, True, True] and above.tolist() == [True, True, True]
