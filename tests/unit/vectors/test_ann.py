"""The ANN vector index: recall against exact search, deletes, saving, and consistency with the store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cef
from cef import Batch, Chunk
from cef.vectors import ann
from cef.vectors.ann import AnnVectorIndex, load_index, save_index
from cef.vectors.exact import ExactVectorIndex
from tests.conformance.embedder import HashEmbedder

DIM = 32


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Passage-like vectors: mixtures of a few of many topic directions, plus noise."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((max(8, n // 20), DIM)).astype(np.float32)
    pick = rng.integers(0, len(topics), (n, 3))
    v = topics[pick].sum(axis=1) + 0.3 * rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_recall_against_exact_search() -> None:
    vecs = clustered(4000)
    ids = [f"c{i}" for i in range(len(vecs))]
    approx = AnnVectorIndex(DIM, threshold=1000)
    exact = ExactVectorIndex(DIM)
    for start in range(0, len(vecs), 500):  # crosses the threshold, then grows incrementally
        approx.upsert(ids[start : start + 500], vecs[start : start + 500])
        exact.upsert(ids[start : start + 500], vecs[start : start + 500])
    assert approx.approximate
    queries = clustered(200, seed=1)
    recall = np.mean(
        [
            len({i for i, _ in approx.search(q, 10)} & {i for i, _ in exact.search(q, 10)}) / 10
            for q in queries
        ]
    )
    assert recall >= 0.95
    # scores are exact cosines (re-ranked with the float32 rows)
    for q in queries[:20]:
        for ident, score in approx.search(q, 5):
            assert score == pytest.approx(float(exact.get(ident) @ q), abs=1e-5)  # type: ignore[operator]


def test_small_collections_are_exact() -> None:
    vecs = clustered(300)
    index = AnnVectorIndex(DIM, threshold=1000)
    index.upsert([f"c{i}" for i in range(300)], vecs)
    assert not index.approximate
    exact = ExactVectorIndex(DIM)
    exact.upsert([f"c{i}" for i in range(300)], vecs)
    q = clustered(1, seed=5)[0]
    assert index.search(q, 10) == exact.search(q, 10)


def test_deleted_and_moved_vectors() -> None:
    vecs = clustered(2000)
    ids = [f"c{i}" for i in range(len(vecs))]
    index = AnnVectorIndex(DIM, threshold=500)
    index.upsert(ids, vecs)
    gone = ids[:1000:2]
    index.remove(gone)
    for q in vecs[:1000:2]:  # each deleted vector's own direction: it would be the best match
        hits = {i for i, _ in index.search(q, 10)}
        assert not hits & set(gone)
    # an upsert of an existing id moves it: the new direction finds it, the old one does not
    target = clustered(1, seed=9)[0]
    index.upsert(["c1"], target[None, :])
    assert index.search(target, 1)[0][0] == "c1"
    assert index.similarities(target, ["c1", "c0", "nope"]).tolist() == pytest.approx(
        [1.0, 0.0, 0.0], abs=1e-5
    )
    # deleted rows are reused by new ids and found
    fresh = clustered(300, seed=11)
    index.upsert([f"n{i}" for i in range(300)], fresh)
    assert all(index.search(v, 1)[0][0] == f"n{i}" for i, v in enumerate(fresh[:50]))
    assert len(index) == 2000 - len(gone) + 300


def test_save_and_load_without_rebuilding(tmp_path: Path) -> None:
    vecs = clustered(1500)
    ids = [f"c{i}" for i in range(len(vecs))]
    index = AnnVectorIndex(DIM, threshold=500)
    index.upsert(ids, vecs)
    index.remove(ids[:100])
    assert index.built_here
    path = tmp_path / "kb.db-chunk-vectors"
    save_index(index, path, {"seq": 7})
    loaded, head = load_index(path)
    assert head["seq"] == 7
    assert loaded.approximate and not loaded.built_here
    assert len(loaded) == len(index) == 1400
    for q in clustered(30, seed=3):
        assert loaded.search(q, 10) == index.search(q, 10)
    assert loaded._row == index._row and loaded._ids == index._ids and loaded._free == sorted(index._free)
    # the search breadth is this build's setting, not the one the file was written with
    wide, _ = load_index(path, expansion_search=300)
    assert wide._ann.expansion_search == 300 and loaded._ann.expansion_search == 256
    for q in clustered(30, seed=3):
        assert wide.search(q, 10) == index.search(q, 10)
    # a second save replaces the HNSW file of the first
    save_index(loaded, path, {"seq": 8})
    assert len(list(tmp_path.glob("kb.db-chunk-vectors.*.hnsw"))) == 1
    # writes after a load: the freed rows are reused first, then the matrix grows
    more = clustered(250, seed=5)
    loaded.upsert([f"n{i}" for i in range(len(more))], more)
    assert len(loaded) == 1650 and not loaded._free
    for i in (0, 99, 100, 249):
        assert loaded.search(more[i], 1)[0][0] == f"n{i}"
    # a lost HNSW file makes the saved index unusable (the engine then reads the store)
    for f in tmp_path.glob("kb.db-chunk-vectors.*.hnsw"):
        f.unlink()
    with pytest.raises(OSError):
        load_index(path)


def _chunks(vecs: np.ndarray, start: int) -> list[Chunk]:
    return [
        Chunk(id=f"c{start + i}", content=f"passage {start + i}", embedding=v.tolist())
        for i, v in enumerate(vecs)
    ]


def test_engine_keeps_the_index_consistent_with_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saved on close, loaded on open (no rebuild); writes by another process replayed into it."""
    monkeypatch.setattr(ann, "DEFAULT_THRESHOLD", 400)
    db = tmp_path / "kb.db"
    vecs = clustered(1200)
    with cef.open(db, embedder=HashEmbedder(DIM)) as kb:
        kb.index_batch(Batch(chunks=_chunks(vecs[:800], 0)))
        assert kb.state.chunk_vectors.approximate  # type: ignore[attr-defined]
    path = kb.state.vectors_path("chunk")
    assert path is not None and path.exists()

    with cef.open(db, embedder=HashEmbedder(DIM)) as kb:
        index = kb.state.chunk_vectors
        assert isinstance(index, AnnVectorIndex) and index.approximate and not index.built_here
        assert len(index) == 800
        # another writer (a second handle: its own engine) adds and deletes while this one is open
        with cef.open(db, embedder=HashEmbedder(DIM)) as other:
            other.index_batch(Batch(chunks=_chunks(vecs[800:], 800)))
            for i in range(0, 100):
                other.delete_chunk(f"c{i}")
        found = kb.state
        found.sync()
        assert len(found.chunk_vectors) == 1100
        assert found.chunk_vectors.search(vecs[900], 1)[0][0] == "c900"
        assert all(found.chunk_vectors.search(v, 5)[0][0] != f"c{i}" for i, v in enumerate(vecs[:100]))

    # closing saved the replayed state; the next open loads it as is
    with cef.open(db, embedder=HashEmbedder(DIM)) as kb:
        index = kb.state.chunk_vectors
        assert isinstance(index, AnnVectorIndex) and not index.built_here
        assert len(index) == 1100
        assert "c5" not in index and "c1000" in index
        # updates: another writer changes the text of c200..c209 (so they are re-embedded)
        texts = [f"rewritten passage number {i} about harbours" for i in range(10)]
        with cef.open(db, embedder=HashEmbedder(DIM)) as other:
            for i, text in enumerate(texts):
                other.indexer.update_chunk(f"c{200 + i}", content=text)
        new_vecs = HashEmbedder(DIM).embed(texts)
        kb.state.sync()
        assert len(kb.state.chunk_vectors) == 1100
        for i in range(10):
            assert kb.state.chunk_vectors.search(new_vecs[i], 1)[0][0] == f"c{200 + i}"
            old = [c for c, _ in kb.state.chunk_vectors.search(vecs[200 + i], 3)]
            assert f"c{200 + i}" not in old  # its old vector is gone from the graph

    # the updates survive the save on close and the next open
    with cef.open(db, embedder=HashEmbedder(DIM)) as kb:
        index = kb.state.chunk_vectors
        assert isinstance(index, AnnVectorIndex) and not index.built_here
        for i in range(10):
            assert index.search(new_vecs[i], 1)[0][0] == f"c{200 + i}"
            assert f"c{200 + i}" not in [c for c, _ in index.search(vecs[200 + i], 3)]

    # a process that wrote and died before saving: the older saved index is loaded and the write replayed
    old = {f: f.read_bytes() for f in tmp_path.glob("kb.db-chunk-vectors*")}
    with cef.open(db, embedder=HashEmbedder(DIM)) as kb:
        kb.delete_chunk("c1000")
    for f in tmp_path.glob("kb.db-chunk-vectors*"):
        f.unlink()
    for f, data in old.items():
        f.write_bytes(data)
    with cef.open(db, embedder=HashEmbedder(DIM)) as kb:
        index = kb.state.chunk_vectors
        assert isinstance(index, AnnVectorIndex) and not index.built_here
        assert "c1000" not in index and len(index) == 1099
        assert all(i != "c1000" for i, _ in index.search(vecs[1000], 10))
