#!/usr/bin/env python3
"""Every dev curated set in one table: Hits@1 (all, 2-3 hops), all answers @5, all chunks @5.

Runs each set of ``bench/curated/*`` (those with a graph and questions) and
``examples/{services,clinical}`` through the same harness as
``bench/cli.py curated`` (default route, default embedder), then prints one row
per set and a pooled row, so a change's effect shows on every set at once.
``--misses FILE`` writes each question that misses (gold, top answers, top path).

    PYTHONPATH=. .venv/bin/python bench/curated_all.py [--only museum,packages] [--misses misses.txt]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness.curated import QuestionRun, read_questions, run_benchmark  # noqa: E402


def sets() -> list[tuple[str, Path, Path]]:
    found = [
        (d.name, d / "graph.yaml", d / "questions.yaml")
        for d in sorted((ROOT / "bench" / "curated").iterdir())
        if (d / "graph.yaml").exists() and (d / "questions.yaml").exists()
    ]
    found += [(f"ex-{n}", ROOT / "examples" / n / "graph.yaml", ROOT / "examples" / n / "questions.yaml")
              for n in ("services", "clinical")]  # fmt: skip
    return found


def pct(runs: list[QuestionRun], key: str) -> str:
    vals = [getattr(r, key) for r in runs if getattr(r, key) is not None]
    return f"{100.0 * sum(map(bool, vals)) / len(vals):5.1f}" if vals else "    —"


def row(name: str, runs: list[QuestionRun]) -> str:
    deep = [r for r in runs if r.hops >= 2]
    return (f"| {name:<12} | {len(runs):3d} | {pct(runs, 'hit1')} | {pct(deep, 'hit1')} | {pct(runs, 'all5')} "
            f"| {pct(runs, 'chunks_all5')} | {pct(runs, 'path_ok')} |")  # fmt: skip


def warn(name: str) -> Callable[[str], None]:
    """Prints a frozen set's gold disagreement (the set is scored against its gold as written)."""

    def say(problem: str) -> None:
        print(f"[{name}] gold check: {problem}", file=sys.stderr)

    return say


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated set names")
    ap.add_argument("--misses", type=Path, help="write the misses here")
    args = ap.parse_args()
    only = {s for s in args.only.split(",") if s}
    lines = ["| set | n | Hits@1 | 2-3 hops | all ans @5 | all chunks @5 | path acc |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    pooled: list[QuestionRun] = []
    miss_lines: list[str] = []
    for name, graph, questions in sets():
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="cef-curated-all-") as tmp:
            report = run_benchmark(graph, questions, Path(tmp) / "c.db", on_gold_mismatch=warn(name))
        qs = {q.id: q for q in read_questions(questions)}
        for r in report.runs:
            if not (r.hit1 and r.all5 and r.chunks_all5 is not False):
                q = qs[r.id]
                miss_lines.append(
                    f"[{name}] {r.id} ({r.hops} hops) {'H' if r.hit1 else '-'}{'A' if r.all5 else '-'}"
                    f"{'C' if r.chunks_all5 is not False else '-'}{'P' if r.path_ok else '-'} {q.question}\n"
                    f"    gold {sorted(q.answers)} via {q.anchor} {list(q.path)}\n"
                    f"    got  {r.answers[:5]}\n    path {r.path}\n"
                    f"    chunks gold {list(q.chunks)} got {r.chunk_ids[:5]}"
                )
        lines.append(row(name, report.runs))
        pooled += report.runs
        print(lines[-1], file=sys.stderr, flush=True)
    lines.append(row("pooled", pooled))
    print("\n".join(lines))
    if args.misses:
        args.misses.write_text("\n".join(miss_lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
