"""Configuration at the edges: ``cef.toml`` plus ``CEF_`` environment variables, and the factories they drive.

The library itself takes explicit arguments; only front doors (the CLI, the
servers) call :func:`load_config`, which reads a ``cef.toml`` (top-level keys or
a ``[cef]`` table) and the environment — nothing is read at import. ::

    # cef.toml
    [cef.store]
    url = "postgresql://cef@db.internal/cef"      # or a SQLite file path (the default: cef.db)
    [cef.vectors]
    backend = "qdrant"                            # auto | memory | store | qdrant | duckdb
    url = "http://qdrant.internal:6333"
    [cef.graph]
    backend = "falkordb"                          # auto | memory | store | falkordb | neo4j
    url = "redis://falkordb.internal:6379"
    [cef.embedder]
    provider = "minilm"                           # minilm | openai | none
    runtime = "auto"                              # minilm: auto | onnx | torch (CEF_EMBEDDER__RUNTIME)
    precision = "auto"                            # minilm: auto | float32 | bfloat16 | int8

Environment variables override the file: ``CEF_STORE__URL``,
``CEF_VECTORS__BACKEND``, ``CEF_GRAPH__PASSWORD`` ... (``__`` separates
sections); ``CEF_DB`` is a short form of ``CEF_STORE__URL``.
:func:`cef.wiring.open_from_config` turns a :class:`CefConfig` into a knowledge base;
:func:`cef.wiring.open_store` turns a path or URL into a record store.
"""

from __future__ import annotations

import contextlib
import json
import os
import tomllib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from cef.errors import ConfigurationError

__all__ = [
    "CefConfig",
    "EmbedderSettings",
    "GraphSettings",
    "StoreSettings",
    "TokenizerSettings",
    "VectorSettings",
    "load_config",
    "read_config_file",
    "setting_sources",
]

#: URL schemes of record stores (``sqlite`` also accepts plain paths)
STORE_SCHEMES = ("sqlite", "postgresql", "postgres")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreSettings(_Section):
    """The system of record."""

    url: str = Field(default="cef.db", description="a SQLite file path, sqlite:///path, or postgresql://...")
    pool_size: int = Field(default=8, ge=1, le=512, description="connections per process (server stores)")


class VectorSettings(_Section):
    """Where vectors are searched.

    ``auto`` uses the record store's native vector search when it has one
    (PostgreSQL + pgvector), else ``memory`` (exact, in-process).
    """

    backend: Literal["auto", "memory", "store", "qdrant", "duckdb"] = "auto"
    url: str | None = Field(default=None, description="qdrant: http(s) URL or a local path; duckdb: a file")
    collection: str = Field(default="cef", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    api_key: SecretStr | None = None
    ann: bool = Field(default=False, description="duckdb: build an HNSW index (VSS extension)")


class GraphSettings(_Section):
    """Where traversal can be pushed down.

    ``auto`` uses the record store's own pushdown when it has one, else only
    the in-memory graph (``memory``). ``falkordb``/``neo4j`` mirror every write
    to that database.
    """

    backend: Literal["auto", "memory", "store", "falkordb", "neo4j"] = "auto"
    url: str | None = Field(default=None, description="redis://host:port, unix:///path.sock or bolt://...")
    name: str = Field(default="cef", description="graph name (FalkorDB) or database (Neo4j)")
    user: str | None = None
    password: SecretStr | None = None


class EmbedderSettings(_Section):
    provider: str = Field(default="minilm", description="minilm (offline default), openai, or none")
    runtime: Literal["auto", "onnx", "torch"] = Field(
        default="auto",
        description="minilm: onnx (ONNX Runtime, a local export), torch (sentence-transformers), "
        "or auto (onnx when onnxruntime is installed)",
    )
    precision: Literal["auto", "float32", "bfloat16", "int8"] = Field(
        default="auto",
        description="minilm: auto (bfloat16 for ingest batches on a CPU with AMX-BF16, float32 "
        "otherwise; cef config shows the choice), float32, bfloat16 (torch; cosine >= 0.999 to "
        "float32) or int8 (onnx; faster, about 1.4 points less dense Recall@5 on musique-100)",
    )
    cache_dir: str | None = Field(
        default=None, description="minilm on onnx: where the export is kept (default ~/.cache/cef)"
    )
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None


class TokenizerSettings(_Section):
    name: str = Field(default="wordpiece", description="token counter for context budgets")


_TOML: ContextVar[dict[str, Any]] = ContextVar("cef_toml", default={})  # noqa: B039 (never mutated)

#: the table of ``cef.toml`` that holds the servers' settings (:mod:`cef.server.settings`)
SERVER_TABLE = "server"
#: the environment variable naming the configuration file (default ``./cef.toml``)
CONFIG_ENV = "CEF_CONFIG"
#: sections that take a single string as short for one of their fields
_SHORTHAND = {"store": "url", "embedder": "provider"}


class TomlTableSource(PydanticBaseSettingsSource):
    """The ``cef.toml`` values being loaded (lowest priority after defaults): the ``[cef]`` table
    without the server table (``table=None``), or one sub-table such as ``[cef.server]``."""

    def __init__(self, settings_cls: type[BaseSettings], table: str | None = None) -> None:
        super().__init__(settings_cls)
        self.table = table

    def _data(self) -> dict[str, Any]:
        data = _TOML.get()
        if self.table is None:
            return {k: v for k, v in data.items() if k != SERVER_TABLE}
        sub = data.get(self.table)
        return sub if isinstance(sub, dict) else {}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._data().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data())


class CefConfig(BaseSettings):
    """Every setting of a cef deployment (see the module docstring for the file and variables)."""

    model_config = SettingsConfigDict(env_prefix="CEF_", env_nested_delimiter="__", extra="forbid")

    store: Annotated[StoreSettings, NoDecode] = Field(default_factory=StoreSettings)
    vectors: VectorSettings = Field(default_factory=VectorSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    embedder: Annotated[EmbedderSettings, NoDecode] = Field(default_factory=EmbedderSettings)
    tokenizer: TokenizerSettings = Field(default_factory=TokenizerSettings)
    embed_nodes: Literal["all", "content", "none"] = "all"

    #: where each setting came from (``store.url`` → ``--db``, ``$CEF_STORE__URL``, ``cef.toml`` or ``default``)
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def sources(self) -> dict[str, str]:
        return dict(self._sources)

    @field_validator("store", mode="before")
    @classmethod
    def _store_shorthand(cls, v: Any) -> Any:
        """``store = "postgresql://..."`` (or ``CEF_STORE=...``) is short for ``store.url``."""
        if isinstance(v, str):
            return json.loads(v) if v.lstrip().startswith("{") else {"url": v}
        return v

    @field_validator("embedder", mode="before")
    @classmethod
    def _embedder_shorthand(cls, v: Any) -> Any:
        """``embedder = "none"`` (or ``CEF_EMBEDDER=none``, as the servers take it) names the provider."""
        if isinstance(v, str):
            if v.lstrip().startswith("{"):
                return json.loads(v)
            return {"provider": "minilm" if v.strip().lower() == "default" else v}
        return v

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, TomlTableSource(settings_cls)


def read_config_file(path: str | Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """(the ``[cef]`` table, the file): ``path``, else ``$CEF_CONFIG``, else ``./cef.toml`` when present.

    A file named explicitly (argument or variable) must exist.
    """
    named = path if path is not None else os.environ.get(CONFIG_ENV) or None
    file = Path(named) if named is not None else Path("cef.toml")
    if named is not None and not file.is_file():
        how = f"${CONFIG_ENV}" if path is None else "--config"
        raise ConfigurationError(f"configuration file {str(file)!r} ({how}) does not exist")
    if not file.is_file():
        return {}, None
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"cannot read {str(file)!r}: {exc}") from exc
    return (raw["cef"] if isinstance(raw.get("cef"), dict) else raw), file


@contextlib.contextmanager
def toml_values(data: dict[str, Any]) -> Iterator[None]:
    """Make ``data`` (a ``[cef]`` table) the file values :class:`TomlTableSource` reads while building settings."""
    token = _TOML.set(data)
    try:
        yield
    finally:
        _TOML.reset(token)


def setting_sources(
    settings: BaseModel,
    *,
    file_data: dict[str, Any],
    file: Path | None,
    overrides: dict[str, Any],
    flags: dict[str, str] | None = None,
) -> dict[str, str]:
    """Where each setting of ``settings`` came from, key by key (``section.field`` for sections).

    The order is the loaders' precedence: a flag or argument (``flags`` names
    the option that set a top-level key), then a ``CEF_*`` variable, then the
    file, else ``default``.
    """
    env = {k.upper(): v for k, v in os.environ.items() if k.upper().startswith("CEF_")}
    flags = flags or {}
    out: dict[str, str] = {}

    def has(container: Any, section: str, field: str | None) -> bool:
        if field is None:
            return container is not None
        if isinstance(container, dict):
            return field in container
        if isinstance(container, str):
            text = container.lstrip()
            if text.startswith("{"):
                with contextlib.suppress(ValueError):
                    return field in json.loads(text)
                return False
            return _SHORTHAND.get(section) == field
        return False

    def source(section: str, field: str | None) -> str:
        if has(overrides.get(section), section, field):
            return flags.get(section, "argument")
        if field is not None and f"CEF_{section}__{field}".upper() in env:
            return f"${'CEF_' + section.upper()}__{field.upper()}"
        if has(env.get(f"CEF_{section}".upper()), section, field):
            return f"$CEF_{section.upper()}"
        if has(file_data.get(section), section, field):
            return str(file)
        return "default"

    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            for sub in type(value).model_fields:
                out[f"{name}.{sub}"] = source(name, sub)
        else:
            out[name] = source(name, None)
    return out


def load_config(
    path: str | Path | None = None, *, flags: dict[str, str] | None = None, **overrides: Any
) -> CefConfig:
    """The one settings loader of every front door: flags, then ``CEF_*`` variables, then the file.

    The file is ``path``, else ``$CEF_CONFIG``, else ``./cef.toml`` when present
    (top-level keys or a ``[cef]`` table; its ``[cef.server]`` table is read by
    :func:`cef.server.settings.load_server_settings`). ``overrides`` are the
    command line's values: sections as dicts (``store={"url": ...}``) or a
    string for ``store`` (the URL) and ``embedder`` (the provider); ``flags``
    names the option behind each (shown by ``cef config``). ``CEF_DB`` is short
    for ``CEF_STORE__URL``. Later sources lose, key by key.
    """
    data, file = read_config_file(path)
    overrides = {k: v for k, v in overrides.items() if v is not None}
    flags = dict(flags or {})
    short = os.environ.get("CEF_DB")
    if short and "CEF_STORE__URL" not in {k.upper() for k in os.environ} and "store" not in overrides:
        overrides["store"] = {"url": short}
        flags["store"] = "$CEF_DB"
    try:
        with toml_values(data):
            config = CefConfig(**overrides)
    except ValueError as exc:
        where = f" (in {file}, CEF_* variables or options)" if file else " (in CEF_* variables or options)"
        raise ConfigurationError(f"invalid configuration{where}: {exc}") from exc
    config._sources = setting_sources(config, file_data=data, file=file, overrides=overrides, flags=flags)
    return config


# ------------------------------------------------------------------ factories
