#!/usr/bin/env python3
"""Passage retrieval on the shared multi-hop benchmarks: every strategy side by side, one command.

For each dataset (``musique-100``, ``2wiki-dev``) a fresh knowledge base is
built from ``corpus.jsonl.gz`` alone (JSON Lines parser + entity enricher, the
questions unseen), then BM25, vector only (the same embedding model), HYBRID,
GRAPH (seed 001), PPR and auto (the default chain) answer every question on
that same store. Recall@2/5/10 and MRR follow ``score.py``'s definitions;
latencies are wall-clock per ``kb.retrieve`` call.

    .venv/bin/python bench/bench_passages.py --bench ../shared/bench
    .venv/bin/python bench/bench_passages.py --bench ../shared/bench --readme bench/README.md

``--readme`` rewrites the "Passage retrieval" section of that file (and only
it). Runs go to ``bench/out/passages/`` (gitignored) for ``score.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness.passages import COMPARED, build_store, compare, format_table, read_jsonl  # noqa: E402
from cef import SearchStrategy  # noqa: E402

DATASETS = ("musique-100", "2wiki-dev")
HEADING = "## Passage retrieval"

NOTES = """\
How the store is built (from the corpus only, through `cef.ingest.pipeline.ingest_sources`): the JSON
Lines parser makes one chunk per passage; `cef.ingest.enrich.EntityEnricher` gives each chunk a
`Passage` node, links it by `MENTIONS` edges to its title entity (weight 4) and to the entities spaCy NER
and the gazetteer of names seen in the run find in its text (weight 1), adds `CO_OCCURS_WITH` edges
(mentions within 30 words) and `SYNONYM` edges (name embeddings with cosine >= 0.9), and embeds each
chunk as title + text. Every strategy then answers on that same store:

- **BM25**: SQLite FTS5 over the chunk text. **vector only**: cosine of the question to the chunk
  vectors (all-MiniLM-L6-v2, the model every other row uses).
- **HYBRID**: anchors from the question (node names and node vectors), a 2-hop traversal, vector ranking
  restricted to the chunks of the reached nodes (falls back to vector when nothing is reached).
- **GRAPH (seed 001)**: the question's entities (NER + gazetteer, exact/alias/fuzzy), traversal and the 10
  most co-occurring entities, the chunks mentioning what was reached, the question expanded with their
  names, `0.6 × cosine + 0.4 × graph relevance`.
- **PPR**: personalized PageRank (damping 0.5) over the `MENTIONS` graph, seeded by the question's
  entities (∝ confidence × log(1 + N/df), total 1) and the 5 closest passages (total 0.5), passages ranked
  by min-max PPR plus a 0.4 bridge bonus for passages titled by an entity of the 3 best ones
  (`cef/retrieve/ppr.py`). The research harness (`bench/research_passages.py`) measured this recipe
  at R@2 54.6 / R@5 74.2 on musique-100 and R@5 93.5 on 2wiki-dev.
- **auto**: the default chain, PPR → HYBRID → VECTOR → BM25 (`cef/retrieve/presets.py`); PPR does not
  apply to a knowledge base without `MENTIONS` edges (a curated graph such as the clinical example), where
  auto behaves as before (HYBRID first).

Index time is dominated by the embedding model (chunks, entity and passage node vectors, synonym
names) and spaCy NER; on this machine without other load, 400 musique passages ingest in about 28 s, 13 s
of it embedding the chunks. Query latency of PPR and GRAPH includes spaCy NER of the question and its
embedding; "answered by" counts the strategy that produced each result list after fallbacks.
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_dataset(bench: Path, name: str, strategies: list[SearchStrategy], top_k: int, runs: Path) -> str:
    with tempfile.TemporaryDirectory(prefix=f"cef-{name}-") as tmp:
        kb, index = build_store(bench / name / "corpus.jsonl.gz", Path(tmp) / "kb.db", progress=log)
        try:
            # the questions are read only now, after the store is built
            questions = read_jsonl(bench / name / "questions.jsonl.gz")
            scores = compare(kb, questions, strategies, top_k=top_k, runs_dir=runs, label=name, progress=log)
        finally:
            kb.close()
    rels = ", ".join(f"{k} {v:,}" for k, v in index.relations.items())
    return format_table(f"{name} ({len(questions)} questions)", scores, index) + f"\n\nEdges: {rels}."


def write_section(readme: Path, body: str) -> None:
    """Replace (or append) the "Passage retrieval" section; other sections stay as they are."""
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    section = f"{HEADING}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    readme.write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--bench", type=Path, default=REPO.parent / "shared" / "bench", help="benchmark data folder"
    )
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated dataset folders")
    ap.add_argument(
        "--strategies", default=",".join(s.value for s in COMPARED), help="comma-separated strategies"
    )
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--runs", type=Path, default=REPO / "bench" / "out" / "passages")
    ap.add_argument("--readme", type=Path, default=None, help="rewrite this file's Passage retrieval section")
    ap.add_argument("--notes", type=Path, default=None, help="Markdown appended under the tables")
    args = ap.parse_args()
    strategies = [SearchStrategy(s) for s in args.strategies.split(",") if s]
    t0 = time.perf_counter()
    tables = [
        run_dataset(args.bench, name, strategies, args.top_k, args.runs) for name in args.datasets.split(",")
    ]
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    machine = (
        f"Measured with `bench/bench_passages.py` (top-k {args.top_k}, all-MiniLM-L6-v2 on CPU, spaCy "
        f"en_core_web_sm) on {os.cpu_count()} CPUs, Python {platform.python_version()}; load average at the end "
        f"{load[0]:.1f} (other jobs shared the machine, so latencies and index times are upper bounds). "
        f"Total {time.perf_counter() - t0:.0f} s."
    )
    body = "\n\n".join([*tables, machine, NOTES])
    if args.notes is not None and args.notes.exists():
        body += "\n\n" + args.notes.read_text(encoding="utf-8").strip()
    print(body)
    if args.readme is not None:
        write_section(args.readme, body)
        log(f"wrote the {HEADING!r} section of {args.readme}")


if __name__ == "__main__":
    main()
