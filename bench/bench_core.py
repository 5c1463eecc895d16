"""Core engine figures on generated graphs (prints a table; nothing here is a unit test).

    python bench/bench_core.py                 # the issue's sizes (takes several minutes)
    python bench/bench_core.py --scale 0.1     # a quick look at a tenth of the sizes

Measures: indexing rate (nodes+edges/s, no embeddings), open/reload time and
RSS for the big graph, extract_context depth 2 and capped 3-hop expansion
p50/p95, exact vector search and BM25 p50/p95 at 100K chunks, and embedding
throughput of the default model.
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

import cef
from cef import Batch, Chunk, Edge, Node, RelationType

WORDS = [
    "graph",
    "context",
    "engine",
    "patient",
    "drug",
    "condition",
    "doctor",
    "therapy",
    "dose",
    "kidney",
    "heart",
    "rhythm",
    "risk",
    "guideline",
    "study",
    "trial",
    "protein",
    "gene",
    "pathway",
    "enzyme",
    "receptor",
    "signal",
    "cell",
    "tissue",
    "organ",
    "blood",
    "pressure",
    "sugar",
    "insulin",
    "metabolism",
    "inflammation",
    "pain",
    "infection",
    "virus",
    "bacteria",
    "vaccine",
    "antibody",
    "immune",
    "response",
    "clinic",
    "hospital",
    "nurse",
    "surgery",
    "imaging",
    "scan",
    "report",
    "note",
    "history",
    "family",
    "lifestyle",
    "diet",
    "exercise",
    "sleep",
    "stress",
    "memory",
]


def _pseudo_word(i: int) -> str:
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    out = []
    i += 27
    while i:
        i, r = divmod(i, 26)
        out.append(letters[r])
    return "".join(out)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def generate(kb: cef.KnowledgeBase, n_nodes: int, n_edges: int, seed: int = 7, batch: int = 50_000) -> float:
    """Write a random graph in batches; returns seconds spent in index_batch."""
    rng = random.Random(seed)
    rels = [
        RelationType(name=f"REL_{i}", semantics=s)
        for i, s in enumerate(["ASSOCIATION", "HIERARCHY", "CLASSIFICATION", "REFERENCE", "SEQUENCE"])
    ]
    kb.indexer.register_relation_types(rels)
    labels = ["Person", "Drug", "Condition", "Document", "Place"]
    spent = 0.0
    for start in range(0, n_nodes, batch):
        nodes = [
            Node(
                id=f"n{i}",
                label=labels[i % 5],
                properties={"name": f"{rng.choice(WORDS)} {i}", "rank": i % 100},
            )
            for i in range(start, min(n_nodes, start + batch))
        ]
        t = time.perf_counter()
        kb.index_batch(Batch(nodes=nodes))
        spent += time.perf_counter() - t
    per = max(1, n_edges // max(1, n_nodes // batch))
    made = 0
    while made < n_edges:
        k = min(per, n_edges - made)
        edges = [
            Edge(
                id=f"e{made + j}",
                relation_type=f"REL_{rng.randrange(5)}",
                source=f"n{rng.randrange(n_nodes)}",
                target=f"n{rng.randrange(n_nodes)}",
                confidence=round(rng.uniform(0.3, 1.0), 3),
                weight=round(rng.uniform(0.1, 2.0), 3),
            )
            for j in range(k)
        ]
        t = time.perf_counter()
        kb.index_batch(Batch(edges=edges))
        spent += time.perf_counter() - t
        made += k
    return spent


def bench_indexing(tmp: Path, n_nodes: int, n_edges: int) -> dict[str, float]:
    db = tmp / f"index-{n_nodes}.db"
    with cef.open(db, embedder=None) as kb:
        spent = generate(kb, n_nodes, n_edges)
    return {
        "nodes": n_nodes,
        "edges": n_edges,
        "seconds": spent,
        "rate": (n_nodes + n_edges) / spent,
        "db": str(db),
    }


def bench_reload(db: str, *, snapshot: bool) -> dict[str, float]:
    """Open the knowledge base in a fresh process: from the graph snapshot, or (``snapshot=False``) from rows."""
    if not snapshot:
        Path(db + "-graph").unlink(missing_ok=True)
    code = textwrap.dedent(
        """
        import sys, time, cef
        def status(key):
            for line in open('/proc/self/status'):
                if line.startswith(key):
                    return int(line.split()[1]) / 1024
        base = status('VmRSS:')
        t = time.perf_counter()
        kb = cef.open(sys.argv[1], embedder=None)
        took = time.perf_counter() - t
        used = kb.state.loaded_from_snapshot
        print(took, status('VmRSS:'), status('VmHWM:'), base, kb.state.graph.node_count, kb.state.graph.edge_count, int(used))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, db], capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        "seconds": float(out[0]),
        "rss_mb": float(out[1]),
        "peak_mb": float(out[2]),
        "base_rss_mb": float(out[3]),
        "nodes": int(out[4]),
        "edges": int(out[5]),
        "from_snapshot": bool(int(out[6])),
    }


def bench_traversal(db: str, n_nodes: int, queries: int = 300) -> dict[str, float]:
    rng = random.Random(3)
    with cef.open(db, embedder=None) as kb:
        ctx_ms, hop3_ms, sizes = [], [], []
        g = kb.state.graph
        flt = g.edge_filter()
        for _ in range(queries):
            nid = f"n{rng.randrange(n_nodes)}"
            t = time.perf_counter()
            ctx = kb.extract_context(nid, depth=2, max_nodes=500)
            ctx_ms.append((time.perf_counter() - t) * 1000)
            sizes.append(len(ctx.related_nodes))
            t = time.perf_counter()
            g.expand([g.pos(nid)], 3, flt, max_nodes=1000)  # type: ignore[list-item]
            hop3_ms.append((time.perf_counter() - t) * 1000)
    return {
        "ctx_p50": pct(ctx_ms, 0.5),
        "ctx_p95": pct(ctx_ms, 0.95),
        "ctx_nodes": statistics.mean(sizes),
        "hop3_p50": pct(hop3_ms, 0.5),
        "hop3_p95": pct(hop3_ms, 0.95),
    }


def bench_search(tmp: Path, n_chunks: int, queries: int = 200) -> dict[str, float]:
    """Vector and BM25 at n_chunks: random unit vectors stand in for embeddings (search cost is the same)."""
    rng = np.random.default_rng(5)
    db = tmp / "chunks.db"

    class Fixed:  # precomputed vectors are passed on the chunks; the model only embeds the query
        name = "bench-random-384"
        dim = 384

        def embed(self, texts):  # type: ignore[no-untyped-def]
            return rng.standard_normal((len(texts), 384)).astype(np.float32)

        def embed_query(self, text):  # type: ignore[no-untyped-def]
            return rng.standard_normal(384).astype(np.float32)

    # text with a natural (Zipf) word distribution over a 30K-word vocabulary, like real passages
    vocab = WORDS + [_pseudo_word(i) for i in range(30_000)]
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()
    with cef.open(db, embedder=Fixed()) as kb:  # type: ignore[arg-type]
        for start in range(0, n_chunks, 20_000):
            chunks = []
            stop = min(n_chunks, start + 20_000)
            words = rng.choice(len(vocab), size=(stop - start, 60), p=p)
            for k, i in enumerate(range(start, stop)):
                vec = rng.standard_normal(384).astype(np.float32)
                text = " ".join(vocab[w] for w in words[k])
                chunks.append(Chunk(id=f"c{i}", content=text, embedding=vec.tolist()))
            kb.index_batch(Batch(chunks=chunks))
        vec_ms, bm_ms = [], []
        qv = rng.standard_normal((queries, 384)).astype(np.float32)
        for i in range(queries):
            t = time.perf_counter()
            kb.state.chunk_vectors.search(qv[i], 10)
            vec_ms.append((time.perf_counter() - t) * 1000)
            words = " ".join(vocab[w] for w in rng.choice(len(vocab), size=4, p=p))
            t = time.perf_counter()
            kb.state.store.search_text("chunk", words, 10)
            bm_ms.append((time.perf_counter() - t) * 1000)
    return {
        "vec_p50": pct(vec_ms, 0.5),
        "vec_p95": pct(vec_ms, 0.95),
        "bm25_p50": pct(bm_ms, 0.5),
        "bm25_p95": pct(bm_ms, 0.95),
    }


def bench_embedding(n: int = 1000) -> dict[str, float]:
    from cef.embed import get_default_embedder

    emb = get_default_embedder()
    emb.embed(["warm up"])
    texts = [" ".join(random.Random(i).choice(WORDS) for _ in range(12)) for i in range(n)]
    t = time.perf_counter()
    emb.embed(texts)
    return {"texts_per_s": n / (time.perf_counter() - t)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size by this")
    ap.add_argument("--skip-big", action="store_true", help="skip the 1M/5M reload graph")
    ap.add_argument("--skip-embedding", action="store_true")
    args = ap.parse_args()
    s = args.scale
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows: list[tuple[str, str, str]] = []
        mid = bench_indexing(tmp, int(100_000 * s), int(500_000 * s))
        rows.append(
            (
                f"index {mid['nodes']:,} nodes + {mid['edges']:,} edges",
                f"{mid['rate']:,.0f} items/s",
                "≥ 50,000/s",
            )
        )
        tr = bench_traversal(mid["db"], mid["nodes"])  # type: ignore[arg-type]
        rows.append(
            (
                "extract_context depth 2 (p50 / p95)",
                f"{tr['ctx_p50']:.2f} / {tr['ctx_p95']:.2f} ms (avg {tr['ctx_nodes']:.0f} nodes)",
                "p95 ≤ 5 ms",
            )
        )
        rows.append(
            (
                "3-hop expansion capped at 1,000 nodes (p50 / p95)",
                f"{tr['hop3_p50']:.2f} / {tr['hop3_p95']:.2f} ms",
                "",
            )
        )
        if not args.skip_big:
            big = bench_indexing(tmp, int(1_000_000 * s), int(5_000_000 * s))
            rows.append(
                (f"index {big['nodes']:,} + {big['edges']:,}", f"{big['rate']:,.0f} items/s", "≥ 50,000/s")
            )
            for snap in (False, True):  # the full load writes the snapshot the second open uses
                rl = bench_reload(big["db"], snapshot=snap)  # type: ignore[arg-type]
                how = "graph snapshot + replay" if rl["from_snapshot"] else "full load from SQLite rows"
                rows.append(
                    (
                        f"open {rl['nodes']:,} nodes / {rl['edges']:,} edges: {how}",
                        f"{rl['seconds']:.1f} s, RSS {rl['rss_mb']:,.0f} MB (peak {rl['peak_mb']:,.0f} MB)",
                        "≤ 30 s, ≤ 3 GB",
                    )
                )
            for leftover in Path(tmp).glob(Path(big["db"]).name + "*"):  # type: ignore[arg-type]
                leftover.unlink()
        gc.collect()
        se = bench_search(tmp, int(100_000 * s))
        rows.append(
            (
                f"exact vector top-10 at {int(100_000 * s):,} chunks (p50 / p95)",
                f"{se['vec_p50']:.2f} / {se['vec_p95']:.2f} ms",
                "p95 ≤ 20 ms",
            )
        )
        rows.append(
            (
                f"BM25 (FTS5) top-10 at {int(100_000 * s):,} chunks (p50 / p95)",
                f"{se['bm25_p50']:.2f} / {se['bm25_p95']:.2f} ms",
                "p95 ≤ 20 ms",
            )
        )
        if not args.skip_embedding:
            em = bench_embedding()
            rows.append(("embedding throughput (MiniLM, CPU)", f"{em['texts_per_s']:,.0f} texts/s", ""))
    width = max(len(r[0]) for r in rows)
    print(f"| {'measure':{width}} | result | target |")
    print(f"|{'-' * (width + 2)}|--------|--------|")
    for name, value, target in rows:
        print(f"| {name:{width}} | {value} | {target} |")


if __name__ == "__main__":
    main()
