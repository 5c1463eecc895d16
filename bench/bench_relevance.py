"""Abstention: how often retrieval says "nothing matched", on questions the knowledge base answers
(on-topic: should be rare) and on questions it cannot (off-topic: should be nearly all).

    python bench/bench_relevance.py --source examples/clinical/graph.yaml \
        --on-topic examples/clinical/questions.yaml --off-topic offtopic/clinical.txt

A question file is YAML (``questions: [{question: ...}]``), JSON Lines (a ``question`` per line) or
plain text (one question per line). Everything goes through ``cef.open`` and ``kb.retrieve`` with
default settings; the verdict is ``result.metadata["relevance"]["nothing_matched"]``
(:mod:`cef.retrieve.relevance`). Prints one line per file and, with ``--show``, each question.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import tempfile
import time
from pathlib import Path

import yaml

import cef
from cef.ingest.pipeline import ingest_sources


def read_questions(path: Path, set_name: str | None = None, kind: str = "offtopic") -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        text = f.read()
    name = path.name.removesuffix(".gz")
    if name.endswith((".yaml", ".yml")):
        data = yaml.safe_load(text)
        if isinstance(data, dict) and "sets" in data:  # {sets: {name: {offtopic: [...]}}}: --set picks one
            chosen = data["sets"][set_name] if set_name else next(iter(data["sets"].values()))
            listed = chosen.get(kind, chosen.get("questions", []))
            return [str(q["question"]) if isinstance(q, dict) else str(q) for q in listed]
        items = data.get("questions", data) if isinstance(data, dict) else data
        return [q["question"] if isinstance(q, dict) else str(q) for q in items]
    if name.endswith(".jsonl"):
        return [json.loads(line)["question"] for line in text.splitlines() if line.strip()]
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def run(
    kb: cef.KnowledgeBase, questions: list[str], top_k: int, show: bool, scope: str | None = None
) -> tuple[float, list[float], float]:
    """Ask each question (in ``scope``): the share said "nothing matched", each best relevance, and
    the mean milliseconds per question."""
    abstained, best, t0 = 0, [], time.perf_counter()
    for q in questions:
        result = kb.retrieve(cef.GraphQuery(query=q, top_k=top_k, scope=scope))
        verdict = result.metadata.get("relevance", {})
        abstained += bool(verdict.get("nothing_matched"))
        best.append(float(verdict.get("best", 0.0)))
        if show:
            print(f"  {'NOTHING' if verdict.get('nothing_matched') else 'matched'} {best[-1]:.2f}  {q}")
    ms = 1000 * (time.perf_counter() - t0) / max(len(questions), 1)
    return abstained / max(len(questions), 1), best, ms


def report(kind: str, name: str, n: int, rate: float, best: list[float], ms: float) -> str:
    """One line of figures: ``kind`` is "on-topic" or "off-topic", ``name`` the file or set asked."""
    wanted = "wrongly 'nothing matched'" if kind == "on-topic" else "'nothing matched'"
    q = statistics.quantiles(best, n=4) if len(best) > 1 else best * 3
    return (
        f"{kind:9} {name:32} {n:4} questions: {100 * rate:5.1f}% {wanted}; "
        f"best relevance quartiles {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}; {ms:.0f} ms/question"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", action="append", default=[], help="what to ingest (repeatable)")
    ap.add_argument("--db", type=Path, help="an existing knowledge base instead of --source")
    ap.add_argument("--on-topic", action="append", default=[], type=Path)
    ap.add_argument("--off-topic", action="append", default=[], type=Path)
    ap.add_argument(
        "--set",
        default=None,
        help="the set of a file with several (sets: {name: {offtopic: [...], ontopic: [{question: ...}]}}): "
        "--off-topic reads its offtopic list, --on-topic its ontopic list",
    )
    ap.add_argument("--embedder", default="default", help="default (MiniLM) or none")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions of each file")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    embedder = None if args.embedder == "none" else args.embedder
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "kb.db"
        with cef.open(db, embedder=embedder) as kb:
            if args.source:
                ingested = ingest_sources(kb, args.source)
                assert not ingested.failures, ingested.failures
            for kind, files in (("on-topic", args.on_topic), ("off-topic", args.off_topic)):
                for path in files:
                    qs = read_questions(path, args.set, kind.replace("-", ""))[: args.limit]
                    rate, best, ms = run(kb, qs, args.top_k, args.show)
                    print(report(kind, path.name, len(qs), rate, best, ms))


if __name__ == "__main__":
    main()
