#!/usr/bin/env python3
"""Query encoding and query NER latency, and dev recall with each embedder runtime, one command.

Part 1 (always): the questions of musique-100 (or generated ones when the
benchmark folder is missing) encoded one at a time, as a query is, by the
reference runtime (sentence-transformers on torch) and ONNX Runtime (int8 and
float32), interleaved so machine load hits all alike: p50 / p95 and the ratio;
batch throughput on passages; model load time; and spaCy NER of each question
(the query-side extractor, without and with the per-question cache).

Part 2 (``--recall``): for each dataset a fresh store built and queried with
the default route once per runtime (torch, then onnx), Recall@2 / @5 side by
side with the difference.

    .venv/bin/python bench/bench_embed.py --bench ../shared/bench
    .venv/bin/python bench/bench_embed.py --bench ../shared/bench --recall
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cef.embed import MiniLMEmbedder  # noqa: E402

RUNTIMES = (("torch", "float32"), ("onnx", "int8"), ("onnx", "float32"))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def questions_and_passages(bench: Path, n: int) -> tuple[list[str], list[str]]:
    folder = bench / "musique-100"
    if folder.is_dir():
        qs = [q["question"] for q in read_jsonl(folder / "questions.jsonl.gz")]
        ps = [f"{p.get('title', '')}\n{p['text']}" for p in read_jsonl(folder / "corpus.jsonl.gz")[:256]]
    else:
        qs = [
            f"Who directed the film about {w} released in {1950 + i}?"
            for i, w in enumerate(["war", "love"] * 50)
        ]
        ps = [" ".join(["A passage about films and their directors."] * 8)] * 256
    return (qs * (n // max(len(qs), 1) + 1))[:n], ps


def encoder_table(questions: list[str], passages: list[str]) -> str:
    embedders = {}
    loads = {}
    for runtime, precision in RUNTIMES:
        emb = MiniLMEmbedder(runtime=runtime, precision=precision)
        t0 = time.perf_counter()
        emb.load()
        loads[(runtime, precision)] = time.perf_counter() - t0
        emb.embed_query("warm up")
        embedders[(runtime, precision)] = emb
    lat: dict[tuple[str, str], list[float]] = {k: [] for k in embedders}
    for q in questions:
        for key, emb in embedders.items():
            t0 = time.perf_counter()
            emb.embed_query(q)
            lat[key].append((time.perf_counter() - t0) * 1000)
    rate = {}
    for key, emb in embedders.items():
        t0 = time.perf_counter()
        emb.embed(passages)
        rate[key] = len(passages) / (time.perf_counter() - t0)
    ref = lat[("torch", "float32")]
    rows = [
        "| runtime | query p50 ms | query p95 ms | p95 vs torch | passages/s (batch 64) | model load s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key in embedders:
        p50, p95 = statistics.median(lat[key]), pct(lat[key], 0.95)
        label = "sentence-transformers (torch)" if key[0] == "torch" else f"ONNX Runtime {key[1]}"
        rows.append(
            f"| {label} | {p50:.1f} | {p95:.1f} | {pct(ref, 0.95) / p95:.1f}× faster | {rate[key]:.0f} | "
            f"{loads[key]:.2f} |"
        )
    return "\n".join(rows)


def ner_table(questions: list[str]) -> str:
    from cef.extract.spacy_ner import SpacyEntityExtractor, load_spacy

    t0 = time.perf_counter()
    load_spacy()
    load_s = time.perf_counter() - t0
    ext = SpacyEntityExtractor(titles_as_entities=False)
    ext.extract_query("warm up")
    cold: list[float] = []
    for q in questions:
        ext.clear_query_cache()
        t0 = time.perf_counter()
        ext.extract_query(q)
        cold.append((time.perf_counter() - t0) * 1000)
    warm: list[float] = []
    for q in questions:
        t0 = time.perf_counter()
        ext.extract_query(q)
        warm.append((time.perf_counter() - t0) * 1000)
    return "\n".join(
        [
            "| query NER (spaCy tok2vec + ner) | p50 ms | p95 ms |",
            "|---|---:|---:|",
            f"| a new question | {statistics.median(cold):.2f} | {pct(cold, 0.95):.2f} |",
            f"| the same question again (cached) | {statistics.median(warm):.3f} | {pct(warm, 0.95):.3f} |",
            f"| model load | {load_s:.2f} s | |",
        ]
    )


def recall_table(bench: Path, datasets: list[str]) -> str:
    from bench.harness.passages import build_store, compare
    from cef.model import SearchStrategy

    rows = [
        "| dataset | runtime | Recall@2 | Recall@5 | Recall@10 | index s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name in datasets:
        got = {}
        for runtime in ("torch", "onnx"):
            emb = MiniLMEmbedder(runtime=runtime)
            with tempfile.TemporaryDirectory(prefix=f"cef-{name}-{runtime}-") as tmp:
                kb, index = build_store(
                    bench / name / "corpus.jsonl.gz",
                    Path(tmp) / "kb.db",
                    embedder=emb,  # type: ignore[arg-type]
                    progress=log,
                )
                try:
                    questions = read_jsonl(bench / name / "questions.jsonl.gz")
                    (score,) = compare(
                        kb, questions, [SearchStrategy.AUTO], label=f"{name}-{runtime}", progress=log
                    )
                finally:
                    kb.close()
            m = score.metrics
            got[runtime] = m
            rows.append(
                f"| {name} | {runtime} | {m['recall@2']:.1f} | {m['recall@5']:.1f} | {m['recall@10']:.1f} | "
                f"{index.total_s:.0f} |"
            )
        d2 = got["onnx"]["recall@2"] - got["torch"]["recall@2"]
        d5 = got["onnx"]["recall@5"] - got["torch"]["recall@5"]
        rows.append(f"| {name} | onnx − torch | {d2:+.1f} | {d5:+.1f} | | |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--bench", type=Path, default=REPO.parent / "shared" / "bench", help="benchmark data folder"
    )
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--recall", action="store_true", help="also build each dataset once per runtime")
    ap.add_argument("--datasets", default="musique-100,2wiki-dev")
    args = ap.parse_args()
    t0 = time.perf_counter()
    questions, passages = questions_and_passages(args.bench, args.queries)
    print(encoder_table(questions, passages), end="\n\n", flush=True)  # each table as soon as it is measured
    print(ner_table(questions), end="\n\n", flush=True)
    if args.recall:
        print(recall_table(args.bench, [d for d in args.datasets.split(",") if d]), end="\n\n", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    print(
        f"{len(questions)} questions, {os.cpu_count()} CPUs; load average at the end {load:.1f}; "
        f"total {time.perf_counter() - t0:.0f} s."
    )


if __name__ == "__main__":
    main()
