"""Growable typed arrays and string interning used by the in-memory graph."""

from __future__ import annotations

from typing import Any

import numpy as np


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
