#!/usr/bin/env python3
"""The first query after a write: the entity index followed from the previous one, beside a build.

    python bench/bench_entity_follow.py --passages 100000 --writes 3

Writes a synthetic text graph through the public API (``index_batch``): ``--passages`` passages with
a chunk each and five MENTIONS edges (the first a title edge) to entities drawn from half as many
``Entity`` nodes. Builds the entity index, then makes ``--writes`` writes of 10 new passages (and one
new entity each) and times, after each, the index the next query gets (followed from the previous one,
:func:`cef.retrieve.entities.follow_changes`) beside a build of the same graph from the store.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cef
from cef import Batch, Chunk, Edge, Node
from cef.retrieve import entities
from cef.retrieve.entities import entity_index
from cef.schema.textgraph import ENTITY_LABEL, MENTIONS, PASSAGE_LABEL, RELATION_TYPES


def passages(lo: int, hi: int, n_entities: int, rnd: random.Random) -> Batch:
    nodes, edges, chunks = [], [], []
    for i in range(lo, hi):
        pid = f"p{i}"
        nodes.append(Node(id=f"passage:{pid}", label=PASSAGE_LABEL, properties={"name": f"Passage {i}"}))
        chunks.append(Chunk(id=pid, content=f"text of passage {i}", node_id=f"passage:{pid}"))
        for j, e in enumerate(rnd.sample(range(n_entities), 5)):
            edges.append(
                Edge(
                    id=f"m{i}:{e}",
                    relation_type=MENTIONS,
                    source=f"passage:{pid}",
                    target=f"entity:name {e}",
                    properties={"title": True} if j == 0 else {},
                )
            )
    return Batch(nodes=nodes, edges=edges, chunks=chunks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", type=int, default=100_000)
    ap.add_argument("--writes", type=int, default=3)
    args = ap.parse_args()
    n, n_ent = args.passages, max(1, args.passages // 2)
    rnd = random.Random(0)
    with (
        tempfile.TemporaryDirectory(prefix="cef-follow-") as tmp,
        cef.open(Path(tmp) / "x.db", embedder=None) as kb,
    ):
        t = time.perf_counter()
        ents = [
            Node(id=f"entity:name {e}", label=ENTITY_LABEL, properties={"name": f"Name {e}"})
            for e in range(n_ent)
        ]
        kb.index_batch(Batch(relation_types=list(RELATION_TYPES), nodes=ents))
        for lo in range(0, n, 20_000):
            kb.index_batch(passages(lo, min(n, lo + 20_000), n_ent, rnd))
        print(f"graph: {n:,} passages, {n_ent:,} entities, written in {time.perf_counter() - t:.0f} s")
        with kb.state.reading():
            t = time.perf_counter()
            entity_index(kb.state)
        print(f"first build: {time.perf_counter() - t:.2f} s\n")
        print("| write | followed s | build s | ratio |\n|---|---:|---:|---:|")
        for k in range(args.writes):
            batch = passages(n + 10 * k, n + 10 * (k + 1), n_ent, rnd)
            fresh = Node(id=f"entity:fresh {k}", label=ENTITY_LABEL, properties={"name": f"Fresh {k}"})
            link = Edge(id=f"mf{k}", relation_type=MENTIONS, source=batch.nodes[0].id, target=fresh.id)
            kb.index_batch(
                batch.model_copy(update={"nodes": [*batch.nodes, fresh], "edges": [*batch.edges, link]})
            )
            with kb.state.reading():
                t = time.perf_counter()
                index = entity_index(kb.state)
                followed = time.perf_counter() - t
                t = time.perf_counter()
                entities._build(kb.state, kb.state.graph, index.stamp)
                built = time.perf_counter() - t
            print(f"| {k + 1} (10 passages) | {followed:.2f} | {built:.2f} | {built / followed:.0f}x |")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
