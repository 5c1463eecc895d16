"""Growable typed arrays and string interning used by the in-memory graph."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any, TypeVar, overload

import numpy as np

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


class GrowArray:
    """A numpy array with amortized O(1) append (capacity doubles)."""

    __slots__ = ("_data", "_n")

    def __init__(self, dtype: Any, fill: Any = 0, capacity: int = 1024) -> None:
        self._data = np.full(max(capacity, 16), fill, dtype=dtype)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    @property
    def view(self) -> np.ndarray:
        """The live elements (a view: do not keep it across appends)."""
        return self._data[: self._n]

    def _reserve(self, extra: int) -> None:
        need = self._n + extra
        if need > len(self._data):
            cap = len(self._data)
            while cap < need:
                cap *= 2
            grown = np.empty(cap, dtype=self._data.dtype)
            grown[: self._n] = self._data[: self._n]
            self._data = grown

    def extend(self, values: Any) -> None:
        arr = np.asarray(values, dtype=self._data.dtype)
        self._reserve(len(arr))
        self._data[self._n : self._n + len(arr)] = arr
        self._n += len(arr)

    def adopt(self, values: np.ndarray) -> None:
        """Take ``values`` as the whole content (no copy when the dtype already matches)."""
        if not len(values):
            self._n = 0
            return
        self._data = np.ascontiguousarray(values, dtype=self._data.dtype)
        self._n = len(self._data)

    def __getitem__(self, key: Any) -> Any:
        return self.view[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.view[key] = value

    def clear(self) -> None:
        self._n = 0


class Interner:
    """Maps strings to small dense integer codes and back."""

    __slots__ = ("_codes", "names")

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self.names: list[str] = []

    def code(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            code = len(self.names)
            self._codes[name] = code
            self.names.append(name)
        return code

    def get(self, name: str) -> int | None:
        return self._codes.get(name)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self._codes


#: the separator of packed strings (a string holding it cannot be packed)
NUL = "\x00"


def spans(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions ``[start, start + count)`` of every span, concatenated in order (CSR rows,
    runs of a sorted array): one ``repeat`` instead of a Python loop of ``arange`` calls."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    return np.repeat(np.asarray(starts, dtype=np.int64) - np.cumsum(counts) + counts, counts) + np.arange(
        total
    )


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-d array, ascending: ``np.unique`` by one sort. NumPy 2.4's
    ``np.unique`` hashes instead, 6-15x slower on the int64 node and edge positions of a walk
    (500 to 80,000 values); this is the same result."""
    out = np.sort(np.asarray(values).ravel())
    if len(out) > 1:
        out = out[np.concatenate([[True], out[1:] != out[:-1]])]
    return out


def pack_strings(items: Sequence[str], error: type[Exception] = ValueError) -> np.ndarray:
    """``items`` as one UTF-8 byte array, NUL-separated (``error`` when an item holds a NUL)."""
    text = NUL.join(items)
    if text.count(NUL) != max(0, len(items) - 1):
        raise error("a string to save contains a NUL character")
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def unpack_strings(data: np.ndarray, count: int, error: type[Exception] = ValueError) -> list[str]:
    """The ``count`` strings :func:`pack_strings` made (``error`` when there are not that many)."""
    if count == 0:
        return []
    out = data.tobytes().decode("utf-8").split(NUL)
    if len(out) != count:
        raise error(f"expected {count} saved strings, found {len(out)}")
    return out


class _Rows(Sequence[T]):
    """Rows of different lengths over one flat store: row ``i`` spans ``ptr[i]:ptr[i + 1]``."""

    __slots__ = ("ptr",)

    def __init__(self, size: int, ptr: np.ndarray, what: str) -> None:
        if len(ptr) < 1 or int(ptr[-1]) != size:
            raise ValueError(f"row pointers end at {int(ptr[-1]) if len(ptr) else None}, {what} {size}")
        self.ptr = ptr

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def _row(self, a: int, b: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"row {i} of {n}")
        return self._row(int(self.ptr[i]), int(self.ptr[i + 1]))


class Ragged(_Rows[np.ndarray]):
    """Rows of different lengths over one flat array: row ``i`` is ``flat[ptr[i]:ptr[i + 1]]`` (a view).

    Built or loaded in a few array operations, whatever the number of rows
    (a list of a million small arrays takes seconds to make).
    """

    __slots__ = ("flat",)

    def __init__(self, flat: np.ndarray, ptr: np.ndarray) -> None:
        super().__init__(len(flat), ptr, "the data has")
        self.flat = flat

    def _row(self, a: int, b: int) -> np.ndarray:
        return self.flat[a:b]


class RaggedStrings(_Rows[list[str]]):
    """Rows of strings over one list: row ``i`` is ``items[ptr[i]:ptr[i + 1]]`` (a new list)."""

    __slots__ = ("items",)

    def __init__(self, items: list[str], ptr: np.ndarray) -> None:
        super().__init__(len(items), ptr, "strings:")
        self.items = items

    def _row(self, a: int, b: int) -> list[str]:
        return self.items[a:b]


class SortedIndex(Mapping[int, int]):
    """``value -> its index`` over a sorted array of distinct integers (a binary search, no dict)."""

    __slots__ = ("_sorted",)

    def __init__(self, values: np.ndarray) -> None:
        self._sorted = values

    def __getitem__(self, value: int) -> int:
        i = int(np.searchsorted(self._sorted, value))
        if i < len(self._sorted) and self._sorted[i] == value:
            return i
        raise KeyError(value)

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, (int, np.integer)):
            return False
        i = int(np.searchsorted(self._sorted, value))
        return i < len(self._sorted) and bool(self._sorted[i] == value)

    def __iter__(self) -> Iterator[int]:
        return iter(self._sorted.tolist())

    def __len__(self) -> int:
        return len(self._sorted)


class RowMap(Mapping[K, T]):
    """``key -> value`` where the value is made from the key's row only when it is read.

    ``rows`` maps each key to its row number (a dict made from two lists in one
    C-level ``dict(zip(...))``), ``make`` turns a row number into the value: a
    saved index of a million names is opened without making a million values
    (lists, tuples, objects) of which a query reads a handful.
    """

    __slots__ = ("_make", "_rows")

    def __init__(self, rows: dict[K, int], make: Callable[[int], T]) -> None:
        self._rows = rows
        self._make = make

    def __getitem__(self, key: K) -> T:
        return self._make(self._rows[key])

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[K]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


_MISSING: Any = object()


class Overlay(MutableMapping[K, T]):
    """A mapping that reads through to ``base`` and writes to a dict of its own, so ``base`` (which
    readers of an older version may still hold) never changes: a new version of a million-key index
    costs only what changed. Overlays of overlays are flattened into one over the first base that is
    not an overlay (the tops merged, newest last), so a lookup is at most two probes.
    """

    __slots__ = ("base", "top")
    base: Mapping[K, T]
    top: dict[K, T]

    def __init__(self, base: Mapping[K, T]) -> None:
        top: dict[K, T] = {}
        while isinstance(base, Overlay):
            top = {**base.top, **top}
            base = base.base
        self.base = base
        self.top = top

    def __getitem__(self, key: K) -> T:
        value = self.top.get(key, _MISSING)
        if value is _MISSING:
            return self.base[key]
        return value

    def get(self, key: K, default: Any = None) -> Any:
        value = self.top.get(key, _MISSING)
        if value is _MISSING:
            return self.base.get(key, default)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self.top or key in self.base

    def __setitem__(self, key: K, value: T) -> None:
        self.top[key] = value

    def __delitem__(self, key: K) -> None:
        raise TypeError("an Overlay only grows")

    def __iter__(self) -> Iterator[K]:
        yield from self.base
        base = self.base
        yield from (k for k in self.top if k not in base)

    def __len__(self) -> int:
        base = self.base
        return len(base) + sum(1 for k in self.top if k not in base)
