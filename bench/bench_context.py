"""Context assembly figures: packing and formatting time, and token utilization (prints a table).

    python bench/bench_context.py                  # BM25 + graph retrieval (no model needed)
    python bench/bench_context.py --embed          # retrieval with the default embedding model
    python bench/bench_context.py --bench DIR      # folder holding musique-100/ (default: ../shared/bench)

The corpus is MuSiQue-100 (1,890 Wikipedia passages, one node per title with
its passages as chunks) and the queries are its first 50 questions. Retrieval
runs once, untimed; what is timed is :meth:`ContextProvider.assemble` — dedupe,
ranking, packing into the budget, rendering and the exact token count of the
rendered text — for:

* **per query**: 50 requests, one query each, top-10 chunks, 4,000-token budget;
* **50 × top-10 in one request**: all 50 queries in one request (up to 500
  candidate chunks) sharing one 4,000-token budget;

for every format and token counter. Utilization is the share of the budget the
rendered context uses (``total``) and the share filled with selected content
beyond the empty frame (``content``). The graph context provider's
``get_context`` is timed end to end (it includes its entity search).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cef
from cef import Batch, Chunk, Node
from cef.context import (
    ContextFormat,
    ContextProvider,
    ContextRequest,
    GraphContextProvider,
    KnowledgeContextOptions,
)
from cef.context.tokens import make_token_counter
from cef.model import SearchResult

REPO = Path(__file__).resolve().parent.parent
BUDGET = 4000
TOP_K = 10
N_QUERIES = 50


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def load_corpus(folder: Path) -> tuple[list[dict[str, str]], list[str]]:
    with gzip.open(folder / "corpus.jsonl.gz", "rt") as f:
        passages = [json.loads(line) for line in f]
    with gzip.open(folder / "questions.jsonl.gz", "rt") as f:
        questions = [json.loads(line)["question"] for line in f][:N_QUERIES]
    return passages, questions


def build(kb: cef.KnowledgeBase, passages: list[dict[str, str]]) -> None:
    nodes: dict[str, Node] = {}
    chunks = []
    for p in passages:
        nid = "t:" + p["title"]
        nodes.setdefault(nid, Node(id=nid, label="Article", properties={"name": p["title"]}))
        chunks.append(Chunk(id=p["id"], content=p["text"], node_id=nid, metadata={"title": p["title"]}))
    kb.index_batch(Batch(nodes=list(nodes.values()), chunks=chunks))


def timed(fn: Callable[..., object], *args: object, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.environ.get("CEF_BENCH", str(REPO.parent / "shared" / "bench")))
    ap.add_argument("--embed", action="store_true", help="retrieve with the default embedding model")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per request")
    ap.add_argument("--counters", default="cl100k,wordpiece,estimate")
    args = ap.parse_args()

    passages, questions = load_corpus(Path(args.bench) / "musique-100")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        kb = cef.open(Path(tmp) / "bench.db", embedder="default" if args.embed else None)
        build(kb, passages)
        print(
            f"corpus: {len(passages)} passages, {len(questions)} queries; indexed in {time.perf_counter() - t0:.1f} s"
        )
        retrieval = ContextProvider(kb, "estimate")
        one_each = [ContextRequest.of(q, token_budget=BUDGET, top_k_per_query=TOP_K) for q in questions]
        t0 = time.perf_counter()
        results: list[list[SearchResult | None]] = [retrieval.retrieve(r)[0] for r in one_each]
        print(
            f"retrieval (not counted below): {(time.perf_counter() - t0) * 1000 / len(questions):.1f} ms/query"
        )
        all_in_one = ContextRequest.of(*questions, token_budget=BUDGET, top_k_per_query=TOP_K)
        merged = [r[0] for r in results]
        n_cand = sum(len(r.results) for r in merged if r is not None)

        print()
        print(
            f"assembly at a {BUDGET:,}-token budget, top-{TOP_K} per query (ms; utilization = share of the budget)"
        )
        head = (
            f"{'counter':<28} {'format':<9} | {'per query p50':>13} {'p95':>7} {'total':>6} {'content':>7} "
            f"{'chunks':>6} | {'50 in one p50':>13} {'p95':>7} {'total':>6} {'content':>7} {'chunks':>6}"
        )
        print(head)
        print("-" * len(head))
        for name in args.counters.split(","):
            counter = make_token_counter(name)
            provider = ContextProvider(kb, counter)
            provider.assemble(one_each[0], results[0])  # load the tokenizer before timing
            for fmt in ContextFormat:
                times: list[float] = []
                util: list[float] = []
                content: list[float] = []
                selected: list[int] = []
                for req, res in zip(one_each, results, strict=True):
                    req = req.model_copy(update={"format": fmt})
                    times += timed(provider.assemble, req, res, repeat=args.repeat)
                    resp = provider.assemble(req, res)
                    assert resp.total_tokens <= BUDGET
                    util.append(resp.total_tokens / BUDGET)
                    content.append(resp.metadata["content_utilization"])
                    selected.append(len(resp.chunks))
                big = all_in_one.model_copy(update={"format": fmt})
                big_times = timed(provider.assemble, big, merged, repeat=max(args.repeat, 5))
                resp = provider.assemble(big, merged)
                assert resp.total_tokens <= BUDGET
                print(
                    f"{counter.name:<28} {fmt.value:<9} | {pct(times, 0.5):>13.2f} {pct(times, 0.95):>7.2f} "
                    f"{statistics.mean(util):>6.1%} {statistics.mean(content):>7.1%} {statistics.mean(selected):>6.1f} | "
                    f"{pct(big_times, 0.5):>13.2f} {pct(big_times, 0.95):>7.2f} "
                    f"{resp.total_tokens / BUDGET:>6.1%} {resp.metadata['content_utilization']:>7.1%} {len(resp.chunks):>6}"
                )
        print(f"(50 in one: {n_cand} candidate chunks before dedupe)")

        print()
        gp = GraphContextProvider(kb, "cl100k")
        opts = KnowledgeContextOptions(max_tokens=BUDGET, include_claims=True, include_chunks=True)
        gtimes = []
        gutil = []
        for q in questions:
            t = time.perf_counter()
            ctx = gp.get_context(q, opts)
            gtimes.append((time.perf_counter() - t) * 1000)
            gutil.append(ctx.token_count / BUDGET)
        print(
            f"graph context provider, end to end incl. entity search (cl100k, markdown): "
            f"p50 {pct(gtimes, 0.5):.1f} ms, p95 {pct(gtimes, 0.95):.1f} ms, utilization {statistics.mean(gutil):.1%}"
        )
        kb.close()


if __name__ == "__main__":
    main()
