"""Errors are cef errors with the same types and messages on every backend (driver errors never leak)."""

from __future__ import annotations

import pytest

from cef import Batch, Chunk, Edge, Node
from cef.errors import (
    CefError,
    DuplicateIdError,
    MissingNodeError,
    NotFoundError,
    StoreError,
    UnknownRelationTypeError,
)

from . import data
from .backends import Deployment


def test_duplicate_ids_are_named(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    with pytest.raises(DuplicateIdError, match="'c'") as info:
        kb.index_batch(Batch(nodes=[Node(id="new", label="X"), Node(id="c", label="X")]))
    assert (info.value.kind, info.value.id) == ("node", "c")
    assert "nodes[1]" in str(info.value)
    with pytest.raises(DuplicateIdError) as info:
        kb.index_batch(Batch(edges=[Edge(id="e-ab", relation_type="LINKS", source="a", target="c")]))
    assert (info.value.kind, info.value.id) == ("edge", "e-ab")
    with pytest.raises(DuplicateIdError) as info:
        kb.index_batch(Batch(nodes=[Node(id="twice", label="X"), Node(id="twice", label="X")]))
    assert info.value.id == "twice"
    assert kb.store.counts()["nodes"] == 8


def test_validation_errors(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    with pytest.raises(MissingNodeError, match="ghost"):
        kb.index_batch(Batch(edges=[Edge(relation_type="LINKS", source="a", target="ghost")]))
    with pytest.raises(MissingNodeError, match="ghost"):
        kb.index_batch(Batch(chunks=[Chunk(content="x", node_id="ghost")]))
    with pytest.raises(UnknownRelationTypeError, match="KNOWS"):
        kb.index_batch(Batch(edges=[Edge(relation_type="KNOWS", source="a", target="b")]))
    with pytest.raises(NotFoundError):
        kb.update_node("ghost", {"x": 1})
    assert kb.store.counts() == {"nodes": 8, "edges": 7, "chunks": 7, "relation_types": 3}


def test_unreachable_backend_raises_store_error(deployment: Deployment, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cef.config import CefConfig
    from cef.wiring import open_from_config

    cfg = deployment.config.model_dump()
    dead = str(tmp_path / "nothing-listens-here")
    if deployment.name == "postgres":
        cfg["store"]["url"] = f"postgresql://postgres@/postgres?host={dead}&connect_timeout=2"
    elif deployment.name == "falkordb":
        cfg["graph"]["url"] = f"unix://{dead}/redis.sock"
    elif deployment.name == "neo4j":
        cfg["graph"]["url"] = "bolt://127.0.0.1:1"
    elif deployment.name == "qdrant":
        cfg["vectors"]["url"] = "http://127.0.0.1:1"
    else:  # a file store whose path is a directory
        (tmp_path / "dir.db").mkdir()
        key = "vectors" if deployment.name == "duckdb" else "store"
        cfg[key]["url"] = str(tmp_path / "dir.db")
    with pytest.raises(StoreError) as info:
        kb = open_from_config(CefConfig(**cfg), embedder=deployment.embedder)
        kb.index_batch(data.batch())
        kb.close()
    assert isinstance(info.value, CefError)
    assert type(info.value.__cause__).__module__.split(".")[0] != "cef"
