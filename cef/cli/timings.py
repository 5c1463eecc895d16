"""``--timings`` / ``CEF_TIMINGS=1``: where a command's wall time went, printed to stderr."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from cef import timing

__all__ = ["CommandTimings", "process_age"]

ENV = "CEF_TIMINGS"


def process_age() -> float | None:
    """Seconds since this process started (Linux ``/proc``; ``None`` elsewhere)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


class CommandTimings:
    """Phases of one command; the library's own (model loads) come from :mod:`cef.timing`."""

    def __init__(self, on: bool | None = None) -> None:
        self.on = on if on is not None else os.environ.get(ENV, "").strip().lower() in {"1", "true", "yes"}
        self._phases: list[tuple[str, float]] = []
        self._startup = process_age() if self.on else None
        self._t0 = time.perf_counter()
        if self.on:
            timing.reset()
            timing.enable()

    @contextmanager
    def phase(self, name: str, *, minus_library: bool = False) -> Iterator[None]:
        """Time ``name``; with ``minus_library`` the library phases recorded meanwhile are shown apart."""
        if not self.on:
            yield
            return
        before = sum(timing.phases().values())
        t0 = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - t0
            if minus_library:
                spent -= sum(timing.phases().values()) - before
            self._phases.append((name, spent))

    def report(self) -> None:
        if not self.on:
            return
        rows: list[tuple[str, float]] = []
        if self._startup is not None:
            rows.append(("start-up: interpreter and imports", self._startup))
        rows += self._phases
        rows += list(timing.phases().items())
        measured = time.perf_counter() - self._t0 + (self._startup or 0.0)
        width = max(len(n) for n, _ in rows) if rows else 10
        lines = ["timings (wall seconds):"]
        lines += [f"  {n:<{width}}  {s:7.3f}" for n, s in rows]
        lines.append(f"  {'total (process start to now)':<{width}}  {measured:7.3f}")
        print("\n".join(lines), file=sys.stderr)
        timing.enable(False)
