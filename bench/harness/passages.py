"""Passage-retrieval benchmark: index a corpus, answer questions, score Recall@k and MRR.

The shared benchmark data (``../shared/bench/<dataset>/``) has a corpus
(``{"id", "title", "text"}`` per line) and a question file
(``{"id", "question", "supporting_ids", ...}``). :func:`build_store` ingests the
corpus through the normal JSON Lines parser and the
:class:`~cef.ingest.enrich.EntityEnricher` into a fresh knowledge base; it never
sees the questions. :func:`run_questions` answers them with one strategy and
records the ranked chunk ids (= passage ids) and the latency of each;
:func:`score_run` computes the metrics exactly as ``score.py`` does.
:func:`compare` runs several strategies on one store, side by side.
"""

from __future__ import annotations

import gzip
import json
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cef
from cef import GraphQuery, KnowledgeBase, SearchStrategy
from cef.engine.state import ProgressFn
from cef.errors import CefError

__all__ = [
    "COMPARED",
    "IndexReport",
    "RunLine",
    "StrategyScore",
    "build_store",
    "compare",
    "format_table",
    "read_jsonl",
    "run_questions",
    "score_run",
    "write_run",
]

#: the strategies :func:`compare` runs by default: the baselines first, then the graph strategies
COMPARED: tuple[SearchStrategy, ...] = (
    SearchStrategy.BM25,
    SearchStrategy.VECTOR,
    SearchStrategy.HYBRID,
    SearchStrategy.GRAPH,
    SearchStrategy.PPR,
    SearchStrategy.AUTO,
)

Progress = Callable[[str], None]


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file (``.gz`` decompressed)."""
    p = Path(path)
    opener: Any = gzip.open if p.name.endswith(".gz") else open
    with opener(p, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@dataclass
class IndexReport:
    """How the store was built: counts and seconds (``warm_s``: first query, caches and models)."""

    passages: int
    nodes: int
    edges: int
    ingest_s: float
    warm_s: float
    relations: dict[str, int] = field(default_factory=dict)

    @property
    def total_s(self) -> float:
        return self.ingest_s + self.warm_s


@dataclass
class RunLine:
    """One answered question in the run format ``score.py`` reads."""

    id: str
    ranked: list[str]
    latency_ms: float
    strategy: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self))


@dataclass
class StrategyScore:
    """The metrics of one strategy on one dataset (``score.py``'s definitions)."""

    strategy: str
    metrics: dict[str, float]
    answered_by: dict[str, int] = field(default_factory=dict)


@contextmanager
def _quiet_progress(progress: Progress | None, what: str) -> Iterator[None]:
    t0 = time.perf_counter()
    if progress is not None:
        progress(f"{what}…")
    yield
    if progress is not None:
        progress(f"{what}: {time.perf_counter() - t0:.1f} s")


def build_store(
    corpus: str | Path,
    db: str | Path,
    *,
    embedder: str | None = "default",
    enricher: Any = None,
    progress: Progress | None = None,
    records: ProgressFn | None = None,
) -> tuple[KnowledgeBase, IndexReport]:
    """A fresh knowledge base at ``db`` holding ``corpus`` (ingested with entity extraction).

    Only the corpus is read; ``records`` counts the passages as they are extracted and embedded. The report's ``warm_s`` is one query on text that
    is not a question, so model loading and per-graph caches are not charged
    to the first question's latency.
    """
    from cef.ingest.enrich import EntityEnricher
    from cef.ingest.pipeline import ingest_sources

    path = Path(db)
    if path.exists():
        raise CefError(f"{path} exists: the benchmark builds a fresh store")
    kb = cef.open(path, embedder=embedder)
    try:
        t0 = time.perf_counter()
        with _quiet_progress(progress, f"ingesting {Path(corpus).name}"):
            report = ingest_sources(
                kb,
                [str(corpus)],
                enricher=enricher if enricher is not None else EntityEnricher(),
                progress=records,
            )
        ingest_s = time.perf_counter() - t0
        if report.failures:
            raise CefError("; ".join(report.failures))
        t1 = time.perf_counter()
        with _quiet_progress(progress, "warming caches"):
            for strategy in (SearchStrategy.PPR, SearchStrategy.GRAPH, SearchStrategy.VECTOR):
                kb.retrieve(GraphQuery(query="Warm-up query about nothing in particular", strategy=strategy))
        warm_s = time.perf_counter() - t1
        stats = kb.stats()
        g = kb.state.graph
        rels: dict[str, int] = {}
        alive = g.e_alive.view[: len(g.edge_ids)]
        for code in g.e_rel.view[: len(alive)][alive].tolist():
            name = g.relations.names[int(code)]
            rels[name] = rels.get(name, 0) + 1
    except BaseException:
        kb.close()
        raise
    return kb, IndexReport(
        passages=int(stats["chunks"]),
        nodes=int(stats["nodes"]),
        edges=int(stats["edges"]),
        ingest_s=ingest_s,
        warm_s=warm_s,
        relations=dict(sorted(rels.items())),
    )


def run_questions(
    kb: KnowledgeBase,
    questions: Sequence[dict[str, Any]],
    strategy: SearchStrategy,
    *,
    top_k: int = 10,
    options: dict[str, Any] | None = None,
    progress: ProgressFn | None = None,
) -> list[RunLine]:
    """Answer each question; ``ranked`` holds the chunk ids, best first (``progress`` counts questions)."""
    out = []
    for i, q in enumerate(questions, 1):
        query = GraphQuery(
            query=q["question"], strategy=strategy, top_k=top_k, min_results=1, options=dict(options or {})
        )
        t0 = time.perf_counter()
        res = kb.retrieve(query)
        ms = (time.perf_counter() - t0) * 1000
        out.append(RunLine(str(q["id"]), [r.chunk.id for r in res.results], round(ms, 3), res.strategy.value))
        if progress is not None:
            progress(f"answering ({strategy.value})", i, len(questions))
    return out


def write_run(path: str | Path, lines: Sequence[RunLine]) -> None:
    Path(path).write_text("".join(x.to_json() + "\n" for x in lines), encoding="utf-8")


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def score_run(lines: Sequence[RunLine], questions: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Recall@1/2/5/10 (percent), MRR and latency percentiles, as ``score.py passages`` computes them."""
    run = {x.id: x for x in lines}
    ks = (1, 2, 5, 10)
    rec: dict[int, list[float]] = {k: [] for k in ks}
    rr: list[float] = []
    for q in questions:
        want = set(q["supporting_ids"])
        line = run.get(str(q["id"]))
        ranked = list(dict.fromkeys(line.ranked if line else []))
        for k in ks:
            rec[k].append(len(want & set(ranked[:k])) / len(want))
        first = next((i for i, p in enumerate(ranked) if p in want), None)
        rr.append(0.0 if first is None else 1.0 / (first + 1))
    out: dict[str, float] = {"questions": float(len(questions))}
    for k in ks:
        out[f"recall@{k}"] = round(100 * statistics.mean(rec[k]), 2) if questions else 0.0
    out["mrr"] = round(statistics.mean(rr), 4) if questions else 0.0
    lat = [x.latency_ms for x in lines]
    p50, p95 = _pct(lat, 0.5), _pct(lat, 0.95)
    if p50 is not None and p95 is not None:
        out["latency_ms_p50"] = p50
        out["latency_ms_p95"] = p95
    return out


def compare(
    kb: KnowledgeBase,
    questions: Sequence[dict[str, Any]],
    strategies: Sequence[SearchStrategy] = COMPARED,
    *,
    top_k: int = 10,
    runs_dir: str | Path | None = None,
    label: str = "",
    progress: Progress | None = None,
) -> list[StrategyScore]:
    """Every strategy on the same store and questions; optionally each run written to ``runs_dir``."""
    out = []
    for strategy in strategies:
        with _quiet_progress(progress, f"{label} {strategy.value}".strip()):
            lines = run_questions(kb, questions, strategy, top_k=top_k)
        if runs_dir is not None:
            Path(runs_dir).mkdir(parents=True, exist_ok=True)
            write_run(Path(runs_dir) / f"{label or 'run'}__{strategy.value}.jsonl", lines)
        used: dict[str, int] = {}
        for x in lines:
            used[x.strategy] = used.get(x.strategy, 0) + 1
        out.append(StrategyScore(strategy.value, score_run(lines, questions), dict(sorted(used.items()))))
    return out


_STRATEGY_NAMES = {
    "bm25": "BM25",
    "vector": "vector only",
    "hybrid": "HYBRID",
    "graph": "GRAPH (seed 001)",
    "ppr": "PPR",
    "auto": "auto (default chain)",
}


def format_table(dataset: str, scores: Sequence[StrategyScore], index: IndexReport) -> str:
    """A Markdown table of one dataset's results, one row per strategy."""
    lines = [
        f"**{dataset}** — {index.passages:,} passages, {index.nodes:,} nodes, {index.edges:,} edges; "
        f"index {index.ingest_s:.0f} s (+ {index.warm_s:.1f} s first-query warm-up)",
        "",
        "| strategy | Recall@2 | Recall@5 | Recall@10 | MRR | p50 ms | p95 ms | answered by |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in scores:
        m = s.metrics
        used = ", ".join(f"{k} {v}" for k, v in s.answered_by.items())
        lines.append(
            f"| {_STRATEGY_NAMES.get(s.strategy, s.strategy)} | {m['recall@2']:.1f} | {m['recall@5']:.1f} "
            f"| {m['recall@10']:.1f} | {m['mrr']:.3f} | {m.get('latency_ms_p50', 0):.1f} "
            f"| {m.get('latency_ms_p95', 0):.1f} | {used} |"
        )
    return "\n".join(lines)
