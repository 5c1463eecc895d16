"""Benchmark commands: ``python bench/cli.py passages|kgqa|curated …`` (outside the library; ``--help`` on each).

- ``passages``: passage retrieval on a JSON Lines corpus and a question file;
- ``kgqa``: MetaQA questions over the WikiMovies triples (``bench/cli_kgqa.py``);
- ``curated``: the hand-written questions of a curated graph (``bench/cli_curated.py``);
- ``locomo``: dated conversations, questions on their evidence turns (``bench/cli_locomo.py``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

if __name__ == "__main__":  # run as a script: the repository root holds the bench package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cef import SearchStrategy
from cef.cli.common import cli_errors, err_console, progress_bar

app = typer.Typer(
    name="bench",
    help="Benchmarks: index a corpus into a fresh knowledge base, answer its questions, score the run.",
    no_args_is_help=True,
)


def passages(
    corpus: Annotated[
        Path, typer.Option("--corpus", help="corpus.jsonl(.gz): one {id, title, text} per line.", exists=True)
    ],
    questions: Annotated[
        Path,
        typer.Option(
            "--questions",
            help="questions.jsonl(.gz): {id, question, supporting_ids}; read after indexing.",
            exists=True,
        ),
    ],
    strategy: Annotated[
        list[SearchStrategy] | None,
        typer.Option(
            "--strategy", help="Strategy to run (repeatable): auto, hybrid, vector, bm25, graph, ppr."
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare", help="Run bm25, vector, hybrid, graph, ppr and auto on the same store, side by side."
        ),
    ] = False,
    top_k: Annotated[
        int, typer.Option("--top-k", help="Passages ranked per question.", min=1, max=1000)
    ] = 10,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the run (score.py's format) here; one strategy only.")
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
    """Index a corpus from scratch (questions unseen), answer every question, print Recall@k, MRR and timings.

    The store is built through the normal JSON Lines parser and the entity
    enricher; the question file is opened only after indexing. The run file is
    what ../shared/bench/score.py reads.

    Example:  python bench/cli.py passages --corpus ../shared/bench/musique-100/corpus.jsonl.gz --questions ../shared/bench/musique-100/questions.jsonl.gz --strategy ppr --top-k 10 --out run.jsonl
    """
    from bench.harness.passages import (
        COMPARED,
        StrategyScore,
        build_store,
        format_table,
        read_jsonl,
        run_questions,
        score_run,
        write_run,
    )

    chosen = list(COMPARED) if compare else list(strategy or [SearchStrategy.AUTO])
    if out is not None and len(chosen) != 1:
        raise typer.BadParameter("--out takes one strategy; use --runs-dir with several", param_hint="--out")
    with cli_errors(), tempfile.TemporaryDirectory(prefix="cef-bench-") as tmp:
        path = db if db is not None else Path(tmp) / "bench.db"
        with progress_bar() as bar:
            kb, index = build_store(
                corpus,
                path,
                embedder=None if embedder == "none" else embedder,
                progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
                records=bar,
            )
        try:
            rows = read_jsonl(questions)
            results = []
            for s in chosen:
                with progress_bar() as bar:
                    lines = run_questions(kb, rows, s, top_k=top_k, progress=bar)
                if out is not None:
                    write_run(out, lines)
                if runs_dir is not None:
                    runs_dir.mkdir(parents=True, exist_ok=True)
                    write_run(runs_dir / f"{s.value}.jsonl", lines)
                used: dict[str, int] = {}
                for x in lines:
                    used[x.strategy] = used.get(x.strategy, 0) + 1
                results.append((s, score_run(lines, rows), used))
        finally:
            kb.close()
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "index": {**asdict(index), "total_s": index.total_s},
                    "results": [{"strategy": s.value, **m, "answered_by": u} for s, m, u in results],
                },
                indent=2,
            )
        )
        return
    typer.echo(
        format_table(
            f"{corpus.parent.name}/{corpus.name}",
            [StrategyScore(s.value, m, u) for s, m, u in results],
            index,
        )
    )


def _commands() -> None:
    from bench.cli_curated import curated
    from bench.cli_kgqa import kgqa
    from bench.cli_locomo import locomo

    app.command("passages")(passages)
    app.command("curated")(curated)
    app.command("kgqa")(kgqa)
    app.command("locomo")(locomo)


_commands()

if __name__ == "__main__":
    app()
