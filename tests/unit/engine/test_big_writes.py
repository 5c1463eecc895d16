"""A big write (sorted edge rows, a larger page cache while it runs) stores exactly what was given."""

from __future__ import annotations

import random
from pathlib import Path

import cef
from cef import Batch, Edge, Node, RelationType
from cef.store.sqlite.store import BIG_WRITE, DEFAULT_CACHE


def test_big_batch_round_trips_and_gives_the_cache_back(tmp_path: Path) -> None:
    rng = random.Random(4)
    nodes = [Node(id=f"n{i}", label="T") for i in range(5000)]
    edges = [
        Edge(
            id=f"e{i}", relation_type="R", source=f"n{rng.randrange(5000)}", target=f"n{rng.randrange(5000)}"
        )
        for i in range(BIG_WRITE)
    ]
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=None) as kb, cef.open(db, embedder=None) as reader:
        kb.index_batch(Batch(relation_types=[RelationType(name="R")], nodes=nodes, edges=edges))
        conn = kb.store._conn  # type: ignore[attr-defined]
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == DEFAULT_CACHE
        stored = {e.id: (e.source, e.target) for e in kb.store.iter_edges()}
        assert stored == {e.id: (e.source, e.target) for e in edges}
        # another process's view (replaying the change feed) and a reload agree with the batch
        reader.state.sync()
        for handle in (kb, reader):
            g = handle.state.graph
            assert g.edge_count == BIG_WRITE
            for e in rng.sample(edges, 200):
                p = g.edge_pos(e.id)
                assert p is not None
                assert (g.node_ids[int(g.e_src[p])], g.node_ids[int(g.e_dst[p])]) == (e.source, e.target)
        out = {n.id for n in kb.get_neighbors("n17", direction="out")}
        assert out == {e.target for e in edges if e.source == "n17"}
