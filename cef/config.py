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

Environment variables override the file: ``CEF_STORE__URL``,
``CEF_VECTORS__BACKEND``, ``CEF_GRAPH__PASSWORD`` ... (``__`` separates
sections); ``CEF_DB`` is a short form of ``CEF_STORE__URL``.
:func:`open_from_config` turns a :class:`CefConfig` into a knowledge base;
:func:`open_store` turns a path or URL into a record store.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from cef.errors import ConfigurationError

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.engine.kb import KnowledgeBase
    from cef.store.base import GraphStore, Mirror, RecordStore, VectorStore
    from cef.store.cypher import CypherGraphStore

__all__ = [
    "CefConfig",
    "EmbedderSettings",
    "GraphSettings",
    "StoreSettings",
    "TokenizerSettings",
    "VectorSettings",
    "load_config",
    "open_from_config",
    "open_store",
    "open_wired",
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
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None


class TokenizerSettings(_Section):
    name: str = Field(default="wordpiece", description="token counter for context budgets")


_TOML: ContextVar[dict[str, Any]] = ContextVar("cef_toml", default={})  # noqa: B039 (never mutated)


class _TomlSource(PydanticBaseSettingsSource):
    """The ``cef.toml`` values :func:`load_config` read (lowest priority after defaults)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return _TOML.get().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_TOML.get())


class CefConfig(BaseSettings):
    """Every setting of a cef deployment (see the module docstring for the file and variables)."""

    model_config = SettingsConfigDict(env_prefix="CEF_", env_nested_delimiter="__", extra="forbid")

    store: Annotated[StoreSettings, NoDecode] = Field(default_factory=StoreSettings)
    vectors: VectorSettings = Field(default_factory=VectorSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    embedder: Annotated[EmbedderSettings, NoDecode] = Field(default_factory=EmbedderSettings)
    tokenizer: TokenizerSettings = Field(default_factory=TokenizerSettings)
    embed_nodes: Literal["all", "content", "none"] = "all"

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
        return init_settings, env_settings, _TomlSource(settings_cls)


def load_config(path: str | Path | None = None, **overrides: Any) -> CefConfig:
    """Read ``path`` (default ``./cef.toml`` when present), then ``CEF_*`` variables, then ``overrides``.

    ``overrides`` are sections as dicts (``store={"url": ...}``) or a URL string
    for ``store``; later sources win, key by key.
    """
    data: dict[str, Any] = {}
    file = Path(path) if path is not None else Path("cef.toml")
    if path is not None and not file.is_file():
        raise ConfigurationError(f"configuration file {str(file)!r} does not exist")
    if file.is_file():
        try:
            raw = tomllib.loads(file.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigurationError(f"cannot read {str(file)!r}: {exc}") from exc
        data = raw["cef"] if isinstance(raw.get("cef"), dict) else raw
    short = os.environ.get("CEF_DB")
    if short and "CEF_STORE__URL" not in os.environ:
        overrides.setdefault("store", {"url": short})
    token = _TOML.set(data)
    try:
        return CefConfig(**{k: v for k, v in overrides.items() if v is not None})
    except ValueError as exc:
        raise ConfigurationError(f"invalid configuration: {exc}") from exc
    finally:
        _TOML.reset(token)


# ------------------------------------------------------------------ factories
_MANGLED = re.compile(r"^(postgresql|postgres|sqlite)(\+[a-z0-9]+)?:/(?!/)", re.I)


def store_location(location: str | Path) -> tuple[str, str]:
    """(scheme, target) of a path or URL: ``("sqlite", path)`` or ``("postgresql", url)``.

    A URL that went through :class:`pathlib.Path` (which folds ``//`` into
    ``/``) is repaired, so ``--db postgresql://...`` works where a front door
    types the option as a path.
    """
    text = str(location)
    if isinstance(location, Path) and _MANGLED.match(text):
        text = _MANGLED.sub(lambda m: m.group(0) + "/", text, count=1)
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", text, re.S)
    if m is None:
        return "sqlite", text
    scheme = m.group(1).lower().split("+")[0]
    if scheme == "sqlite":
        rest = m.group(2)
        return "sqlite", rest if rest else ":memory:"
    if scheme in ("postgresql", "postgres"):
        return "postgresql", text
    raise ConfigurationError(
        f"unknown store URL scheme {m.group(1)!r}: use a file path, sqlite:///path or postgresql://..."
    )


def open_store(location: str | Path, *, pool_size: int = 8) -> RecordStore:
    """The record store a path or URL names (SQLite file, ``sqlite:///path``, ``postgresql://...``)."""
    scheme, target = store_location(location)
    if scheme == "postgresql":
        from cef.store.postgres import PostgresStore

        return PostgresStore(target, pool_size=pool_size)
    from cef.store.sqlite.store import SQLiteStore

    return SQLiteStore(target)


def open_vector_store(settings: VectorSettings, store: RecordStore) -> VectorStore | None:
    """The vector store the settings name, or None for the engine's in-memory exact indexes."""
    backend = settings.backend
    native = getattr(store, "vector_store", None)
    if backend == "auto":
        backend = "store" if store.capabilities.native_vector_search and native is not None else "memory"
    if backend == "memory":
        return None
    if backend == "store":
        if not store.capabilities.native_vector_search or native is None:
            raise ConfigurationError(
                "vectors.backend = 'store' needs a record store with native vector search (PostgreSQL)"
            )
        vs: VectorStore = native()
        return vs
    if backend == "qdrant":
        from cef.store.qdrant import QdrantVectorStore

        key = settings.api_key.get_secret_value() if settings.api_key else None
        return QdrantVectorStore(settings.url or ":memory:", prefix=settings.collection, api_key=key)
    from cef.store.duckdb import DuckDBVectorStore

    return DuckDBVectorStore(settings.url or ":memory:", prefix=settings.collection, ann=settings.ann)


def open_graph_store(settings: GraphSettings, store: RecordStore) -> tuple[GraphStore | None, list[Mirror]]:
    """(graph store for pushed-down traversal or None, mirrors the engine must feed)."""
    backend = settings.backend
    if backend == "auto":
        backend = "store" if store.capabilities.traversal_pushdown else "memory"
    if backend == "memory":
        return None, []
    if backend == "store":
        if not store.capabilities.traversal_pushdown:
            raise ConfigurationError("graph.backend = 'store' needs a record store with traversal pushdown")
        return store, []  # type: ignore[return-value]  # checked by the capability
    password = settings.password.get_secret_value() if settings.password else None
    graph: CypherGraphStore
    if backend == "falkordb":
        from cef.store.cypher import CypherGraphStore, FalkorDBDriver

        url = settings.url or "redis://localhost:6379"
        graph = CypherGraphStore(FalkorDBDriver(url, graph=settings.name, password=password))
    else:
        from cef.store.cypher import CypherGraphStore, Neo4jDriver

        url = settings.url or "bolt://localhost:7687"
        driver = Neo4jDriver(url, user=settings.user, password=password, database=settings.name)
        graph = CypherGraphStore(driver)
    return graph, [graph]


def open_embedder(settings: EmbedderSettings) -> Embedder | None:
    provider = settings.provider.strip().lower()
    if provider == "none":
        return None
    from cef.embed import make_embedder

    options: dict[str, Any] = {}
    if settings.model:
        options["model"] = settings.model
    if settings.base_url:
        options["base_url"] = settings.base_url
    if settings.api_key:
        options["api_key"] = settings.api_key.get_secret_value()
    return make_embedder(provider, **options)


def open_from_config(
    config: CefConfig, *, embedder: Embedder | Literal["config"] | None = "config"
) -> KnowledgeBase:
    """A knowledge base wired as ``config`` says (``embedder`` overrides the configured one)."""
    emb = open_embedder(config.embedder) if embedder == "config" else embedder
    return open_wired(
        config.store.url,
        emb,
        pool_size=config.store.pool_size,
        vectors=config.vectors,
        graph=config.graph,
        embed_nodes=config.embed_nodes,
    )


def open_wired(
    location: str | Path,
    embedder: Embedder | None,
    *,
    pool_size: int = 8,
    vectors: VectorSettings | None = None,
    graph: GraphSettings | None = None,
    embed_nodes: str = "all",
) -> KnowledgeBase:
    """A knowledge base on the store ``location`` names, with vector and graph backends (default: auto).

    Reads no environment: this is what :func:`cef.open` uses for URLs and paths.
    """
    from cef.engine.kb import KnowledgeBase

    store = open_store(location, pool_size=pool_size)
    opened: list[Any] = [store]
    try:
        vs = open_vector_store(vectors or VectorSettings(), store)
        if vs is not None and vs is not store:
            opened.append(vs)
        gs, mirrors = open_graph_store(graph or GraphSettings(), store)
        if gs is not None and gs is not store:
            opened.append(gs)
        return KnowledgeBase(store, embedder, embed_nodes=embed_nodes, vectors=vs, graph=gs, mirrors=mirrors)
    except BaseException:
        for res in reversed(opened):
            with contextlib.suppress(Exception):  # closing after a failure must not hide it
                res.close()
        raise
