"""A small thread-safe TTL cache whose entries are only valid for one state of the knowledge base."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["StampedTTLCache"]

V = TypeVar("V")


class StampedTTLCache(Generic[V]):
    """Entries expire after ``ttl`` seconds, and all of them when the *stamp* changes.

    The stamp identifies the state of the data the values were computed from
    (for cef: the change-feed sequence and the store's data version), so a
    write in this process (which also calls :meth:`clear`) or in another
    process makes every cached value a miss. Least recently used entries are
    evicted beyond ``max_entries``. ``ttl <= 0`` or ``max_entries == 0``
    disables the cache.
    """

    def __init__(
        self, ttl: float, max_entries: int = 1024, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._data: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()
        self._stamp: Hashable = None
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.ttl > 0 and self.max_entries > 0

    def __len__(self) -> int:
        return len(self._data)

    def _restamp(self, stamp: Hashable) -> None:
        if stamp != self._stamp:
            self._data.clear()
            self._stamp = stamp

    def get(self, key: Hashable, stamp: Hashable) -> V | None:
        if not self.enabled:
            return None
        with self._lock:
            self._restamp(stamp)
            found = self._data.get(key)
            if found is None or found[0] <= self._clock():
                if found is not None:
                    del self._data[key]
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return found[1]

    def put(self, key: Hashable, stamp: Hashable, value: V) -> None:
        if not self.enabled:
            return
        with self._lock:
            if stamp != self._stamp:  # computed from data that has changed since: do not keep it
                return
            self._data[key] = (self._clock() + self.ttl, value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._stamp = None
