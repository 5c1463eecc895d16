#!/usr/bin/env python3
"""Do time limits hold inside every stage, and how long does a write wait behind a slow read?

    python bench/bench_deadlines.py                         # 200K nodes / 1M edges (a few minutes)
    python bench/bench_deadlines.py --nodes 50000 --edges 250000 --limit-ms 20

Generates the typed graph of ``bench_scale.py --curated`` (five labels, eight relation types, a chunk
on every tenth node), then:

1. **Limits.** Every strategy answers the same questions twice through ``kb.retrieve``: without a
   limit, and with ``deadline_ms = --limit-ms``. Printed per strategy: median and worst time of
   each, and the worst overrun of the limited run past its limit (what a caller waits beyond the
   limit it set). A limit that holds inside every stage keeps the overrun small and independent
   of the graph's size; a check only between stages lets one stage run to its end.
2. **A write behind a slow read.** A reader thread asks the slowest strategy without a limit
   in a loop, then with the limit; the main thread meanwhile writes one node at a time. Printed: the
   writes' median and worst latency alone, behind unlimited reads and behind limited reads (ratios
   to alone). Reads share the engine and a write needs it alone (``cef.engine.rwlock``); a read
   doing graph work steps aside at its next check when a write waits, so a write waits about the
   longest stretch of a read between two checks, not the whole read.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cef
from bench.bench_scale import (
    BenchEmbedder,
    curated_questions,
    generate_curated,
)
from cef.model import GraphQuery, Node, SearchStrategy

STRATEGIES = [s for s in SearchStrategy if s is not SearchStrategy.PATTERN]


def timed(kb: Any, question: str, strategy: SearchStrategy, limit_ms: int | None) -> float:
    t = time.perf_counter()
    kb.retrieve(GraphQuery(query=question, strategy=strategy, top_k=10, deadline_ms=limit_ms))
    return (time.perf_counter() - t) * 1000


def limits(kb: Any, questions: list[str], limit_ms: int) -> tuple[list[str], SearchStrategy]:
    rows = [
        f"| strategy | no limit: median / worst ms | limit {limit_ms} ms: median / worst ms | worst overrun ms |",
        "| --- | ---: | ---: | ---: |",
    ]
    slowest, slowest_ms = SearchStrategy.AUTO, -1.0
    for strategy in STRATEGIES:
        free = [timed(kb, q, strategy, None) for q in questions]
        held = [timed(kb, q, strategy, limit_ms) for q in questions]
        if max(free) > slowest_ms:
            slowest, slowest_ms = strategy, max(free)
        rows.append(
            f"| {strategy.value} | {statistics.median(free):.0f} / {max(free):.0f} "
            f"| {statistics.median(held):.0f} / {max(held):.0f} | {max(0.0, max(held) - limit_ms):.0f} |"
        )
    return rows, slowest


def writes_behind(
    kb: Any, question: str, strategy: SearchStrategy, limit_ms: int | None, n: int, *, reads: bool = True
) -> list[float]:
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            kb.retrieve(GraphQuery(query=question, strategy=strategy, top_k=10, deadline_ms=limit_ms))

    reader = threading.Thread(target=read, daemon=True) if reads else None
    if reader is not None:
        reader.start()
        time.sleep(0.2)
    out = []
    for _ in range(n):
        nid = f"w{time.perf_counter_ns()}"
        t = time.perf_counter()
        kb.index_node(Node(id=nid, label="Person", properties={"name": nid}))
        out.append((time.perf_counter() - t) * 1000)
        time.sleep(0.05)
    stop.set()
    if reader is not None:
        reader.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--limit-ms", type=int, default=25)
    ap.add_argument("--writes", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.db"
        t = time.perf_counter()
        generate_curated(db, args.nodes, args.edges)
        print(
            f"generated {args.nodes:,} nodes / {args.edges:,} edges in {time.perf_counter() - t:.0f} s",
            flush=True,
        )
        qs = curated_questions(args.nodes, args.questions)
        table = {q["question"]: np.asarray(q["vector"], dtype=np.float32) for q in qs}
        questions = [q["question"] for q in qs]
        with cef.open(db, embedder=BenchEmbedder(table), embed_nodes="none") as kb:  # type: ignore[arg-type]
            kb.retrieve(GraphQuery(query=questions[0], top_k=1))  # warm: indexes built
            rows, slowest = limits(kb, questions, args.limit_ms)
            print("\n".join(rows), flush=True)
            alone = writes_behind(kb, questions[0], slowest, None, args.writes, reads=False)
            free = writes_behind(kb, questions[0], slowest, None, args.writes)
            held = writes_behind(kb, questions[0], slowest, args.limit_ms, args.writes)
            base = statistics.median(alone)
            print(f"\nwrites of one node (reader: {slowest.value} in a loop):")
            print("| reads meanwhile | median ms | worst ms | median / alone |")
            print("| --- | ---: | ---: | ---: |")
            for name, xs in (("none", alone), ("no limit", free), (f"limit {args.limit_ms} ms", held)):
                print(
                    f"| {name} | {statistics.median(xs):.1f} | {max(xs):.1f} | {statistics.median(xs) / base:.1f} |"
                )


if __name__ == "__main__":
    main()
