"""``cef export`` and ``cef import``: move a whole knowledge base between backends as JSON Lines."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cef.cli.common import cli_errors, console, err_console, progress_bar, require_existing

DbUrl = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Knowledge base: a SQLite file or a postgresql:// URL. Default: store.url in cef.toml, "
        "$CEF_STORE__URL or $CEF_DB, else ./cef.db.",
        show_default=False,
    ),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config", help="A cef.toml to read (default: ./cef.toml when present).", show_default=False
    ),
]


def _config(config: Path | None, db: str | None) -> Any:
    from cef.cli.common import CONFIG_FILE
    from cef.config import load_config

    return load_config(
        config or CONFIG_FILE[0], flags={"store": "--db"}, **({"store": {"url": db}} if db else {})
    )


def export(
    out: Annotated[str, typer.Option("--out", "-o", help="File to write ('-' for standard output).")],
    db: DbUrl = None,
    config: ConfigFile = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")] = True,
) -> None:
    """Write the whole knowledge base (relation types, nodes and edges, chunks, vectors, meta) to JSON Lines.

    The output is exact and deterministic: importing it into any backend and
    exporting again gives the same bytes.

    Example:  cef export --db kb.db --out kb.jsonl
    """
    from cef.transfer import export_kb
    from cef.wiring import open_store

    with cli_errors():
        cfg = _config(config, db)
        require_existing(cfg)
        store = open_store(cfg.store.url, pool_size=cfg.store.pool_size, create=False)
        try:
            with progress_bar(progress and out != "-") as bar:
                stats = export_kb(store, sys.stdout if out == "-" else Path(out), progress=bar)
        finally:
            store.close()
    if out != "-":
        console.print(
            f"exported {stats.nodes} nodes, {stats.edges} edges, {stats.chunks} chunks, "
            f"{stats.relation_types} relation types, {stats.vectors} vectors, {stats.meta} meta entries "
            f"to {out} in {stats.seconds:.1f}s"
        )


def import_(
    file: Annotated[Path, typer.Argument(help="A file written by cef export.", exists=True, dir_okay=False)],
    db: DbUrl = None,
    config: ConfigFile = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Records per transaction.")] = 5000,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")] = True,
) -> None:
    """Load a file written by cef export into an empty knowledge base (any backend).

    Vector and graph mirrors configured in cef.toml (Qdrant, DuckDB, FalkorDB,
    Neo4j) are filled from the imported records before the command returns.

    Example:  cef import kb.jsonl --db postgresql://cef@localhost/cef
    """
    from cef.transfer import import_kb
    from cef.wiring import open_from_config, open_store

    with cli_errors():
        cfg = _config(config, db)
        store = open_store(cfg.store.url, pool_size=cfg.store.pool_size)
        try:
            with progress_bar(progress) as bar:
                stats = import_kb(store, file, batch_size=batch_size, progress=bar)
        finally:
            store.close()
        if cfg.vectors.backend in ("qdrant", "duckdb") or cfg.graph.backend in ("falkordb", "neo4j"):
            err_console.print("filling the configured vector/graph mirrors ...")
            open_from_config(cfg, embedder=None).close()
    console.print(
        f"imported {stats.nodes} nodes, {stats.edges} edges, {stats.chunks} chunks, "
        f"{stats.relation_types} relation types, {stats.vectors} vectors, {stats.meta} meta entries "
        f"in {stats.seconds:.1f}s"
    )


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("import")(import_)


__all__ = ["register"]
