"""``cef serve mcp`` and ``cef serve http``: run the MCP server or the REST API over a knowledge base."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator
from enum import StrEnum
from typing import Annotated, Any

import typer

from cef.cli.common import (
    DbOption,
    EmbedderOption,
    cli_errors,
    err_console,
    load_cli_config,
    open_engine,
    require_existing,
)

log = logging.getLogger(__name__)

serve_app = typer.Typer(
    name="serve",
    help="Serve the knowledge base: MCP tools (stdio or streamable HTTP) or the REST API.",
    no_args_is_help=True,
)


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


HostFlag = Annotated[
    str | None, typer.Option(help="Address to listen on (default $CEF_HOST, else 127.0.0.1).")
]


def load_settings(**overrides: Any) -> Any:
    """ServerSettings as every front door resolves them: the options, then CEF_* variables, then
    cef.toml's [cef.server] table (:func:`cef.server.settings.load_server_settings`)."""
    from cef.cli.common import CONFIG_FILE
    from cef.server.settings import load_server_settings

    flags = {k: f"--{k.replace('_', '-')}" for k, v in overrides.items() if v is not None}
    return load_server_settings(CONFIG_FILE[0], flags=flags, **overrides)


def _need(module: str, attr: str | None, what: str, extra: str) -> Any:
    """Import an optional front door; a missing dependency names the extra to install."""
    import importlib

    from cef.errors import MissingExtraError

    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("cef"):
            raise
        raise MissingExtraError(what, extra, exc.name or module) from None
    return getattr(mod, attr) if attr else mod


def mcp(
    transport: Annotated[
        Transport, typer.Option(help="stdio (one client) or http (streamable HTTP).")
    ] = Transport.stdio,
    host: HostFlag = None,
    port: Annotated[
        int | None, typer.Option(help="Port for --transport http (default $CEF_PORT, else 8080).")
    ] = None,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    writable: Annotated[
        bool | None,
        typer.Option(
            "--writable/--read-only",
            help="Expose the write tools (index_*, delete_node).",
            show_default=False,
        ),
    ] = None,
    path: Annotated[str, typer.Option(help="URL path of the streamable HTTP endpoint.")] = "/mcp",
) -> None:
    """Run the MCP server: retrieval tools with the live graph schema in their descriptions.

    Over stdio the client starts it (logs go to stderr). With --writable the
    write tools are listed too; a write that changes the schema sends
    notifications/tools/list_changed.

    Example:  cef serve mcp --db kb.db
    Example:  cef serve mcp --transport http --port 8765 --writable
    """
    import anyio

    with cli_errors():
        settings = load_settings(host=host, port=port, writable=writable)
        CefMcpServer = _need("cef.server.mcp", "CefMcpServer", "cef serve mcp", "mcp")
        kb = open_engine(db, embedder)
        server = CefMcpServer(kb, settings)
        try:
            if transport is Transport.stdio:
                anyio.run(server.serve_stdio)
            else:
                if not settings.auth_enabled:
                    err_console.print(
                        "[bold red]WARNING: no API keys configured (CEF_API_KEYS): the MCP endpoint"
                        + (", including its write tools," if server.writable else "")
                        + f" is open to anyone who can reach {settings.host}:{settings.port}.[/]"
                    )
                err_console.print(
                    f"cef MCP server on http://{settings.host}:{settings.port}{path} "
                    f"({'read-write' if server.writable else 'read-only'})"
                )
                anyio.run(lambda: server.serve_http(path=path))
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
            kb.close()


WritableFlag = Annotated[
    bool | None,
    typer.Option(
        "--writable/--read-only",
        help="Accept writes (default: read-only; also CEF_WRITABLE or writable in [cef.server]).",
        show_default=False,
    ),
]


def http(
    host: HostFlag = None,
    port: Annotated[int | None, typer.Option(help="Port (default $CEF_PORT, else 8080).")] = None,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    writable: WritableFlag = None,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Server processes sharing the port (one per core serves reads in parallel; each loads "
            "the model). Writes stay one transaction each, one at a time, and every process sees them "
            "before its next read. Needs a file or PostgreSQL knowledge base.",
        ),
    ] = 1,
) -> None:
    """Run the REST API (OpenAPI spec at /openapi.json, docs at /docs).

    Read-only unless --writable, like `cef serve mcp`: without it every create,
    patch and delete answers 403. API keys come from CEF_API_KEYS
    ("key:read,key2:write"; "key3:read@tenant-a" limits a key to data scopes);
    without keys the API is open to anyone who can reach it. Limits, cache and time limit: CEF_MAX_DEPTH, CEF_MAX_LIMIT,
    CEF_MAX_QUERY_LENGTH, CEF_MAX_BODY_BYTES (413 above it), CEF_CACHE_TTL_SECONDS,
    CEF_GRAPH_TIMEOUT_MS (or [cef.server] in cef.toml). /health says "starting"
    until models and indexes are loaded, then "ready".

    Example:  cef serve http --db kb.db

    Accepting writes:  CEF_API_KEYS="change-me-please:write" cef serve http --db kb.db --writable

    On two cores:  cef serve http --db kb.db --workers 2
    """
    with cli_errors():
        settings = load_settings(host=host, port=port, writable=writable)
        config = load_cli_config(db, embedder)
        require_existing(config)  # before the warning and the model: a wrong path fails fast
        if workers > 1 and str(config.store.url) == ":memory:":
            raise typer.BadParameter("an in-memory knowledge base cannot be shared", param_hint="--workers")
    if not settings.auth_enabled:
        loopback = settings.host in ("127.0.0.1", "localhost", "::1")
        err_console.print(
            "[bold red]WARNING: no API keys configured (CEF_API_KEYS): the REST API"
            + (", including its write endpoints," if settings.writable else "")
            + f" is open to anyone who can reach {settings.host}:{settings.port}.[/]"
            + ("" if loopback else " [bold red]It listens on a non-loopback address.[/]")
        )
    with cli_errors():
        create_app = _need("cef.server.http", "create_app", "cef serve http", "server")
        uvicorn = _need("uvicorn", None, "cef serve http", "server")
        if workers > 1:
            err_console.print(
                f"cef REST API on http://{settings.host}:{settings.port} (docs at /docs, explorer at /), "
                f"{workers} processes"
            )
            os.environ[_WORKER_ENV] = json.dumps(
                {
                    "host": host,
                    "port": port,
                    "db": None if db is None else str(db),
                    "embedder": embedder,
                    "writable": writable,
                    "config": _config_file(),
                }
            )
            uvicorn.run(
                f"{__name__}:worker_app",
                factory=True,
                workers=workers,
                http=_need("cef.server.nodelay", "NoDelayH11", "cef serve http", "server"),
                host=settings.host,
                port=settings.port,
                log_level="warning",
            )
            return
        kb = open_engine(config=config)
        try:
            app = create_app(kb, settings, read_only=not settings.writable)
            err_console.print(
                f"cef REST API on http://{settings.host}:{settings.port} (docs at /docs, explorer at /), "
                + ("read-write" if settings.writable else "read-only (--writable to accept writes)")
            )
            uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")
        finally:
            kb.close()


#: what a worker process of ``cef serve http --workers N`` opens (the command's own options)
_WORKER_ENV = "CEF_SERVE_HTTP_WORKER"


def _config_file() -> str | None:
    from cef.cli.common import CONFIG_FILE

    return str(CONFIG_FILE[0]) if CONFIG_FILE[0] is not None else None


def worker_app() -> Any:
    """The REST API of one worker process: the knowledge base and settings the command resolved,
    resolved again the same way in this process (its own engine, closed when the server stops)."""
    from pathlib import Path

    from cef.cli.common import CONFIG_FILE
    from cef.server.http import create_app

    args = json.loads(os.environ[_WORKER_ENV])
    CONFIG_FILE[0] = Path(args["config"]) if args["config"] else None
    settings = load_settings(host=args["host"], port=args["port"], writable=args["writable"])
    kb = open_engine(config=load_cli_config(args["db"], args["embedder"]))
    app = create_app(kb, settings, read_only=not settings.writable)
    serve = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        try:
            async with serve(a) as state:
                yield state
        finally:
            kb.close()

    app.router.lifespan_context = lifespan
    return app


def register(app: typer.Typer) -> None:
    serve_app.command("mcp")(mcp)
    serve_app.command("http")(http)
    app.add_typer(serve_app)


__all__ = ["load_settings", "register"]
