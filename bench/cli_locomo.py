"""``python bench/cli.py locomo``: dated conversations ingested through the public API, each in its own
scope; Recall@5/@10 of the evidence turns, session Hit@1, per category, default beside vector and BM25."""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from cef import SearchStrategy
from cef.cli.common import cli_errors, err_console, progress_bar

_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo"


def locomo(
    corpus: Annotated[
        Path,
        typer.Option(
            "--corpus",
            help="Conversations: one turn a line {id, conversation, session, date, speaker, text, "
            "image_caption?} (.jsonl/.gz), or a JSON file in the plain or LoCoMo layout.",
            exists=True,
        ),
    ] = _DATA / "corpus.jsonl.gz",
    questions: Annotated[
        Path,
        typer.Option(
            "--questions",
            help="questions.jsonl(.gz): {id, conversation, question, category, supporting_ids}; read after ingest.",
            exists=True,
        ),
    ] = _DATA / "questions.jsonl.gz",
    strategy: Annotated[
        list[SearchStrategy] | None,
        typer.Option("--strategy", help="Strategy to run (repeatable); default: auto, vector and bm25."),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", help="Turns ranked per question.", min=1, max=1000)] = 10,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the first strategy's run (score.py passages format) here."),
    ] = None,
    runs_dir: Annotated[
        Path | None, typer.Option("--runs-dir", help="Write one run file per strategy into this folder.")
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", help="Build the store in this (new) file and keep it. Default: a temporary file."
        ),
    ] = None,
    embedder: Annotated[
        str, typer.Option("--embedder", help="'default' (offline all-MiniLM-L6-v2) or 'none'.")
    ] = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Ingest each conversation into its own scope (questions unseen), ask every question in its
    conversation's scope, print Recall@5/@10, session Hit@1, MRR, latency and per-category recall.

    Example:  python bench/cli.py locomo --out run.jsonl
    """
    from bench.harness.locomo import (
        BASELINES,
        build_memory,
        format_report,
        load_questions,
        run_questions,
        score,
    )
    from bench.harness.passages import write_run

    chosen = list(strategy or BASELINES)
    with cli_errors(), tempfile.TemporaryDirectory(prefix="cef-locomo-") as tmp:
        path = db if db is not None else Path(tmp) / "locomo.db"
        kb, ingests = build_memory(
            corpus,
            path,
            embedder=None if embedder == "none" else embedder,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
        try:
            rows = load_questions(questions)
            results = []
            for i, s in enumerate(chosen):
                with progress_bar() as bar:
                    lines = run_questions(kb, rows, s, top_k=top_k, progress=bar)
                if out is not None and i == 0:
                    write_run(out, lines)
                if runs_dir is not None:
                    runs_dir.mkdir(parents=True, exist_ok=True)
                    write_run(runs_dir / f"{s.value}.jsonl", lines)
                results.append((s.value, score(lines, rows)))
        finally:
            kb.close()
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "ingest": [asdict(x) for x in ingests],
                    "results": [{"strategy": n, **asdict(s)} for n, s in results],
                },
                indent=2,
            )
        )
        return
    typer.echo(format_report(f"{corpus.parent.name}/{corpus.name}", results, ingests))
