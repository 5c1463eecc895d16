"""Where a process's time goes: named phases, recorded only when a front door asks.

The CLI turns recording on for ``cef query --timings`` (or ``CEF_TIMINGS=1``)
and prints :func:`report` to stderr; the library marks its slow one-time steps
(loading a model) with :func:`timed`, which costs a dict lookup when off. ::

    with timed("model load: all-MiniLM-L6-v2 (onnx)"):
        ...
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["enable", "enabled", "phases", "record", "reset", "timed"]

_on = False
_phases: dict[str, float] = {}
_lock = threading.Lock()


def enable(on: bool = True) -> None:
    global _on
    _on = on


def enabled() -> bool:
    return _on


def reset() -> None:
    with _lock:
        _phases.clear()


def record(name: str, seconds: float) -> None:
    """Add ``seconds`` to phase ``name`` (when recording is on)."""
    if _on:
        with _lock:
            _phases[name] = _phases.get(name, 0.0) + seconds


@contextmanager
def timed(name: str) -> Iterator[None]:
    if not _on:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        record(name, time.perf_counter() - t0)


def phases() -> dict[str, float]:
    """The recorded phases in the order they were first seen, seconds each."""
    with _lock:
        return dict(_phases)
