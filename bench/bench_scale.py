#!/usr/bin/env python3
"""The default route at scale: a generated text graph of 20K / 100K (/ 1M) passages, one command.

    python bench/bench_scale.py                     # 20K and 100K passages (about 10 minutes)
    python bench/bench_scale.py --sizes 20000       # one size
    python bench/bench_scale.py --million           # also 1M passages (about an hour, ~8 GB of disk)
    python bench/bench_scale.py --curated           # also a curated typed graph (1M nodes / 5M edges)
    python bench/bench_scale.py --readme bench/README.md   # rewrite its "Scale" section
    python bench/bench_scale.py --store-dir DIR --generate-only   # generate once (kept in DIR) ...
    python bench/bench_scale.py --store-dir DIR                   # ... then measure as often as needed

**Text graph** (what ingest with the entity enricher makes, written directly
with ``index_batch``): passages ``c<i>`` held by ``Passage`` nodes, entities
(half as many as passages) with generated two-word names, each passage titled
by one entity (``MENTIONS`` weight 4, ``title: true``) and mentioning four more
drawn from a Zipf distribution (s = 1), so a few entities are mentioned by a
large share of the passages. Chunk vectors are cheap but not random: each
entity has a 384-d direction and a passage's vector is its title's
direction twice plus its mentions' plus noise, so the question "How is A
related to B?" lands near the passages that mention A and B (what a real
embedding model does on a real corpus). Entity directions are not 384
independent random coordinates (an intrinsic dimension no embedding model
has, and the worst case for any ANN graph): each is a random point of a
32-d subspace plus an isotropic part of its own (norm 0.5), so the vectors
have a low intrinsic dimension, as sentence embeddings do. Node names are not embedded
(``embed_nodes="none"``); the default route does not read node vectors.

**Curated graph** (``--curated``): typed nodes and edges (five labels, eight
relation types), one chunk on every tenth node, no ``MENTIONS``: the default
route there is the chain after PPR.

After generation one process opens the store and builds the entity index
(what the first open and first query after an ingest do: the graph snapshot
and the entity index are written beside the store); every size is then
measured in a fresh process that opens the store (open time and RSS),
answers the same questions with each strategy, the default (``auto``) twice — query vectors given (embedding excluded) and the MiniLM model run on
each question as well (embedding included) — and compares the approximate PPR
ranking with exact PPR (power iteration to convergence) on the same seeds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import cef  # noqa: E402
from cef import Batch, Chunk, Edge, Node, RelationType  # noqa: E402
from cef.extract.normalize import normalize_name  # noqa: E402
from cef.schema.textgraph import MENTIONS, PASSAGE_LABEL, RELATION_TYPES, entity_id  # noqa: E402

DIM = 384
HEADING = "## Scale"
EMBEDDER_NAME = "bench-scale-384"
FILLER = [
    "the",
    "of",
    "and",
    "in",
    "was",
    "is",
    "for",
    "on",
    "by",
    "with",
    "as",
    "from",
    "at",
    "his",
    "her",
    "an",
    "which",
    "also",
    "county",
    "river",
    "album",
    "film",
    "season",
    "team",
    "school",
    "company",
    "station",
    "party",
    "war",
    "born",
    "played",
    "founded",
    "released",
    "directed",
    "located",
    "published",
    "married",
    "served",
]
SYLLABLES = [a + b for a in "bcdfghklmnprstvz" for b in "aeiou"] + ["ar", "el", "in", "or", "um", "en"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def entity_name(i: int) -> str:
    """A unique two-word name: ``Kaperu Sodin``."""

    def word(k: int, parts: int) -> str:
        out = []
        for _ in range(parts):
            k, r = divmod(k, len(SYLLABLES))
            out.append(SYLLABLES[r])
        return "".join(out).capitalize()

    n = len(SYLLABLES)
    return f"{word(i % (n * n), 2)} {word(i // (n * n), 3)}"


class BenchEmbedder:
    """Query vectors from a table the bench fills (the model is not run) — optionally running MiniLM too.

    ``model``: run the real default model on every question as well (its vector is
    thrown away, so the ranking is the same and only the time is added).
    """

    name = EMBEDDER_NAME
    dim = DIM

    def __init__(self, table: dict[str, np.ndarray] | None = None, model: Any = None) -> None:
        self.table = table or {}
        self.model = model

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, DIM), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        if self.model is not None:
            self.model.embed_query(text)
        return self._vec(text)

    def _vec(self, text: str) -> np.ndarray:
        v = self.table.get(text)
        if v is None:
            rng = np.random.default_rng(abs(hash(text)) % (2**32))
            v = rng.standard_normal(DIM).astype(np.float32)
            v /= np.linalg.norm(v)
        return v


# ----------------------------------------------------------------------------- generation
def _zipf(n: int, s: float = 1.0) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** s
    return p / p.sum()


#: intrinsic dimension of the generated entity directions (sentence embeddings of real text have a
#: low intrinsic dimension; 384 independent random coordinates would be unlike any embedding model's)
LATENT_DIM = 32
#: the share of an entity direction that is its own (isotropic noise over all 384 coordinates)
OWN_SHARE = 0.5


def entity_vectors(n_entities: int, seed: int = 11) -> np.ndarray:
    """Unit 384-d entity directions on a 32-d latent subspace, plus a smaller part of their own."""
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((LATENT_DIM, DIM), dtype=np.float32)
    v = rng.standard_normal((n_entities, LATENT_DIM), dtype=np.float32) @ basis
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    own = rng.standard_normal((n_entities, DIM), dtype=np.float32)
    own *= OWN_SHARE / np.sqrt(DIM)
    v += own
    del own
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def generate_text(
    db: Path, n_pass: int, questions: int, *, batch: int = 20_000, seed: int = 7, progress: Any = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Write the text graph; returns (counts and seconds spent in ``index_batch``, questions).

    A question names a passage's title entity and one entity it mentions; its
    vector is built like the passages' (the two directions plus noise).
    """
    rng = np.random.default_rng(seed)
    qrng = np.random.default_rng(seed + 1)
    chosen = set(qrng.choice(n_pass, size=min(questions, n_pass), replace=False).tolist())
    qs: list[dict[str, Any]] = []
    n_ent = max(2, n_pass // 2)
    evec = entity_vectors(n_ent)
    p = _zipf(n_ent)
    perm = rng.permutation(n_ent)  # which entities are frequent is unrelated to their number
    seen = np.zeros(n_ent, dtype=bool)
    spent = 0.0
    edges_made = 0
    with cef.open(db, embedder=BenchEmbedder(), embed_nodes="none") as kb:  # type: ignore[arg-type]
        kb.index_batch(Batch(relation_types=list(RELATION_TYPES)))
        for start in range(0, n_pass, batch):
            stop = min(n_pass, start + batch)
            m = stop - start
            titles = np.arange(start, stop) % n_ent
            ments = perm[rng.choice(n_ent, size=(m, 4), p=p)]
            noise = rng.standard_normal((m, DIM)).astype(np.float32) * 0.05
            vecs = 2 * evec[titles] + evec[ments].sum(axis=1) + noise
            nodes: list[Node] = []
            new_ents = np.unique(np.concatenate([titles, ments.ravel()]))
            new_ents = new_ents[~seen[new_ents]]
            seen[new_ents] = True
            for e in new_ents.tolist():
                name = entity_name(e)
                nodes.append(
                    Node(id=entity_id(normalize_name(name)), label="Entity", properties={"name": name})
                )
            edges: list[Edge] = []
            chunks: list[Chunk] = []
            for k in range(m):
                i = start + k
                title = entity_name(int(titles[k]))
                others = list(dict.fromkeys(int(x) for x in ments[k] if x != titles[k]))
                names = [entity_name(x) for x in others]
                if i in chosen and others:
                    q = f"How is {title} related to {names[0]}?"
                    qv = (
                        evec[titles[k]]
                        + evec[others[0]]
                        + qrng.standard_normal(DIM).astype(np.float32) * 0.05
                    )
                    qs.append(
                        {"question": q, "vector": (qv / np.linalg.norm(qv)).tolist(), "passage": f"c{i}"}
                    )
                words = [FILLER[int(w)] for w in rng.integers(0, len(FILLER), 30)]
                text = f"{title} {' '.join(words[:10])} {', '.join(names)} {' '.join(words[10:])}."
                holder = f"passage:c{i}"
                nodes.append(
                    Node(id=holder, label=PASSAGE_LABEL, properties={"name": title, "chunk_id": f"c{i}"})
                )
                chunks.append(
                    Chunk(
                        id=f"c{i}",
                        content=text,
                        node_id=holder,
                        metadata={"title": title},
                        embedding=vecs[k].tolist(),
                    )
                )
                for j, name in enumerate([title, *names]):
                    edges.append(
                        Edge(
                            id=f"m{i}_{j}",
                            relation_type=MENTIONS,
                            source=holder,
                            target=entity_id(normalize_name(name)),
                            weight=4.0 if j == 0 else 1.0,
                            properties={"title": j == 0, "mention": name, "chunk_id": f"c{i}"},
                        )
                    )
            edges_made += len(edges)
            t = time.perf_counter()
            kb.index_batch(Batch(nodes=nodes, edges=edges, chunks=chunks))
            spent += time.perf_counter() - t
            if progress is not None:
                progress(m)
    order = qrng.permutation(len(qs))
    made = {"passages": n_pass, "entities": int(seen.sum()), "mentions": edges_made, "index_s": spent}
    return made, [qs[i] for i in order]


CURATED_VECTOR_SEED = 17
CURATED_LABELS = ["Person", "Drug", "Condition", "Study", "Place"]
CURATED_RELS = ["TREATS", "CAUSES", "PART_OF", "LOCATED_IN", "AUTHORED", "STUDIES", "INTERACTS_WITH", "CITES"]


def generate_curated(db: Path, n_nodes: int, n_edges: int, *, seed: int = 5, progress: Any = None) -> dict:
    """A typed graph with names, a chunk on every tenth node, its vector a direction of
    :func:`entity_vectors` (realistic intrinsic dimension, as for the text graph)."""
    rng = np.random.default_rng(seed)
    chunk_vecs = entity_vectors(n_nodes // 10 + 1, seed=CURATED_VECTOR_SEED)
    spent = 0.0
    with cef.open(db, embedder=BenchEmbedder(), embed_nodes="none") as kb:  # type: ignore[arg-type]
        kb.index_batch(Batch(relation_types=[RelationType(name=r) for r in CURATED_RELS]))
        step = 50_000
        for start in range(0, n_nodes, step):
            stop = min(n_nodes, start + step)
            nodes = [
                Node(id=f"n{i}", label=CURATED_LABELS[i % 5], properties={"name": entity_name(i)})
                for i in range(start, stop)
            ]
            chunks = [
                Chunk(
                    id=f"k{i}",
                    content=f"{entity_name(i)} {' '.join(FILLER[j] for j in rng.integers(0, len(FILLER), 20))}",
                    node_id=f"n{i}",
                    embedding=chunk_vecs[i // 10].tolist(),
                )
                for i in range(start, stop)
                if i % 10 == 0
            ]
            t = time.perf_counter()
            kb.index_batch(Batch(nodes=nodes, chunks=chunks))
            spent += time.perf_counter() - t
            if progress is not None:
                progress(stop - start)
        made = 0
        per = 250_000
        while made < n_edges:
            k = min(per, n_edges - made)
            src = rng.integers(0, n_nodes, k)
            dst = rng.integers(0, n_nodes, k)
            rel = rng.integers(0, len(CURATED_RELS), k)
            edges = [
                Edge(id=f"e{made + j}", relation_type=CURATED_RELS[r], source=f"n{s}", target=f"n{d}")
                for j, (s, d, r) in enumerate(zip(src.tolist(), dst.tolist(), rel.tolist(), strict=True))
            ]
            t = time.perf_counter()
            kb.index_batch(Batch(edges=edges))
            spent += time.perf_counter() - t
            made += k
            if progress is not None:
                progress(k)
    return {"nodes": n_nodes, "edges": n_edges, "index_s": spent}


def curated_questions(n_nodes: int, count: int, seed: int = 9) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    chunk_vecs = entity_vectors(n_nodes // 10 + 1, seed=CURATED_VECTOR_SEED)
    out = []
    for i in rng.choice(n_nodes, size=count, replace=False).tolist():
        # near the chunk of the node's group of ten (the question asks about the graph's content)
        v = chunk_vecs[i // 10] + rng.standard_normal(DIM).astype(np.float32) * 0.05
        out.append({"question": f"What treats {entity_name(i)}?", "vector": (v / np.linalg.norm(v)).tolist()})
    return out


# ----------------------------------------------------------------------------- measuring (child process)
def _status(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def ppr_agreement(kb: Any, questions: int, seed: int = 13) -> dict[str, float]:
    """Approximate vs exact PPR on recipe-like seeds: recall of the exact top 10 passages, and times."""
    from cef.retrieve.entities import entity_index
    from cef.retrieve.presets import PPRSettings

    st = kb.state
    index = entity_index(st)
    g = st.graph
    settings = PPRSettings()
    rng = np.random.default_rng(seed)
    ents = np.flatnonzero(index.df > 0)
    recalls, t_exact, t_push, touched = [], [], [], []
    n_pass = len(index.passages)
    for _ in range(questions):
        seeds: dict[int, float] = {}
        picked = rng.choice(ents, size=2, replace=False).tolist()
        w = [math.log(1.0 + n_pass / max(float(index.df[e]), 1.0)) for e in picked]
        for e, x in zip(picked, w, strict=True):
            seeds[e] = x / sum(w)
        for pidx in rng.choice(n_pass, size=5, replace=False).tolist():
            seeds[int(index.passages[pidx])] = 0.1
        t = time.perf_counter()
        exact = g.personalized_pagerank(
            seeds, damping=settings.damping, iterations=200, tol=1e-12, matrix=index.matrix
        )
        t_exact.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        approx = index_ppr(index, seeds, settings)
        t_push.append((time.perf_counter() - t) * 1000)
        touched.append(int(np.count_nonzero(approx)))
        top_exact = set(np.argsort(-exact[index.passages], kind="stable")[:10].tolist())
        top_push = set(np.argsort(-approx[index.passages], kind="stable")[:10].tolist())
        recalls.append(len(top_exact & top_push) / 10)
    return {
        "recall10": float(np.mean(recalls)),
        "min_recall10": float(np.min(recalls)),
        "exact_p50": pct(t_exact, 0.5),
        "push_p50": pct(t_push, 0.5),
        "push_p95": pct(t_push, 0.95),
        "touched_p50": pct([float(x) for x in touched], 0.5),
    }


def index_ppr(index: Any, seeds: dict[int, float], settings: Any) -> np.ndarray:
    """The graph ranking ``ppr_search`` uses, on given seeds (a dense score per node)."""
    from cef.retrieve import ppr

    return ppr.passage_ppr(index, seeds, settings)  # type: ignore[attr-defined,no-any-return]


def measure(
    db: str, questions_path: str, strategies: list[str], queries: int, agreement: int
) -> dict[str, Any]:
    """Run in a fresh process: open, warm up, then every strategy over the same questions."""
    from rich.progress import Progress

    from cef.model import GraphQuery, SearchStrategy

    qs = json.loads(Path(questions_path).read_text())[:queries]
    table = {q["question"]: np.asarray(q["vector"], dtype=np.float32) for q in qs}
    emb = BenchEmbedder(table)
    base = _status("VmRSS:")
    t = time.perf_counter()
    kb = cef.open(db, embedder=emb, embed_nodes="none")  # type: ignore[arg-type]
    out: dict[str, Any] = {"open_s": time.perf_counter() - t, "open_rss": _status("VmRSS:"), "base_rss": base}
    out["counts"] = kb.state.store.counts()
    t = time.perf_counter()
    kb.retrieve(GraphQuery(query=qs[0]["question"], strategy=SearchStrategy.AUTO, top_k=10))
    out["first_query_s"] = time.perf_counter() - t
    out["warm_rss"] = _status("VmRSS:")
    # then a warm engine on a warm machine: the store's files are read once (into the OS page cache, as
    # a server that has answered for a while has them), so that the first strategy measured does
    # not pay for disk reads the later ones do not
    t = time.perf_counter()
    for f in sorted(Path(db).parent.glob(Path(db).name + "*")):
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    page_cache_s = time.perf_counter() - t
    out["page_cache_s"] = page_cache_s
    runs: list[tuple[str, str, Any]] = [(s, s, None) for s in strategies]
    if "auto" in strategies:
        from cef.embed import get_default_embedder

        model = get_default_embedder()
        model.embed_query("warm up")
        runs.append(("auto + query embedding", "auto", model))
    rows: dict[str, Any] = {}
    with Progress(transient=True) as bar:
        for label, strat, model in runs:
            task = bar.add_task(f"{label:<24}", total=len(qs))
            emb.model = model
            times, cpu, hits, answered = [], [], 0, {}
            for q in qs:
                t, c = time.perf_counter(), time.thread_time()
                res = kb.retrieve(GraphQuery(query=q["question"], strategy=SearchStrategy(strat), top_k=10))
                times.append((time.perf_counter() - t) * 1000)
                cpu.append((time.thread_time() - c) * 1000)
                ids = [r.chunk.id for r in res.results]
                hits += int(q.get("passage") in ids)
                answered[res.strategy.value] = answered.get(res.strategy.value, 0) + 1
                bar.advance(task)
            rows[label] = {
                "p50": pct(times, 0.5),
                "p95": pct(times, 0.95),
                "cpu_p50": pct(cpu, 0.5),
                "cpu_p95": pct(cpu, 0.95),
                "hit10": hits / len(qs) if "passage" in qs[0] else None,
                "answered": answered,
            }
    emb.model = None
    out["rows"] = rows
    out["ann"] = store_ann_recall(kb, [table[q["question"]] for q in qs])
    out["rss"] = _status("VmRSS:")
    out["peak_rss"] = _status("VmHWM:")
    if agreement:
        from cef.retrieve import ppr

        if hasattr(ppr, "passage_ppr") and ppr.entity_index(kb.state).has_mentions:
            out["agreement"] = ppr_agreement(kb, agreement)
    kb.close()
    return out


def store_ann_recall(kb: Any, vectors: list[np.ndarray], k: int = 10) -> dict[str, Any] | None:
    """The store's own chunk vector index (as opened: HNSW + exact re-rank) against an exact scan of
    the same rows: recall@k over the questions' vectors, and both latencies. None below the ANN threshold."""
    from cef.vectors.exact import ExactVectorIndex

    index = kb.state.chunk_vectors
    if not getattr(index, "approximate", False):
        return None
    recalls, t_ann, t_exact = [], [], []
    for v in vectors:
        t = time.perf_counter()
        got = {i for i, _ in index.search(v, k)}
        t_ann.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        truth = {i for i, _ in ExactVectorIndex.search(index, v, k)}
        t_exact.append((time.perf_counter() - t) * 1000)
        recalls.append(len(got & truth) / k)
    return {
        "recall": float(np.mean(recalls)),
        "min_recall": float(np.min(recalls)),
        "ann_p50": pct(t_ann, 0.5),
        "exact_p50": pct(t_exact, 0.5),
        "vectors": len(index),
    }


def vector_figures(n: int, dtypes: list[str], queries: int = 200, seed: int = 21) -> dict[str, Any]:
    """The ANN index against exact search on ``n`` passage-like vectors: build, p50/p95, recall@10, save/load."""
    from cef.vectors.ann import AnnVectorIndex, load_index, save_index
    from cef.vectors.exact import ExactVectorIndex

    rng = np.random.default_rng(seed)
    n_ent = max(2, n // 2)
    evec = entity_vectors(n_ent, seed=seed)
    titles = np.arange(n) % n_ent
    ments = rng.choice(n_ent, size=(n, 4), p=_zipf(n_ent))
    vecs = (
        2 * evec[titles] + evec[ments].sum(axis=1) + rng.standard_normal((n, DIM)).astype(np.float32) * 0.05
    )
    ids = [f"c{i}" for i in range(n)]
    pick = rng.integers(0, n, queries)
    qv = (
        evec[titles[pick]]
        + evec[ments[pick, 0]]
        + rng.standard_normal((queries, DIM)).astype(np.float32) * 0.05
    )
    exact = ExactVectorIndex(DIM, capacity=n)
    exact.upsert(ids, vecs)
    truth, kth, ex_ms = [], [], []
    for q in qv:
        t = time.perf_counter()
        hits = exact.search(q, 10)
        ex_ms.append((time.perf_counter() - t) * 1000)
        truth.append({i for i, _ in hits})
        kth.append(hits[-1][1])
    out: dict[str, Any] = {"n": n, "exact_p50": pct(ex_ms, 0.5), "exact_p95": pct(ex_ms, 0.95), "ann": {}}
    for dtype in dtypes:
        index = AnnVectorIndex(DIM, capacity=n, threshold=0, dtype=dtype)
        t = time.perf_counter()
        index.upsert(ids, vecs)
        build = time.perf_counter() - t
        ms, rec, srec = [], [], []
        for q, tr, tenth in zip(qv, truth, kth, strict=True):
            t = time.perf_counter()
            hits = index.search(q, 10)
            ms.append((time.perf_counter() - t) * 1000)
            rec.append(len({i for i, _ in hits} & tr) / 10)
            srec.append(sum(1 for _, sc in hits if sc >= tenth - 1e-4) / 10)  # ties with the 10th count
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "v"
            t = time.perf_counter()
            save_index(index, path, {})
            save = time.perf_counter() - t
            t = time.perf_counter()
            load_index(path)
            load = time.perf_counter() - t
        out["ann"][dtype] = {
            "build_s": build,
            "p50": pct(ms, 0.5),
            "p95": pct(ms, 0.95),
            "recall10": float(np.mean(rec)),
            "score_recall10": float(np.mean(srec)),
            "save_s": save,
            "load_s": load,
        }
    return out


def format_vectors(figs: list[dict[str, Any]]) -> str:
    lines = [
        "| vectors | index | build | top-10 p50 / p95 | recall@10 vs exact (ids / scores) | save / load |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for f in figs:
        lines.append(
            f"| {f['n']:,} | exact | – | {f['exact_p50']:.2f} / {f['exact_p95']:.2f} ms | 1.000 | – |"
        )
        for dtype, a in f["ann"].items():
            lines.append(
                f"| {f['n']:,} | HNSW {dtype} + exact re-rank | {a['build_s']:.0f} s | {a['p50']:.2f} / {a['p95']:.2f} ms "
                f"| {a['recall10']:.3f} / {a['score_recall10']:.3f} | {a['save_s']:.1f} / {a['load_s']:.1f} s |"
            )
    return "\n".join(lines)


# ----------------------------------------------------------------------------- driver
def run_size(tmp: Path, kind: str, size: int, args: argparse.Namespace) -> dict[str, Any]:
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    db = tmp / f"{kind}-{size}.db"
    qpath = tmp / f"{kind}-{size}-questions.json"
    made_path = tmp / f"{kind}-{size}-made.json"
    if args.store_dir is not None and db.exists() and qpath.exists() and made_path.exists():
        log(f"{kind} {size:,}: reusing {db.name} from --store-dir")
        made = json.loads(made_path.read_text())
        return _measure_size(tmp, db, qpath, made, kind, size, args)
    for old in tmp.glob(db.name + "*"):  # a generation cut short
        old.unlink()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,}"),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        if kind == "text":
            task = bar.add_task(f"generating {size:,} passages", total=size)
            made, qs = generate_text(db, size, args.queries, progress=lambda n: bar.advance(task, n))
        else:
            edges = size * 5
            task = bar.add_task(f"generating {size:,} nodes / {edges:,} edges", total=size + edges)
            made = generate_curated(db, size, edges, progress=lambda n: bar.advance(task, n))
            qs = curated_questions(size, args.queries)
    log(f"{kind} {size:,}: generated in {made['index_s']:.0f} s")
    qpath.write_text(json.dumps(qs))
    made_path.write_text(json.dumps(made))
    return _measure_size(tmp, db, qpath, made, kind, size, args)


def _measure_size(
    tmp: Path, db: Path, qpath: Path, made: dict[str, Any], kind: str, size: int, args: argparse.Namespace
) -> dict[str, Any]:
    # the first open after generation writes the graph snapshot and the first query the entity index
    # (as on a real store); the measured open and first query are the next ones
    warm = (
        "import sys, json, time, cef; sys.path.insert(0, sys.argv[2]); from bench_scale import BenchEmbedder; "
        "from cef.retrieve.entities import entity_index; "
        "t = time.perf_counter(); kb = cef.open(sys.argv[1], embedder=BenchEmbedder(), embed_nodes='none'); "
        "o = time.perf_counter() - t; t = time.perf_counter(); ix = entity_index(kb.state); "
        "e = time.perf_counter() - t; kb.close(); "
        "print(json.dumps({'open_s': o, 'entities_s': e, 'entities_from_file': ix.from_file}))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", warm, str(db), str(REPO / "bench")],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    first = json.loads(proc.stdout.strip().splitlines()[-1])
    log(f"{kind} {size:,}: first open after generation {first}")
    if args.generate_only:
        return {}
    strategies = args.strategies.split(",")
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); from bench_scale import measure; "
        "print(json.dumps(measure(sys.argv[2], sys.argv[3], sys.argv[4].split(','), int(sys.argv[5]), int(sys.argv[6]))))"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(REPO / "bench"),
            str(db),
            str(qpath),
            ",".join(strategies),
            str(args.queries),
            str(args.agreement if kind == "text" else 0),
        ],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["first_open"] = first
    out["made"] = made
    out["kind"] = kind
    out["size"] = size
    out["disk_mb"] = sum(f.stat().st_size for f in tmp.glob(db.name + "*")) / 2**20
    if args.store_dir is None:
        for f in tmp.glob(db.name + "*"):
            f.unlink()
    return out


def format_results(results: list[dict[str, Any]]) -> str:
    lines = []
    sizes = [r for r in results]
    head = (
        "| measure | "
        + " | ".join(
            f"{r['size']:,} {'passages' if r['kind'] == 'text' else 'nodes (curated)'}" for r in sizes
        )
        + " |"
    )
    lines.append(head)
    lines.append("|---|" + "---:|" * len(sizes))

    def row(name: str, fn: Any) -> None:
        cells = []
        for r in sizes:
            try:
                cells.append(fn(r))
            except (KeyError, TypeError):
                cells.append("–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("graph", lambda r: f"{r['counts']['nodes']:,} nodes, {r['counts']['edges']:,} edges")
    row("index (index_batch)", lambda r: f"{r['made']['index_s']:.0f} s")
    row("open (fresh process)", lambda r: f"{r['open_s']:.2f} s")
    row(
        "once after ingest: open / entity index build (saved)",
        lambda r: f"{r['first_open']['open_s']:.1f} / {r['first_open']['entities_s']:.1f} s",
    )
    row("first query (reads the saved entity index; loads spaCy)", lambda r: f"{r['first_query_s']:.2f} s")
    row("RSS after open / after first query", lambda r: f"{r['open_rss']:,.0f} / {r['warm_rss']:,.0f} MB")
    row("RSS at the end (peak)", lambda r: f"{r['rss']:,.0f} MB ({r['peak_rss']:,.0f})")
    labels = list(dict.fromkeys(k for r in sizes for k in r["rows"]))
    for label in labels:
        row(
            f"{label} p50 / p95",
            lambda r, lb=label: f"{r['rows'][lb]['p50']:.1f} / {r['rows'][lb]['p95']:.1f} ms",
        )
    row(
        "auto CPU time per query p50 / p95 (this thread)",
        lambda r: f"{r['rows']['auto']['cpu_p50']:.1f} / {r['rows']['auto']['cpu_p95']:.1f} ms",
    )
    row("store files read into the page cache before the strategies", lambda r: f"{r['page_cache_s']:.1f} s")
    for label in labels:
        row(
            f"{label}: answered by",
            lambda r, lb=label: ", ".join(f"{k} {v}" for k, v in r["rows"][lb]["answered"].items()),
        )
    row("auto: source passage in top 10", lambda r: f"{100 * r['rows']['auto']['hit10']:.0f}%")
    row(
        "approx. PPR vs exact: recall of top 10 (min)",
        lambda r: f"{r['agreement']['recall10']:.3f} ({r['agreement']['min_recall10']:.1f})",
    )
    row(
        "PPR ranking alone, p50: approximate / exact",
        lambda r: f"{r['agreement']['push_p50']:.2f} / {r['agreement']['exact_p50']:.1f} ms",
    )
    row(
        "chunk vectors: ANN recall@10 vs exact scan (min)",
        lambda r: f"{r['ann']['recall']:.3f} ({r['ann']['min_recall']:.1f})",
    )
    row(
        "chunk vectors: top-10 p50, ANN / exact scan",
        lambda r: f"{r['ann']['ann_p50']:.2f} / {r['ann']['exact_p50']:.1f} ms",
    )
    row("approximate PPR: nodes touched (p50)", lambda r: f"{r['agreement']['touched_p50']:,.0f}")
    row("disk", lambda r: f"{r['disk_mb']:,.0f} MB")
    return "\n".join(lines)


def write_section(readme: Path, body: str) -> None:
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    section = f"{HEADING}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    readme.write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="20000,100000", help="comma-separated passage counts")
    ap.add_argument("--million", action="store_true", help="add 1,000,000 passages")
    ap.add_argument(
        "--curated", action="store_true", help="add a curated typed graph (--curated-nodes, 5 edges each)"
    )
    ap.add_argument("--curated-nodes", type=int, default=1_000_000)
    ap.add_argument("--strategies", default="auto,ppr,vector,bm25,hybrid")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--agreement", type=int, default=100, help="seed sets for approximate vs exact PPR")
    ap.add_argument(
        "--tmp", type=Path, default=None, help="where the stores are generated (default: system temp)"
    )
    ap.add_argument(
        "--store-dir",
        type=Path,
        default=None,
        help="keep the generated stores here and reuse them on the next run (generate once, measure often)",
    )
    ap.add_argument("--generate-only", action="store_true", help="generate the stores, measure nothing")
    ap.add_argument("--readme", type=Path, default=None)
    ap.add_argument(
        "--vectors", default="", help="comma-separated sizes for ANN vs exact vector search (e.g. 100000)"
    )
    ap.add_argument("--vector-dtypes", default="i8,f32", help="HNSW storage types to compare")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.million:
        sizes.append(1_000_000)
    t0 = time.perf_counter()
    results = []
    with contextlib.ExitStack() as stack:
        if args.store_dir is not None:
            args.store_dir.mkdir(parents=True, exist_ok=True)
            d = str(args.store_dir)
        else:
            d = stack.enter_context(tempfile.TemporaryDirectory(prefix="cef-scale-", dir=args.tmp))
        jobs = [("text", size) for size in sizes] + (
            [("curated", args.curated_nodes)] if args.curated else []
        )
        for kind, size in jobs:
            out = run_size(Path(d), kind, size, args)
            if out:
                results.append(out)
    vfigs = []
    for n in [int(x) for x in args.vectors.split(",") if x]:
        log(f"vector index at {n:,} vectors")
        vfigs.append(vector_figures(n, args.vector_dtypes.split(",")))
    load = os.getloadavg()
    body = (
        (format_results(results) if results else "")
        + (("\n\n" + format_vectors(vfigs)) if vfigs else "")
        + (
            f"\n\n`python bench/bench_scale.py {' '.join(sys.argv[1:])}` on {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}; {args.queries} questions per size; load average at the end "
            f"{load[0]:.1f}; total {time.perf_counter() - t0:.0f} s."
        )
    )
    print(body)
    if args.readme is not None:
        write_section(args.readme, body)
        log(f"wrote the {HEADING!r} section of {args.readme}")


if __name__ == "__main__":
    main()
