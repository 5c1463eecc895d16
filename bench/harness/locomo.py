"""Conversational-memory benchmark: dated two-person conversations, questions on their evidence turns.

The data (``../shared/bench/locomo/``) is a corpus of turns, one a line
(``{"id", "conversation", "session", "date", "speaker", "text", "image_caption"?}``),
and a question file (``{"id", "conversation", "question", "category",
"supporting_ids", ...}``). :func:`build_memory` ingests every conversation into
its own scope through the public conversation ingest
(:func:`cef.memory.conversation.ingest_conversation`), timing each; it never
sees the questions. :func:`run_questions` asks each question in its
conversation's scope with one strategy (``auto``, the default, beside the
``vector`` and ``bm25`` baselines) and keeps the ranked turn ids;
:func:`score` gives Recall@5/@10 of the evidence turns, session Hit@1 (the top
turn is in an evidence session), MRR and latency, overall and per category.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cef
from bench.harness.passages import RunLine, read_jsonl, score_run
from cef import GraphQuery, KnowledgeBase, SearchStrategy
from cef.engine.state import ProgressFn
from cef.errors import CefError

__all__ = [
    "BASELINES",
    "ConversationIngest",
    "Score",
    "build_memory",
    "format_report",
    "load_questions",
    "run_questions",
    "score",
    "session_of",
]

#: the strategies the report puts side by side: the default route and its two baselines
BASELINES: tuple[SearchStrategy, ...] = (SearchStrategy.AUTO, SearchStrategy.VECTOR, SearchStrategy.BM25)


@dataclass
class ConversationIngest:
    """One conversation's ingest: its scope, turns, seconds, and this process's CPU seconds meanwhile
    (on a busy machine, nearer to what a quiet one takes)."""

    scope: str
    turns: int
    seconds: float
    cpu_seconds: float = 0.0


def build_memory(
    corpus: str | Path,
    db: str | Path,
    *,
    embedder: str | None = "default",
    progress: Callable[[str], None] | None = None,
) -> tuple[KnowledgeBase, list[ConversationIngest]]:
    """A fresh knowledge base at ``db`` holding every conversation of ``corpus``, each in its own scope."""
    from cef.memory.conversation import ingest_conversation, read_conversations

    path = Path(db)
    if path.exists():
        raise CefError(f"{path} exists: the benchmark builds a fresh store")
    kb = cef.open(path, embedder=embedder)
    out = []
    try:
        for conv in read_conversations(corpus):
            t0, c0 = time.perf_counter(), time.process_time()
            report = ingest_conversation(kb, conv, scope=conv.id)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            out.append(ConversationIngest(conv.id, report.turns, seconds, cpu))
            if progress is not None:
                progress(f"{conv.id}: {report.turns} turns in {seconds:.1f} s ({cpu:.1f} s CPU)")
        kb.warm()
        for strategy in BASELINES:  # caches and models, not charged to the first question
            kb.retrieve(
                GraphQuery(query="Warm-up question about nothing", strategy=strategy, scope=out[0].scope)
            )
    except BaseException:
        kb.close()
        raise
    return kb, out


def run_questions(
    kb: KnowledgeBase,
    questions: Sequence[dict[str, Any]],
    strategy: SearchStrategy,
    *,
    top_k: int = 10,
    progress: ProgressFn | None = None,
) -> list[RunLine]:
    """Each question in its conversation's scope; ``ranked`` holds turn ids (chunk ids), best first."""
    out = []
    for i, q in enumerate(questions, 1):
        query = GraphQuery(
            query=q["question"], strategy=strategy, top_k=top_k, min_results=1, scope=q["conversation"]
        )
        t0 = time.perf_counter()
        res = kb.retrieve(query)
        ms = (time.perf_counter() - t0) * 1000
        out.append(RunLine(str(q["id"]), [r.chunk.id for r in res.results], round(ms, 3), res.strategy.value))
        if progress is not None:
            progress(f"answering ({strategy.value})", i, len(questions))
    return out


def session_of(turn_id: str) -> str:
    """The session part of a turn id (``conv-26/D3:5`` → ``conv-26/D3``; an id without ``:`` is its own)."""
    return turn_id.rsplit(":", 1)[0]


@dataclass
class Score:
    """The metrics of one run: overall and per category."""

    overall: dict[str, float]
    categories: dict[str, dict[str, float]] = field(default_factory=dict)


def _metrics(lines: Sequence[RunLine], questions: Sequence[dict[str, Any]]) -> dict[str, float]:
    m = score_run(lines, questions)
    run = {x.id: x for x in lines}
    hits = []
    for q in questions:
        line = run.get(str(q["id"]))
        want = {session_of(t) for t in q["supporting_ids"]}
        hits.append(1.0 if line and line.ranked and session_of(line.ranked[0]) in want else 0.0)
    m["session_hit@1"] = round(100 * statistics.mean(hits), 2) if hits else 0.0
    return m


def score(lines: Sequence[RunLine], questions: Sequence[dict[str, Any]]) -> Score:
    """Recall@k of the evidence turns, MRR, session Hit@1 and latency, overall and per category."""
    by_cat: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        by_cat.setdefault(str(q.get("category", "")), []).append(q)
    return Score(_metrics(lines, questions), {c: _metrics(lines, qs) for c, qs in sorted(by_cat.items())})


def format_report(
    dataset: str, scores: Sequence[tuple[str, Score]], ingests: Sequence[ConversationIngest]
) -> str:
    """Markdown: the strategies side by side (overall, per category) and the ingest time per conversation."""
    turns = sum(x.turns for x in ingests)
    lines = [
        f"**{dataset}** — {len(ingests)} conversations, {turns:,} turns; ingest "
        + ", ".join(
            f"{x.scope} {x.turns} turns {x.seconds:.1f} s ({x.cpu_seconds:.1f} s CPU)" for x in ingests
        ),
        "",
        "| strategy | Recall@5 | Recall@10 | session Hit@1 | MRR | p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in scores:
        m = s.overall
        lines.append(
            f"| {name} | {m['recall@5']:.1f} | {m['recall@10']:.1f} | {m['session_hit@1']:.1f} "
            f"| {m['mrr']:.3f} | {m.get('latency_ms_p50', 0):.1f} | {m.get('latency_ms_p95', 0):.1f} |"
        )
    cats = sorted({c for _, s in scores for c in s.categories})
    lines += [
        "",
        "| category (questions) | " + " | ".join(f"{n} R@5 / R@10 / Hit@1" for n, _ in scores) + " |",
    ]
    lines.append("|---|" + "---:|" * len(scores))
    for c in cats:
        n = int(next(s.categories[c]["questions"] for _, s in scores if c in s.categories))
        cells = [
            f"{s.categories[c]['recall@5']:.1f} / {s.categories[c]['recall@10']:.1f} / "
            f"{s.categories[c]['session_hit@1']:.1f}"
            if c in s.categories
            else "–"
            for _, s in scores
        ]
        lines.append(f"| {c} ({n}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def load_questions(path: str | Path) -> list[dict[str, Any]]:
    return read_jsonl(path)
