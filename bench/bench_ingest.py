#!/usr/bin/env python3
"""Ingest throughput of a 10,000-passage corpus, with and without embeddings and entity extraction,
today's code beside a reference commit's, and the peak memory of a generated million-line file.

    python bench/bench_ingest.py                        # 10,000 passages, all four configurations
    python bench/bench_ingest.py --passages 500 --configs plain,embed
    python bench/bench_ingest.py --configs full --reference b5dd66d   # the default, old and new side by side
    python bench/bench_ingest.py --configs full,encode --precisions auto,bfloat16 --reference HEAD~1 --recall
    python bench/bench_ingest.py --generate 1000000 --configs plain   # 1M generated lines: peak RSS

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
* ``full``    — both (the default of ``cef ingest``; synonyms need the embedder);
* ``encode``  — no ingest: the embedding model alone on the passages' chunk texts (title + text,
  shortest first, the embedder's batches) — the ceiling of an ingest that embeds them.

Each configuration runs in its own process, so the peak RSS (``ru_maxrss``) is
its own. Models are loaded before the clock starts (their load time is shown
apart). Progress goes to stderr; the table to stdout.

``--reference COMMIT`` also runs each configuration with the code of that
commit (exported with ``git archive`` into a temporary folder and run by this
script's ``--child`` with that tree first on the path), on the same corpus in
the same run, so the table shows the two side by side. Both are timed per
stage the same way (:class:`Stages`: extraction, embedding of passages and of
names, the store write, the work after the last file). ``--precisions`` runs
this checkout's embedding configurations once per embedder precision (``auto``
is what the CPU gets by default; ``bfloat16`` forces the AMX path, slower on a
CPU without AMX). ``--recall`` also builds a store of musique-100 and of
2wiki-dev with each code through ``bench/cli.py passages`` (default settings)
and prints the default route's Recall@2 / @5 beside each other. ``--generate N`` replaces the corpus
by ``N`` generated passages (the real passages again and again with new ids
and shuffled sentences) — use it with ``--configs plain`` for the memory of a
million-line file. ``--batch-size`` is the records per transaction of the new
code's streamed ingest.
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

CONFIGS = ("plain", "embed", "extract", "full", "encode")
DATASETS = ("musique-100", "2wiki-dev")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def generate_corpus(bench: Path, n: int, out: Path) -> int:
    """Write ``n`` generated passages: the real ones again and again, sentences rotated, new ids."""
    from bench.harness.passages import read_jsonl

    base = [row for name in DATASETS for row in read_jsonl(bench / name / "corpus.jsonl.gz")]
    if not base:
        raise SystemExit(f"no passages under {bench}")
    with out.open("w", encoding="utf-8") as f:
        for i in range(n):
            row = base[i % len(base)]
            rnd = i // len(base)
            parts = _SENTENCE.split(row["text"])
            k = rnd % len(parts)
            text = " ".join(parts[k:] + parts[:k])
            f.write(json.dumps({"id": f"g{i}", "title": row.get("title"), "text": text}) + "\n")
    return min(n, len(base))


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


def encode_only(corpus: Path, precision: str | None = None) -> dict[str, Any]:
    """The encoder alone on the passages' chunk texts (title + text, as ingest embeds them: each
    distinct text once, shortest first, in the embedder's batches): the ceiling of any ingest that
    embeds its passages with this model on this machine."""
    from cef.engine.embedding import embed_texts

    t0 = time.perf_counter()
    embedder = _embedder(precision)
    embedder.embed(["warm up"])
    embedder.embed([f"warm up the batch path {i}" for i in range(64)])
    load_s = time.perf_counter() - t0
    rows = [json.loads(line) for line in corpus.open(encoding="utf-8")]
    texts = [f"{r['title']}\n{r['text']}" if r.get("title") else r["text"] for r in rows]
    t1 = time.perf_counter()
    embed_texts(embedder, texts, "encoding")
    return {
        "config": "encode",
        "seconds": time.perf_counter() - t1,
        "load_s": load_s,
        "chunks": len(texts),
        "nodes": 0,
        "edges": 0,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "db_mb": 0.0,
        "stages": {"embed passages": time.perf_counter() - t1},
        "embedder": _describe(embedder),
    }


class Stages:
    """Seconds per ingest stage, each counted once (a stage inside another is taken out of the outer one).

    Installed by wrapping the functions every stage goes through, so it times the code of any tree
    (this checkout or a reference commit) the same way: entity extraction, embedding of passages and
    of names, the store write, and the work after the last file (relation paths, entity index)."""

    NAMES = ("extract", "embed passages", "embed names", "write", "prepare")

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(self.NAMES, 0.0)
        self._stack: list[list[float]] = []

    def wrap(self, owner: Any, attr: str, stage: Any) -> None:
        inner = getattr(owner, attr)
        stages = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            name = stage(args, kwargs) if callable(stage) else stage
            stages._stack.append([time.perf_counter(), 0.0])
            try:
                return inner(*args, **kwargs)
            finally:
                start, nested = stages._stack.pop()
                took = time.perf_counter() - start
                stages.seconds[name] += took - nested
                if stages._stack:
                    stages._stack[-1][1] += took

        setattr(owner, attr, timed)

    def install(self) -> None:
        import cef.engine.embedding as embedding_module
        import cef.engine.indexer as indexer
        import cef.ingest.enrich as enrich
        from cef.engine.retriever import KnowledgeRetriever

        def embedding(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
            what = str(args[2] if len(args) > 2 else kwargs.get("what", ""))
            return "embed passages" if "chunks" in what or "nodes" in what else "embed names"

        self.wrap(enrich.EntityEnricher, "_extract", "extract")
        self.wrap(embedding_module, "embed_texts", embedding)
        enrich.embed_texts = embedding_module.embed_texts
        self.wrap(indexer.KnowledgeIndexer, "upsert_batch", "write")
        self.wrap(KnowledgeRetriever, "prepare_paths", "prepare")
        self.wrap(KnowledgeRetriever, "prepare_entities", "prepare")


def _embedder(precision: str | None) -> Any:
    from cef.embed import get_default_embedder

    if not precision:
        return get_default_embedder()
    from cef.embed import MiniLMEmbedder

    return MiniLMEmbedder(precision=precision)


def run_child(
    config: str, corpus: Path, db: Path, batch_size: int | None, precision: str | None = None
) -> dict[str, Any]:
    """One configuration, in this process: load models, ingest, report."""
    if config == "encode":
        return encode_only(corpus, precision)
    import cef
    from cef.ingest.pipeline import DEFAULT_BATCH_SIZE, ingest_sources, make_enricher

    t0 = time.perf_counter()
    embedder: Any = None
    if config in ("embed", "full"):
        embedder = _embedder(precision)
        embedder.embed(["warm up"])
        embedder.embed([f"warm up the batch path {i}" for i in range(64)])
    enricher = None
    if config in ("extract", "full"):
        enricher = make_enricher()
        if enricher is None:
            raise SystemExit("entity extraction needs the nlp extra (spaCy and en_core_web_sm)")
        enricher.extractor.extract(["Warm up with Ada Lovelace in London."])  # type: ignore[attr-defined]
    load_s = time.perf_counter() - t0
    stages = Stages()
    stages.install()
    kb = cef.open(db, embedder=embedder)
    try:
        t1 = time.perf_counter()
        report = ingest_sources(
            kb, [str(corpus)], extract=False, enricher=enricher, batch_size=batch_size or DEFAULT_BATCH_SIZE
        )
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
        "stages": stages.seconds,
        "embedder": _describe(embedder),
    }


def _describe(embedder: Any) -> str:
    if embedder is None:
        return "none"
    describe = getattr(embedder, "describe", None)
    if callable(describe):
        return str(describe())
    return f"{getattr(embedder, 'runtime', '?')} {getattr(embedder, 'precision', '?')}"


DESCRIPTION = {
    "plain": "no embeddings, no extraction",
    "embed": "embeddings (MiniLM), no extraction",
    "extract": "entity extraction (spaCy), no embeddings",
    "full": "embeddings + entity extraction (default)",
    "encode": "the encoder alone on the chunk texts (no ingest)",
}


def export_reference(commit: str, into: Path) -> Path:
    """The tree of ``commit`` in ``into`` (``git archive``), to run the reference code from; a folder
    given instead of a commit is that tree already (e.g. an export made before the run)."""
    if Path(commit).is_dir():
        return Path(commit).resolve()
    tar = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=False)
    if tar.returncode != 0:
        raise SystemExit(f"cannot export {commit}: {tar.stderr.decode(errors='replace').strip()}")
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar.stdout, check=True)
    return into


def run_config(
    config: str, corpus: Path, db: Path, tree: Path, batch_size: int | None, precision: str | None = None
) -> dict[str, Any]:
    """One configuration in a fresh process with the code of ``tree`` (this checkout or a reference),
    run by this script's child (so both are timed by stage the same way)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", config, "--corpus", str(corpus)]
    cmd += ["--db", str(db), "--tree", str(tree)]
    if batch_size:
        cmd += ["--batch-size", str(batch_size)]
    if precision:
        cmd += ["--precision", precision]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(tree), check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{config} failed:\n{out.stderr[-3000:]}")
    row: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    # CPU time of the whole child (its worker processes included, model load too): on a shared machine
    # the wall-clock rate depends on the other jobs, the CPU seconds much less
    row["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return row


def run_recall(tree: Path, bench: Path, dataset: str) -> dict[str, Any]:
    """The default route's Recall@2 / @5 on a dataset, from a store built by the code of ``tree``
    (its own ``bench/cli.py passages``: the public API with default settings)."""
    data = bench / dataset
    cmd = [sys.executable, str(tree / "bench" / "cli.py"), "passages", "--json"]
    cmd += ["--corpus", str(data / "corpus.jsonl.gz"), "--questions", str(data / "questions.jsonl.gz")]
    t0 = time.perf_counter()
    out = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=str(tree),
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"recall on {dataset} failed:\n{out.stderr[-3000:]}")
    got = json.loads(out.stdout)
    scores = got["results"][0]
    index = got["index"]
    return {
        "dataset": dataset,
        "recall@2": scores["recall@2"],
        "recall@5": scores["recall@5"],
        "index_s": index.get("total_s", 0.0),
        "seconds": time.perf_counter() - t0,
    }


def stage_table(rows: list[dict[str, Any]]) -> list[str]:
    """Seconds and passages/s per stage, one row per run."""
    names = Stages.NAMES
    lines = [
        "| configuration | code | embedder | " + " | ".join(f"{n} s (passages/s)" for n in names) + " |",
        "|---|---|---|" + "---:|" * len(names),
    ]
    for r in rows:
        st = r.get("stages", {})
        cells = [f"{st[n]:,.1f} ({r['chunks'] / st[n]:,.0f})" if st.get(n, 0) > 0.05 else "—" for n in names]
        lines.append(
            f"| {r['config']} | {r['code']} | {r.get('embedder', '?')} | " + " | ".join(cells) + " |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", type=int, default=10_000, help="corpus size")
    ap.add_argument("--generate", type=int, metavar="N", help="N generated passages instead of the corpus")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument(
        "--reference", metavar="COMMIT", help="also run the code of this commit (or folder), side by side"
    )
    ap.add_argument("--batch-size", type=int, default=None, help="records per transaction (new code)")
    ap.add_argument(
        "--bench", type=Path, default=REPO.parent / "shared" / "bench", help="benchmark data folder"
    )
    ap.add_argument(
        "--precisions",
        default="auto",
        help="embedder precisions this checkout runs, comma-separated (auto, float32, bfloat16)",
    )
    ap.add_argument(
        "--recall",
        action="store_true",
        help="also build musique-100 and 2wiki-dev stores with each code and score the default route",
    )
    ap.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    ap.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--precision", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.tree is not None:  # the code under test first (this script may come from another tree)
            sys.path.insert(0, str(args.tree))
        print(json.dumps(run_child(args.child, args.corpus, args.db, args.batch_size, args.precision)))
        return
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {unknown}: use {', '.join(CONFIGS)}")
    rows = []
    t0 = time.perf_counter()
    size = args.generate or args.passages
    with tempfile.TemporaryDirectory(prefix="cef-ingest-bench-") as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        if args.generate:
            original = generate_corpus(args.bench, args.generate, corpus)
        else:
            original = build_corpus(args.bench, args.passages, corpus)
        log(f"corpus: {size:,} passages ({original:,} original), {corpus.stat().st_size / 1e6:.1f} MB")
        trees = [("this checkout", REPO)]
        if args.reference:
            trees.insert(
                0, (f"reference {args.reference}", export_reference(args.reference, Path(tmp) / "ref"))
            )
        precisions = [p for p in args.precisions.split(",") if p]
        runs = [
            (config, label, tree, precision)
            for config in configs
            for label, tree in trees
            for precision in (precisions if tree == REPO else [None])
            if config in ("embed", "full", "encode") or precision == precisions[0] or tree != REPO
        ]
        for i, (config, label, tree, precision) in enumerate(runs, 1):
            code = label if precision in (None, "auto") else f"{label}, precision={precision}"
            log(f"[{i}/{len(runs)}] {config} ({code}): {DESCRIPTION[config]} …")
            db = Path(tmp) / f"{config}-{i}.db"
            row = run_config(
                config,
                corpus,
                db,
                tree,
                args.batch_size if tree == REPO else None,
                None if precision == "auto" else precision,
            )
            row["code"] = code
            log(f"[{i}/{len(runs)}] {config} ({code}): {row['chunks'] / row['seconds']:,.1f} passages/s")
            rows.append(row)
            for leftover in Path(tmp).glob(db.name + "*"):
                leftover.unlink()
        recall: list[tuple[str, dict[str, Any]]] = []
        if args.recall:
            for dataset in DATASETS:
                for label, tree in trees:
                    log(f"recall: {dataset} ({label}) …")
                    got = run_recall(tree, args.bench, dataset)
                    log(f"recall: {dataset} ({label}): R@2 {got['recall@2']}, R@5 {got['recall@5']}")
                    recall.append((label, got))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    how = "generated" if args.generate else "one JSON Lines file"
    print(f"**{size:,} passages** ({original:,} original; {how})\n")
    print(
        "| configuration | code | passages/s | seconds | CPU s | passages per CPU s | peak RSS | chunks | nodes "
        "| edges | database | model load |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {DESCRIPTION[r['config']]} | {r['code']} | {r['chunks'] / r['seconds']:,.1f} | {r['seconds']:,.2f} "
            f"| {r['cpu_s']:,.0f} | {r['chunks'] / max(r['cpu_s'], 1e-9):,.1f} "
            f"| {r['peak_rss_mb']:,.0f} MB | {r['chunks']:,} | {r['nodes']:,} | {r['edges']:,} | {r['db_mb']:,.0f} MB "
            f"| {r['load_s']:.1f} s |"
        )
    print("\nSeconds per stage (passages/s of that stage alone), outside model load:\n")
    print("\n".join(stage_table(rows)))
    if recall:
        print("\nDefault route, store built by each code (bench/cli.py passages):\n")
        print("| dataset | code | Recall@2 | Recall@5 | index s |")
        print("|---|---|---:|---:|---:|")
        for label, r in recall:
            print(
                f"| {r['dataset']} | {label} | {r['recall@2']:.2f} | {r['recall@5']:.2f} | {r['index_s']:,.0f} |"
            )
    print(
        f"\n{os.cpu_count()} CPUs, Python {platform.python_version()}, load average {load:.1f} at the end; "
        f"total {time.perf_counter() - t0:.0f} s."
    )


if __name__ == "__main__":
    main()
