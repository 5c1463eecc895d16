"""Core commands: init, ingest, query, stats."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from cef.cli.common import (
    EXIT_FAILED,
    DbOption,
    EmbedderOption,
    LLMApiKeyOption,
    LLMBaseUrlOption,
    LLMModelOption,
    TimeLimitOption,
    cli_errors,
    console,
    err_console,
    load_cli_config,
    make_client,
    open_engine,
    progress_bar,
    require_text,
)
from cef.cli.timings import CommandTimings
from cef.engine.policy import QueryPolicy
from cef.model import GraphQuery, ResolutionTarget, SearchResult, SearchStrategy, TraversalHint


def init(db: DbOption = None, embedder: EmbedderOption = "default") -> None:
    """Create an empty knowledge base file (ingest creates one too; reads never do).

    Example:  cef init --db kb.db
    """
    with cli_errors():
        cfg = load_cli_config(db, embedder)
        open_engine(config=cfg, create=True, use_embedder=False).close()
    console.print(f"knowledge base ready: {cfg.store.url}")


def ingest(
    sources: Annotated[
        list[str], typer.Argument(help="Files, folders, s3://bucket/prefix URIs or .jsonl corpora.")
    ],
    db: DbOption = None,
    embedder: EmbedderOption = None,
    extract: Annotated[
        bool,
        typer.Option(
            "--extract/--no-extract",
            help="Extract entities from document text (spaCy NER offline, or the LLM given by --llm).",
        ),
    ] = True,
    llm: Annotated[
        str | None,
        typer.Option(
            help="Extract entities and relations with this LLM provider (openai, vllm, ollama or mock) "
            "instead of spaCy.",
            envvar="CEF_LLM",
            show_default=False,
        ),
    ] = None,
    model: LLMModelOption = None,
    base_url: LLMBaseUrlOption = None,
    api_key: LLMApiKeyOption = None,
    min_entity_confidence: Annotated[
        float,
        typer.Option(help="Drop extracted entity mentions below this confidence.", min=0.0, max=1.0),
    ] = 0.5,
    min_relation_confidence: Annotated[
        float,
        typer.Option(help="Write extracted relations (LLM) only from this confidence on.", min=0.0, max=1.0),
    ] = 0.5,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")] = True,
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size",
            min=1,
            help="Records per transaction of a large JSON Lines file (it is streamed and committed in parts).",
        ),
    ] = 5000,
    parser: Annotated[
        list[str] | None,
        typer.Option(
            "--parser",
            help="Also read files with this parser plugin: a file (path.py, path.py:Class) or package folder "
            "inside the current folder, module:Class, or an installed cef.parsers entry point. Repeatable.",
            show_default=False,
        ),
    ] = None,
    index_entities: Annotated[
        bool,
        typer.Option(
            "--index-entities/--no-index-entities",
            help="On a big graph (200,000 nodes + edges or more), build the entity index at the end and "
            "save it beside the database, so the next query reads it instead of building it (about a "
            "minute at a million passages). Turn it off for ingests run back to back; the first query "
            "after them builds it.",
        ),
    ] = True,
) -> None:
    """Ingest graph files (YAML/JSON/CSV) and documents (Markdown, text, JSONL, PDF).

    Graph files use the format in the README ("Graph file format"). Each file is
    one transaction: a bad file is reported with its line and reason and the
    others are still ingested. Re-ingesting skips unchanged files, re-indexes
    changed ones and removes files that disappeared from a folder.

    A JSON Lines file larger than --batch-size records is checked whole first,
    then streamed and committed --batch-size records at a time (bounded
    memory); it counts as ingested only once its last part is in, and an
    interrupted ingest resumes after its last committed part.

    Entities found in document text become Entity nodes linked by MENTIONS and
    CO_OCCURS_WITH edges. With --llm (or CEF_LLM) an LLM finds them, and the
    relations between them too (typed edges with the LLM's confidence).

    Example:  cef ingest examples/clinical/graph.yaml

    With an LLM:  cef ingest docs/ --llm ollama --model llama3.2

    With a parser plugin:  cef ingest examples/ingest --parser examples/grammar/labreport
    """
    from cef.ingest.parsers import default_registry, load_parser
    from cef.ingest.pipeline import ingest_sources, make_enricher

    missing = [s for s in sources if "://" not in s and not Path(s).exists()]
    if missing:  # before the knowledge base is opened: a typo never leaves an empty store behind
        raise typer.BadParameter(
            f"no such file or folder: {', '.join(missing)} (nothing was ingested)", param_hint="SOURCES"
        )
    with cli_errors():
        registry = default_registry()
        for spec in parser or []:
            registry.register(load_parser(spec))
        client = make_client(llm, model, base_url, api_key) if llm and extract else None
        enricher = (
            make_enricher(
                client,
                min_entity_confidence=min_entity_confidence,
                min_relation_confidence=min_relation_confidence,
            )
            if extract
            else None
        )
        kb = open_engine(db, embedder, create=True)
        try:
            with progress_bar(progress) as bar:
                report = ingest_sources(
                    kb,
                    sources,
                    progress=bar,
                    extract=False,
                    enricher=enricher,
                    batch_size=batch_size,
                    index_entities=index_entities,
                    registry=registry,
                )
        finally:
            kb.close()
            if client is not None:
                client.close()
    for line in report.summary_lines():
        console.print(line)
    for skipped in report.unsupported:
        err_console.print(f"[yellow]skipped:[/] {escape(skipped)}")
    if report.unsupported:
        err_console.print(
            "(a parser plugin reads other kinds of file: --parser path.py, see cef ingest --help)"
        )
    for warning in report.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(warning)}")
    for failure in report.failures:
        err_console.print(f"[bold red]failed:[/] {escape(failure)}")
    if report.failures:  # the same code whether or not other files were (re-)ingested
        raise typer.Exit(EXIT_FAILED)


def query(
    text: Annotated[str, typer.Argument(help="The question, in natural language.")],
    db: DbOption = None,
    embedder: EmbedderOption = None,
    depth: Annotated[
        int, typer.Option(help="Graph traversal depth from the anchors (0-10).", min=0, max=10)
    ] = 2,
    top_k: Annotated[int, typer.Option("--top-k", help="How many chunks to return.", min=1, max=1000)] = 5,
    strategy: Annotated[
        SearchStrategy,
        typer.Option(
            help="auto (default: typed relation paths, PPR, vector and BM25 fused), paths, hybrid, "
            "graph, ppr, pattern, vector or bm25."
        ),
    ] = SearchStrategy.AUTO,
    target: Annotated[
        list[str] | None,
        typer.Option("--target", help="A node to start from (name or description); repeatable."),
    ] = None,
    relation: Annotated[
        list[str] | None, typer.Option("--relation", help="Only traverse this relation type; repeatable.")
    ] = None,
    scope: Annotated[
        str | None, typer.Option(help="Only see data of this scope (and unscoped data).")
    ] = None,
    min_results: Annotated[
        int, typer.Option(help="Fall back to the next strategy below this many results.")
    ] = 3,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Answer as the graph stood at this time (ISO date or date-time, UTC unless an offset "
            "is given): only edges valid then are walked. Default: now.",
        ),
    ] = None,
    pattern: Annotated[
        Path | None,
        typer.Option(
            "--pattern",
            help="A graph pattern to match (JSON or YAML file: a GraphPattern, a QueryCombinator, or a "
            "list of them); chunks on the matched paths rank first.",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="text, markdown or json (the SearchResult model).")
    ] = "text",
    timings: Annotated[
        bool,
        typer.Option(
            "--timings",
            help="Print where the time went (start-up, model loads, retrieval) to stderr; "
            "also CEF_TIMINGS=1.",
        ),
    ] = False,
    time_limit_ms: TimeLimitOption = None,
) -> None:
    """Answer a question with ranked chunks, answer nodes and the graph paths that explain them.

    Example:  cef query "Which drugs interact with the medication John Miller takes?"

    As the graph stood then:  cef query "What was John Miller prescribed?" --as-of 2020-01-01

    Steered:  cef query "Who treats John?" --target "John Miller" --relation TREATED_BY_DOCTOR

    With a pattern file (JSON or YAML GraphPattern):  cef query "Who takes it?" --pattern p.yaml
    """
    if fmt not in ("text", "markdown", "json"):
        raise typer.BadParameter("use text, markdown or json", param_hint="--format")
    require_text(text, "QUESTION", 'cef query "Which medications interact with warfarin?"')
    when = parse_when(as_of, "--as-of") if as_of is not None else None
    patterns = load_patterns(pattern, "--pattern") if pattern is not None else []
    clock = CommandTimings(True if timings else None)
    with cli_errors():
        with clock.phase("open the knowledge base"):
            kb = open_engine(db, embedder)
        try:
            q = GraphQuery(
                query=text,
                targets=[ResolutionTarget(description=t) for t in target or []],
                traversal=TraversalHint(depth=depth, relation_types=relation or []),
                strategy=strategy,
                top_k=top_k,
                min_results=min_results,
                scope=scope,
                as_of=when,
                patterns=patterns,
            )
            with clock.phase("retrieve (without the model loads below)", minus_library=True):
                result = kb.retrieve(QueryPolicy.limited(time_limit_ms).bound(q))
        finally:
            with clock.phase("close"):
                kb.close()
    with clock.phase("render"):
        if fmt == "json":
            typer.echo(result.model_dump_json(indent=2))
        else:
            typer.echo(render_result(result, markdown=fmt == "markdown"))
    clock.report()


def parse_when(value: str, option: str) -> datetime:
    """An ISO date or date-time from the command line; naive values are UTC."""
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not an ISO date or date-time (e.g. 2020-01-01 or 2020-01-01T12:00:00+02:00)",
            param_hint=option,
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def load_patterns(path: Path, option: str) -> list[Any]:
    """Graph patterns from a JSON or YAML file: one pattern or combinator, or a list of them."""
    import yaml
    from pydantic import TypeAdapter
    from pydantic import ValidationError as PydanticValidationError

    from cef.model.query import PatternList

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))  # YAML reads JSON too
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror or exc}", param_hint=option) from None
    except yaml.YAMLError as exc:
        raise typer.BadParameter(f"{path} is neither JSON nor YAML: {exc}", param_hint=option) from None
    items = raw if isinstance(raw, list) else [raw]
    try:
        return list(TypeAdapter(PatternList).validate_python(items))
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise typer.BadParameter(
            f"{path}: not a graph pattern at {where or 'the top'}: {err['msg']} "
            "(see `cef patterns --help` or docs for the GraphPattern format)",
            param_hint=option,
        ) from None


#: Markdown heading marks at the start of a chunk's lines (shown as plain text: the heading stays)
_HEADING_MARKS = re.compile(r"^ {0,3}#{1,6}[ \t]+", re.MULTILINE)


def render_result(result: SearchResult, *, markdown: bool = False) -> str:
    """A readable answer: each chunk with its score, strategy and explaining path."""
    lines = [f"# {result.query}" if markdown else f"query: {result.query}"]
    lines.append(
        f"strategy: {result.strategy.value}"
        + (f" (after: {'; '.join(result.fallbacks)})" if result.fallbacks else "")
        + f" · {len(result.results)} result(s) · {result.duration_ms:.1f} ms"
    )
    anchors = result.metadata.get("anchors") or []
    if anchors:
        lines.append(
            "anchors: " + ", ".join(f"{a['node_id']} ({a['how']} {a['score']:.2f})" for a in anchors)
        )
    for note in result.metadata.get("notes") or []:
        lines.append(f"note: {note}")
    if result.nodes:
        lines.append("answers:" if not markdown else "## answers")
        for n in result.nodes[:10]:
            path = f" — {n.path.describe()}" if n.path is not None and n.path.length else ""
            relevance = f" (relevance {n.relevance:.2f})" if n.relevance is not None else ""
            lines.append(f"  - {n.text or n.node.name} [{n.node.id}]{path}{relevance}")
    lines.append("")
    for i, r in enumerate(result.results, 1):
        e = r.explanation
        relevance = f"relevance {r.relevance:.2f}, " if r.relevance is not None else ""
        head = f"{i}. [{r.chunk.id}] {relevance}score {r.score:.3f} ({e.strategy.value}"
        parts = []
        if e.vector_score is not None:
            parts.append(f"vector {e.vector_score:.3f}")
        if e.bm25_score is not None:
            parts.append(f"bm25 {e.bm25_score:.2f}")
        if e.graph_score is not None:
            parts.append(f"graph {e.graph_score:.3f}")
        head += (": " + ", ".join(parts) if parts else "") + ")"
        lines.append(f"## {head}" if markdown else head)
        lines.append(("   " if not markdown else "") + _HEADING_MARKS.sub("", r.chunk.content.strip()))
        if e.path is not None and e.path.length:
            lines.append(("   " if not markdown else "") + "path: " + e.path.describe())
        for note in e.notes:
            lines.append(("   " if not markdown else "") + f"why: {note}")
        lines.append("")
    if not result.results:
        lines.append("(no results)")
    return "\n".join(lines).rstrip() + "\n"


def stats(
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts of nodes, edges, chunks, labels and relation types.

    Example:  cef stats --db kb.db
    """
    with cli_errors():
        cfg = load_cli_config(db)
        kb = open_engine(config=cfg, use_embedder=False)
        try:
            info = kb.stats()
        finally:
            kb.close()
    if as_json:
        typer.echo(json.dumps(info, indent=2, default=str))
        return
    from cef.cli.tables import stats_tables

    for table in stats_tables(cfg.store.url, info):
        console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(ingest)
    app.command()(query)
    app.command()(stats)


__all__ = ["register", "render_result"]
