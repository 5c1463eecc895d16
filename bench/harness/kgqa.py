"""Knowledge-graph question answering benchmark: triples in, entity answers out.

The data (``../shared/bench/metaqa/``) is a triple file (``kb.tsv.gz``: head,
relation, tail) and question files (``{"id", "question", "topic_entity",
"answers", "hops", "qtype"}``). :func:`load_triples` puts the triples into a
fresh knowledge base (entities as nodes named by their string, relations as
registered typed edges; no embeddings). Two modes answer the questions:

* ``pattern`` — :func:`pattern_for_relation_path` writes the
  :class:`~cef.patterns.GraphPattern` an LLM would write through the MCP tool,
  from the question's topic entity and gold relation path (:class:`RoleMap`
  turns a ``qtype`` such as ``actor_to_movie_to_director`` into relations and
  directions); the pattern engine runs it.
* ``text`` — the product answers: the question text alone goes to
  ``kb.retrieve(GraphQuery(query=question))`` with the default settings (the
  ``auto`` route, on a store opened with the default embedder and warmed by
  ``kb.warm()``), and the answers are the ranked answer nodes
  (``SearchResult.nodes``) by name. Nothing here reasons about the question.

Pattern-mode answers are the distinct end nodes of the matched paths, the
topic excluded (paths never come back to it), ranked by how many paths reach
them.
:func:`ceiling` computes, independently of the engine, what the gold relation
path reaches in the loaded triples (some triples are missing from the data).
Nothing here knows which dataset it runs on except :data:`METAQA_ROLES`, the
``qtype`` vocabulary the pattern mode translates (bench code, standing in for
the LLM that knows the schema).
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import cef
from cef import Batch, Edge, GraphQuery, KnowledgeBase, Node, RelationType
from cef.embed.base import Embedder
from cef.errors import ValidationError
from cef.patterns import (
    Constraint,
    ConstraintType,
    Direction,
    GraphPattern,
    PatternResult,
    PatternStart,
    RankingStrategy,
)
from cef.patterns import TraversalStep as Step

__all__ = [
    "METAQA_ROLES",
    "BenchReport",
    "KgqaLine",
    "LoadReport",
    "Mode",
    "ModeScore",
    "RelationHop",
    "RelationPath",
    "RoleMap",
    "TripleIndex",
    "answer_pattern",
    "ceiling",
    "format_table",
    "hops_label",
    "limit_torch_threads",
    "load_triples",
    "pattern_for_relation_path",
    "question_files",
    "read_jsonl",
    "read_triples",
    "run_benchmark",
    "run_questions",
    "score_entities",
    "write_run",
]

Mode = Literal["text", "pattern"]
Progress = Callable[[str], None]
#: label of every entity node (a triple file carries no types)
ENTITY_LABEL = "Entity"


# ---------------------------------------------------------------------------- files
def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file (``.gz`` decompressed)."""
    p = Path(path)
    opener: Any = gzip.open if p.name.endswith(".gz") else open
    with opener(p, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


Triple = tuple[str, str, str]


def read_triples(path: str | Path) -> list[Triple]:
    """``head<TAB>relation<TAB>tail`` lines (``.gz`` decompressed), duplicates dropped, order kept."""
    p = Path(path)
    opener: Any = gzip.open if p.name.endswith(".gz") else open
    seen: dict[Triple, None] = {}
    with opener(p, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n\r")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not all(x.strip() for x in parts):
                raise ValidationError(f"{p.name}:{n}: expected head<TAB>relation<TAB>tail, got {line!r}")
            h, r, t = (x.strip() for x in parts)
            seen.setdefault((h, r, t), None)
    return list(seen)


_REL_BAD = re.compile(r"[^A-Za-z0-9_]+")


def relation_type_name(raw: str) -> str:
    """A registrable relation type name for a raw relation (invalid characters become ``_``)."""
    name = _REL_BAD.sub("_", raw.strip()).strip("_") or "related_to"
    return name if not name[0].isdigit() else f"r_{name}"


# ---------------------------------------------------------------------------- loading
@dataclass
class LoadReport:
    """What :func:`load_triples` put in the store and how long it took."""

    triples: int
    nodes: int
    edges: int
    relations: dict[str, int]
    load_s: float


def load_triples(
    triples: Sequence[Triple], db: str | Path, *, progress: Progress | None = None
) -> tuple[KnowledgeBase, LoadReport]:
    """A new knowledge base at ``db`` holding the triples as a graph (no embedder: graph and names only).

    Each distinct entity string is one node (id and ``name`` = the string,
    label ``Entity``); each relation is a registered relation type; each
    triple an edge head → tail. One ``index_batch`` transaction.
    """
    t0 = time.perf_counter()
    names: dict[str, None] = {}
    rels: Counter[str] = Counter()
    for h, r, t in triples:
        names.setdefault(h, None)
        names.setdefault(t, None)
        rels[relation_type_name(r)] += 1
    batch = Batch(
        relation_types=[RelationType(name=r) for r in rels],
        nodes=[Node(id=n, label=ENTITY_LABEL, properties={"name": n}) for n in names],
        edges=[
            Edge(id=f"t{i}", relation_type=relation_type_name(r), source=h, target=t)
            for i, (h, r, t) in enumerate(triples)
        ],
    )
    if progress is not None:
        progress(f"{len(names):,} entities, {len(triples):,} triples, {len(rels)} relations: indexing")
    kb = cef.open(db, embedder=None)
    try:
        kb.index_batch(batch)
    except BaseException:
        kb.close()
        raise
    report = LoadReport(len(triples), len(names), len(triples), dict(rels), time.perf_counter() - t0)
    return kb, report


# ---------------------------------------------------------------------------- relation paths
@dataclass(frozen=True)
class RelationHop:
    """One hop of a relation path: a relation walked head → tail (``forward``) or tail → head."""

    relation: str
    forward: bool = True

    def step(self) -> Step:
        return Step(
            relation_type=self.relation, direction=Direction.OUTGOING if self.forward else Direction.INCOMING
        )


RelationPath = tuple[RelationHop, ...]


def pattern_for_relation_path(
    start_id: str, path: Sequence[RelationHop], *, pattern_id: str = "kgqa", max_paths: int = 10_000
) -> GraphPattern:
    """The pattern that walks ``path`` from ``start_id`` and never comes back to it.

    Other nodes may repeat (``allow_cycles``), so "films sharing an actor with
    X, their actors" includes X's own actors; the start is excluded at every
    step by an ``@id NOT_IN`` constraint. Ranked by EDGE_WEIGHT (no semantic
    part: the relation path already says what is wanted).
    """
    if not path:
        raise ValidationError("a relation path needs at least one hop")
    return GraphPattern(
        pattern_id=pattern_id,
        description=" / ".join(f"{h.relation}{'' if h.forward else '^-1'}" for h in path),
        start=PatternStart(node_ids=[start_id]),
        steps=[h.step() for h in path],
        constraints=[Constraint(type=ConstraintType.NOT_IN, property="@id", value=[start_id])],
        allow_cycles=True,
        ranking=RankingStrategy.EDGE_WEIGHT,
        max_paths=max_paths,
        time_limit_ms=5000,
    )


@dataclass(frozen=True)
class RoleMap:
    """A question-type vocabulary: ``role_to_role`` hops over a star schema centred on ``head``.

    ``relations`` maps each non-head role to the relation linking the head
    to it (head → role). A hop ``head_to_X`` walks that relation forward;
    ``X_to_head`` walks it backward.
    """

    head: str
    relations: dict[str, str]
    separator: str = "_to_"

    def relation_path(self, qtype: str) -> RelationPath:
        roles = qtype.split(self.separator)
        if len(roles) < 2:
            raise ValidationError(f"question type {qtype!r} has no hop (expected a{self.separator}b)")
        hops = []
        for a, b in pairwise(roles):
            if a == self.head and b in self.relations:
                hops.append(RelationHop(self.relations[b], True))
            elif b == self.head and a in self.relations:
                hops.append(RelationHop(self.relations[a], False))
            else:
                raise ValidationError(f"question type {qtype!r}: no relation for the hop {a} -> {b}")
        return tuple(hops)


#: MetaQA's qtype vocabulary over the WikiMovies relations (every relation goes movie -> value)
METAQA_ROLES = RoleMap(
    head="movie",
    relations={
        "director": "directed_by",
        "actor": "starred_actors",
        "writer": "written_by",
        "year": "release_year",
        "genre": "has_genre",
        "tags": "has_tags",
        "tag": "has_tags",
        "language": "in_language",
    },
)


# ---------------------------------------------------------------------------- answering
def answer_pattern(result: PatternResult, exclude: Iterable[str] = ()) -> list[str]:
    """End-node names of the matched paths, most-reached first (then first reached), excluding ``exclude``."""
    skip = set(exclude)
    count: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i, p in enumerate(result.paths):
        if p.end_node_id in skip:
            continue
        name = p.node_names[-1] if p.node_names else p.end_node_id
        count[name] += 1
        first.setdefault(name, i)
    return sorted(count, key=lambda n: (-count[n], first[n]))


# ---------------------------------------------------------------------------- runs and scores
@dataclass
class KgqaLine:
    """One answered question in the run format ``score.py entities`` reads (plus diagnostics)."""

    id: str
    ranked: list[str]
    answers: list[str]
    latency_ms: float
    cpu_ms: float = 0.0
    anchor: str | None = None
    path: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def run_questions(
    kb: KnowledgeBase,
    questions: Sequence[dict[str, Any]],
    mode: Mode,
    *,
    roles: RoleMap = METAQA_ROLES,
    progress: Progress | None = None,
    tick: Callable[[str, int, int], None] | None = None,
    label: str = "questions",
) -> list[KgqaLine]:
    """Answer every question in ``mode``: ``pattern`` runs the gold relation path as a pattern;
    ``text`` calls ``kb.retrieve`` with the question text alone and reads the answer nodes.
    ``tick(label, done, total)`` is told after each question (a progress bar)."""
    lines: list[KgqaLine] = []
    for n, q in enumerate(questions, 1):
        t0, c0 = time.perf_counter(), time.thread_time()
        if mode == "pattern":
            topic = str(q["topic_entity"])
            hops = roles.relation_path(str(q["qtype"]))
            result = kb.match_patterns(pattern_for_relation_path(topic, hops))
            ranked = answer_pattern(result, exclude=[topic])
            anchor: str | None = topic
            path = " > ".join(h.relation if h.forward else f"<{h.relation}" for h in hops)
        else:
            found = kb.retrieve(GraphQuery(query=str(q["question"])))
            ranked = list(dict.fromkeys(a.node.name for a in found.nodes))
            best = found.nodes[0].path if found.nodes else None
            anchor = best.node_names[0] if best is not None and best.node_names else None
            path = " > ".join(best.relation_types) if best is not None else ""
        ms, cpu = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
        lines.append(
            KgqaLine(str(q["id"]), ranked, ranked, round(ms, 3), round(cpu, 3), anchor, path or None)
        )
        if tick is not None:
            tick(label, n, len(questions))
        elif progress is not None and n % 500 == 0:
            progress(f"{n}/{len(questions)} questions")
    return lines


def write_run(path: str | Path, lines: Sequence[KgqaLine]) -> None:
    Path(path).write_text("".join(x.to_json() + "\n" for x in lines), encoding="utf-8")


def _norm(s: object) -> str:
    return " ".join(str(s).lower().split())


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def score_entities(lines: Sequence[KgqaLine], questions: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Hits@1/5 and answer-set precision/recall/F1 (percent) plus latency percentiles, as ``score.py entities``."""
    run = {x.id: x for x in lines}
    h1: list[float] = []
    h5: list[float] = []
    p: list[float] = []
    r: list[float] = []
    f: list[float] = []
    for q in questions:
        want = {_norm(a) for a in q["answers"]}
        line = run.get(str(q["id"]))
        ranked = [_norm(e) for e in (line.ranked if line else [])]
        h1.append(1.0 if ranked[:1] and ranked[0] in want else 0.0)
        h5.append(1.0 if want & set(ranked[:5]) else 0.0)
        got = {_norm(a) for a in (line.answers if line else [])}
        tp = len(got & want)
        pi = tp / len(got) if got else 0.0
        ri = tp / len(want)
        p.append(pi)
        r.append(ri)
        f.append(0.0 if tp == 0 else 2 * pi * ri / (pi + ri))
    out: dict[str, float] = {
        "questions": len(questions),
        "answered": sum(1 for q in questions if str(q["id"]) in run),
        "hits@1": round(100 * statistics.mean(h1), 2),
        "hits@5": round(100 * statistics.mean(h5), 2),
        "precision": round(100 * statistics.mean(p), 2),
        "recall": round(100 * statistics.mean(r), 2),
        "f1": round(100 * statistics.mean(f), 2),
    }
    lat = [x.latency_ms for x in lines]
    if lat:
        out["latency_ms_p50"] = _pct(lat, 0.5) or 0.0
        out["latency_ms_p95"] = _pct(lat, 0.95) or 0.0
        cpu = [x.cpu_ms for x in lines]
        out["cpu_ms_p50"] = _pct(cpu, 0.5) or 0.0
        out["cpu_ms_p95"] = _pct(cpu, 0.95) or 0.0
    return out


class TripleIndex:
    """The triples as plain adjacency sets: an engine-independent reference for the ceiling."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self.out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.into: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for h, r, t in triples:
            rel = relation_type_name(r)
            self.out[rel][h].add(t)
            self.into[rel][t].add(h)

    def walk(self, start: str, path: Sequence[RelationHop]) -> set[str]:
        """Every node ``path`` reaches from ``start`` without coming back to it."""
        frontier = {start}
        for hop in path:
            side = self.out if hop.forward else self.into
            table = side.get(hop.relation, {})
            nxt: set[str] = set()
            for n in frontier:
                nxt |= table.get(n, set())
            nxt.discard(start)
            frontier = nxt
        return frontier


def ceiling(
    index: TripleIndex, questions: Sequence[dict[str, Any]], roles: RoleMap = METAQA_ROLES
) -> dict[str, float]:
    """What the gold relation path reaches in the loaded triples: share of gold answers reached
    (``recall``) and the F1 of answering exactly that set (``f1``), in percent."""
    rec: list[float] = []
    f1: list[float] = []
    for q in questions:
        want = {_norm(a) for a in q["answers"]}
        got = {_norm(x) for x in index.walk(str(q["topic_entity"]), roles.relation_path(str(q["qtype"])))}
        tp = len(got & want)
        rec.append(tp / len(want))
        f1.append(0.0 if tp == 0 else 2 * tp / (len(got) + len(want)))
    return {"recall": round(100 * statistics.mean(rec), 2), "f1": round(100 * statistics.mean(f1), 2)}


@dataclass
class ModeScore:
    """One mode on one question file: score.py's metrics and the ceiling of the gold relation paths."""

    mode: str
    hops: str
    metrics: dict[str, float]
    ceiling: dict[str, float] = field(default_factory=dict)


def format_table(scores: Sequence[ModeScore]) -> str:
    """A Markdown table: Hits@1, F1 and the ceiling, wall-clock and CPU latency per mode and question file."""
    nan = float("nan")
    rows = [
        "| mode | hops | questions | Hits@1 | F1 | ceiling F1 | ceiling recall | p50 ms | p95 ms | p95 CPU ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in scores:
        m = s.metrics
        rows.append(
            f"| {s.mode} | {s.hops} | {int(m['questions'])} | {m['hits@1']:.1f} | {m['f1']:.1f} | "
            f"{s.ceiling.get('f1', nan):.1f} | {s.ceiling.get('recall', nan):.1f} | "
            f"{m.get('latency_ms_p50', nan):.2f} | {m.get('latency_ms_p95', nan):.2f} | "
            f"{m.get('cpu_ms_p95', nan):.2f} |"
        )
    return "\n".join(rows)


_HOPS_FILE = re.compile(r"questions_(\d+)hop\.jsonl(?:\.gz)?")


def hops_label(path: str | Path) -> str:
    """``"2"`` for ``questions_2hop.jsonl.gz``; the file name without extensions otherwise."""
    name = Path(path).name
    m = _HOPS_FILE.fullmatch(name)
    return m.group(1) if m else name.split(".")[0]


def question_files(data_dir: str | Path) -> list[tuple[str, Path]]:
    """``(hops, path)`` of the ``questions_<n>hop.jsonl(.gz)`` files in a folder, by hop count."""
    found = [(int(hops_label(p)), p) for p in Path(data_dir).iterdir() if _HOPS_FILE.fullmatch(p.name)]
    return [(str(n), p) for n, p in sorted(found)]


def limit_torch_threads(n: int | None) -> None:
    """Run the embedding model on ``n`` threads (one query at a time gains nothing from more, and
    loses much on a busy machine); no-op without torch or with ``None``."""
    if n is None:
        return
    try:
        import torch
    except ImportError:  # pragma: no cover - torch comes with the default embedder
        return
    torch.set_num_threads(n)


@dataclass
class BenchReport:
    """Everything one benchmark run measured (``warm``: seconds per part of ``kb.warm()``)."""

    load: LoadReport
    scores: list[ModeScore]
    warm: dict[str, float] = field(default_factory=dict)
    runs: dict[tuple[str, str], list[KgqaLine]] = field(default_factory=dict)


def run_benchmark(
    triples_path: str | Path,
    files: Sequence[tuple[str, Path]],
    modes: Sequence[Mode],
    db: str | Path,
    *,
    embedder: str | Embedder | None = "default",
    torch_threads: int | None = 1,
    limit: int | None = None,
    progress: Progress | None = None,
    tick: Callable[[str, int, int], None] | None = None,
) -> BenchReport:
    """Load the triples into a fresh store at ``db``, then answer each question file in each mode.

    The store is reopened with ``embedder`` (what ``cef.open`` takes; the
    default model by default) and warmed (``kb.warm()``) before the first
    question; question files are read only after that. ``limit``: the first
    questions of each file only.
    """
    triples = read_triples(triples_path)
    loaded, load = load_triples(triples, db, progress=progress)
    loaded.close()
    kb = cef.open(db, embedder=embedder if "text" in modes else None)
    report = BenchReport(load, [])
    try:
        if progress is not None:
            progress("warming up (models, entity index, relation-path vectors)")
        limit_torch_threads(torch_threads)
        report.warm = kb.warm()
        reference = TripleIndex(triples)
        for hops, path in files:
            questions = read_jsonl(path)[:limit]
            try:
                top = ceiling(reference, questions)
            except (KeyError, ValidationError):  # no gold relation path in the vocabulary
                top = {}
            for mode in modes:
                if progress is not None:
                    progress(f"{path.name}: {mode} mode")
                lines = run_questions(
                    kb, questions, mode, progress=progress, tick=tick, label=f"{hops}-hop {mode} (questions)"
                )
                report.runs[(mode, hops)] = lines
                report.scores.append(ModeScore(mode, hops, score_entities(lines, questions), top))
    finally:
        kb.close()
    return report
