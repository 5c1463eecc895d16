#!/usr/bin/env python3
"""Two versions of the code side by side on MetaQA text-mode questions: latency ratios and answers.

Each source tree (``--a``, ``--b``: folders holding a ``cef`` package, e.g. a ``git archive`` of
a commit) runs in its own worker process on its own copy of one store, opened with the
default embedder and warmed (``kb.warm()``). The questions are then sent to the two workers
in turn, one question at a time, so both see the same machine load; each worker times its
own ``kb.retrieve(GraphQuery(query=question))``. Prints p50 / p95 per version, their ratio
(b / a), and every question whose ranked answers differ (Hits@1 must not move).

    PYTHONPATH=. .venv/bin/python bench/bench_ab.py --a /tmp/base --b . \\
        --kb ../shared/bench/metaqa/kb.tsv.gz --questions ../shared/bench/metaqa/questions_3hop.jsonl.gz --limit 1000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness.kgqa import load_triples, read_jsonl, read_triples  # noqa: E402

#: the worker: reads one question per line, answers with one JSON line (milliseconds, ranked answers)
WORKER = """
import json, sys, time
import cef
from cef import GraphQuery
from bench.harness.kgqa import limit_torch_threads
kb = cef.open(sys.argv[1], embedder="default")
limit_torch_threads(1)
kb.warm()
print("ready", flush=True)
for line in sys.stdin:
    q = json.loads(line)
    t = time.perf_counter()
    found = kb.retrieve(GraphQuery(query=q))
    ms = (time.perf_counter() - t) * 1000
    ranked = list(dict.fromkeys(a.node.name for a in found.nodes))
    print(json.dumps({"ms": ms, "answers": ranked[:10]}), flush=True)
kb.close()
"""


def _start(tree: Path, db: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(db)], cwd=tree, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        raise SystemExit(f"worker in {tree} did not start: {line!r}")
    return proc


def _ask(proc: subprocess.Popen[str], question: str) -> dict[str, Any]:
    stdin: IO[str] | None = proc.stdin
    assert stdin is not None and proc.stdout is not None
    stdin.write(json.dumps(question) + "\n")
    stdin.flush()
    return dict(json.loads(proc.stdout.readline()))


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _hit(answers: list[str], gold: list[str]) -> bool:
    norm = {g.strip().lower() for g in gold}
    return bool(answers) and answers[0].strip().lower() in norm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", type=Path, required=True, help="source tree of version a (the baseline)")
    ap.add_argument("--b", type=Path, required=True, help="source tree of version b")
    ap.add_argument("--kb", type=Path, required=True, help="triples (head<TAB>relation<TAB>tail)")
    ap.add_argument("--questions", type=Path, action="append", required=True, help="question file(s)")
    ap.add_argument("--limit", type=int, default=None, help="first N questions of each file")
    ap.add_argument("--warmup", type=int, default=20, help="questions answered before timing starts")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cef-ab-") as tmp:
        base = Path(tmp) / "a.db"
        loaded, _ = load_triples(read_triples(args.kb), base)
        loaded.close()
        other = Path(tmp) / "b.db"
        shutil.copy(base, other)
        workers = {"a": _start(args.a.resolve(), base), "b": _start(args.b.resolve(), other)}
        try:
            for path in args.questions:
                questions = read_jsonl(path)[: args.limit]
                for q in questions[: args.warmup]:
                    for w in workers.values():
                        _ask(w, str(q["question"]))
                ms: dict[str, list[float]] = {"a": [], "b": [], "ratio": []}
                hits = {"a": 0, "b": 0}
                differ: list[str] = []
                for n, q in enumerate(questions):
                    order = ("a", "b") if n % 2 == 0 else ("b", "a")  # neither always goes first
                    got = {k: _ask(workers[k], str(q["question"])) for k in order}
                    for k in ("a", "b"):
                        ms[k].append(got[k]["ms"])
                        hits[k] += _hit(got[k]["answers"], [str(x) for x in q["answers"]])
                    if got["a"]["answers"][:1] != got["b"]["answers"][:1]:
                        differ.append(
                            f"  {q['id']}: {q['question']!r}: a {got['a']['answers'][:1]} b {got['b']['answers'][:1]}"
                        )
                n_q = len(questions)
                print(f"{path.name}: {n_q} questions (after {args.warmup} warm-up)")
                for k in ("a", "b"):
                    print(f"  {k}: Hits@1 {100.0 * hits[k] / n_q:.1f}  p50 {_pct(ms[k], 0.5):.1f} ms  "
                          f"p95 {_pct(ms[k], 0.95):.1f} ms")  # fmt: skip
                print(f"  b / a: p50 {_pct(ms['b'], 0.5) / _pct(ms['a'], 0.5):.3f}  "
                      f"p95 {_pct(ms['b'], 0.95) / _pct(ms['a'], 0.95):.3f}  top answer differs on {len(differ)}")  # fmt: skip
                print("\n".join(differ[:50]))
        finally:
            for w in workers.values():
                if w.stdin is not None:
                    w.stdin.close()
                w.wait(timeout=60)


if __name__ == "__main__":
    main()
