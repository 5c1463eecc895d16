"""Sort-based set operations on integer arrays.

``np.unique`` without extra outputs hashes (slow for small int arrays in
numpy 2.x: ~1 ms for 5,000 values against ~30 µs to sort); these helpers sort.
"""

from __future__ import annotations

import numpy as np


def _first_flags(s: np.ndarray) -> np.ndarray:
    flags = np.empty(len(s), dtype=np.bool_)
    if len(s):
        flags[0] = True
        np.not_equal(s[1:], s[:-1], out=flags[1:])
    return flags


def unique(a: np.ndarray) -> np.ndarray:
    """Distinct values, ascending."""
    s = np.sort(a)
    return s[_first_flags(s)]


def unique_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values ascending, index into them of every element)."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    flags = _first_flags(s)
    inv = np.empty(len(a), dtype=np.int64)
    inv[order] = np.cumsum(flags) - 1
    return s[flags], inv


def unique_first(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values ascending, index of the first occurrence of each)."""
    order = np.argsort(a, kind="stable")
    flags = _first_flags(a[order])
    return a[order][flags], order[flags]
