"""External indexes fed as mirrors (Qdrant, DuckDB, FalkorDB, Neo4j) repair themselves from the change feed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cef import Batch, Chunk, Edge, Node
from cef.engine.kb import KnowledgeBase
from cef.wiring import open_store

from . import data
from .backends import Deployment
from .conftest import BACKENDS

MIRRORED = [p for p in BACKENDS if p.values[0] in ("qdrant", "duckdb", "falkordb", "neo4j")]


def _mirror(kb: KnowledgeBase) -> Any:
    (m,) = kb.state.mirrors
    return m


def _probe(dep: Deployment, kb: KnowledgeBase) -> tuple[Any, ...]:
    q = dep.embedder.embed_query("brand new zebra paragraph")
    return (
        [i for i, _ in kb.state.chunk_vectors.search(q, 1)],
        dep.graph(kb).neighbourhood(["late"], 1, None, 10),
        len(kb.state.chunk_vectors),
    )


@pytest.mark.parametrize("deployment", MIRRORED, indirect=True)
def test_commits_made_without_the_mirror_are_replayed_on_open(deployment: Deployment) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    marker = _mirror(kb).synced_seq()
    assert marker == kb.store.current_seq()
    kb.close()
    # a writer that never reached the mirror (it died after its commit, or was configured without it)
    plain = KnowledgeBase(open_store(deployment.config.store.url), deployment.embedder)
    plain.index_batch(
        Batch(
            nodes=[Node(id="late", label="X")],
            edges=[Edge(id="e-late", relation_type="LINKS", source="late", target="a")],
            chunks=[Chunk(id="ch-late", content="brand new zebra paragraph", node_id="late")],
        )
    )
    plain.delete_chunk("ch-x")
    plain.close()
    kb = deployment.open()
    assert _mirror(kb).synced_seq() == kb.store.current_seq() > marker
    assert _probe(deployment, kb) == (["ch-late"], [("late", 0, []), ("a", 1, ["e-late"])], 7)


@pytest.mark.parametrize("deployment", MIRRORED, indirect=True)
def test_a_failing_mirror_does_not_fail_the_write_and_catches_up(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    mirror = _mirror(kb)
    real = mirror.apply
    calls = {"n": 0}

    def broken(writes: Any) -> None:
        calls["n"] += 1
        raise ConnectionError("mirror down")

    monkeypatch.setattr(mirror, "apply", broken)
    monkeypatch.setattr(kb.state, "MIRROR_RETRY_SECONDS", 3600.0)
    kb.index_batch(
        Batch(
            nodes=[Node(id="late", label="X")],
            edges=[Edge(id="e-late", relation_type="LINKS", source="late", target="a")],
            chunks=[Chunk(id="ch-late", content="brand new zebra paragraph", node_id="late")],
        )
    )
    kb.delete_chunk("ch-x")
    assert calls["n"] == 1  # marked stale after the first failure; later commits wait for the catch-up
    assert "mirror" in caplog.text
    assert kb.store.existing_ids("chunk", ["ch-late"]) == {"ch-late"}
    monkeypatch.setattr(mirror, "apply", real)
    monkeypatch.setattr(kb.state, "_mirror_retry_at", 0.0)
    with kb.state.reading():  # the next read retries the mirror from its marker
        pass
    assert _probe(deployment, kb) == (["ch-late"], [("late", 0, []), ("a", 1, ["e-late"])], 7)
    assert mirror.synced_seq() == kb.store.current_seq()


@pytest.mark.parametrize("deployment", MIRRORED, indirect=True)
def test_a_mirror_of_another_knowledge_base_is_rebuilt(deployment: Deployment, tmp_path: Path) -> None:
    kb = deployment.open()
    kb.index_batch(data.batch())
    kb.index_batch(Batch(nodes=[Node(id=f"x{i}", label="X") for i in range(30)]))
    kb.close()
    # a fresh record store behind the same mirror: its marker is ahead of the store's feed
    for suffix in ("", "-wal", "-shm"):
        Path(deployment.config.store.url + suffix).unlink(missing_ok=True)
    kb = deployment.open()
    assert _mirror(kb).synced_seq() == kb.store.current_seq() == 0
    kb.index_batch(data.batch())
    assert len(kb.state.chunk_vectors) == 7
    assert deployment.graph(kb).neighbourhood(["x1"], 1, None, 10) == []
    assert deployment.graph(kb).shortest_path("a", "d", 5) == ["e-ab", "e-bc", "e-cd"]
