"""Reads share the engine, writes hold it alone: the readers-writer lock and the engine on top of it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cef
from cef import Batch, Edge, Node, RelationType
from cef.engine.rwlock import RWLock

WAIT = 10.0  # seconds a test waits for another thread before calling it stuck


def test_two_reads_are_in_flight_at_once(tmp_path: Path) -> None:
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(Batch(nodes=[Node(id="a", label="T")]))
        both_inside = threading.Barrier(2, timeout=WAIT)
        seen: list[int] = []

        def read() -> None:
            with kb.state.reading():
                both_inside.wait()  # only passes when the other read is inside too
                seen.append(len(kb.find_nodes_by_label("T")))

        threads = [threading.Thread(target=read) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
        assert seen == [1, 1]
        assert not both_inside.broken


def test_a_write_waits_for_reads_and_reads_wait_for_a_write() -> None:
    lock = RWLock()
    order: list[str] = []
    reading = threading.Event()
    with lock.read():

        def write() -> None:
            with lock:
                order.append("write")

        w = threading.Thread(target=write)
        w.start()
        time.sleep(0.05)
        order.append("read done")
    w.join(WAIT)
    assert order == ["read done", "write"]

    order.clear()
    with lock:

        def read() -> None:
            reading.set()
            with lock.read():
                order.append("read")

        r = threading.Thread(target=read)
        r.start()
        reading.wait(WAIT)
        time.sleep(0.05)
        order.append("write done")
    r.join(WAIT)
    assert order == ["write done", "read"]


def test_a_waiting_writer_goes_before_new_readers() -> None:
    lock = RWLock()
    order: list[str] = []
    lock.acquire_read()
    writer = threading.Thread(target=lambda: (lock.acquire(), order.append("write"), lock.release()))
    writer.start()
    while not lock._writers_waiting:  # the writer is queued behind our read
        time.sleep(0.001)
    reader = threading.Thread(target=lambda: (lock.acquire_read(), order.append("read"), lock.release_read()))
    reader.start()
    time.sleep(0.05)
    assert order == []  # the new reader waits behind the writer
    lock.release_read()
    writer.join(WAIT)
    reader.join(WAIT)
    assert order == ["write", "read"]


def test_nesting_rules() -> None:
    lock = RWLock()
    with lock, lock, lock.read():  # the writer may write again and read
        assert lock.held_for_reading()
    with lock.read(), lock.read():
        assert lock.readers == 2
        with pytest.raises(RuntimeError, match="cannot take the write lock"):
            lock.acquire()
    assert lock.readers == 0 and not lock.held_for_reading()
    with pytest.raises(RuntimeError, match="without a matching"):
        lock.release_read()
    with pytest.raises(RuntimeError, match="does not hold"):
        lock.release()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["r", "w"]), min_size=2, max_size=12))
def test_never_a_writer_beside_anyone(kinds: list[str]) -> None:
    lock = RWLock()
    inside = {"r": 0, "w": 0}
    guard = threading.Lock()
    bad: list[dict[str, int]] = []

    def work(kind: str) -> None:
        for _ in range(20):
            with lock.read() if kind == "r" else lock.write():
                with guard:
                    inside[kind] += 1
                    if inside["w"] > 1 or (inside["w"] and inside["r"]):
                        bad.append(dict(inside))
                time.sleep(0)
                with guard:
                    inside[kind] -= 1

    threads = [threading.Thread(target=work, args=(k,)) for k in kinds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert not bad and inside == {"r": 0, "w": 0}


def test_reads_during_a_write_see_the_old_or_the_new_state(tmp_path: Path) -> None:
    n = 400
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(Batch(relation_types=[RelationType(name="R")], nodes=[Node(id="hub", label="Hub")]))
        stop = threading.Event()
        seen: set[tuple[int, int]] = set()
        errors: list[BaseException] = []

        def read() -> None:
            try:
                while not stop.is_set():
                    with kb.state.reading():
                        nodes = len(kb.find_nodes_by_label("T", limit=10 * n))
                        edges = len(kb.get_neighbors("hub", direction="out"))
                    seen.add((nodes, edges))
            except BaseException as exc:  # pragma: no cover - asserted below
                errors.append(exc)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for t in readers:
            t.start()
        time.sleep(0.05)
        nodes = [Node(id=f"n{i}", label="T") for i in range(n)]
        edges = [Edge(id=f"e{i}", relation_type="R", source="hub", target=f"n{i}") for i in range(n)]
        kb.index_batch(Batch(nodes=nodes, edges=edges))
        time.sleep(0.05)
        stop.set()
        for t in readers:
            t.join(WAIT)
        assert not errors
        assert seen <= {(0, 0), (n, n)} and (n, n) in seen
