"""``cef context``: assemble prompt-ready context for one or more queries within a token budget."""

from __future__ import annotations

from typing import Annotated

import typer

from cef.cli.common import (
    DbOption,
    EmbedderOption,
    TimeLimitOption,
    cli_errors,
    err_console,
    open_engine,
    require_text,
)
from cef.context.formats import ContextFormat
from cef.context.request import RankingStrategy


def context(
    queries: Annotated[list[str], typer.Argument(help="One or more questions, in natural language.")],
    budget: Annotated[
        int, typer.Option("--budget", help="Token budget of the printed context.", min=1, max=2_000_000)
    ] = 4000,
    fmt: Annotated[
        ContextFormat,
        typer.Option("--format", help="markdown, yaml, json or plain (JSON and YAML carry total_tokens)."),
    ] = ContextFormat.MARKDOWN,
    tokenizer: Annotated[
        str | None,
        typer.Option(
            "--tokenizer",
            help="Token counter the budget is measured with: wordpiece, cl100k, o200k, estimate, "
            "or a model name such as gpt-4. Default: cl100k when installed, else estimate.",
        ),
    ] = None,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    top_k: Annotated[int, typer.Option("--top-k", help="Chunks retrieved per query.", min=1, max=1000)] = 10,
    depth: Annotated[int, typer.Option(help="Graph traversal depth (0-10).", min=0, max=10)] = 2,
    ranking: Annotated[
        RankingStrategy,
        typer.Option(help="Order of chunks across queries: score, round_robin, query_order or rrf."),
    ] = RankingStrategy.SCORE,
    reserve: Annotated[
        int | None,
        typer.Option(
            "--reserve",
            help="Tokens reserved for graph reasoning (paths, anchors). Default: 20% of the budget.",
        ),
    ] = None,
    paths: Annotated[
        bool, typer.Option("--paths/--no-paths", help="Include the graph reasoning section.")
    ] = True,
    scope: Annotated[
        str | None, typer.Option(help="Only see data of this scope (and unscoped data).")
    ] = None,
    graph: Annotated[
        bool,
        typer.Option(
            "--graph",
            help="Entities, relationships, domain rules and claims from the graph (one query) instead of chunks.",
        ),
    ] = False,
    time_limit_ms: TimeLimitOption = None,
) -> None:
    """Print the context for one or more queries, packed into a token budget.

    Chunks found by several queries appear once; graph paths explain them. The
    budget holds for the printed text as counted by --tokenizer; the header
    says how many tokens it uses and whether anything was cut.

    Example:  cef context "Which medications interact with warfarin?" "kidney function" --budget 1500 --format json
    """
    from cef.context.graph_provider import GraphContextProvider, KnowledgeContextOptions
    from cef.context.provider import ContextProvider
    from cef.context.request import ContextRequest, QuerySpec
    from cef.engine.policy import QueryPolicy

    for q in queries:
        require_text(q, "QUERIES", 'cef context "Which medications interact with warfarin?"')
    if graph and len(queries) != 1:
        raise typer.BadParameter("--graph takes exactly one query", param_hint="QUERIES")
    if reserve is not None and reserve > budget:
        raise typer.BadParameter(f"--reserve ({reserve}) exceeds --budget ({budget})", param_hint="--reserve")
    with cli_errors():
        kb = open_engine(db, embedder)
        try:
            if graph:
                gp = GraphContextProvider(kb, tokenizer)
                kctx = gp.get_context(
                    queries[0],
                    KnowledgeContextOptions(max_tokens=budget, format=fmt, scope=scope, include_claims=True),
                )
                text, warnings, reason = kctx.formatted_context, kctx.warnings, kctx.reason
            else:
                provider = ContextProvider(kb, tokenizer, policy=QueryPolicy.limited(time_limit_ms))
                response = provider.provide_context(
                    ContextRequest(
                        queries=[QuerySpec(query=q) for q in queries],
                        token_budget=budget,
                        top_k_per_query=top_k,
                        default_depth=depth,
                        ranking=ranking,
                        reserve_reasoning_tokens=reserve,
                        include_paths=paths,
                        scope=scope,
                        format=fmt,
                    )
                )
                text, warnings, reason = response.context, response.warnings, response.reason
        finally:
            kb.close()
    for warning in warnings:
        err_console.print(f"[yellow]warning:[/] {warning}")
    if reason:
        err_console.print(f"[yellow]empty context:[/] {reason}")
    typer.echo(text, nl=not text.endswith("\n"))


def register(app: typer.Typer) -> None:
    app.command()(context)


__all__ = ["register"]
