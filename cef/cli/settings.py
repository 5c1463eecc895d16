"""``cef config``: the effective settings of every front door and where each came from."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from pydantic import BaseModel, SecretStr

from cef.cli.common import DbOption, EmbedderOption, cli_errors, console, load_cli_config
from cef.config import EmbedderSettings


def _rows(settings: BaseModel, sources: dict[str, str], prefix: str = "") -> list[tuple[str, Any, str]]:
    rows: list[tuple[str, Any, str]] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            for sub in type(value).model_fields:
                key = f"{name}.{sub}"
                rows.append((prefix + key, _shown(getattr(value, sub)), sources.get(key, "default")))
        else:
            rows.append((prefix + name, _shown(value), sources.get(name, "default")))
    return rows


def _shown(value: Any) -> Any:
    """A value as printed: secrets masked, keys of API keys hidden."""
    if isinstance(value, SecretStr):
        return "********"
    if isinstance(value, dict) and value and all(isinstance(v, (str, BaseModel)) for v in value.values()):
        return {  # API keys: never the keys, only what each grants
            f"key{i + 1}": v.model_dump(mode="json", exclude_none=True) if isinstance(v, BaseModel) else v
            for i, v in enumerate(value.values())
        }
    if isinstance(value, (list, tuple)):
        return list(value)
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def _after(rows: list[tuple[str, Any, str]], key: str) -> int:
    return next((i + 1 for i, (k, _, _) in enumerate(rows) if k == key), len(rows))


def _active_embedder(settings: EmbedderSettings) -> tuple[str, Any, str]:
    """The runtime and precision the local embedder runs with on this machine, and why (no model loads)."""
    if settings.provider.strip().lower() != "minilm":
        return ("embedder.active", None, "not the local model")
    from cef.embed.cpu import describe_cpu
    from cef.embed.minilm import MiniLMEmbedder
    from cef.wiring import open_embedder

    emb = open_embedder(settings)
    shown = emb.describe() if isinstance(emb, MiniLMEmbedder) else None
    why = describe_cpu() if settings.precision == "auto" else "set by embedder.precision"
    return ("embedder.active", shown, why)


def config(
    db: DbOption = None,
    embedder: EmbedderOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the effective settings and where each came from (option, CEF_* variable, cef.toml, default).

    Every command and server resolves its settings the same way: options first,
    then CEF_* environment variables, then cef.toml (--config, $CEF_CONFIG or
    ./cef.toml; [cef.server] holds the servers' settings), then defaults.

    Example:  CEF_EMBEDDER=none cef config
    """
    from cef.cli.serve import load_settings

    with cli_errors():
        cfg = load_cli_config(db, embedder)
        server = load_settings()
        rows = _rows(cfg, cfg.sources)
        rows.insert(_after(rows, "embedder.precision"), _active_embedder(cfg.embedder))
    rows += _rows(server, server.sources, "server.")
    if as_json:
        typer.echo(
            json.dumps([{"key": k, "value": v, "source": s} for k, v, s in rows], indent=2, default=str)
        )
        return
    width = max(len(k) for k, _, _ in rows)
    for key, value, source in rows:
        shown = json.dumps(value, default=str) if not isinstance(value, str) else value
        console.print(f"{key:{width}}  {shown}  [dim]({source})[/]", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("config")(config)


__all__ = ["register"]
