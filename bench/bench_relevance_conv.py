"""Abstention on a conversation: how often retrieval says "nothing matched" for questions a dated
two-person conversation answers (should be rare) and for ones it does not (LoCoMo's adversarial style:
another speaker's deed, an event never mentioned, a detail never given).

    python bench/bench_relevance_conv.py --questions bench/offtopic/conversations-1.yaml

The corpus is LoCoMo's layout (``../shared/bench/locomo/corpus.jsonl.gz``); only the conversations the
question file names are ingested, each into its own scope, through the public conversation ingest, and
every question is asked in its conversation's scope with ``kb.retrieve`` and default settings. The
question file is ``sets: {<conversation id>: {offtopic: [...], ontopic: [{question: ...}]}}``; the verdict
is ``result.metadata["relevance"]["nothing_matched"]`` (:mod:`cef.retrieve.relevance`). Prints one line
per conversation and kind (the same format as ``bench_relevance.py``), then abstention precision and
recall over all of them.
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
from cef.memory.conversation import ingest_conversation, read_conversations

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "corpus.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=Path, required=True, help="sets: {conversation: {offtopic, ontopic}}")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="LoCoMo-layout turns (.jsonl[.gz])")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--show", action="store_true", help="print each question's verdict")
    args = ap.parse_args()
    sets = yaml.safe_load(args.questions.read_text(encoding="utf-8"))["sets"]
    abstained = {"ontopic": 0, "offtopic": 0}
    asked = {"ontopic": 0, "offtopic": 0}
    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "corpus.jsonl"
        with (
            gzip.open(args.corpus, "rt", encoding="utf-8")
            if args.corpus.suffix == ".gz"
            else open(args.corpus, encoding="utf-8") as src,
            open(subset, "w", encoding="utf-8") as dst,
        ):
            for line in src:
                if line.strip() and json.loads(line)["conversation"] in sets:
                    dst.write(line)
        with cef.open(Path(tmp) / "kb.db") as kb:
            for conv in read_conversations(subset):
                t0 = time.perf_counter()
                report = ingest_conversation(kb, conv, scope=conv.id)
                print(f"{conv.id}: {report.turns} turns ingested in {time.perf_counter() - t0:.1f} s")
            for conv_id, kinds in sets.items():
                for kind in ("ontopic", "offtopic"):
                    questions = [
                        q["question"] if isinstance(q, dict) else str(q) for q in kinds.get(kind, [])
                    ]
                    best, hits, t0 = [], 0, time.perf_counter()
                    for q in questions:
                        result = kb.retrieve(cef.GraphQuery(query=q, top_k=args.top_k, scope=conv_id))
                        verdict = result.metadata.get("relevance", {})
                        hits += bool(verdict.get("nothing_matched"))
                        best.append(float(verdict.get("best", 0.0)))
                        if args.show:
                            said = "NOTHING" if verdict.get("nothing_matched") else "matched"
                            print(f"  {said} {best[-1]:.2f}  {q}")
                    abstained[kind] += hits
                    asked[kind] += len(questions)
                    n = max(len(questions), 1)
                    quart = statistics.quantiles(best, n=4) if len(best) > 1 else best * 3
                    wanted = "wrongly 'nothing matched'" if kind == "ontopic" else "'nothing matched'"
                    print(
                        f"{kind:9} {conv_id:10} {len(questions):4} questions: {100 * hits / n:5.1f}% {wanted}; "
                        f"best relevance quartiles {quart[0]:.2f} / {quart[1]:.2f} / {quart[2]:.2f}; "
                        f"{1000 * (time.perf_counter() - t0) / n:.0f} ms/question"
                    )
    total = abstained["ontopic"] + abstained["offtopic"]
    precision = abstained["offtopic"] / total if total else 0.0
    recall = abstained["offtopic"] / max(asked["offtopic"], 1)
    print(
        f"abstention precision {100 * precision:.1f}%, recall {100 * recall:.1f}% ({total} 'nothing matched')"
    )


if __name__ == "__main__":
    main()
