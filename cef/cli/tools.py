"""``cef tools``: print cef's tools as OpenAI function-calling or MCP tool definitions;
``cef schema``: print the knowledge base's schema (its registry and what its data shows)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from cef.cli.common import DbOption, cli_errors, err_console, load_cli_config, open_engine


class ToolFormat(StrEnum):
    openai = "openai"
    mcp = "mcp"


def tools(
    fmt: Annotated[
        ToolFormat, typer.Option("--format", help="openai (function calling) or mcp (tools/list entries).")
    ] = ToolFormat.openai,
    db: DbOption = None,
    writable: Annotated[bool, typer.Option("--writable", help="Include the write tools.")] = False,
    schema: Annotated[
        bool, typer.Option("--schema/--no-schema", help="Inject the knowledge base's graph schema.")
    ] = True,
) -> None:
    """Print the tools (JSON) with the live graph schema in their descriptions.

    The same definitions the MCP server lists, built from the same models; paste
    them into an OpenAI-compatible chat request's "tools" or an MCP client.
    Without a knowledge base file the descriptions carry no schema.

    Example:  cef tools --format openai --db kb.db > tools.json
    """
    from cef.cli.serve import load_settings
    from cef.errors import StoreNotFoundError
    from cef.schema.discovery import GraphSchema, discover_schema
    from cef.server.service import load_context_support
    from cef.server.tools import tool_definitions

    graph_schema: GraphSchema | None = None
    with cli_errors():
        settings = load_settings(writable=writable or None)
        config = load_cli_config(db)
        if schema:
            try:
                kb = open_engine(config=config, use_embedder=False)
            except StoreNotFoundError as exc:
                err_console.print(
                    f"note: {escape(str(exc))}; the tool descriptions carry no graph schema",
                    highlight=False,
                    soft_wrap=True,
                )
            else:
                try:
                    graph_schema = discover_schema(kb, samples=settings.schema_samples)
                finally:
                    kb.close()
    context = load_context_support()
    defs = tool_definitions(
        graph_schema, settings, writable=writable, context_model=context.request_model if context else None
    )
    out = [d.to_openai() if fmt is ToolFormat.openai else d.to_mcp() for d in defs]
    typer.echo(json.dumps(out, indent=2, ensure_ascii=False))


def schema(
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the schema as JSON.")] = False,
) -> None:
    """Print the schema: node types (kind, description, count, properties) and relation types
    (semantics, inverse, allowed and observed endpoints), as the tool descriptions carry it.

    Example:  cef schema --db kb.db --json
    """
    from cef.cli.serve import load_settings
    from cef.schema.discovery import describe_schema, discover_schema

    with cli_errors():
        settings = load_settings()
        kb = open_engine(config=load_cli_config(db), use_embedder=False)
        try:
            found = discover_schema(kb, samples=settings.schema_samples)
        finally:
            kb.close()
    typer.echo(found.model_dump_json(indent=2) if as_json else describe_schema(found))


def register(app: typer.Typer) -> None:
    app.command()(tools)
    app.command()(schema)


__all__ = ["register"]
