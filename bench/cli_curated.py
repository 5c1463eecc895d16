"""``python bench/cli.py curated``: questions with gold answers and gold relation paths over a curated graph file."""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from cef import SearchStrategy
from cef.cli.common import cli_errors, err_console, progress_bar


class GoldMismatch(StrEnum):
    error = "error"
    warn = "warn"


def _warn_gold(problem: str) -> None:
    err_console.print(f"warning: gold data: {problem}", highlight=False, markup=False)


def curated(
    graph: Annotated[
        Path,
        typer.Option("--graph", help="Graph file (YAML/JSON, the format cef ingest reads).", exists=True),
    ],
    questions: Annotated[
        Path,
        typer.Option(
            "--questions",
            help="questions.yaml: {id, question, anchor, path, answers, as_of?, chunks?} per question.",
            exists=True,
        ),
    ],
    strategy: Annotated[
        SearchStrategy | None,
        typer.Option("--strategy", help="Ask with this strategy instead of the default (auto)."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N questions.", min=1)] = None,
    top_k: Annotated[int, typer.Option("--top-k", help="Chunks ranked per question.", min=1, max=1000)] = 10,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", help="Build the store in this (new) file and keep it. Default: a temporary file."
        ),
    ] = None,
    embedder: Annotated[
        str, typer.Option("--embedder", help="'default' (offline all-MiniLM-L6-v2) or 'none'.")
    ] = "default",
    show: Annotated[
        bool, typer.Option("--show", help="Also print each question's top answer and its typed path.")
    ] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    gold_mismatch: Annotated[
        GoldMismatch,
        typer.Option(
            "--gold-mismatch",
            help="A gold path that does not reach exactly the gold answers: 'error' stops; 'warn' prints it "
            "and scores against the gold answers as written (for a frozen set that cannot be corrected).",
        ),
    ] = GoldMismatch.error,
) -> None:
    """Ingest a curated graph into a fresh store, ask its questions, print Hits@1/@5, path accuracy, chunk recall.

    The gold data is checked first (ids exist, each gold path reaches exactly the
    gold answers at the question's as_of). Each question's text, and its as_of,
    goes to retrieve() with the default settings; answers are read from the
    ranked answer nodes, paths from their typed paths.

    Example:  python bench/cli.py curated --graph examples/services/graph.yaml --questions examples/services/questions.yaml
    """
    from bench.harness.curated import format_table, run_benchmark

    with cli_errors(), tempfile.TemporaryDirectory(prefix="cef-bench-") as tmp, progress_bar(progress) as bar:
        report = run_benchmark(
            graph,
            questions,
            db if db is not None else Path(tmp) / "curated.db",
            embedder=None if embedder == "none" else embedder,
            strategy=strategy,
            limit=limit,
            top_k=top_k,
            progress=bar,
            on_gold_mismatch=None if gold_mismatch is GoldMismatch.error else _warn_gold,
        )
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "graph": report.graph,
                    "questions": report.questions,
                    "load_s": report.load_s,
                    "answered_by": report.answered_by,
                    "scores": [asdict(r) for r in report.rows],
                    "runs": [asdict(r) for r in report.runs],
                },
                indent=2,
            )
        )
        return
    if show:
        for r in report.runs:
            mark = ("H" if r.hit1 else "-") + ("P" if r.path_ok else "-")
            top = r.answers[0] if r.answers else "(no answer node)"
            err_console.print(f"{mark} {r.id}: {top}  {r.path or ''}", highlight=False, markup=False)
    typer.echo(
        f"{report.nodes} nodes, {report.edges} edges, {report.chunks} chunks ingested in {report.load_s:.1f} s; "
        f"answered by: {', '.join(f'{k} {v}' for k, v in sorted(report.answered_by.items()))}"
    )
    typer.echo(format_table(report.rows))


__all__ = ["curated"]
