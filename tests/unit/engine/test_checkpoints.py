"""A process killed in the middle of a big ingest leaves index files the next open reads.

The writer is a real child process that ends with ``os._exit`` (no close, no
atexit: what SIGKILL or an OOM kill leaves); the thresholds that make a
snapshot or an HNSW graph worth saving are lowered in the child so a small
store shows what a million-passage one does.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import cef
from cef.engine.state import EngineState
from cef.vectors.ann import AnnVectorIndex, read_header
from tests.conformance.embedder import HashEmbedder

REPO = Path(__file__).resolve().parents[3]
DIM = 32
BATCHES, PER_BATCH = 12, 100

WRITER = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    import cef
    from cef import Batch, Chunk, Edge, Node, RelationType
    from cef.engine.state import EngineState
    from cef.vectors import ann
    from tests.conformance.embedder import HashEmbedder

    ann.DEFAULT_THRESHOLD = 300
    EngineState.SNAPSHOT_MIN_ITEMS = 200
    rng = np.random.default_rng(3)
    kb = cef.open(sys.argv[1], embedder=HashEmbedder(32), embed_nodes="none")
    kb.index_batch(Batch(relation_types=[RelationType(name="NEXT")]))
    for b in range({batches}):
        ids = range(b * {per}, (b + 1) * {per})
        vecs = rng.standard_normal(({per}, 32)).astype(np.float32)
        kb.index_batch(Batch(
            nodes=[Node(id=f"n{{i}}", label="Doc") for i in ids],
            edges=[Edge(relation_type="NEXT", source=f"n{{i}}", target=f"n{{i - 1}}") for i in ids if i],
            chunks=[Chunk(id=f"c{{i}}", content=f"passage {{i}}", node_id=f"n{{i}}", embedding=v.tolist())
                    for i, v in zip(ids, vecs)],
        ))
    os._exit(0)  # killed: no close, nothing saved on the way out
    """
).format(batches=BATCHES, per=PER_BATCH)


def test_a_killed_writer_leaves_files_the_next_open_reads(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    subprocess.run([sys.executable, "-c", WRITER, str(db), str(REPO)], check=True, timeout=300)
    total = BATCHES * PER_BATCH

    vectors = tmp_path / "kb.db-chunk-vectors"
    assert vectors.exists(), "no vector checkpoint was written while ingesting"
    saved = int(read_header(vectors)["count"])
    # the last checkpoint holds at least (1 - CHECKPOINT_SHARE) of what was committed; saves come at
    # geometric steps, not on every commit (here at 300 rows, the HNSW build, then 400, 600, 800, 1,100)
    assert (1 - EngineState.CHECKPOINT_SHARE) * total <= saved < total
    assert len(list(tmp_path.glob("kb.db-chunk-vectors.*.hnsw"))) == 1  # older graphs were removed

    with cef.open(db, embedder=HashEmbedder(DIM), embed_nodes="none") as kb:
        index = kb.state.chunk_vectors
        # the threshold is back at its default here: the saved HNSW graph is loaded, not rebuilt
        assert isinstance(index, AnnVectorIndex) and not index.built_here
        assert len(index) == total  # what the checkpoint missed was replayed from the store
        assert kb.state.loaded_from_snapshot
        assert kb.state.graph.node_count == total and kb.state.graph.edge_count == total - 1
        # the replayed tail is searchable: each of the last batch's vectors finds its own chunk
        last = kb.state.store.get_vectors("chunk", [f"c{i}" for i in range(total - 5, total)])
        for ident, vec in last.items():
            assert index.search(vec, 1)[0][0] == ident
