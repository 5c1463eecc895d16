"""Abstention across domains: every knowledge base asked its own questions (on-topic: "nothing
matched" there is a wrong abstention) and the questions written for the other domains (off-topic: a
question about a hospital asked of a museum is not answered by it), pooled over ten domains.

    python bench/bench_relevance_pool.py --out runs/relevance            # every domain
    python bench/bench_relevance_pool.py --domain museum --domain notes  # some
    python bench/bench_relevance_pool.py --metaqa 100                    # with MetaQA (100 per hop file)

The domains: the shipped examples ``clinical``, ``services`` (on-topic: their ``questions.yaml`` and
the on-topic lists of ``bench/offtopic/questions-2.yaml`` to ``questions-18.yaml`` and ``questions-14b.yaml``; off-topic: the lists written for them in
``bench/offtopic/``), ``notes`` (``tests/unit/retrieve/notes_questions.yaml`` and questions-2), every
curated graph under ``bench/curated/`` (its ``questions.yaml``, with its ``as_of``), and with
``--metaqa N`` the WikiMovies triples (the first N questions of each hop file), with ``--locomo ID``
a LoCoMo conversation (in its own scope; its questions on-topic). Each knowledge base is
also asked up to ``--cross`` on-topic questions of every other domain and every off-topic list (not
between ``clinical`` and ``hospital``: one domain, medicine). Everything goes through ``cef.open`` and
``kb.retrieve`` with default settings. Prints a table (per knowledge base: on-topic wrongly "nothing
matched", off-topic "nothing matched") and with ``--out`` writes one JSON line per question (its
verdict, ``metadata["relevance"]``), which ``bench/fit_relevance.py`` reads.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

if __name__ == "__main__":  # run as a script: the repository root holds the bench package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cef

ROOT = Path(__file__).resolve().parent.parent
OFFTOPIC = ROOT / "bench" / "offtopic"
CURATED = ROOT / "bench" / "curated"
METAQA = ROOT.parent / "shared" / "bench" / "metaqa"
LOCOMO = ROOT.parent / "shared" / "bench" / "locomo" / "corpus.jsonl.gz"
#: pairs of domains that share a subject: neither is asked the other's questions
SAME_SUBJECT = {frozenset({"clinical", "hospital"})}


@dataclass
class Question:
    text: str
    as_of: datetime | None = None
    set: str = ""  # the file it was written in (the verdicts say it, to report each set)


@dataclass
class Domain:
    name: str
    sources: list[str]
    ontopic: list[Question] = field(default_factory=list)
    offtopic: list[Question] = field(default_factory=list)  # written for this knowledge base
    triples: Path | None = None
    conversation: str | None = None  # a LoCoMo conversation id: ingested into its scope, asked there


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _listed(items: list[Any], set_name: str = "") -> list[Question]:
    return [
        Question(str(q["question"]) if isinstance(q, dict) else str(q), set=set_name) for q in items or []
    ]


def conversations(ids: list[str], corpus: Path) -> list[Domain]:
    """LoCoMo conversations, each a domain: its questions on-topic (none is adversarial)."""
    from bench.harness.kgqa import read_jsonl

    out = {c: Domain(c, [str(corpus)], conversation=c) for c in ids}
    for q in read_jsonl(corpus.parent / "questions.jsonl.gz"):
        if q["conversation"] in out:
            out[q["conversation"]].ontopic.append(Question(str(q["question"]), set="locomo"))
    for name in ("conversations-1", "conversations-2"):  # adversarial questions written for two each
        written = _yaml(OFFTOPIC / f"{name}.yaml")["sets"]
        for c, d in out.items():
            if c in written:
                d.ontopic += _listed(written[c].get("ontopic", []), name)
                d.offtopic += _listed(written[c].get("offtopic", []), name)
    return list(out.values())


#: the off-topic sets written for the shipped examples (each: per knowledge base, on-topic and off-topic lists)
WRITTEN_SETS = (*(f"questions-{i}" for i in range(2, 19)), "questions-14b")


def _add_written(d: Domain, written: dict[str, Any]) -> None:
    for set_name, sets in written.items():
        d.ontopic += _listed(sets[d.name]["ontopic"], set_name)
        d.offtopic += _listed(sets[d.name]["offtopic"], set_name)


def domains(metaqa: int) -> list[Domain]:
    off1 = _yaml(OFFTOPIC / "questions.yaml")["sets"]
    written = {n: _yaml(OFFTOPIC / f"{n}.yaml")["sets"] for n in WRITTEN_SETS}
    out = []
    for name in ("clinical", "services"):
        d = Domain(name, [str(ROOT / "examples" / name / "graph.yaml")])
        d.ontopic = _listed(_yaml(ROOT / "examples" / name / "questions.yaml")["questions"], "shipped")
        d.offtopic = _listed(off1[name]["offtopic"], "questions")
        _add_written(d, written)
        out.append(d)
    notes = _yaml(ROOT / "tests" / "unit" / "retrieve" / "notes_questions.yaml")
    d = Domain("notes", [str(ROOT / "examples" / "notes")])
    d.ontopic = _listed(notes["ontopic"], "shipped")
    d.offtopic = _listed(notes["offtopic"], "shipped")
    _add_written(d, written)
    out.append(d)
    for folder in sorted(p for p in CURATED.iterdir() if (p / "graph.yaml").exists()):
        d = Domain(folder.name, [str(folder / "graph.yaml")])
        for item in _yaml(folder / "questions.yaml")["questions"]:
            as_of = item.get("as_of")
            if as_of is not None and not isinstance(as_of, datetime):
                as_of = datetime.fromisoformat(str(as_of))
            d.ontopic.append(Question(str(item["question"]), as_of, "curated"))
        out.append(d)
    if metaqa:
        d = Domain("metaqa", [], triples=METAQA / "kb.tsv.gz")
        from bench.harness.kgqa import read_jsonl

        for hops in (1, 2, 3):
            d.ontopic += [
                Question(str(q["question"]), set=f"metaqa-{hops}hop")
                for q in read_jsonl(METAQA / f"questions_{hops}hop.jsonl.gz")[:metaqa]
            ]
        out.append(d)
    return out


def open_domain(d: Domain, db: Path) -> cef.KnowledgeBase:
    if d.conversation is not None:
        from cef.memory.conversation import ingest_conversation, read_conversations

        kb = cef.open(db)
        for conv in read_conversations(d.sources[0]):
            if conv.id == d.name:
                ingest_conversation(kb, conv, scope=conv.id)
        return kb
    if d.triples is not None:
        from bench.harness.kgqa import load_triples, read_triples

        loaded, _ = load_triples(read_triples(d.triples), db)
        loaded.close()
        kb = cef.open(db)
        kb.warm()
        return kb
    from bench.harness.curated import load_graph

    if len(d.sources) == 1 and d.sources[0].endswith("graph.yaml"):
        return load_graph(d.sources[0], db)
    from cef.ingest.pipeline import ingest_sources

    kb = cef.open(db)
    report = ingest_sources(kb, d.sources)
    assert not report.failures, report.failures
    return kb


def ask(
    kb: cef.KnowledgeBase,
    q: Question,
    scope: str | None = None,
    support: bool = False,
    relevance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    settings = dict(relevance or {})  # RelevanceSettings fields to try (--relevance)
    if support:
        settings["support"] = True  # a feature reported, no verdict changed
    options = {"relevance": settings} if settings else {}
    result = kb.retrieve(cef.GraphQuery(query=q.text, as_of=q.as_of, scope=scope, options=options))
    verdict = dict(result.metadata.get("relevance", {}))
    verdict["answers"] = [n.node.id for n in result.nodes[:3]]
    return verdict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", action="append", default=[], help="only these knowledge bases (repeatable)")
    ap.add_argument("--cross", type=int, default=12, help="on-topic questions of each other domain asked")
    ap.add_argument("--metaqa", type=int, default=0, help="MetaQA questions per hop file (0: no MetaQA)")
    ap.add_argument(
        "--locomo", action="append", default=[], help="a LoCoMo conversation id as a domain (repeatable)"
    )
    ap.add_argument("--out", type=Path, help="a folder: one <domain>.jsonl of verdicts per knowledge base")
    ap.add_argument("--show", action="store_true", help="print each wrong verdict")
    ap.add_argument(
        "--support",
        action="store_true",
        help="report semantic support in each verdict's features (a fit's input)",
    )
    ap.add_argument(
        "--relevance",
        type=json.loads,
        default=None,
        help="RelevanceSettings fields as JSON, for every question ('{\"evidence\": [0, 0, 0, 0]}')",
    )
    args = ap.parse_args()
    everything = domains(args.metaqa) + conversations(args.locomo, LOCOMO)
    chosen = [d for d in everything if not args.domain or d.name in args.domain]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    print(f"{'knowledge base':16} {'on-topic':>8} {'wrongly':>8} {'off (own)':>10} {'nothing':>8} "
          f"{'off (cross)':>11} {'nothing':>8} {'ms/q':>6}")  # fmt: skip
    totals = [0, 0, 0, 0, 0, 0]
    for d in chosen:
        asked: list[tuple[str, str, Question]] = [("on", d.name, q) for q in d.ontopic]
        asked += [("off-own", d.name, q) for q in d.offtopic]
        for other in everything:
            if other is d or frozenset({d.name, other.name}) in SAME_SUBJECT:
                continue
            step = max(len(other.ontopic) // max(args.cross, 1), 1)
            asked += [("off-cross", other.name, q) for q in other.ontopic[::step][: args.cross]]
            asked += [("off-cross", other.name, q) for q in other.offtopic]
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            kb = open_domain(d, Path(tmp) / "kb.db")
            t0 = time.perf_counter()
            try:
                for kind, source, q in asked:
                    v = ask(kb, q, d.conversation, args.support, args.relevance)
                    rows.append(
                        {"kb": d.name, "kind": kind, "source": source, "set": q.set, "question": q.text, **v}
                    )
                    wrong = v.get("nothing_matched") == (kind == "on")
                    if args.show and wrong:
                        print(f"  WRONG {kind:9} {v.get('best', 0):.2f} [{source}] {q.text}")
            finally:
                kb.close()
            ms = 1000 * (time.perf_counter() - t0) / max(len(asked), 1)
        if args.out:
            with (args.out / f"{d.name}.jsonl").open("w", encoding="utf-8") as f:
                for r in rows:
                    f.write(json.dumps(r, default=str) + "\n")
        counts = []
        for kind in ("on", "off-own", "off-cross"):
            got = [r for r in rows if r["kind"] == kind]
            counts += [len(got), sum(bool(r.get("nothing_matched")) for r in got)]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        print(_line(d.name, counts, ms), flush=True)
    if len(chosen) > 1:
        print(_line("all", totals, 0.0))


def _line(name: str, c: list[int], ms: float) -> str:
    def pct(n: int, k: int) -> str:
        return f"{100 * k / n:7.1f}%" if n else "       -"

    return (
        f"{name:16} {c[0]:8} {pct(c[0], c[1])} {c[2]:10} {pct(c[2], c[3])} {c[4]:11} {pct(c[4], c[5])} "
        f"{ms:6.0f}"
    )


if __name__ == "__main__":
    main()
