"""Property values as constraints see them: missing values, equality keys, paths, and columns."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: what a property path yields when the property is absent or JSON null
MISSING: Any = _Missing()


def is_num(x: Any) -> bool:
    """int or float, not bool (JSON numbers)."""
    t = type(x)
    return t is int or t is float or (isinstance(x, int | float) and not isinstance(x, bool))


def value_key(x: Any, fold: bool = False) -> tuple[Any, ...]:
    """A hashable key under which two values are equal exactly when the constraint semantics say so."""
    if x is None or x is MISSING:
        return ("null",)
    if isinstance(x, bool):
        return ("bool", x)
    if is_num(x):
        return ("num", x)  # hash(1) == hash(1.0)
    if isinstance(x, str):
        return ("str", x.casefold() if fold else x)
    return ("json", json.dumps(x, sort_keys=True, default=str))


def get_path(props: Mapping[str, Any] | None, parts: Sequence[str]) -> Any:
    """``props['a']['b']`` for ``('a', 'b')``; list elements by index; MISSING when absent or null."""
    if type(props) is dict and len(parts) == 1:  # the common case, fast
        v = props.get(parts[0], MISSING)
        return MISSING if v is None else v
    cur: Any = props
    for part in parts:
        if isinstance(cur, Mapping):
            if part not in cur:
                return MISSING
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return MISSING
    return MISSING if cur is None else cur


@dataclass
class PropertyColumn:
    """One property of every node, factorized: ``values[codes[pos]]`` is node ``pos``'s value.

    ``values[0]`` is MISSING; ``numbers[pos]`` is the value as a float when it is
    a number, NaN otherwise (for vectorized numeric comparisons).
    """

    codes: np.ndarray  # int32 per node position
    values: list[Any]
    numbers: np.ndarray  # float64 per node position

    def __len__(self) -> int:
        return len(self.codes)

    @classmethod
    def build(cls, rows: Sequence[Mapping[str, Any] | None], path: str, size: int) -> PropertyColumn:
        parts = tuple(path.split("."))
        codes = np.zeros(size, dtype=np.int32)
        numbers = np.full(size, np.nan)
        values: list[Any] = [MISSING]
        index: dict[tuple[Any, ...], int] = {}
        for i, row in enumerate(rows):
            v = get_path(row, parts)
            if v is MISSING:
                continue
            key = value_key(v)
            code = index.get(key)
            if code is None:
                code = index[key] = len(values)
                values.append(v)
            codes[i] = code
            if is_num(v):
                numbers[i] = v
        return cls(codes, values, numbers)
