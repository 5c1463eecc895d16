"""REST ``POST /api/v1/search`` throughput and latency with concurrent clients (prints a table).

    python bench/bench_http.py                          # clinical example + a 100K-chunk graph
    python bench/bench_http.py --chunks 20000 --duration 5
    python bench/bench_http.py --skip-large              # the example graph only
    python bench/bench_http.py --skip-large --runtime torch onnx --concurrency 4   # each embedder runtime

Starts ``cef serve http`` in a subprocess on a loopback port (the real model
for query embeddings), then drives it with an httpx async load generator:
``--concurrency`` clients send searches back to back for ``--duration``
seconds. Each graph is measured with the search cache off (every request runs
the engine) and on (a small repeated query set: what a cache hit costs).

The 100K-chunk graph is generated: 10K named nodes in 5 relation types, random
text chunks linked to them, and random unit vectors passed as precomputed
chunk embeddings (so building it needs no model; the server still embeds each
query with the real model). Client and server share the machine's cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import yaml

import cef
from cef import Batch, Chunk, Edge, Node, RelationType

ROOT = Path(__file__).resolve().parent.parent
CLINICAL = ROOT / "examples" / "clinical" / "graph.yaml"
CEF = str(Path(sys.executable).parent / "cef")

CLINICAL_QUERIES = [
    "Which medications interact with warfarin?",
    "What conditions does John Miller have?",
    "Is metformin safe with chronic kidney disease?",
    "How is atrial fibrillation treated?",
    "Which doctor specializes in cardiology?",
    "What are the risks of ibuprofen for patients on anticoagulants?",
    "Type 2 diabetes management guideline",
    "What does Amira Haddad take for hypertension?",
    "amiodarone interactions",
    "blood thinner bleeding risk",
    "kidney function and NSAIDs",
    "Lucas Brandt chronic kidney disease",
]

SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ren",
    "tor",
    "vak",
    "sel",
    "dun",
    "pha",
    "ric",
    "om",
    "zet",
    "bri",
    "nal",
    "gus",
    "ter",
]
FILLER = [
    "the",
    "of",
    "and",
    "study",
    "reports",
    "patients",
    "effect",
    "dose",
    "risk",
    "increase",
    "reduce",
    "treatment",
    "outcome",
    "trial",
    "cohort",
    "signal",
    "pathway",
    "receptor",
    "marker",
    "level",
    "response",
    "therapy",
    "adverse",
    "event",
    "clinical",
    "baseline",
    "follow",
]


def name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize() + f" {rng.randint(1, 99)}"


def build_clinical(path: Path) -> None:
    from cef.embed import get_default_embedder

    with cef.open(path, embedder=get_default_embedder()) as kb:
        kb.index_batch(Batch.model_validate(yaml.safe_load(CLINICAL.read_text())))


def build_large(path: Path, n_chunks: int, n_nodes: int, seed: int = 7) -> tuple[list[str], float]:
    """A generated graph with ``n_chunks`` chunks; returns queries that name its nodes, and build seconds."""
    from cef.embed import get_default_embedder

    rng = random.Random(seed)
    vecs = np.random.default_rng(seed)
    t0 = time.perf_counter()
    names = [name(rng) for _ in range(n_nodes)]
    relations = ["RELATES_TO", "PART_OF", "CAUSES", "TREATS", "CITES"]
    labels = ["Entity", "Concept", "Drug", "Disease", "Paper"]
    with cef.open(path, embedder=get_default_embedder(), embed_nodes="none") as kb:
        kb.index_batch(
            Batch(
                relation_types=[RelationType(name=r) for r in relations],
                nodes=[
                    Node(id=f"n{i}", label=labels[i % len(labels)], properties={"name": n})
                    for i, n in enumerate(names)
                ],
            )
        )
        edges = [
            Edge(relation_type=rng.choice(relations), source=f"n{i}", target=f"n{rng.randrange(n_nodes)}")
            for i in range(n_nodes)
            for _ in range(3)
        ]
        kb.index_batch(Batch(edges=[e for e in edges if e.source != e.target]))
        step = 10_000
        for start in range(0, n_chunks, step):
            count = min(step, n_chunks - start)
            emb = vecs.standard_normal((count, 384)).astype(np.float32)
            emb /= np.linalg.norm(emb, axis=1, keepdims=True)
            chunks = []
            for j in range(count):
                owner = rng.randrange(n_nodes)
                words = [rng.choice(FILLER) for _ in range(rng.randint(25, 50))]
                words.insert(rng.randrange(len(words)), names[owner])
                chunks.append(
                    Chunk(
                        id=f"c{start + j}",
                        content=" ".join(words),
                        node_id=f"n{owner}",
                        embedding=emb[j].tolist(),
                    )
                )
            kb.index_batch(Batch(chunks=chunks))
    queries = [
        f"{rng.choice(FILLER)} {names[rng.randrange(n_nodes)]} {rng.choice(FILLER)}" for _ in range(400)
    ]
    return queries, time.perf_counter() - t0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def tree(pid: int) -> list[int]:
    """``pid`` and its child processes (a server's workers)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return [pid, *kids]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its children (all their threads) so far."""
    total = 0.0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            continue
    return total


class Server:
    def __init__(self, db: Path, *, cache: bool, runtime: str = "auto", workers: int = 1) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "CEF_CACHE_TTL_SECONDS": "300" if cache else "0",
            "CEF_API_KEYS": "bench-key-0123:read",
            "HF_HUB_OFFLINE": "1",
            "CEF_EMBEDDER__RUNTIME": runtime,
        }
        self.proc = subprocess.Popen(
            [CEF, "serve", "http", "--db", str(db), "--port", str(self.port), "--workers", str(workers)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 600
        while True:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()  # never leave a half-started server behind
                self.proc.wait(timeout=20)
                raise RuntimeError("cef serve http did not start")
            time.sleep(0.2)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


@dataclass
class Run:
    requests: int
    errors: int
    seconds: float
    latencies: list[float]
    timed_out: int = 0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    def pct(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))] * 1000


async def load(url: str, queries: list[str], concurrency: int, duration: float, depth: int) -> Run:
    latencies: list[float] = []
    errors = 0
    timed_out = 0
    counter = 0
    stop = time.perf_counter() + duration
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        base_url=url, timeout=60, limits=limits, headers={"X-API-Key": "bench-key-0123"}
    ) as client:

        async def worker() -> None:
            nonlocal errors, counter, timed_out
            while time.perf_counter() < stop:
                q = queries[counter % len(queries)]
                counter += 1
                t = time.perf_counter()
                r = await client.post("/api/v1/search", json={"query": q, "limit": 10, "graph_depth": depth})
                if r.status_code == 200:
                    latencies.append(time.perf_counter() - t)
                    timed_out += b'"timed_out":true' in r.content
                else:
                    errors += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - t0
    return Run(len(latencies) + errors, errors, seconds, latencies, timed_out)


def measure(
    label: str, db: Path, queries: list[str], args: argparse.Namespace, rows: list[list[str]]
) -> None:
    plan = [
        (r, c, w)
        for r in args.runtime
        for c in (False, True)
        for w in args.workers
        if c or not args.cached_only
    ]
    for runtime, cache, workers in plan:
        if cache and args.uncached_only:
            continue
        server = Server(db, cache=cache, runtime=runtime, workers=workers)
        try:
            qs = queries[:8] if cache else queries
            asyncio.run(load(server.url, qs, 2 * workers, 2.0 * workers, args.depth))  # warm-up, each process
            for c in args.concurrency:
                cpu0, client0 = cpu_seconds(server.proc.pid), time.process_time()
                run = asyncio.run(load(server.url, qs, c, args.duration, args.depth))
                server_ms = (cpu_seconds(server.proc.pid) - cpu0) / max(run.requests, 1) * 1000
                client_ms = (time.process_time() - client0) / max(run.requests, 1) * 1000
                rows.append(
                    [
                        label,
                        runtime,
                        str(workers),
                        "on" if cache else "off",
                        str(c),
                        f"{run.rps:.1f}",
                        f"{run.pct(50):.1f}",
                        f"{run.pct(95):.1f}",
                        f"{run.pct(99):.1f}",
                        str(run.errors),
                        str(run.timed_out),
                        f"{sum(rss_mb(p) for p in tree(server.proc.pid)):.0f}",
                        f"{server_ms:.1f}",
                        f"{client_ms:.1f}",
                        f"{(os.cpu_count() or 1) * 1000 / (server_ms + client_ms):.0f}",
                    ]
                )
                print("  " + " | ".join(rows[-1]), flush=True)
        finally:
            server.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 32])
    ap.add_argument(
        "--runtime", nargs="+", default=["auto"], choices=["auto", "onnx", "torch"], help="embedder runtimes"
    )
    ap.add_argument(
        "--workers", type=int, nargs="+", default=[1], help="server processes (cef serve http --workers)"
    )
    ap.add_argument("--uncached-only", action="store_true", help="skip the cache-on rows")
    ap.add_argument("--cached-only", action="store_true", help="skip the cache-off rows")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per measurement")
    ap.add_argument("--depth", type=int, default=2, help="graph_depth of every search")
    ap.add_argument("--skip-large", action="store_true")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cef-bench-http-"))
    rows: list[list[str]] = []
    load1 = os.getloadavg()[0]
    print(
        f"cef REST search benchmark on {os.cpu_count()} cores (client and server share them); load {load1:.1f}"
    )
    print(
        "  graph | embedder | workers | cache | clients | req/s | p50 ms | p95 ms | p99 ms | errors | timed out "
        "| server RSS MB | server CPU ms/req | client CPU ms/req | req/s the CPUs allow"
    )
    try:
        clinical = work / "clinical.db"
        build_clinical(clinical)
        measure("clinical (18 chunks)", clinical, CLINICAL_QUERIES, args, rows)
        if not args.skip_large:
            large = work / "large.db"
            queries, seconds = build_large(large, args.chunks, args.nodes)
            print(f"  (built {args.chunks} chunks / {args.nodes} nodes in {seconds:.0f} s)", flush=True)
            measure(f"generated ({args.chunks // 1000}K chunks)", large, queries, args, rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print()
    header = [
        "graph", "embedder", "workers", "cache", "clients", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors", "timed out",
        "server RSS MB", "server CPU ms/req", "client CPU ms/req", "req/s the CPUs allow",
    ]  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\nload average before / after: {load1:.1f} / {os.getloadavg()[0]:.1f}")
    print(
        f"POST /api/v1/search, limit 10, graph_depth {args.depth}, {args.duration:.0f} s per row; "
        "cache off: every request runs the engine; cache on: 8 repeated queries (hits after the first); "
        "CPU ms/req: CPU seconds of the server process (all threads) and of this load generator over the "
        "requests answered; req/s the CPUs allow: cores × 1000 / (server + client CPU ms per request), "
        "the rate of an otherwise idle machine if the work kept both cores busy"
    )


if __name__ == "__main__":
    main()
