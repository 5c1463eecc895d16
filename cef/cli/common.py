"""Shared CLI plumbing: the database option, opening the engine, errors and progress bars."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from cef.cli.progress import progress_bar as progress_bar
from cef.errors import (
    CefError,
    ConfigurationError,
    NotFoundError,
    PathEscapeError,
    ValidationError,
    format_validation_error,
)

console = Console()
err_console = Console(stderr=True)

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Knowledge base: a SQLite file or a postgresql:// URL. Default: $CEF_STORE__URL or $CEF_DB, "
        "else [cef.store] url in cef.toml, else ./cef.db.",
        show_default=False,
    ),
]
EmbedderOption = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="Embedding model: 'default' (offline all-MiniLM-L6-v2) or 'none' (graph + BM25 only). "
        "Default: $CEF_EMBEDDER, else [cef.embedder] in cef.toml, else default.",
        show_default=False,
    ),
]
TimeLimitOption = Annotated[
    int | None,
    typer.Option(
        "--time-limit-ms",
        help="Graph time limit in milliseconds, for every strategy (the server's graph_timeout_ms): past "
        "it the graph work stops and vector search answers. Default: none.",
        min=1,
        max=600_000,
        show_default=False,
    ),
]

#: the file given by ``cef --config`` (set by the app's callback; None: $CEF_CONFIG or ./cef.toml)
CONFIG_FILE: list[Path | None] = [None]

LLMModelOption = Annotated[str | None, typer.Option(help="LLM model name.", envvar="CEF_LLM_MODEL")]
LLMBaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="API root of the LLM server.", envvar="CEF_LLM_BASE_URL")
]
LLMApiKeyOption = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        help="API key (OpenAI-compatible servers).",
        envvar=["CEF_LLM_API_KEY", "OPENAI_API_KEY"],
        show_default=False,
    ),
]


def make_client(provider: str, model: str | None, base_url: str | None, api_key: str | None) -> Any:
    """The LLM client the ``--llm/--model/--base-url/--api-key`` options (or CEF_LLM* variables) name."""
    from cef.llm import make_llm_client

    options: dict[str, Any] = {}
    if model:
        options["model"] = model
    if base_url:
        options["base_url"] = base_url
    if api_key and provider in ("openai", "vllm"):
        options["api_key"] = api_key
    return make_llm_client(provider, **options)


def load_cli_config(db: str | Path | None = None, embedder: str | None = None) -> Any:
    """The effective :class:`~cef.config.CefConfig` of a command: its --db and --embedder, then
    ``CEF_*`` variables, then cef.toml (one loader for every command and server)."""
    from cef.config import load_config
    from cef.wiring import store_location

    overrides: dict[str, Any] = {}
    flags: dict[str, str] = {}
    if db is not None:
        _, target = store_location(db)
        overrides["store"] = {"url": target}  # a sqlite:/// URL means its path on every option and variable
        flags["store"] = "--db"
    if embedder is not None:
        overrides["embedder"] = embedder
        flags["embedder"] = "--embedder"
    return load_config(CONFIG_FILE[0], flags=flags, **overrides)


def open_engine(
    db: str | Path | None = None,
    embedder: str | None = None,
    *,
    create: bool = False,
    config: Any = None,
    use_embedder: bool = True,
) -> Any:
    """The knowledge base a command works on, wired as its settings say.

    Only commands that write (``init``, ``ingest``, ``import``, ``memory``
    writes) pass ``create=True``; a read of a knowledge base that does not
    exist fails with a :class:`~cef.errors.StoreNotFoundError` naming where the
    location came from, and creates nothing.
    """
    from cef.wiring import open_from_config

    cfg = config if config is not None else load_cli_config(db, embedder)
    if not create:
        require_existing(cfg)
    return open_from_config(cfg, create=create, **({} if use_embedder else {"embedder": None}))


def require_existing(cfg: Any) -> None:
    """Fail (exit 2 via :func:`cli_errors`) unless the configured knowledge base exists; creates nothing."""
    from cef.errors import StoreNotFoundError
    from cef.wiring import require_store

    try:
        require_store(cfg.store.url)
    except StoreNotFoundError as exc:
        raise StoreNotFoundError(exc.location, exc.detail, hint=store_hint(cfg)) from None


def store_hint(cfg: Any) -> str:
    """How to fix a missing knowledge base: where its location came from and how to create it."""
    url = cfg.store.url
    source = cfg.sources.get("store.url", "default")
    origin = "the default location" if source == "default" else f"set by {source}"
    return (
        f"{origin}; create it with `cef ingest FILES --db {url}` (or `cef init --db {url}`), "
        "or point --db, $CEF_STORE__URL or [cef.store] url in cef.toml at an existing knowledge base"
    )


def require_text(text: str, name: str, example: str) -> None:
    """Refuse an empty (or blank) argument as a usage error (exit 2), before anything is opened."""
    if not text.strip():
        raise typer.BadParameter(
            f"{name} is empty: give the text to search for, e.g.  {example}", param_hint=name
        )


#: exit codes of every command (documented in ``cef --help``, README and docs/cli.md)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_CODES_HELP = (
    "Exit codes: 0 ok · 1 the work failed (an input could not be ingested, a backend, model or LLM "
    "failed, a time limit) · 2 usage or input error (bad option or argument, invalid query, missing "
    "knowledge base, invalid configuration) · 130 interrupted. The same on every run."
)


@contextmanager
def cli_errors() -> Iterator[None]:
    """Print cef errors as one readable line and exit with the documented code (never a traceback)."""
    import pydantic

    try:
        yield
    except (ValidationError, NotFoundError, ConfigurationError, PathEscapeError) as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    except pydantic.ValidationError as exc:
        err_console.print(
            f"[bold red]error:[/] invalid input: {escape(format_validation_error(exc))}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_USAGE) from None
    except CefError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FAILED) from None
    except KeyboardInterrupt:
        err_console.print("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
