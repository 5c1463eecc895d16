"""``cef tools``: print cef's tools as OpenAI function-calling or MCP tool definitions."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from cef.cli.common import DbOption, cli_errors, db_path, err_console


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
    from cef.server.schema import GraphSchema, discover_schema
    from cef.server.service import load_context_support
    from cef.server.tools import tool_definitions

    settings = load_settings(db=db, writable=writable)
    graph_schema: GraphSchema | None = None
    path = db_path(db)
    if schema and ("://" in path or Path(path).exists()):
        from cef.engine.kb import open_kb

        with cli_errors():
            kb = open_kb(path, embedder=None)
            try:
                graph_schema = discover_schema(kb, samples=settings.schema_samples)
            finally:
                kb.close()
    elif schema:
        err_console.print(f"note: {path} does not exist; the tool descriptions carry no graph schema")
    context = load_context_support()
    defs = tool_definitions(
        graph_schema, settings, writable=writable, context_model=context.request_model if context else None
    )
    out = [d.to_openai() if fmt is ToolFormat.openai else d.to_mcp() for d in defs]
    typer.echo(json.dumps(out, indent=2, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command()(tools)


__all__ = ["register"]
