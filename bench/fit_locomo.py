"""Fit the dialogue weights (``DialogueSettings``) leave-one-conversation-out, and report held-out scores.

    python bench/fit_locomo.py --db locomo.db          # a store built by: python bench/cli.py locomo --db locomo.db

Every grid point is run once over all questions through ``kb.retrieve`` (the
default route, the settings given as the query option ``dialogue``). For each
conversation, the grid point with the best mean Recall@5 (``--criterion``) on the *other*
conversations' questions is chosen and scored on that conversation's questions
only; the held-out scores, pooled over the five folds, are what the report
calls leave-one-conversation-out. It also prints the point chosen on all
conversations (what the defaults should be) and the defaults' own scores.
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cef
from bench.harness.locomo import session_of
from bench.harness.passages import read_jsonl
from cef import GraphQuery
from cef.retrieve.presets import DialogueSettings

_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo"

#: the grids fitted (``--grid``): the dialogue weights, and those of questions about several occasions
GRIDS: dict[str, dict[str, tuple[float, ...]]] = {
    "dialogue": {
        "session": (0.5, 1.0),
        "session_turns": (3, 5),
        "neighbours": (0.25, 0.5),
        "speaker": (0.5, 1.0),
    },
    "several": {"several_session": (0.0, 0.25, 0.5), "several_diversity": (0.7, 1.0)},
    "phrase": {"phrase": (0.0, 0.25, 0.5, 0.75, 1.0, 2.0)},
    "phrase3": {"phrase": (0.25, 0.5, 1.0)},
    "neighbours": {"neighbours": (0.0, 0.25, 0.5), "session_turns": (3, 5)},
    "date_speaker": {"date": (0.5, 1.0, 2.0), "speaker": (0.75, 1.0, 1.5)},
    "feedback": {"several_feedback": (0.0, 0.25), "feedback": (0.0, 0.1)},
    "when": {"when": (0.0, 0.1, 0.25, 0.5, 1.0)},
    "when_other": {"when_other": (0.0, 0.25, 0.5), "when": (0.5, 1.0)},
    "feedback_depth": {"feedback_turns": (3, 5), "feedback_terms": (5, 10), "several_feedback": (0.25, 0.5)},
    "diversity": {"several_diversity": (0.4, 0.55, 0.7, 0.85)},
    "fusion": {"vector": (0.75, 1.0, 1.25, 1.5), "fuse_k": (3.0, 5.0, 8.0)},
    "when_session": {"when": (0.5, 1.0), "session": (0.25, 0.5, 1.0), "neighbours": (0.25, 0.5)},
    "several_speaker": {"several_speaker": (0.0, 1.0, 2.0, 4.0, 8.0)},
    "speaker_diversity": {"several_speaker": (1.0, 2.0), "several_diversity": (0.55, 0.7, 0.85)},
    "phrase_session": {"phrase": (0.25, 0.5), "session": (0.25, 0.5, 1.0), "speaker": (0.5, 1.0)},
}


def _per_question(
    kb: Any, questions: list[dict[str, Any]], settings: dict[str, float]
) -> dict[str, tuple[float, float, float]]:
    out = {}
    for q in questions:
        res = kb.retrieve(
            GraphQuery(
                query=q["question"],
                top_k=10,
                min_results=1,
                scope=q["conversation"],
                options={"dialogue": settings},
            )
        )
        ranked = [r.chunk.id for r in res.results]
        want = set(q["supporting_ids"])
        sessions = {session_of(t) for t in want}
        out[q["id"]] = (
            len(want & set(ranked[:5])) / len(want),
            len(want & set(ranked[:10])) / len(want),
            1.0 if ranked and session_of(ranked[0]) in sessions else 0.0,
        )
    return out


def _mean(rows: list[tuple[float, float, float]], i: int) -> float:
    return 100 * statistics.mean(r[i] for r in rows) if rows else 0.0


def main(
    db: Annotated[
        Path, typer.Option("--db", help="A store built by `bench/cli.py locomo --db`.", exists=True)
    ],
    questions: Annotated[Path, typer.Option("--questions", exists=True)] = _DATA / "questions.jsonl.gz",
    grid: Annotated[str, typer.Option("--grid", help=f"Which grid: {', '.join(GRIDS)}.")] = "several",
    criterion: Annotated[
        str,
        typer.Option(
            "--criterion",
            help="What a fold maximizes on the other conversations: recall@5, recall@10 or session_hit@1.",
        ),
    ] = "recall@5",
) -> None:
    if grid not in GRIDS:
        raise typer.BadParameter(f"unknown grid {grid!r}; known: {', '.join(GRIDS)}")
    columns = ("recall@5", "recall@10", "session_hit@1")
    if criterion not in columns:
        raise typer.BadParameter(f"the criterion is one of {', '.join(columns)}")
    col = columns.index(criterion)
    qs = read_jsonl(questions)
    convs = sorted({q["conversation"] for q in qs})
    chosen = GRIDS[grid]
    names = list(chosen)
    points = [dict(zip(names, values, strict=True)) for values in itertools.product(*chosen.values())]
    results: list[dict[str, tuple[float, float, float]]] = []
    with cef.open(db) as kb:
        kb.warm()
        for i, p in enumerate(points, 1):
            t0 = time.perf_counter()
            results.append(_per_question(kb, qs, p))
            typer.echo(
                f"[{i}/{len(points)}] {p} R@5 / R@10 / Hit@1 "
                + " / ".join(f"{_mean(list(results[-1].values()), c):.1f}" for c in range(3))
                + "".join(
                    f" · {cat} "
                    + " / ".join(
                        f"{_mean([results[-1][q['id']] for q in qs if q.get('category') == cat], c):.1f}"
                        for c in range(3)
                    )
                    for cat in sorted({str(q.get("category")) for q in qs})
                )
                + f" ({time.perf_counter() - t0:.0f} s)",
                err=True,
            )
    by_conv = {c: [q["id"] for q in qs if q["conversation"] == c] for c in convs}

    def best_on(ids: list[str]) -> int:
        return max(range(len(points)), key=lambda j: (_mean([results[j][x] for x in ids], col), -j))

    held: list[tuple[float, float, float]] = []
    report: dict[str, Any] = {"folds": []}
    for c in convs:
        train = [x for d in convs if d != c for x in by_conv[d]]
        j = best_on(train)
        rows = [results[j][x] for x in by_conv[c]]
        held += rows
        report["folds"].append(
            {
                "held_out": c,
                "chosen": points[j],
                "recall@5": round(_mean(rows, 0), 1),
                "recall@10": round(_mean(rows, 1), 1),
                "session_hit@1": round(_mean(rows, 2), 1),
            }
        )
    report["leave_one_conversation_out"] = {
        "recall@5": round(_mean(held, 0), 1),
        "recall@10": round(_mean(held, 1), 1),
        "session_hit@1": round(_mean(held, 2), 1),
    }
    j = best_on([q["id"] for q in qs])
    report["chosen_on_all"] = points[j]
    defaults = DialogueSettings()
    report["defaults"] = {k: getattr(defaults, k) for k in names}
    typer.echo(json.dumps(report, indent=2))


if __name__ == "__main__":
    typer.run(main)
