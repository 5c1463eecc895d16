"""``python bench/cli.py kgqa``: knowledge-graph question answering over a triple file (pattern and text modes)."""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from cef.cli.common import cli_errors, err_console, progress_bar


class KgqaMode(StrEnum):
    TEXT = "text"
    PATTERN = "pattern"


def kgqa(
    kb: Annotated[
        Path,
        typer.Option(
            "--kb", help="Triples: head<TAB>relation<TAB>tail per line (.tsv or .tsv.gz).", exists=True
        ),
    ],
    questions: Annotated[
        list[Path] | None,
        typer.Option(
            "--questions",
            help="Question file(s) {id, question, topic_entity, answers, qtype} (repeatable); read after loading.",
            exists=True,
        ),
    ] = None,
    mode: Annotated[
        list[KgqaMode] | None,
        typer.Option(
            "--mode",
            help="pattern: the gold relation path as a graph pattern from the topic entity; text: the "
            "question text only, answered by kb.retrieve with the default settings (answers: the ranked "
            "answer nodes). Repeatable; default: both.",
        ),
    ] = None,
    all_files: Annotated[
        bool,
        typer.Option(
            "--all", help="Answer every questions_<n>hop.jsonl(.gz) next to --kb, in both modes by default."
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the run (score.py entities format) here: one file, one mode."),
    ] = None,
    runs_dir: Annotated[
        Path | None,
        typer.Option("--runs-dir", help="Write one run per mode and question file into this folder."),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", help="Build the store in this (new) file and keep it. Default: a temporary file."
        ),
    ] = None,
    torch_threads: Annotated[
        int, typer.Option("--torch-threads", help="Threads of the embedding model while answering.", min=1)
    ] = 1,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Answer only the first N questions of each file.", min=1)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Load triples into a fresh knowledge base, answer entity questions, print Hits@1, F1, the ceiling and timings.

    The graph is built with one index_batch (no embeddings), reopened with the
    default embedder and warmed (kb.warm()); the question files are opened only
    after that. Text mode calls kb.retrieve(GraphQuery(query=question)), the
    product's default route, and scores its answer nodes. The ceiling is what the gold relation path
    reaches in the loaded triples (some may be missing). The run file is what
    ../shared/bench/score.py entities reads.

    Example:  python bench/cli.py kgqa --kb ../shared/bench/metaqa/kb.tsv.gz --questions ../shared/bench/metaqa/questions_2hop.jsonl.gz --mode text --out run.jsonl
    """
    from bench.harness.kgqa import Mode, format_table, hops_label, question_files, run_benchmark, write_run

    files = [(hops_label(p), p) for p in questions or []]
    if all_files:
        files.extend(question_files(kb.parent))
    if not files:
        raise typer.BadParameter("give --questions, or --all to use the question files next to --kb")
    modes: list[Mode] = [
        "pattern" if m is KgqaMode.PATTERN else "text" for m in mode or [KgqaMode.PATTERN, KgqaMode.TEXT]
    ]
    modes = list(dict.fromkeys(modes))
    if out is not None and (len(modes) != 1 or len(files) != 1):
        raise typer.BadParameter(
            "--out takes one mode and one question file; use --runs-dir", param_hint="--out"
        )
    with cli_errors(), tempfile.TemporaryDirectory(prefix="cef-bench-") as tmp, progress_bar() as bar:
        report = run_benchmark(
            kb,
            files,
            modes,
            db if db is not None else Path(tmp) / "kgqa.db",
            torch_threads=torch_threads,
            limit=limit,
            tick=bar,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    for (m, hops), lines in report.runs.items():
        if out is not None:
            write_run(out, lines)
        if runs_dir is not None:
            runs_dir.mkdir(parents=True, exist_ok=True)
            write_run(runs_dir / f"{m}-{hops}.jsonl", lines)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "load": asdict(report.load),
                    "warm_s": report.warm,
                    "results": [asdict(s) for s in report.scores],
                },
                indent=2,
            )
        )
        return
    load = report.load
    typer.echo(
        f"loaded {load.triples:,} triples ({load.nodes:,} entities, {len(load.relations)} relations) "
        f"in {load.load_s:.1f} s; warm-up " + ", ".join(f"{k} {v:.1f} s" for k, v in report.warm.items())
    )
    typer.echo(format_table(report.scores))


__all__ = ["kgqa"]
