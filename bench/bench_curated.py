#!/usr/bin/env python3
"""Curated-graph questions (examples/services): Hits@1, Hits@5, path accuracy and chunk recall@3.

Checks the gold data, ingests ``examples/services/graph.yaml`` into a fresh
store with the same ingest ``cef ingest`` runs (default embedder), then sends
every question of ``examples/services/questions.yaml`` — its text and its
``as_of``, nothing else — to ``kb.retrieve(GraphQuery(...))`` with the default
settings, reads the answer nodes and their typed paths, and scores them
(see ``bench/harness/curated.py``). ``--also paths`` adds a run with an explicit
strategy, for comparison. Writes the table into ``bench/README.md`` under
"Curated graph questions (examples/services)" (only that section).

    .venv/bin/python bench/bench_curated.py [--also paths] [--no-readme]

Same as:  python bench/cli.py curated --graph examples/services/graph.yaml --questions examples/services/questions.yaml
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness.curated import CuratedReport, format_table, run_benchmark  # noqa: E402
from cef import SearchStrategy  # noqa: E402
from cef.cli.common import progress_bar  # noqa: E402

HEADING = "## Curated graph questions (examples/services)"


def run(graph: Path, questions: Path, strategy: SearchStrategy | None) -> CuratedReport:
    with tempfile.TemporaryDirectory(prefix="cef-curated-") as tmp, progress_bar(True) as bar:
        return run_benchmark(graph, questions, Path(tmp) / "curated.db", strategy=strategy, progress=bar)


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def section(reports: list[tuple[str, CuratedReport]], load: tuple[float, float], minutes: float) -> str:
    first = reports[0][1]
    dated = sum(1 for r in first.runs if r.as_of)
    silent = [label for label, rep in reports if not any(r.answers for r in rep.runs)]
    note = (
        f"\n\n{', '.join(silent)}: no question got an answer node (`SearchResult.nodes` empty every time), "
        "so Hits and path accuracy are 0 by construction; only the chunks were ranked."
        if silent
        else ""
    )
    tables = "\n\n".join(
        f"**{label}** (answered by: {', '.join(f'{k} {v}' for k, v in sorted(rep.answered_by.items()))}):\n\n"
        f"{format_table(rep.rows)}"
        for label, rep in reports
    )
    return f"""{HEADING}

`python bench/bench_curated.py` (or `python bench/cli.py curated --graph examples/services/graph.yaml
--questions examples/services/questions.yaml`): the software estate of a fictional shop
({first.nodes} curated nodes, {first.edges} edges, {first.chunks} chunks; ownership, on-call,
membership and some dependencies with validity windows) ingested with `cef ingest`'s pipeline
in {first.load_s:.1f} s, then {len(first.runs)} hand-written questions ({dated} about a past moment,
`as_of`), each sent as its text (and `as_of`) to `retrieve()`. Load average {load[0]:.1f} at the
start, {load[1]:.1f} at the end ({minutes:.1f} min in all); commit {commit()}.

{tables}{note}

- **Hits@1 / Hits@5**: the first / any of the first five answer nodes
  (`SearchResult.nodes`) is a gold answer. A strategy that returns no answer
  nodes scores 0 here whatever its chunks.
- **path acc.**: the top answer's typed path walks the gold relations in the
  gold directions (an inverse name and a reversed hop of the stored relation
  count alike). **anchor acc.**: that path starts at the gold anchor node.
- **chunk R@3**: share of the gold chunks (postmortems, runbooks, decision
  records; given for n questions) in the first three ranked chunks.
- **strategy=paths** (with `--also paths`) asks the same questions with
  `strategy=PATHS` set explicitly: the typed relation-path reasoning alone,
  without the rest of the default route (its answer nodes are the route's;
  the chunks differ). The store is warmed (`kb.warm()`: relation-path vectors
  of up to 3 hops) before the first question; a question's candidate paths not
  embedded yet are embedded for the best 150 by their words only.
- The gold data is checked before the run: every gold path, walked over the
  graph file's edges valid at the question's `as_of` (default now), reaches
  exactly the gold answers.
"""


def write_readme(path: Path, text: str) -> None:
    """Replace this benchmark's section of the README (or append it), leaving the others alone."""
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = old.find(HEADING)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    else:
        nxt = old.find("\n## ", start + len(HEADING))
        rest = old[nxt + 1 :] if nxt >= 0 else ""
        new = old[:start] + text.rstrip("\n") + "\n" + ("\n" + rest if rest else "")
    path.write_text(new, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", type=Path, default=ROOT / "examples" / "services" / "graph.yaml")
    ap.add_argument("--questions", type=Path, default=ROOT / "examples" / "services" / "questions.yaml")
    ap.add_argument(
        "--also", type=SearchStrategy, action="append", default=[], help="also run with this strategy"
    )
    ap.add_argument("--readme", type=Path, default=ROOT / "bench" / "README.md")
    ap.add_argument("--no-readme", action="store_true", help="print the section instead of writing it")
    args = ap.parse_args()

    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    reports = [("default (auto)", run(args.graph, args.questions, None))]
    for s in args.also:
        reports.append((f"strategy={s.value}", run(args.graph, args.questions, s)))
    minutes = (time.perf_counter() - t0) / 60
    text = section(reports, (load0, os.getloadavg()[0]), minutes)
    print(text)
    if not args.no_readme:
        write_readme(args.readme, text)
        print(f"wrote the section into {args.readme}", file=sys.stderr)


if __name__ == "__main__":
    main()
