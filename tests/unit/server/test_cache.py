"""StampedTTLCache: expiry, stamps, eviction."""

from __future__ import annotations

from cef.server.cache import StampedTTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_hit_then_expiry() -> None:
    clock = Clock()
    cache: StampedTTLCache[str] = StampedTTLCache(10, clock=clock)
    assert cache.get("q", 1) is None
    cache.put("q", 1, "answer")
    clock.now = 9.9
    assert cache.get("q", 1) == "answer"
    clock.now = 10.0
    assert cache.get("q", 1) is None
    assert (cache.hits, cache.misses) == (1, 2)


def test_new_stamp_drops_everything() -> None:
    cache: StampedTTLCache[str] = StampedTTLCache(60)
    cache.get("a", 1)
    cache.put("a", 1, "A")
    cache.put("b", 1, "B")
    assert cache.get("a", 2) is None  # the data changed (another process wrote)
    assert cache.get("b", 2) is None
    assert len(cache) == 0


def test_value_computed_before_a_clear_is_not_kept() -> None:
    cache: StampedTTLCache[str] = StampedTTLCache(60)
    assert cache.get("a", 1) is None
    cache.clear()  # a write committed while "a" was being computed
    cache.put("a", 1, "stale")
    assert cache.get("a", 1) is None


def test_least_recently_used_is_evicted() -> None:
    cache: StampedTTLCache[int] = StampedTTLCache(60, max_entries=2)
    cache.get("x", 0)
    cache.put("a", 0, 1)
    cache.put("b", 0, 2)
    assert cache.get("a", 0) == 1  # a is now the most recent
    cache.put("c", 0, 3)
    assert cache.get("b", 0) is None
    assert cache.get("a", 0) == 1
    assert cache.get("c", 0) == 3


def test_disabled() -> None:
    cache: StampedTTLCache[int] = StampedTTLCache(0)
    assert not cache.enabled
    cache.get("a", 0)
    cache.put("a", 0, 1)
    assert cache.get("a", 0) is None
