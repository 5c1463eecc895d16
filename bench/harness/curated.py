"""Curated-graph question benchmark: a graph file, questions with gold answers and gold relation paths.

The data (for instance ``examples/services``) is a graph file in the format
``cef ingest`` reads and a question file::

    questions:
      - id: pager-checkout-deps
        question: Who is on call for the services that checkout relies on?
        anchor: svc-checkout                 # gold: the node the question is about
        path: [DEPENDS_ON, HAS_ON_CALL]      # gold: relation names read from the anchor
        answers: [per-daniel, per-kofi]      # gold: every node the path reaches
        as_of: 2025-01-15                    # optional: the moment the question asks about
        chunks: [pm-2102]                    # optional: chunks a reader needs (recall@3)

A hop named by a relation walks its edges forward; a hop named by the
relation's ``inverse`` walks them backward; a bidirectional relation either way.

The run holds no reasoning: :func:`load_graph` ingests the graph file into a
fresh knowledge base with the same ingest ``cef ingest`` runs, then
:func:`run_questions` sends each question's text (and ``as_of``) to
``kb.retrieve(GraphQuery(...))`` with the default settings and reads the answer
nodes (``SearchResult.nodes``) and the ranked chunks. :func:`score` computes
Hits@1, Hits@5, path accuracy (the top answer's typed path walks the gold
relations, in the gold directions) and chunk recall@3.

:func:`check_questions` validates the data itself (every id exists, each gold
path realizes exactly the gold answers at its ``as_of``) with a plain walk over
the graph file's edges, not the engine; the run refuses data that fails it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

import cef
from cef import Batch, GraphPath, GraphQuery, KnowledgeBase, RelationType, SearchResult, SearchStrategy
from cef.embed.base import Embedder
from cef.errors import ValidationError

__all__ = [
    "CuratedQuestion",
    "CuratedReport",
    "QuestionRun",
    "RelationMap",
    "ScoreRow",
    "check_questions",
    "format_table",
    "gold_reach",
    "judge",
    "load_graph",
    "question_query",
    "read_graph",
    "read_questions",
    "run_benchmark",
    "run_questions",
    "score",
]

#: ``(what, done, total)``, the progress callback ingest and the CLI use
Progress = Callable[[str, int, int], None]
#: one hop, canonical: the stored relation and whether its edges are walked source → target
#: (None: a bidirectional relation, either way)
CanonicalHop = tuple[str, bool | None]

_QUESTION_KEYS = ("id", "question", "anchor", "path", "answers", "as_of", "chunks")
CHUNK_K = 3


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class CuratedQuestion:
    id: str
    question: str
    anchor: str
    path: tuple[str, ...]
    answers: tuple[str, ...]
    as_of: datetime | None = None
    chunks: tuple[str, ...] = ()

    @property
    def hops(self) -> int:
        return len(self.path)


def _as_datetime(value: Any, where: str) -> datetime:
    if isinstance(value, datetime):
        out = value
    elif isinstance(value, date):
        out = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            out = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(
                f"{where}: as_of {value!r} is not an ISO 8601 date or date-time (e.g. 2025-01-15)"
            ) from None
    else:
        raise ValidationError(f"{where}: as_of must be an ISO 8601 date, not {type(value).__name__}")
    return out if out.tzinfo is not None else out.replace(tzinfo=UTC)


def _id_list(item: Mapping[str, Any], key: str, where: str, *, required: bool) -> tuple[str, ...]:
    raw = item.get(key)
    if raw is None:
        if required:
            raise ValidationError(f"{where}: missing {key!r} (a non-empty list)")
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise ValidationError(f"{where}.{key}: must be a list of non-empty strings")
    if required and not raw:
        raise ValidationError(f"{where}.{key}: must not be empty")
    return tuple(raw)


def read_questions(path: str | Path) -> list[CuratedQuestion]:
    """The questions of a YAML file (``questions:`` list); a precise error names the item and field."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValidationError(f"{p}: cannot read the question file: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ValidationError(f"{p}: invalid YAML: {exc}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("questions"), list):
        raise ValidationError(f"{p}: expected a mapping with a 'questions' list")
    out: list[CuratedQuestion] = []
    seen: set[str] = set()
    for i, item in enumerate(data["questions"]):
        where = f"{p.name}: questions[{i}]"
        if not isinstance(item, Mapping):
            raise ValidationError(f"{where}: must be a mapping, not {type(item).__name__}")
        for key in item:
            if key not in _QUESTION_KEYS:
                raise ValidationError(f"{where}.{key}: unknown field; allowed: {', '.join(_QUESTION_KEYS)}")
        for key in ("id", "question", "anchor"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise ValidationError(f"{where}: {key!r} must be a non-empty string")
        qid = item["id"]
        if qid in seen:
            raise ValidationError(f"{where}: duplicate id {qid!r}")
        seen.add(qid)
        as_of = item.get("as_of")
        out.append(
            CuratedQuestion(
                id=qid,
                question=item["question"].strip(),
                anchor=item["anchor"],
                path=_id_list(item, "path", where, required=True),
                answers=_id_list(item, "answers", where, required=True),
                as_of=None if as_of is None else _as_datetime(as_of, f"{where}.as_of"),
                chunks=_id_list(item, "chunks", where, required=False),
            )
        )
    if not out:
        raise ValidationError(f"{p}: the 'questions' list is empty")
    return out


def read_graph(path: str | Path) -> Batch:
    """The graph file parsed by the parser ``cef ingest`` uses for it (YAML or JSON graph files)."""
    from cef.ingest.parsers.base import ParseContext
    from cef.ingest.parsers.registry import default_registry

    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValidationError(f"{p}: cannot read the graph file: {exc.strerror or exc}") from None
    return default_registry().parse(data, ParseContext(path=p.name)).batch


class RelationMap:
    """Relation names and inverse names → canonical hops (see :data:`CanonicalHop`)."""

    def __init__(self, relation_types: Sequence[RelationType]) -> None:
        self.hops: dict[str, CanonicalHop] = {}
        for rt in relation_types:
            self.hops[rt.name] = (rt.name, None if rt.bidirectional else True)
            if rt.inverse and not rt.bidirectional:
                self.hops.setdefault(rt.inverse, (rt.name, False))

    def canonical(self, name: str, walked_back: bool = False) -> CanonicalHop:
        """The hop ``name`` names, flipped when the path says it was walked from target to source."""
        base, forward = self.hops.get(name, (name, True))
        if forward is None or not walked_back:
            return base, forward
        return base, not forward

    def gold(self, path: Sequence[str]) -> tuple[CanonicalHop, ...]:
        return tuple(self.canonical(n) for n in path)

    def of_path(self, path: GraphPath) -> tuple[CanonicalHop, ...]:
        back = path.reversed or [False] * len(path.relation_types)
        return tuple(self.canonical(n, b) for n, b in zip(path.relation_types, back, strict=False))


def gold_reach(batch: Batch, relmap: RelationMap, anchor: str, path: Sequence[str], at: datetime) -> set[str]:
    """The nodes a relation path reaches from ``anchor`` over the edges valid at ``at`` (no node twice)."""
    out_edges: dict[tuple[str, str], list[str]] = {}
    in_edges: dict[tuple[str, str], list[str]] = {}
    for e in batch.edges:
        if e.valid_at(at):
            out_edges.setdefault((e.source, e.relation_type), []).append(e.target)
            in_edges.setdefault((e.target, e.relation_type), []).append(e.source)
    walks: list[tuple[str, ...]] = [(anchor,)]
    for name in path:
        rel, forward = relmap.canonical(name)
        nxt: list[tuple[str, ...]] = []
        for walk in walks:
            here = walk[-1]
            ends = []
            if forward in (True, None):
                ends += out_edges.get((here, rel), [])
            if forward in (False, None):
                ends += in_edges.get((here, rel), [])
            nxt.extend((*walk, n) for n in ends if n not in walk)
        walks = nxt
    return {w[-1] for w in walks}


def check_questions(
    batch: Batch, questions: Sequence[CuratedQuestion], *, now: datetime | None = None
) -> list[str]:
    """Problems with the gold data: unknown ids or relations, a gold path that does not reach the answers."""
    now = now or datetime.now(UTC)
    nodes = {n.id for n in batch.nodes}
    chunks = {c.id for c in batch.chunks}
    relmap = RelationMap(batch.relation_types)
    problems: list[str] = []
    for q in questions:
        bad = [f"anchor {q.anchor!r}"] if q.anchor not in nodes else []
        bad += [f"answer {a!r}" for a in q.answers if a not in nodes]
        bad += [f"chunk {c!r}" for c in q.chunks if c not in chunks]
        bad += [f"relation {r!r}" for r in q.path if r not in relmap.hops]
        if bad:
            problems.append(f"{q.id}: unknown {', '.join(bad)}")
            continue
        reached = gold_reach(batch, relmap, q.anchor, q.path, q.as_of or now)
        if reached != set(q.answers):
            when = q.as_of.date().isoformat() if q.as_of else "now"
            problems.append(
                f"{q.id}: {' > '.join(q.path)} from {q.anchor} at {when} reaches {sorted(reached)}, "
                f"gold answers are {sorted(q.answers)}"
            )
    return problems


# ----------------------------------------------------------------------------- run
def load_graph(
    graph: str | Path,
    db: str | Path,
    *,
    embedder: Embedder | str | None = "default",
    progress: Progress | None = None,
) -> KnowledgeBase:
    """A fresh knowledge base in ``db`` holding the graph file, ingested as ``cef ingest`` does."""
    from cef.ingest.pipeline import ingest_sources, make_enricher

    if Path(db).exists():
        raise ValidationError(f"{db}: the benchmark builds a new store; give a path that does not exist yet")
    kb = cef.open(db, embedder=embedder)
    try:
        report = ingest_sources(kb, [str(graph)], progress=progress, extract=False, enricher=make_enricher())
        if report.failures:
            raise ValidationError(f"{graph}: ingest failed: {'; '.join(report.failures)}")
    except BaseException:
        kb.close()
        raise
    return kb


@dataclass
class QuestionRun:
    """One question's answer as the engine gave it, and how it scores against the gold."""

    id: str
    hops: int
    as_of: str | None
    strategy: str
    answers: list[str]
    path: str | None
    hit1: bool
    hit5: bool
    all5: bool  # every gold answer among the first 5 answer nodes
    path_ok: bool
    anchor_ok: bool
    chunk_ids: list[str]
    chunk_recall: float | None
    chunks_all5: bool | None  # every gold chunk among the first 5 chunks (None: no gold chunks)
    ms: float
    notes: list[str] = field(default_factory=list)


def question_query(q: CuratedQuestion, strategy: SearchStrategy | None = None, top_k: int = 10) -> GraphQuery:
    """What the benchmark asks: the question text and its ``as_of``; no targets, relations or patterns."""
    fields: dict[str, Any] = {"query": q.question, "top_k": top_k}
    if q.as_of is not None:
        if "as_of" not in GraphQuery.model_fields:  # pragma: no cover - older engines
            raise ValidationError(f"{q.id}: this engine's GraphQuery has no as_of; cannot ask about a moment")
        fields["as_of"] = q.as_of
    if strategy is not None:
        fields["strategy"] = strategy
    return GraphQuery(**fields)


def judge(q: CuratedQuestion, result: SearchResult, relmap: RelationMap, ms: float) -> QuestionRun:
    """Score one result against the gold (answers from ``result.nodes``, chunks from ``result.results``)."""
    ranked = list(getattr(result, "nodes", []) or [])
    answers = [r.node.id for r in ranked]
    gold = set(q.answers)
    top = ranked[0] if ranked else None
    top_path = top.path if top is not None else None
    chunk_ids = [r.chunk.id for r in result.results]
    recall = len(set(chunk_ids[:CHUNK_K]) & set(q.chunks)) / len(q.chunks) if q.chunks else None
    return QuestionRun(
        id=q.id,
        hops=q.hops,
        as_of=q.as_of.date().isoformat() if q.as_of else None,
        strategy=result.strategy.value,
        answers=answers[:10],
        path=top_path.describe() if top_path is not None else None,
        hit1=bool(answers) and answers[0] in gold,
        hit5=bool(gold & set(answers[:5])),
        all5=gold <= set(answers[:5]) if len(gold) <= 5 else set(answers[:5]) <= gold,
        path_ok=top_path is not None and relmap.of_path(top_path) == relmap.gold(q.path),
        anchor_ok=top_path is not None and bool(top_path.node_ids) and top_path.node_ids[0] == q.anchor,
        chunk_ids=chunk_ids[:10],
        chunk_recall=recall,
        chunks_all5=set(q.chunks) <= set(chunk_ids[:5]) if q.chunks else None,
        ms=round(ms, 1),
        notes=[str(n) for n in result.metadata.get("notes", [])],
    )


def run_questions(
    kb: KnowledgeBase,
    questions: Sequence[CuratedQuestion],
    relmap: RelationMap,
    *,
    strategy: SearchStrategy | None = None,
    top_k: int = 10,
    progress: Progress | None = None,
) -> list[QuestionRun]:
    """Ask every question through ``kb.retrieve`` (default settings unless ``strategy`` is given)."""
    runs: list[QuestionRun] = []
    for i, q in enumerate(questions):
        query = question_query(q, strategy, top_k)
        t0 = time.perf_counter()
        result = kb.retrieve(query)
        ms = (time.perf_counter() - t0) * 1000
        runs.append(judge(q, result, relmap, ms))
        if progress is not None:
            progress("questions", i + 1, len(questions))
    return runs


@dataclass(frozen=True)
class ScoreRow:
    label: str
    n: int
    hits1: float
    hits5: float
    path_acc: float
    anchor_acc: float
    chunk_n: int
    chunk_recall: float | None
    p50_ms: float
    p95_ms: float
    all5: float = 0.0  # % of questions with every gold answer in the first 5 answer nodes
    chunks_all5: float | None = None  # % of questions with gold chunks that have them all in the first 5


def _row(label: str, runs: Sequence[QuestionRun]) -> ScoreRow:
    n = len(runs)
    pct = (lambda k: 100.0 * sum(1 for r in runs if getattr(r, k)) / n) if n else (lambda k: 0.0)
    recalls = [r.chunk_recall for r in runs if r.chunk_recall is not None]
    with_chunks = [r for r in runs if r.chunks_all5 is not None]
    ms = sorted(r.ms for r in runs)
    p95 = ms[min(len(ms) - 1, max(0, round(0.95 * len(ms)) - 1))] if ms else 0.0
    return ScoreRow(
        label=label,
        n=n,
        hits1=pct("hit1"),
        hits5=pct("hit5"),
        path_acc=pct("path_ok"),
        anchor_acc=pct("anchor_ok"),
        chunk_n=len(recalls),
        chunk_recall=100.0 * statistics.fmean(recalls) if recalls else None,
        p50_ms=statistics.median(ms) if ms else 0.0,
        p95_ms=p95,
        all5=pct("all5"),
        chunks_all5=100.0 * statistics.fmean(float(bool(r.chunks_all5)) for r in with_chunks)
        if with_chunks
        else None,
    )


def score(runs: Sequence[QuestionRun]) -> list[ScoreRow]:
    """One row per hop count, one for the questions with ``as_of``, and one for all."""
    rows = [_row(f"{h} hop{'s' if h > 1 else ''}", [r for r in runs if r.hops == h])
            for h in sorted({r.hops for r in runs})]  # fmt: skip
    dated = [r for r in runs if r.as_of is not None]
    if dated:
        rows.append(_row("with as_of", dated))
    rows.append(_row("all", runs))
    return rows


def format_table(rows: Sequence[ScoreRow]) -> str:
    """A Markdown table of the score rows."""
    head = (
        "| questions | n | Hits@1 | Hits@5 | all answers @5 | path acc. | anchor acc. | chunk R@3 (n) "
        "| all chunks @5 | p50 / p95 ms |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    lines = [head]
    for r in rows:
        recall = f"{r.chunk_recall:.1f} ({r.chunk_n})" if r.chunk_recall is not None else "—"
        all_chunks = f"{r.chunks_all5:.1f}" if r.chunks_all5 is not None else "—"
        lines.append(
            f"| {r.label} | {r.n} | {r.hits1:.1f} | {r.hits5:.1f} | {r.all5:.1f} | {r.path_acc:.1f} "
            f"| {r.anchor_acc:.1f} | {recall} | {all_chunks} | {r.p50_ms:.0f} / {r.p95_ms:.0f} |"
        )
    return "\n".join(lines)


@dataclass
class CuratedReport:
    graph: str
    questions: str
    nodes: int
    edges: int
    chunks: int
    load_s: float
    runs: list[QuestionRun]
    rows: list[ScoreRow]
    answered_by: dict[str, int]


def run_benchmark(
    graph: str | Path,
    questions: str | Path,
    db: str | Path,
    *,
    embedder: Embedder | str | None = "default",
    strategy: SearchStrategy | None = None,
    limit: int | None = None,
    top_k: int = 10,
    progress: Progress | None = None,
    on_gold_mismatch: Callable[[str], None] | None = None,
) -> CuratedReport:
    """Check the gold data, ingest the graph into a new store at ``db``, answer the questions, score.

    A gold path that does not reach exactly the gold answers (the check walks no node twice) is an
    error, unless ``on_gold_mismatch`` is given: then each problem is passed to it and the questions
    are scored against their gold answers as written (a frozen set cannot be corrected after the fact).
    """
    batch = read_graph(graph)
    qs = read_questions(questions)
    problems = check_questions(batch, qs)
    if problems and on_gold_mismatch is None:
        raise ValidationError(f"{questions}: gold data does not match {graph}:\n  " + "\n  ".join(problems))
    if on_gold_mismatch is not None:
        for problem in problems:
            on_gold_mismatch(problem)
    if limit is not None:
        qs = qs[:limit]
    relmap = RelationMap(batch.relation_types)
    t0 = time.perf_counter()
    kb = load_graph(graph, db, embedder=embedder, progress=progress)
    load_s = time.perf_counter() - t0
    try:
        kb.warm()  # models and caches before the first question, as a server does before it is ready
        runs = run_questions(kb, qs, relmap, strategy=strategy, top_k=top_k, progress=progress)
    finally:
        kb.close()
    used: dict[str, int] = {}
    for r in runs:
        used[r.strategy] = used.get(r.strategy, 0) + 1
    return CuratedReport(
        graph=str(graph),
        questions=str(questions),
        nodes=len(batch.nodes),
        edges=len(batch.edges),
        chunks=len(batch.chunks),
        load_s=round(load_s, 2),
        runs=runs,
        rows=score(runs),
        answered_by=used,
    )
