"""Progress of long commands: rich bars on a terminal, a plain line every few seconds otherwise.

The library reports progress to a callback ``(what, done, total)``
(:data:`cef.engine.state.ProgressFn`) counting records (passages, nodes,
chunks, questions), never printing anything itself. :func:`progress_bar`
turns that callback into output on stderr:

- on a terminal: one rich bar per task with count, rate and ETA;
- otherwise (a pipe, a log file, CI): a plain line per task every
  ``CEF_PROGRESS_INTERVAL`` seconds (default 5) and when the task ends; a
  heartbeat repeats the open tasks' lines (or says what finished last) when a
  step reports nothing for that long, so a long ingest is never silent for
  more than the interval;
- ``CEF_PROGRESS``: ``bar`` (or ``1``) forces bars, ``plain`` forces lines,
  ``0``/``off`` turns progress off; ``--no-progress`` turns it off too.

A task whose count goes back (the same step for the next file) starts over.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = ["PlainProgress", "ProgressCallback", "format_duration", "progress_bar", "progress_mode"]

ProgressCallback = Callable[[str, int, int], None]
Mode = Literal["bar", "plain", "off"]
DEFAULT_INTERVAL = 5.0


def progress_mode(enabled: bool = True, stream: IO[str] | None = None) -> Mode:
    """``bar`` on a terminal, ``plain`` elsewhere, ``off`` when disabled (``CEF_PROGRESS`` overrides)."""
    if not enabled:
        return "off"
    forced = os.environ.get("CEF_PROGRESS", "").strip().lower()
    if forced in ("0", "off", "no", "false"):
        return "off"
    if forced in ("1", "bar", "bars"):
        return "bar"
    if forced in ("plain", "line", "lines"):
        return "plain"
    target = stream if stream is not None else sys.stderr
    return "bar" if target.isatty() else "plain"


def _interval() -> float:
    raw = os.environ.get("CEF_PROGRESS_INTERVAL", "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_INTERVAL
    except ValueError:
        return DEFAULT_INTERVAL


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = round(max(seconds, 0.0))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


@dataclass
class _Task:
    started: float
    first: int
    done: int = 0
    total: int = 0
    printed: float = field(default=float("-inf"))
    finished: bool = False


class PlainProgress:
    """Plain progress lines (``what: 2,048/10,000 (20%) · 31.2/s · ETA 4m15s``), at most one per task
    every ``interval`` seconds, plus one when a task completes."""

    def __init__(
        self, out: IO[str], interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.out = out
        self.interval = interval
        self.clock = clock
        self.tasks: dict[str, _Task] = {}
        self.began = self.last_event = self.last_output = clock()
        self.last_what = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def __call__(self, what: str, done: int, total: int) -> None:
        with self._lock:
            now = self.clock()
            task = self.tasks.get(what)
            if task is None or done < task.done:
                # the work began when the step before it last reported, not at its first report
                task = self.tasks[what] = _Task(started=min(now, self.last_event), first=done)
            self.last_event, self.last_what = now, what
            task.done, task.total = done, total
            complete = total > 0 and done >= total
            if complete and task.finished:
                return
            if complete or now - task.printed >= self.interval:
                task.printed = now
                task.finished = complete
                self._write(self.line(what, task, now), now)

    def _write(self, text: str, now: float) -> None:
        self.out.write(text + "\n")
        self.out.flush()
        self.last_output = now

    def heartbeat(self) -> None:
        """Say something when nothing was printed for ``interval`` seconds (called by the beat thread)."""
        with self._lock:
            now = self.clock()
            if now - self.last_output < self.interval:
                return
            open_tasks = [(w, t) for w, t in self.tasks.items() if not t.finished]
            for what, task in open_tasks:
                task.printed = now
                self._write(self.line(what, task, now), now)
            if not open_tasks:
                after = f" (last: {self.last_what})" if self.last_what else ""
                self._write(f"working · elapsed {format_duration(now - self.began)}{after}", now)

    def start(self) -> None:
        """Beat every ``interval`` seconds in a daemon thread until :meth:`stop`."""
        if self.interval <= 0 or self._beat is not None:
            return

        def beat() -> None:
            while not self._stop.wait(self.interval / 2):
                self.heartbeat()

        self._beat = threading.Thread(target=beat, name="cef-progress", daemon=True)
        self._beat.start()

    def stop(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=1)

    @staticmethod
    def line(what: str, task: _Task, now: float) -> str:
        elapsed = now - task.started
        parts = [f"{what}: {task.done:,}/{task.total:,}" if task.total else f"{what}: {task.done:,}"]
        if task.total:
            parts[0] += f" ({100 * task.done / task.total:.0f}%)"
        rate = (task.done - task.first) / elapsed if elapsed > 0 else None
        if rate:
            parts.append(f"{rate:,.1f}/s")
        if task.total and task.done >= task.total:
            parts.append(f"done in {format_duration(elapsed)}")
        elif rate and task.total:
            parts.append(f"ETA {format_duration((task.total - task.done) / rate)}")
        else:
            parts.append(f"elapsed {format_duration(elapsed)}")
        return " · ".join(parts)


class _Bars:
    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.tasks: dict[str, tuple[TaskID, int]] = {}

    def __call__(self, what: str, done: int, total: int) -> None:
        known = self.tasks.get(what)
        if known is None or done < known[1]:
            if known is not None:
                self.bar.remove_task(known[0])
            task = self.bar.add_task(what, total=total or None)
        else:
            task = known[0]
        self.tasks[what] = (task, done)
        self.bar.update(task, completed=done, total=total or None)


class _RateColumn(ProgressColumn):
    """Records per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f}/s" if speed else "-/s", style="progress.data.speed")


@contextmanager
def progress_bar(
    enabled: bool = True, *, console: Console | None = None, stream: IO[str] | None = None
) -> Iterator[ProgressCallback]:
    """A progress callback ``(what, done, total)`` shown on stderr (see the module docstring)."""
    out = stream if stream is not None else sys.stderr
    mode = progress_mode(enabled, out)
    if mode == "off":
        yield lambda what, done, total: None
        return
    if mode == "plain":
        plain = PlainProgress(out, _interval())
        plain.start()
        try:
            yield plain
        finally:
            plain.stop()
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        _RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console or Console(file=out),
        transient=False,
    ) as bar:
        yield _Bars(bar)
