"""Shared CLI plumbing: the database option, opening the engine, errors and progress bars."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from cef.cli.progress import progress_bar as progress_bar
from cef.errors import CefError, NotFoundError, ValidationError

console = Console()
err_console = Console(stderr=True)

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db", help="SQLite knowledge base file. Default: $CEF_DB, else ./cef.db", show_default=False
    ),
]
EmbedderOption = Annotated[
    str,
    typer.Option(
        "--embedder",
        help="Embedding model: 'default' (offline all-MiniLM-L6-v2) or 'none' (graph + BM25 only).",
    ),
]


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


def db_path(db: str | Path | None) -> str:
    if db is not None:
        return str(db)
    env = os.environ.get("CEF_DB")
    return env if env else "cef.db"


def open_engine(db: str | Path | None, embedder: str = "default") -> Any:
    from cef.engine.kb import open_kb

    path = db_path(db)
    return open_kb(path, embedder=None if embedder == "none" else embedder)


@contextmanager
def cli_errors() -> Iterator[None]:
    """Print cef errors as one readable line and exit with a meaningful code."""
    try:
        yield
    except (ValidationError, NotFoundError) as exc:
        err_console.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
    except CefError as exc:
        err_console.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err_console.print("interrupted")
        raise typer.Exit(130) from None
