"""Wiring: the one place that builds a knowledge base — record store, vector and graph backends, embedder.

:mod:`cef.config` reads settings; the functions here turn a location or a
:class:`~cef.config.CefConfig` into open stores and a
:class:`~cef.engine.kb.KnowledgeBase`. Backend packages are imported only when
the settings name them.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cef.config import CefConfig, EmbedderSettings, GraphSettings, VectorSettings
from cef.engine.kb import KnowledgeBase
from cef.errors import ConfigurationError, StoreNotFoundError

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.store.base import GraphStore, Mirror, RecordStore, VectorStore
    from cef.store.cypher import CypherGraphStore

__all__ = [
    "open_embedder",
    "open_from_config",
    "open_graph_store",
    "open_kb",
    "open_store",
    "open_vector_store",
    "open_wired",
    "require_store",
    "store_location",
]


_MANGLED = re.compile(r"^(postgresql|postgres|sqlite)(\+[a-z0-9]+)?:/(?!/)", re.I)


def store_location(location: str | Path) -> tuple[str, str]:
    """(scheme, target) of a path or URL: ``("sqlite", path)`` or ``("postgresql", url)``.

    A URL that went through :class:`pathlib.Path` (which folds ``//`` into
    ``/``) is repaired, so ``--db postgresql://...`` works where a front door
    types the option as a path.
    """
    text = str(location)
    if isinstance(location, Path) and _MANGLED.match(text):
        if text.lower().startswith(
            "sqlite:"
        ):  # sqlite:///abs/kb.db became sqlite:/abs/kb.db: the path is /abs/kb.db
            return "sqlite", text[len("sqlite:") :] or ":memory:"
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


def open_store(location: str | Path, *, pool_size: int = 8, create: bool = True) -> RecordStore:
    """The record store a path or URL names (SQLite file, ``sqlite:///path``, ``postgresql://...``).

    With ``create=False`` (every read-only front door) a store that does not
    exist yet raises :class:`~cef.errors.StoreNotFoundError` and nothing is
    created: no folder, no file, no schema.
    """
    scheme, target = store_location(location)
    if scheme == "postgresql":
        from cef.store.postgres import PostgresStore

        return PostgresStore(target, pool_size=pool_size, create=create)
    from cef.store.sqlite.store import SQLiteStore

    if not create:
        require_store(location)
    return SQLiteStore(target)


def require_store(location: str | Path) -> None:
    """Raise :class:`~cef.errors.StoreNotFoundError` unless the store ``location`` names exists.

    Creates nothing. A SQLite file is looked at on disk; a PostgreSQL schema is
    looked up over one short connection.
    """
    scheme, target = store_location(location)
    if scheme == "postgresql":
        open_store(location, pool_size=1, create=False).close()
        return
    if target == ":memory:":
        return
    file = Path(target)
    if not file.exists():
        raise StoreNotFoundError(target)
    if not file.is_file():
        raise StoreNotFoundError(target, "it is a folder, not a SQLite file")
    if file.stat().st_size == 0:  # a read never writes a schema into a file that is not a knowledge base yet
        raise StoreNotFoundError(target, "the file is empty: it holds no knowledge base yet")


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
    if provider == "minilm":  # non-default choices only: the defaults share the process-wide instance
        defaults = EmbedderSettings()
        for key in ("runtime", "precision", "cache_dir"):
            if getattr(settings, key) != getattr(defaults, key):
                options[key] = getattr(settings, key)
    if settings.model:
        options["model"] = settings.model
    if settings.base_url:
        options["base_url"] = settings.base_url
    if settings.api_key:
        options["api_key"] = settings.api_key.get_secret_value()
    return make_embedder(provider, **options)


def open_from_config(
    config: CefConfig, *, embedder: Embedder | Literal["config"] | None = "config", create: bool = True
) -> KnowledgeBase:
    """A knowledge base wired as ``config`` says (``embedder`` overrides the configured one).

    ``create=False``: refuse a store that does not exist (:class:`~cef.errors.StoreNotFoundError`).
    """
    if not create:  # before loading the embedding model: a typo in a path must fail fast
        require_store(config.store.url)
    emb = open_embedder(config.embedder) if embedder == "config" else embedder
    return open_wired(
        config.store.url,
        emb,
        pool_size=config.store.pool_size,
        vectors=config.vectors,
        graph=config.graph,
        embed_nodes=config.embed_nodes,
        create=create,
    )


def open_wired(
    location: str | Path,
    embedder: Embedder | None,
    *,
    pool_size: int = 8,
    vectors: VectorSettings | None = None,
    graph: GraphSettings | None = None,
    embed_nodes: str = "all",
    create: bool = True,
) -> KnowledgeBase:
    """A knowledge base on the store ``location`` names, with vector and graph backends (default: auto).

    Reads no environment: this is what :func:`cef.open` uses for URLs and paths.
    ``create=False`` refuses a store that does not exist yet.
    """
    store = open_store(location, pool_size=pool_size, create=create)
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


def open_kb(
    path: str | Path = "cef.db",
    *,
    embedder: Embedder | str | None = "default",
    embed_nodes: str = "all",
    create: bool = True,
) -> KnowledgeBase:
    """Open (or create) a knowledge base in a SQLite file, or in the database a URL names.

    ``create=False`` opens only a knowledge base that exists (else
    :class:`~cef.errors.StoreNotFoundError`, and nothing is created).

    ``path`` is a file path, or a URL such as ``postgresql://user@host/db``
    (see :func:`open_store`); a server store brings its own vector
    search and traversal when it has them (:func:`open_wired`). ``embedder="default"`` loads the
    offline all-MiniLM-L6-v2 model lazily; pass an :class:`~cef.embed.base.Embedder`, a provider name, or ``None`` for
    a graph + BM25 only knowledge base.
    """
    if not create:  # before loading an embedding model: a wrong path fails fast
        require_store(path)
    if isinstance(embedder, str):
        from cef.embed import get_default_embedder, make_embedder

        embedder = get_default_embedder() if embedder == "default" else make_embedder(embedder)
    return open_wired(path, embedder, embed_nodes=embed_nodes, create=create)
