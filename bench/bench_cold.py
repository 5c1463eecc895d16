"""A cold ``cef query`` on the clinical example: wall and CPU seconds of whole processes, and where
the time went (``--timings``), this checkout beside a reference commit (prints a table).

    python bench/bench_cold.py                          # 7 cold queries with this checkout
    python bench/bench_cold.py --reference 659d217      # the same with that commit's code, side by side

Each code tree first ingests ``examples/clinical`` into a fresh folder
(``cef ingest``, as a user would), then answers the question in ``--runs``
new processes, one after the other (``python -m cef.cli query ... --timings``).
Wall seconds are measured around each process (interpreter start to exit);
CPU seconds are the process's user + system time (its threads included), which
depends much less on what else the machine runs. The table gives medians.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_ingest import export_reference  # noqa: E402

QUESTION = "Which medications interact with warfarin?"
PHASES = {
    "start-up: interpreter and imports": "start-up",
    "open the knowledge base": "open",
    "retrieve (without the model loads below)": "retrieve",
    "model load: all-MiniLM-L6-v2 (onnx)": "model load",
    "close": "close",
}


def cef(tree: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run ``python -m cef.cli ARGS`` with the code of ``tree``; (result, wall s, CPU s)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEF_")}
    env.update(PYTHONPATH=str(tree), HF_HUB_OFFLINE="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "cef.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"cef {' '.join(args)} failed ({tree}):\n{out.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, wall, cpu


def measure(tree: Path, work: Path, runs: int, question: str) -> dict[str, float]:
    db = work / "clinical.db"
    cef(tree, "ingest", str(tree / "examples" / "clinical"), "--db", str(db))
    rows: list[dict[str, float]] = []
    answers: set[str] = set()
    for _ in range(runs):
        out, wall, cpu = cef(tree, "query", question, "--db", str(db), "--timings")
        phases = dict(re.findall(r"^  (.+?)\s+(\d+\.\d{3})$", out.stderr, re.M))
        row = {"wall": wall, "cpu": cpu}
        row.update({short: float(phases.get(name, "nan")) for name, short in PHASES.items()})
        rows.append(row)
        answers.add("\n".join(line for line in out.stdout.splitlines() if not line.startswith("strategy:")))
    if len(answers) != 1:
        raise SystemExit(f"the answers of {tree} differ between runs")
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    med["answer"] = hash(answers.pop())
    return med


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7, help="cold queries per code tree")
    ap.add_argument("--reference", metavar="COMMIT", help="also run the code of this commit, side by side")
    ap.add_argument("--question", default=QUESTION)
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    results: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="cef-cold-") as tmp:
        trees = [("this checkout", REPO)]
        if args.reference:
            trees.insert(
                0, (f"reference {args.reference}", export_reference(args.reference, Path(tmp) / "ref"))
            )
        for i, (label, tree) in enumerate(trees):
            work = Path(tmp) / f"run{i}"
            work.mkdir()
            print(f"{label}: ingest, then {args.runs} cold queries …", file=sys.stderr, flush=True)
            results.append((label, measure(tree, work, args.runs, args.question)))
    print(f'**Cold `cef query "{args.question}"`** on examples/clinical, median of {args.runs} processes\n')
    cols = ["wall s", "CPU s", *PHASES.values()]
    print("| code | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for label, m in results:
        cells = [m["wall"], m["cpu"], *(m[v] for v in PHASES.values())]
        print(f"| {label} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    same = len({m["answer"] for _, m in results}) == 1
    print(
        f"\nPhases are `--timings` wall seconds (start-up: process start to the command; retrieve without "
        f"the model load). {os.cpu_count()} CPUs, load average {load0:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after; answers {'identical' if same else 'DIFFERENT'} across the codes."
    )


if __name__ == "__main__":
    main()
