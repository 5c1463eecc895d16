"""A readers-writer lock: reads run together, a write runs alone.

``with lock:`` (or ``with lock.write():``) holds the lock exclusively and is
reentrant for its thread; ``with lock.read():`` shares it with other readers.
A thread that holds the write lock may read; a thread that holds a read lock
may read again (even while a writer waits) but must not ask to write (that
would wait for itself: :class:`RuntimeError`). Waiting writers go before new
readers, so a stream of reads cannot starve a write.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RWLock"]


class RWLock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0  # read holds across threads (nested holds counted)
        self._writer: int | None = None  # the thread that writes
        self._write_depth = 0
        self._writers_waiting = 0
        self._local = threading.local()

    # ---------------------------------------------------------------- state
    def _my_reads(self) -> int:
        return getattr(self._local, "reads", 0)

    @property
    def readers(self) -> int:
        """Read holds right now (for tests and diagnostics)."""
        return self._readers

    @property
    def writers_waiting(self) -> int:
        """Threads waiting to write right now: a long read may yield to them (see ``YieldToWriter``)."""
        return self._writers_waiting

    def holds_one_read(self) -> bool:
        """Whether the calling thread holds exactly one read (and not the write lock): releasing it
        frees the lock of this thread, so a writer can go."""
        return self._my_reads() == 1 and self._writer != threading.get_ident()

    def held_for_reading(self) -> bool:
        """Whether the calling thread holds a read (or the write) lock."""
        return self._my_reads() > 0 or self._writer == threading.get_ident()

    # ---------------------------------------------------------------- reads
    def acquire_read(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me or self._my_reads() > 0:  # nested: never waits
                self._readers += 1
                self._local.reads = self._my_reads() + 1
                return
            while self._writer is not None or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
            self._local.reads = 1

    def release_read(self) -> None:
        with self._cond:
            if self._my_reads() <= 0:
                raise RuntimeError("release_read() without a matching acquire_read()")
            self._local.reads = self._my_reads() - 1
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    @contextmanager
    def read(self) -> Iterator[None]:
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    # --------------------------------------------------------------- writes
    def acquire(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._write_depth += 1
                return
            if self._my_reads() > 0:
                raise RuntimeError(
                    "a thread holding a read lock cannot take the write lock (it would deadlock)"
                )
            self._writers_waiting += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = me
            self._write_depth = 1

    def release(self) -> None:
        with self._cond:
            if self._writer != threading.get_ident():
                raise RuntimeError("release() by a thread that does not hold the write lock")
            self._write_depth -= 1
            if self._write_depth == 0:
                self._writer = None
                self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def __enter__(self) -> RWLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
