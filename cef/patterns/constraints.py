"""Constraint evaluation, compiled once per execution and applied to whole arrays of moves.

Edge constraints read the index's numpy columns (weight, confidence, validity
times) and are fully vectorized; ``@relation``/``@scope``/``@label`` go through
a small table per code. Property constraints need node records: each node is
evaluated once per stage and the verdict memoized in an ``int8`` array, so a
node reached by many partial paths costs one property read.

Value semantics (shared by every type):

* numbers compare with numbers (``1 == 1.0``; booleans are not numbers),
  strings with strings (lexicographically, so ISO-8601 dates order correctly);
  any other pairing fails;
* a missing property (or JSON null) fails everything except NOT_IN and
  ``PROPERTY_EQUALS null``;
* on a list property, PROPERTY_EQUALS compares the whole list, PROPERTY_IN /
  NOT_IN / CONTAINS look at its elements.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from cef.graph.index import GraphIndex
from cef.model.patterns import EDGE_TIMES, Constraint, ConstraintTarget, ConstraintType, parse_time
from cef.patterns import npx
from cef.patterns.lookup import NodeLookup
from cef.patterns.values import MISSING, PropertyColumn, get_path, is_num, value_key

Predicate = Callable[[Any], bool]


_ORDER: dict[ConstraintType, Callable[[Any, Any], bool]] = {
    ConstraintType.GREATER_THAN: operator.gt,
    ConstraintType.LESS_THAN: operator.lt,
    ConstraintType.GREATER_THAN_EQUALS: operator.ge,
    ConstraintType.LESS_THAN_EQUALS: operator.le,
}


def make_predicate(c: Constraint) -> Predicate:
    """A function telling whether one property value satisfies ``c``."""
    t, fold, v = c.type, c.ignore_case, c.value

    def f(s: str) -> str:
        return s.casefold() if fold else s

    if t is ConstraintType.PROPERTY_EQUALS:
        key = value_key(v, fold)
        return lambda a: value_key(a, fold) == key
    if t in (ConstraintType.PROPERTY_IN, ConstraintType.NOT_IN):
        keys = frozenset(value_key(x, fold) for x in (v if isinstance(v, list) else [v]))

        def member(a: Any) -> bool:
            if isinstance(a, list):
                return any(value_key(x, fold) in keys for x in a)
            return value_key(a, fold) in keys

        if t is ConstraintType.PROPERTY_IN:
            return member
        return lambda a: not member(a)
    if t.is_comparison:
        op = _ORDER[t]
        if is_num(v):
            return lambda a: is_num(a) and op(a, v)
        sv = f(str(v))
        return lambda a: isinstance(a, str) and op(f(a), sv)
    if t is ConstraintType.CONTAINS:
        key = value_key(v, fold)
        needle = f(v) if isinstance(v, str) else None

        def contains(a: Any) -> bool:
            if isinstance(a, list):
                return any(value_key(x, fold) == key for x in a)
            return needle is not None and isinstance(a, str) and needle in f(a)

        return contains
    assert isinstance(v, str)
    if t is ConstraintType.STARTS_WITH:
        sv = f(v)
        return lambda a: isinstance(a, str) and f(a).startswith(sv)
    if t is ConstraintType.ENDS_WITH:
        sv = f(v)
        return lambda a: isinstance(a, str) and f(a).endswith(sv)
    rx = re.compile(v, re.IGNORECASE if fold else 0)
    return lambda a: isinstance(a, str) and rx.search(a) is not None


def _table(names: Sequence[str | None], pred: Predicate) -> np.ndarray:
    return np.fromiter((pred(MISSING if n is None else n) for n in names), dtype=np.bool_, count=len(names))


class NodeCheck:
    """Every node condition of one stage of a pattern (the start, or the node a step reaches).

    ``labels``: labels the node must have (all of them; ``None`` entries ignored);
    ``allowed``: optional boolean mask over positions (e.g. ends shared by
    other patterns); ``constraints``: NODE constraints.
    """

    def __init__(
        self,
        graph: GraphIndex,
        lookup: NodeLookup,
        *,
        labels: Sequence[str | None] = (),
        constraints: Sequence[Constraint] = (),
        allowed: np.ndarray | None = None,
    ) -> None:
        self.graph = graph
        self.lookup = lookup
        self.allowed = allowed
        self.impossible = False
        codes = {graph.labels.get(lb) for lb in labels if lb is not None}
        if None in codes or len(codes) > 1:
            self.impossible = True  # an unknown label, or two different labels required
        self.label_code: int | None = codes.pop() if len(codes) == 1 else None
        # (label code the constraint is limited to or None, table over codes, which column)
        self._coded: list[tuple[int | None, np.ndarray, str]] = []
        # (label code or None, property path or None for @id, predicate, constraint)
        self._per_node: list[tuple[int | None, str | None, Predicate, Constraint]] = []
        for c in constraints:
            if c.target is not ConstraintTarget.NODE:
                continue
            limit: int | None = None
            if c.node_label is not None:
                limit = graph.labels.get(c.node_label)
                if limit is None:
                    continue  # no node has that label: the constraint never applies
            pred = make_predicate(c)
            if c.property == "@label":
                self._coded.append((limit, _table(graph.labels.names, pred), "label"))
            elif c.property == "@scope":
                self._coded.append((limit, _table([None, *graph.scopes.names], pred), "scope"))
            else:
                self._per_node.append((limit, None if c.property == "@id" else c.property, pred, c))
        self._memo: np.ndarray | None = None
        self._columns: dict[str, PropertyColumn | None] = {}
        self.evaluated = 0  # nodes whose properties were read one by one

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        if self.impossible:
            return np.zeros(len(positions), dtype=np.bool_)
        labels = self.graph.node_label.view[positions]
        ok = np.ones(len(positions), dtype=np.bool_)
        if self.label_code is not None:
            ok &= labels == self.label_code
        if self.allowed is not None:
            ok &= self.allowed[positions]
        for limit, table, column in self._coded:
            codes = labels if column == "label" else self.graph.node_scope.view[positions] + 1
            passed = table[codes]
            ok &= passed if limit is None else (passed | (labels != limit))
        if self._per_node and ok.any():
            ok[ok] = self._memoized(positions[ok])
        return ok

    def _memoized(self, positions: np.ndarray) -> np.ndarray:
        if self._memo is None or len(self._memo) < len(self.graph.node_ids):
            self._memo = np.full(len(self.graph.node_ids), -1, dtype=np.int8)
        memo = self._memo
        todo = npx.unique(positions[memo[positions] < 0])
        if len(todo):
            memo[todo] = self._evaluate(todo)
        return memo[positions] == 1

    def _column(self, path: str, top: int) -> PropertyColumn | None:
        if path not in self._columns:
            fn = getattr(self.lookup, "column", None)
            self._columns[path] = fn(path) if fn is not None else None
        col = self._columns[path]
        return col if col is not None and len(col) > top else None

    def _evaluate(self, positions: np.ndarray) -> np.ndarray:
        """Vectorized over columns where the lookup has them, then one node at a time for the rest."""
        labels = self.graph.node_label.view[positions]
        ok = np.ones(len(positions), dtype=np.bool_)
        rest = []
        top = int(positions.max())
        for rule in self._per_node:
            limit, path, pred, c = rule
            col = self._column(path, top) if path is not None else None
            if col is None:
                rest.append(rule)
                continue
            verdict = _column_verdict(col, c, pred, positions)
            ok &= verdict if limit is None else (verdict | (labels != limit))
        if rest and ok.any():
            ok[ok] = self._one_by_one(positions[ok], rest)
        return ok.astype(np.int8)

    def _one_by_one(
        self, positions: np.ndarray, rules: list[tuple[int | None, str | None, Predicate, Constraint]]
    ) -> np.ndarray:
        self.evaluated += len(positions)
        needs_props = any(path is not None for _, path, _, _ in rules)
        props = self.lookup.properties(positions) if needs_props else [None] * len(positions)
        labels = self.graph.node_label.view[positions].tolist()
        ids = self.graph.node_ids
        parsed = [
            (limit, None if path is None else tuple(path.split(".")), pred) for limit, path, pred, _ in rules
        ]
        out = np.ones(len(positions), dtype=np.bool_)
        for i, (pos, p, lab) in enumerate(zip(positions.tolist(), props, labels, strict=True)):
            for limit, parts, pred in parsed:
                if limit is not None and lab != limit:
                    continue
                value = ids[pos] if parts is None else get_path(p, parts)
                if not pred(value):
                    out[i] = False
                    break
        return out


def _column_verdict(col: PropertyColumn, c: Constraint, pred: Predicate, positions: np.ndarray) -> np.ndarray:
    """``pred`` over a column: numeric comparisons on the float column, anything else once per distinct value."""
    if c.type.is_comparison and is_num(c.value):
        # NaN (not a number) compares False, as the one-by-one predicate does
        return np.asarray(_ORDER[c.type](col.numbers[positions], c.value), dtype=np.bool_)
    distinct, inv = npx.unique_inverse(col.codes[positions])
    values = col.values
    table = np.fromiter((pred(values[k]) for k in distinct.tolist()), dtype=np.bool_, count=len(distinct))
    return table[inv]


class EdgeCheck:
    """Every EDGE constraint of one step, evaluated on arrays of (edge, walked forward?) moves."""

    _COLUMNS: ClassVar[dict[str, str]] = {
        "@weight": "e_weight",
        "@confidence": "e_conf",
        "@valid_from": "e_from",
        "@valid_to": "e_to",
        "@recorded_at": "e_rec",
    }

    def __init__(self, graph: GraphIndex, constraints: Sequence[Constraint]) -> None:
        self.graph = graph
        self.constraints = [c for c in constraints if c.target is ConstraintTarget.EDGE]

    def __bool__(self) -> bool:
        return bool(self.constraints)

    def __call__(self, edges: np.ndarray, forward: np.ndarray) -> np.ndarray:
        ok = np.ones(len(edges), dtype=np.bool_)
        for c in self.constraints:
            if not ok.any():
                break
            ok &= self._one(c, edges, forward)
        return ok

    def _one(self, c: Constraint, edges: np.ndarray, forward: np.ndarray) -> np.ndarray:
        g = self.graph
        if c.property in self._COLUMNS:
            column = getattr(g, self._COLUMNS[c.property]).view[edges]
            return _numeric(c, column)
        pred = make_predicate(c)
        if c.property == "@relation":
            names = g.relations.names
            fwd_ok = _table(names, pred)
            bwd_ok = np.fromiter(
                (pred(_walked_backward(g, n)) for n in names), dtype=np.bool_, count=len(names)
            )
            codes = g.e_rel.view[edges]
            return np.where(forward, fwd_ok[codes], bwd_ok[codes])
        if c.property == "@scope":
            table = _table([None, *g.scopes.names], pred)
            return table[g.e_scope.view[edges] + 1]
        uniq, inv = npx.unique_inverse(edges)
        verdict = np.fromiter((pred(g.edge_ids[e]) for e in uniq.tolist()), dtype=np.bool_, count=len(uniq))
        return verdict[inv]


def _walked_backward(graph: GraphIndex, name: str) -> str:
    rt = graph.rel_types.get(name)
    if rt is not None and (rt.bidirectional or rt.inverse):
        return rt.inverse or name
    return name


def _numeric(c: Constraint, column: np.ndarray) -> np.ndarray:
    """Vectorized comparison of a numeric edge column (values cast to its dtype, so 0.7 matches 0.7)."""
    t = c.type
    raw = c.value if isinstance(c.value, list) else [c.value]
    values = [_edge_number(c.property, v) for v in raw]
    with np.errstate(over="ignore"):  # beyond the column's range: ±inf, which compares rightly
        arr = np.asarray(values, dtype=column.dtype)
    if t is ConstraintType.PROPERTY_EQUALS:
        return column == arr[0]
    if t is ConstraintType.PROPERTY_IN:
        return np.isin(column, arr)
    if t is ConstraintType.NOT_IN:
        return ~np.isin(column, arr)
    return np.asarray(_ORDER[t](column, arr[0]), dtype=np.bool_)


def _edge_number(prop: str, v: Any) -> float:
    if v is None:
        return {"@valid_from": -math.inf, "@valid_to": math.inf}.get(prop, math.nan)
    if prop in EDGE_TIMES:
        return parse_time(v)
    return float(v)
