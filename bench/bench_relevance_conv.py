"""Abstention on a conversation: how often retrieval says "nothing matched" for questions a dated
two-person conversation answers (should be rare) and for ones it does not (LoCoMo's adversarial style:
another speaker's deed, an event never mentioned, a detail never given).

    python bench/bench_relevance_conv.py --questions bench/offtopic/conversations-1.yaml

The corpus is LoCoMo's layout (``../shared/bench/locomo/corpus.jsonl.gz``); only the conversations the
question file names are ingested, each into its own scope, through the public conversation ingest, and
every question is asked in its conversation's scope with ``kb.retrieve`` and default settings
(:func:`bench.bench_relevance.run`). The question file is ``sets: {<conversation id>: {offtopic: [...],
ontopic: [{question: ...}]}}``; the verdict is ``result.metadata["relevance"]["nothing_matched"]``
(:mod:`cef.retrieve.relevance`). Prints one line per conversation and kind (the format of
``bench_relevance.py``), then abstention precision and recall over all of them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cef
from bench.bench_relevance import report, run
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
    abstained = {"on-topic": 0, "off-topic": 0}
    asked = {"on-topic": 0, "off-topic": 0}
    with tempfile.TemporaryDirectory() as tmp, cef.open(Path(tmp) / "kb.db") as kb:
        for conv in read_conversations(args.corpus):
            if conv.id in sets:
                t0 = time.perf_counter()
                ingested = ingest_conversation(kb, conv, scope=conv.id)
                print(f"{conv.id}: {ingested.turns} turns ingested in {time.perf_counter() - t0:.1f} s")
        for conv_id, kinds in sets.items():
            for kind in ("on-topic", "off-topic"):
                listed = kinds.get(kind.replace("-", ""), [])
                questions = [q["question"] if isinstance(q, dict) else str(q) for q in listed]
                rate, best, ms = run(kb, questions, args.top_k, args.show, scope=conv_id)
                abstained[kind] += round(rate * len(questions))
                asked[kind] += len(questions)
                print(report(kind, conv_id, len(questions), rate, best, ms))
    total = abstained["on-topic"] + abstained["off-topic"]
    precision = abstained["off-topic"] / total if total else 0.0
    recall = abstained["off-topic"] / max(asked["off-topic"], 1)
    print(
        f"abstention precision {100 * precision:.1f}%, recall {100 * recall:.1f}% ({total} 'nothing matched')"
    )


if __name__ == "__main__":
    main()
