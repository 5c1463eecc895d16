"""The deployments the conformance suite runs on: one record store, one vector store, one graph store each.

=========  =============  ======================  ==========================
name       record store   vectors                 traversal (GraphStore)
=========  =============  ======================  ==========================
sqlite     SQLite file    in-memory exact          in-memory graph (reference)
postgres   PostgreSQL     pgvector (native)        PostgreSQL (pushdown)
qdrant     SQLite file    Qdrant (local mode)      in-memory graph
duckdb     SQLite file    DuckDB file              in-memory graph
falkordb   SQLite file    in-memory exact          FalkorDB (mirror, pushdown)
neo4j      SQLite file    in-memory exact          Neo4j (only with CEF_TEST_NEO4J_URL)
=========  =============  ======================  ==========================

Every deployment is opened through :func:`cef.wiring.open_from_config`, the
path front doors use. ``open_again`` gives a second, independent handle on
the same stores (what another process would have).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cef.config import CefConfig
from cef.engine.kb import KnowledgeBase
from cef.store.base import GraphStore
from cef.wiring import open_from_config

from .embedder import HashEmbedder
from .reference import MemoryGraphStore


@dataclass
class Deployment:
    name: str
    config: CefConfig
    embedder: HashEmbedder = field(default_factory=HashEmbedder)
    opened: list[KnowledgeBase] = field(default_factory=list)

    def open(self, *, embedder: Any = "default") -> KnowledgeBase:
        emb = self.embedder if embedder == "default" else embedder
        kb = open_from_config(self.config, embedder=emb)
        self.opened.append(kb)
        return kb

    def open_again(self, first: KnowledgeBase) -> KnowledgeBase:
        """Another handle on the same stores (a second process would open exactly this)."""
        return self.open()

    def graph(self, kb: KnowledgeBase) -> GraphStore:
        """The traversal implementation under test."""
        gs = kb.state.graph_store
        return gs if gs is not None else MemoryGraphStore(kb.state)

    def close(self) -> None:
        for kb in reversed(self.opened):
            with contextlib.suppress(Exception):  # already closed by the test
                kb.close()
        self.opened.clear()


class QdrantDeployment(Deployment):
    """Qdrant's local mode locks its directory, so a second handle shares the first one's client."""

    def open_again(self, first: KnowledgeBase) -> KnowledgeBase:
        from cef.store.qdrant import QdrantVectorStore
        from cef.wiring import open_store

        vs = first.state.vector_store
        assert isinstance(vs, QdrantVectorStore)
        kb = KnowledgeBase(
            open_store(self.config.store.url),
            self.embedder,
            vectors=QdrantVectorStore(client=vs.client, prefix=vs.prefix),
        )
        self.opened.append(kb)
        return kb


class DuckDBDeployment(Deployment):
    """A DuckDB file belongs to one process; a second handle is a second connection of it."""

    def open_again(self, first: KnowledgeBase) -> KnowledgeBase:
        from cef.store.duckdb import DuckDBVectorStore
        from cef.wiring import open_store

        vs = first.state.vector_store
        assert isinstance(vs, DuckDBVectorStore)
        kb = KnowledgeBase(
            open_store(self.config.store.url),
            self.embedder,
            vectors=DuckDBVectorStore(connection=vs.db.con.cursor(), prefix=vs.prefix),
        )
        self.opened.append(kb)
        return kb


def make(name: str, tmp: Path, servers: dict[str, Any]) -> Deployment:
    db = str(tmp / "kb.db")
    if name == "sqlite":
        cfg = {"store": {"url": db}, "vectors": {"backend": "memory"}, "graph": {"backend": "memory"}}
        return Deployment(name, CefConfig(**cfg))
    if name == "postgres":
        cfg = {
            "store": {"url": servers["postgres"]},
            "vectors": {"backend": "auto"},
            "graph": {"backend": "auto"},
        }
        return Deployment(name, CefConfig(**cfg))
    if name == "qdrant":
        cfg = {"store": {"url": db}, "vectors": {"backend": "qdrant", "url": str(tmp / "qdrant")}}
        return QdrantDeployment(name, CefConfig(**cfg))
    if name == "duckdb":
        cfg = {"store": {"url": db}, "vectors": {"backend": "duckdb", "url": str(tmp / "vectors.duckdb")}}
        return DuckDBDeployment(name, CefConfig(**cfg))
    if name == "falkordb":
        url, graph = servers["falkordb"]
        cfg = {"store": {"url": db}, "graph": {"backend": "falkordb", "url": url, "name": graph}}
        return Deployment(name, CefConfig(**cfg))
    if name == "neo4j":
        url, user, password = servers["neo4j"]
        cfg = {
            "store": {"url": db},
            "graph": {"backend": "neo4j", "url": url, "user": user, "password": password},
        }
        dep = Deployment(name, CefConfig(**cfg))
        kb = dep.open()  # the test database is shared: start from an empty graph
        gs = kb.state.graph_store
        assert gs is not None and hasattr(gs, "reset")
        gs.reset()
        dep.close()
        for suffix in ("", "-wal", "-shm"):
            Path(db + suffix).unlink(missing_ok=True)
        return dep
    raise ValueError(name)
