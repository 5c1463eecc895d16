"""``cef memory``: the universal semantic memory — observe, ingest, load, context."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from cef.cli.common import (
    DbOption,
    EmbedderOption,
    cli_errors,
    console,
    err_console,
    open_engine,
    require_text,
)
from cef.context.formats import ContextFormat
from cef.errors import ConfigurationError, ValidationError

memory_app = typer.Typer(
    name="memory",
    help=(
        "Universal semantic memory: observations reconciled into beliefs, bi-temporal facts, domain "
        "extensions, and one context call for every domain.\n\n"
        "Start with:  cef memory load examples/memory/pharma.yaml --extension "
        "examples/memory/extensions/pharma.py  then  "
        'cef memory context "What is patient 12345 taking?" --scope pharma:rep-7'
    ),
    no_args_is_help=True,
)

ScopeOption = Annotated[str | None, typer.Option("--scope", help="Scope of the data (a user, a project...).")]
ExtensionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--extension",
        help="Register a domain extension first: a file (path.py or path.py:Class, inside the current "
        "folder, e.g. examples/memory/extensions/pharma.py), module:Class, or the name of an installed "
        "cef.memory_extensions entry point. Repeatable.",
    ),
]


def _open(
    db: Path | None,
    embedder: str | None,
    extensions: list[str] | None,
    *,
    create: bool,
    needed: str | None = None,
) -> Any:
    """The memory with ``extensions`` registered; ``needed`` (a dataset's ``extension:``) must then be
    registered already (given, or restored from the knowledge base) or be an installed entry point."""
    from cef.memory import SemanticMemory, load_extension
    from cef.plugins import MEMORY_EXTENSIONS, entry_point_names

    given = [load_extension(spec) for spec in extensions or []]  # a bad spec: an error, and no store created
    if needed is not None and needed not in {e.name for e in given}:
        if needed in entry_point_names(MEMORY_EXTENSIONS):
            given.append(load_extension(needed))
        elif db is not None and not db.exists():  # a new store cannot have it registered: say so first
            raise ConfigurationError(_missing(needed))
    kb = open_engine(db, embedder, create=create)
    try:
        memory = SemanticMemory(kb, owns_kb=True)
        for extension in given:
            memory.register_extension(extension)
        if needed is not None and needed not in memory.registry.extensions:
            raise ConfigurationError(_missing(needed))
    except BaseException:
        kb.close()
        raise
    return memory


def _missing(extension: str) -> str:
    return (
        f"the dataset needs the extension {extension!r}, which is neither registered nor installed: "
        f"pass --extension with its file (e.g. examples/memory/extensions/{extension}.py)"
    )


def observe(
    text: Annotated[str, typer.Argument(help="What the source said.")],
    source: Annotated[
        str, typer.Option("--source", help="user_stated, observed, inferred, external_api or document.")
    ] = "user_stated",
    scope: ScopeOption = None,
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject", help="Node id or name the statement is about (default: found in the text)."
        ),
    ] = None,
    credibility: Annotated[
        float | None,
        typer.Option("--credibility", min=0.0, max=1.0, help="Override the source type's credibility."),
    ] = None,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    extension: ExtensionOption = None,
) -> None:
    """Record an observation and reconcile it into beliefs (create, reinforce, supersede or contradict).

    Example:  cef memory observe "Raven is not trustworthy" --source observed --scope rpg:campaign-1
    """
    with cli_errors():
        memory = _open(db, embedder, extension, create=True)
        try:
            r = memory.observe(text, source, scope=scope, subject=subject, credibility=credibility)
        finally:
            memory.close()
    console.print(f"{r.action}: belief {r.belief_id} about {r.subject_id} (confidence {r.confidence:.2f})")
    for b in r.superseded:
        console.print(f"  superseded {b}")
    for b in r.contradicted:
        console.print(f"  contradicts {b}")


def ingest(
    path: Annotated[
        Path, typer.Argument(help="A file, or a folder of files the content type's pipeline reads.")
    ],
    content_type: Annotated[
        str,
        typer.Option(
            "--content-type",
            help="A registered pipeline: text, python (with --extension examples/memory/extensions/code.py)...; 'conversation' reads a "
            "chat history (JSON / JSON Lines: dated sessions of turns, or LoCoMo's layout).",
        ),
    ] = "text",
    scope: ScopeOption = None,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    extension: ExtensionOption = None,
) -> None:
    """Ingest content with the pipeline registered for its content type (re-ingesting closes changed facts).

    Example:  cef memory ingest ./src/mypkg --content-type python --extension examples/memory/extensions/code.py --scope code:mypkg
    Example:  cef memory ingest chats.jsonl --content-type conversation --scope user:42
    """
    if content_type.strip().lower() == "conversation":
        _ingest_conversations(path, scope, db, embedder)
        return
    with cli_errors():
        if not path.exists():
            raise ValidationError(f"{path} does not exist")
        memory = _open(db, embedder, extension, create=True)
        try:
            report = memory.ingest_path(path, content_type, scope=scope)
        finally:
            memory.close()
    console.print(
        f"ingested {report.documents} document(s), skipped {report.skipped} unchanged, "
        f"{len(report.nodes)} node(s) in {report.seconds:.1f}s"
    )
    for failure in report.failures:
        err_console.print(f"[bold red]failed:[/] {failure}")
    if report.failures:
        raise typer.Exit(1)


def _ingest_conversations(path: Path, scope: str | None, db: Path | None, embedder: str | None) -> None:
    """``--content-type conversation``: every conversation of the file, each turn a chunk of its session."""
    with cli_errors():
        memory = _open(db, embedder, None, create=True)
        try:
            reports = memory.ingest_conversation(path, scope=scope)
        finally:
            memory.close()
    for r in reports:
        console.print(
            f"{r.conversation} (scope {r.scope}): {r.turns} turn(s), {r.written} written, {r.unchanged} "
            f"unchanged, {r.removed} removed, {r.dates} date(s) resolved in {r.seconds:.1f}s"
        )


def load(
    dataset: Annotated[
        Path, typer.Argument(help="A memory dataset (YAML): nodes, edges, supersede, observations.")
    ],
    scope: Annotated[str | None, typer.Option("--scope", help="Override the dataset's scope.")] = None,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    extension: ExtensionOption = None,
) -> None:
    """Load a dataset file (its ``extension:`` field names the domain extension to register).

    Example:  cef memory load examples/memory/rpg.yaml --extension examples/memory/extensions/rpg.py
    """
    import yaml

    from cef.memory.dataset import load_dataset

    with cli_errors():
        if not dataset.is_file():
            raise ValidationError(f"{dataset} is not a file")
        try:
            head = yaml.safe_load(dataset.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ValidationError(f"{dataset}: invalid YAML: {exc}") from exc
        needed = head.get("extension") if isinstance(head, dict) else None
        memory = _open(
            db, embedder, extension, create=True, needed=needed if isinstance(needed, str) else None
        )
        try:
            report = load_dataset(memory, dataset, scope=scope)
        finally:
            memory.close()
    console.print(
        f"loaded {report.nodes} node(s), {report.edges} edge(s), {report.superseded} supersession(s), "
        f"{len(report.observations)} observation(s)"
    )


def context(
    queries: Annotated[list[str], typer.Argument(help="One or more questions (several anchor one context).")],
    scope: ScopeOption = None,
    as_of: Annotated[
        datetime | None,
        typer.Option("--as-of", help="What was known at this time (ISO date or datetime) instead of now."),
    ] = None,
    fmt: Annotated[
        ContextFormat, typer.Option("--format", help="markdown, yaml, json or plain.")
    ] = ContextFormat.MARKDOWN,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Token budget (cl100k tokens).")
    ] = 4000,
    max_nodes: Annotated[int, typer.Option("--max-nodes", min=1, help="Most graph nodes to explore.")] = 100,
    max_depth: Annotated[
        int, typer.Option("--max-depth", min=0, max=10, help="Most hops from an anchor.")
    ] = 5,
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.0, max=1.0, help="Hide beliefs below this confidence.")
    ] = 0.5,
    history: Annotated[bool, typer.Option("--history", help="Include facts that have ended.")] = False,
    db: DbOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Print the context for a question: core facts, beliefs, conflicts, what changed, supporting facts.

    Example:  cef memory context "Can Raven be trusted?" --scope rpg:campaign-1 --format markdown
    """
    from cef.memory import RetrievalConstraints, TemporalConstraint

    for q in queries:
        require_text(q, "QUERIES", 'cef memory context "What is patient 12345 taking?"')
    with cli_errors():
        if as_of is not None and history:
            raise ValidationError("--as-of and --history cannot be combined")
        temporal = (
            TemporalConstraint.at(as_of)
            if as_of is not None
            else TemporalConstraint(mode="history")
            if history
            else None
        )
        constraints = RetrievalConstraints(
            temporal=temporal,
            scope=scope,
            format=fmt,
            max_tokens=max_tokens,
            max_nodes=max_nodes,
            max_depth=max_depth,
            confidence_threshold=confidence,
        )
        memory = _open(db, embedder, None, create=False)
        try:
            bundle = memory.retrieve_context(queries, constraints)
        finally:
            memory.close()
    typer.echo(bundle.to_text(fmt), nl=False)


def register(app: typer.Typer) -> None:
    memory_app.command()(observe)
    memory_app.command()(ingest)
    memory_app.command()(load)
    memory_app.command()(context)
    app.add_typer(memory_app)


__all__ = ["memory_app", "register"]
