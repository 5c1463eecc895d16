#!/usr/bin/env python3
"""Why the path stage ranked as it did: for curated questions, the best candidate paths with
each term of their score (``PathScorer.rank``'s ``parts_out``), the asked-for kind and the answers.

    PYTHONPATH=. .venv/bin/python bench/explain_paths.py bench/curated/museum mu-12 mu-20 [--top 8]

The store is kept in the temporary folder as ``cef-explain-<set>.db`` between runs (delete it after a graph change).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cef  # noqa: E402
from bench.harness.curated import load_graph, question_query, read_questions  # noqa: E402
from cef.retrieve import pathscore  # noqa: E402
from cef.retrieve.pathwords import RelationPath  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set", type=Path, help="a curated set's folder (its graph.yaml and questions.yaml)")
    ap.add_argument("ids", nargs="*", help="the question ids to explain (default: every question)")
    ap.add_argument("--top", type=int, default=8, help="candidate paths shown per question (default 8)")
    args = ap.parse_args()
    db = Path(tempfile.gettempdir()) / f"cef-explain-{args.set.name}.db"
    kb = cef.open(db) if db.exists() else load_graph(args.set / "graph.yaml", db)
    captured: list[
        tuple[str, dict[RelationPath, dict[str, float]], list[tuple[float, RelationPath, str]]]
    ] = []
    orig = pathscore.PathScorer.rank

    def rank(
        self: pathscore.PathScorer,
        question: str,
        span: tuple[int, int] | None,
        paths: Sequence[RelationPath],
        **kw: Any,
    ) -> list[tuple[float, RelationPath]]:
        parts: dict[RelationPath, dict[str, float]] = {}
        kw["parts_out"] = parts
        out = orig(self, question, span, paths, **kw)
        masked = pathscore.masked_question(question, span)
        tokens = self.lemmatize(masked)
        at = next((i for i, (t, _) in enumerate(tokens) if t == pathscore.MASK.lower()), None)
        asked = self._asked(question, masked, tokens, at, paths, kw.get("others", ()))
        captured.append((f"{masked}  | asked={asked}", parts, [(s, p, self.describe(p)) for s, p in out]))
        return out

    pathscore.PathScorer.rank = rank  # type: ignore[method-assign]
    for q in read_questions(args.set / "questions.yaml"):
        if args.ids and q.id not in args.ids:
            continue
        captured.clear()
        res = kb.retrieve(question_query(q))
        print(f"\n=== {q.id}: {q.question}\n gold {sorted(q.answers)} via {q.anchor} {list(q.path)}")
        print(f" got {[n.node.id for n in res.nodes][:5]}")
        for head, parts, ranked in captured:
            print(f" -- {head}")
            for s, p, d in ranked[: args.top]:
                terms = " ".join(f"{k}={v:+.2f}" for k, v in parts[p].items() if abs(v) > 1e-9)
                print(f"   {s:6.3f} {d:<60} {terms}")


if __name__ == "__main__":
    main()
