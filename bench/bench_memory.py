"""Universal memory figures on a generated 100K-node memory with bi-temporal edges (prints a table).

    python bench/bench_memory.py                   # 100K nodes, 200 queries, 300 observations
    python bench/bench_memory.py --nodes 20000     # a quicker look
    python bench/bench_memory.py --embedder real   # embed every node with the real model (slow)

The memory: 100 scopes (users), each with a self node, people, projects and
events, plus unscoped classes; about three edges per node from the universal
vocabulary, valid from a random day of the last two years; a fifth of them
superseded (the known version marked ``superseded_at``, a closed copy
recorded later), so traversal filters both validity and knowledge time.

``retrieve_context`` latency is reported with and without the query
embedding (the memory times its embedding calls separately; the model runs
once per distinct text and is cached). ``update(observation)`` throughput is
measured on observations about named nodes, half of them repeating or
contradicting an earlier one.

Node vectors: ``--embedder composed`` (default) embeds every distinct word
with the real all-MiniLM-L6-v2 once and gives a text the normalized mean of
its words' vectors — the same 384-dimension exact search work as real
vectors at a fraction of the build time; ``real`` embeds each text with the
model; ``none`` runs without vectors (names, graph and BM25 only).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import cef
from cef import Batch, Edge, Node
from cef.memory import RetrievalConstraints, SemanticMemory
from cef.memory.temporal import supersession

if TYPE_CHECKING:
    from cef.embed.base import Embedder

FIRST = tuple(
    [
        "Ada",
        "Ben",
        "Cara",
        "Dev",
        "Eli",
        "Fay",
        "Gus",
        "Hana",
        "Ivo",
        "Jun",
        "Kai",
        "Lea",
        "Max",
        "Nia",
        "Oto",
        "Pia",
        "Quin",
        "Rae",
        "Sol",
        "Tao",
        "Uma",
        "Vic",
        "Wes",
        "Xia",
        "Yan",
        "Zed",
    ]
)
LAST = tuple(
    [
        "Stone",
        "Reed",
        "Vale",
        "Frost",
        "Hale",
        "Lowe",
        "Marsh",
        "Pike",
        "Quill",
        "Rowe",
        "Shaw",
        "Thorn",
        "Urban",
        "Voss",
        "Wilde",
        "York",
        "Zane",
        "Brook",
        "Clay",
        "Dunn",
    ]
)
ADJ = tuple(
    [
        "silent",
        "amber",
        "rapid",
        "hollow",
        "bright",
        "northern",
        "quiet",
        "copper",
        "velvet",
        "hidden",
        "golden",
        "lunar",
        "crimson",
        "fading",
        "open",
    ]
)
NOUN = tuple(
    [
        "harbor",
        "ledger",
        "engine",
        "garden",
        "bridge",
        "archive",
        "signal",
        "compass",
        "lantern",
        "orchard",
        "beacon",
        "circuit",
        "atlas",
        "prism",
        "canal",
    ]
)
TOPIC = tuple(
    [
        "budget",
        "launch",
        "migration",
        "audit",
        "hiring",
        "roadmap",
        "outage",
        "security",
        "pricing",
        "onboarding",
        "research",
        "design",
    ]
)
RELS_PERSON = ["knows", "works_with"]
RELS_ITEM = ["owns", "related_to", "depends_on"]
NOW = datetime(2025, 6, 20, 12, tzinfo=UTC)


class TimedEmbedder:
    """Counts the seconds spent embedding (to report figures with and without the model)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed(self, texts: Sequence[str], *, progress: object = None) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return np.asarray(self.inner.embed(texts))
        finally:
            self.seconds += time.perf_counter() - t0

    def embed_query(self, text: str) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return np.asarray(self.inner.embed_query(text))
        finally:
            self.seconds += time.perf_counter() - t0


class ComposedEmbedder:
    """Texts as the normalized mean of their words' real MiniLM vectors (each word embedded once)."""

    name = "minilm-composed-words"
    dim = 384

    def __init__(self) -> None:
        from cef.embed import get_default_embedder

        self.model = get_default_embedder()
        self.words: dict[str, np.ndarray] = {}
        self.model_seconds = 0.0

    def _word_vectors(self, words: Sequence[str]) -> None:
        missing = sorted({w for w in words if w not in self.words})
        if missing:
            t0 = time.perf_counter()
            vecs = self.model.embed(missing)
            self.model_seconds += time.perf_counter() - t0
            self.words.update(zip(missing, vecs, strict=True))

    def embed(self, texts: Sequence[str], *, progress: object = None) -> np.ndarray:
        tokenized = [[w for w in t.lower().replace(":", " ").split() if w] or ["empty"] for t in texts]
        self._word_vectors([w for ws in tokenized for w in ws])
        out = np.stack([np.mean([self.words[w] for w in ws], axis=0) for ws in tokenized]).astype(np.float32)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def build(memory: SemanticMemory, n_nodes: int, rng: random.Random) -> tuple[int, int, dict[str, list[str]]]:
    """Write the generated memory in batches; returns (nodes, edges, names per scope)."""
    n_scopes = 100
    per_scope = max(10, (n_nodes - 50) // n_scopes)
    classes = [Node(id=f"class:{t}", label="class", properties={"name": f"{t.title()} work"}) for t in TOPIC]
    classes += [
        Node(id=f"class:{n}", label="class", properties={"name": f"{n.title()} assets"}) for n in NOUN
    ]
    memory.kb.index_batch(Batch(nodes=classes))
    total_nodes, total_edges = len(classes), 0
    names: dict[str, list[str]] = {}
    two_years = 730
    for s in range(n_scopes):
        scope = f"user:{s:03d}"
        nodes: list[Node] = [
            Node(
                id=memory.self_id(scope), label="instance", properties={"name": f"Owner {s:03d}"}, scope=scope
            )
        ]
        people, items, events = [], [], []
        for i in range(per_scope - 1):
            kind = i % 3
            if kind == 0:
                nid, name = f"{scope}:p{i}", f"{rng.choice(FIRST)} {rng.choice(LAST)} {i}"
                people.append(nid)
            elif kind == 1:
                nid, name = f"{scope}:i{i}", f"{rng.choice(ADJ).title()} {rng.choice(NOUN).title()} {i}"
                items.append(nid)
            else:
                nid, name = f"{scope}:e{i}", f"{rng.choice(TOPIC).title()} review {i}"
                events.append(nid)
            nodes.append(
                Node(
                    id=nid, label="instance" if kind < 2 else "event", properties={"name": name}, scope=scope
                )
            )
        names[scope] = [n.properties["name"] for n in nodes[1:]]
        edges: list[Edge] = []

        def edge(rel: str, a: str, b: str, scope: str = scope, edges: list[Edge] = edges) -> None:
            start = NOW - timedelta(days=rng.uniform(30, two_years))
            e = Edge(
                relation_type=rel,
                source=a,
                target=b,
                scope=scope,
                valid_from=start,
                recorded_at=start + timedelta(hours=rng.uniform(0, 48)),
                confidence=rng.choice([1.0, 1.0, 0.9, 0.8, 0.6]),
            )
            if rng.random() < 0.2:  # superseded later: the known version plus its closed copy
                at = e.recorded_at + timedelta(days=rng.uniform(1, 25))
                marked, closed = supersession(
                    e, at=min(at, NOW), valid_to=min(at, NOW) - timedelta(days=rng.uniform(0, 5))
                )
                edges.extend([marked, closed])
            else:
                edges.append(e)

        me = nodes[0].id
        for p in people:
            if rng.random() < 0.3:
                edge("knows", me, p)
            edge(rng.choice(RELS_PERSON), p, rng.choice(people))
            edge(rng.choice(RELS_ITEM), p, rng.choice(items))
            edge("member_of", p, rng.choice(classes).id)
        for it in items:
            edge("instance_of", it, rng.choice(classes).id)
            edge(rng.choice(RELS_ITEM), it, rng.choice(items))
            edge("located_in", it, rng.choice(items))
        for ev in events:
            edge("related_to", ev, rng.choice(items))
            edge("knows", rng.choice(people), ev)
            edge("before", ev, rng.choice(events))
        edges = [e for e in edges if e.source != e.target]
        memory.kb.index_batch(Batch(nodes=nodes, edges=edges))
        total_nodes += len(nodes)
        total_edges += len(edges)
    return total_nodes, total_edges, names


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[k]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--observations", type=int, default=300)
    ap.add_argument("--embedder", choices=["composed", "real", "none"], default="composed")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", type=Path, default=None, help="keep the generated memory in this folder")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)

    embedder: ComposedEmbedder | Embedder | None
    if args.embedder == "composed":
        embedder = ComposedEmbedder()
    elif args.embedder == "real":
        from cef.embed import get_default_embedder

        embedder = get_default_embedder()
    else:
        embedder = None
    timed = TimedEmbedder(embedder) if embedder is not None else None

    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as d:
        folder = args.keep or Path(d)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "memory.db"
        if path.exists():
            sys.exit(f"{path} exists: remove it first (the bench builds a fresh memory)")
        kb = cef.open(path, embedder=timed)
        memory = SemanticMemory(kb, clock=lambda: NOW, extractor=None, owns_kb=True)
        t0 = time.perf_counter()
        n_nodes, n_edges, names = build(memory, args.nodes, rng)
        build_s = time.perf_counter() - t0
        rows.append(("memory", f"{n_nodes:,} nodes, {n_edges:,} edges (about 20% superseded), 100 scopes"))
        rows.append(("build (index_batch, embeddings included)", f"{build_s:.1f} s"))
        if isinstance(embedder, ComposedEmbedder):
            rows.append(
                (
                    "  of which the model on distinct words",
                    f"{embedder.model_seconds:.1f} s ({len(embedder.words)} words)",
                )
            )

        t0 = time.perf_counter()
        memory.close()
        kb = cef.open(path, embedder=timed)
        memory = SemanticMemory(kb, clock=lambda: NOW, extractor=None, owns_kb=True)
        open_s = time.perf_counter() - t0
        rows.append(("reopen (graph + vectors + registry)", f"{open_s:.2f} s"))
        t0 = time.perf_counter()
        memory.names.find("warm up", None)
        rows.append(("name index build (first query of a process)", f"{time.perf_counter() - t0:.2f} s"))

        scopes = sorted(names)
        templates = [
            "What does {a} know about {b}, and can they be trusted?",
            "Who works with {a} and what changed recently?",
            "What is {b} related to and who owns it?",
            "history of {a}",
            "What did {a} depend on as of 2025-01-15?",
        ]
        queries = []
        for _ in range(args.queries):
            scope = rng.choice(scopes)
            a, b = rng.sample(names[scope], 2)
            queries.append((rng.choice(templates).format(a=a, b=b), scope))
        # warm the caches (embedding of each query text, token counter) the first time round
        for q, scope in queries[:5]:
            memory.retrieve_context(q, scope=scope)
        totals, no_embed, stages = (
            [],
            [],
            {k: list[float]() for k in ("understand", "anchors", "expand", "assemble", "pack")},
        )
        facts = []
        digest = hashlib.sha256()  # the facts of every bundle, in order: compares two runs' results
        for q, scope in queries:
            memory.embed_query(q)  # the query's embedding happens before the clock starts
            t0 = time.perf_counter()
            bundle = memory.retrieve_context(
                q, RetrievalConstraints(scope=scope, max_tokens=4000, max_nodes=100)
            )
            wall = (time.perf_counter() - t0) * 1000
            totals.append(wall)
            no_embed.append(wall - bundle.timings_ms.get("embed", 0.0))
            for k in stages:
                stages[k].append(bundle.timings_ms.get(k, 0.0))
            facts.append(len(bundle.facts()))
            digest.update((" ".join(f.node_id for f in bundle.facts()) + "\n").encode())
        rows.append(
            (
                f"retrieve_context ({len(queries)} queries, 4000 tokens, 100 nodes)",
                f"p50 {pct(no_embed, 50):.1f} ms · p95 {pct(no_embed, 95):.1f} ms · p99 {pct(no_embed, 99):.1f} ms",
            )
        )
        rows.append(
            ("  per stage p50 (ms)", " · ".join(f"{k} {statistics.median(v):.1f}" for k, v in stages.items()))
        )
        rows.append(("  facts per bundle (median)", f"{statistics.median(facts):.0f}"))
        rows.append(("  facts of every bundle (sha256 of their node ids)", digest.hexdigest()[:16]))

        # a pool of subjects small enough that observations repeat, contradict and supersede each other
        pool = [(scope, rng.choice(names[scope])) for scope in rng.sample(scopes, 10) for _ in range(5)]
        claims = [
            "is reliable",
            "is not reliable",
            "leads the platform team",
            "no longer leads the platform team",
            "'s office is in Lisbon",
            "'s office is in Oslo",
        ]
        obs = []
        for i in range(args.observations):
            scope, who = rng.choice(pool)
            claim = rng.choice(claims)
            obs.append((f"{who}{'' if claim.startswith(chr(39)) else ' '}{claim}", scope, i))
        t0 = time.perf_counter()
        embed_before = timed.seconds if timed is not None else 0.0
        actions: dict[str, int] = {}
        for text, scope, i in obs:
            r = memory.observe(
                text, "observed" if i % 3 == 0 else "user_stated", scope=scope, at=NOW + timedelta(seconds=i)
            )
            actions[r.action] = actions.get(r.action, 0) + 1
        elapsed = time.perf_counter() - t0
        embed_s = (timed.seconds if timed is not None else 0.0) - embed_before
        rows.append(
            (
                f"update(observation) ({len(obs)} observations)",
                f"{len(obs) / elapsed:.0f} /s, {len(obs) / max(elapsed - embed_s, 1e-9):.0f} /s without embedding "
                f"({', '.join(f'{k} {v}' for k, v in sorted(actions.items()))})",
            )
        )
        rows.append(("peak RSS", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"))
        memory.close()

    width = max(len(k) for k, _ in rows)
    print(f"bench_memory: embedder={args.embedder}, python {sys.version.split()[0]}")
    print(f"{'measure'.ljust(width)} | result")
    print(f"{'-' * width}-|-{'-' * 60}")
    for k, v in rows:
        print(f"{k.ljust(width)} | {v}")


if __name__ == "__main__":
    main()
