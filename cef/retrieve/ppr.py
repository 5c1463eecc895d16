"""PPR strategy: personalized PageRank over the entity–passage graph, seeded by the question.

The graph is the ``MENTIONS`` edges ingest writes (see :mod:`cef.ingest.enrich`):
every chunk's node (its passage) is joined to the entities it mentions, the
passage's title entity with a heavier edge. No co-occurrence, synonym or
passage–passage edges: they did not help ranking.

For a question:

1. **Entities** named in it are linked to graph nodes (:func:`link_query_entities`:
   spaCy NER plus a query gazetteer of every graph name, matched by exact
   name, alias key, then fuzzy similarity).
2. **Seeds**: each entity ∝ link confidence × log(1 + N/df) (df = passages that
   mention it, N = passages), together 1.0; the 5 passages closest to the
   question by embedding ∝ (cosine − 5th cosine + 0.001), together 0.5; no
   seed at all → the 5 closest passages, uniformly.
3. **PPR** (damping 0.5) over the MENTIONS graph, approximated by forward push
   (:mod:`cef.graph.push`: each node's score at most ``epsilon`` × its weighted
   degree below exact PPR); the work follows the seeds' neighbourhood, not the
   graph. Passages score the min-max of their PPR mass (a passage the push
   never reached: 0).
4. **Bridge**: a passage titled by an entity of one of the 3 best passages gets
   ``0.4 × (parent score / best score) × min-max cosine`` on top — the second
   hop of a multi-hop question is usually the page of an entity the first hop
   mentions (when several passages share that title, the one closest to the
   question by embedding).

Cosines come from the chunk vector index (:class:`PassageCosines`): the closest
passages by search, the min-max range from the best match and the best match of
the negated question, other passages' cosines only where the bridge asks.

The matrix, passage lists, title owners and the query gazetteer are built once
per graph generation (:func:`entity_index`). Every :class:`~cef.model.RankedChunk`
says why it is there: PPR and cosine scores, the entities linked to its
passage, the seed entities, and a path from a seed entity to the passage.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.errors import CefError
from cef.extract.base import Mention
from cef.extract.normalize import alias_keys, normalize_name
from cef.extract.resolve import NameResolver, Resolved
from cef.extract.spacy_ner import Gazetteer, SpacyEntityExtractor, spacy_stopwords
from cef.graph.arrays import Ragged, RaggedStrings, SortedIndex
from cef.graph.index import GraphIndex
from cef.graph.push import PushGraph, PushResult, forward_push
from cef.ingest.enrich import CO_OCCURS_WITH, ENTITY_LABEL, MENTIONS, PASSAGE_LABEL, TITLE_TYPE
from cef.model import Explanation, GraphPath, Node, RankedChunk, ReasoningContext, SearchStrategy
from cef.retrieve.anchors import resolve_anchors
from cef.retrieve.context import Anchor, QueryContext
from cef.retrieve.presets import EntityLinkingSettings, PPRSettings, settings_for

if TYPE_CHECKING:
    from scipy import sparse

    from cef.engine.state import EngineState

__all__ = [
    "CONTAINER_LABELS",
    "TEXT_RELATIONS",
    "EntityIndex",
    "LinkedEntity",
    "entity_index",
    "link_query_entities",
    "minmax",
    "ppr_search",
]

log = logging.getLogger(__name__)

#: node labels that stand for text, not things (never query entities)
CONTAINER_LABELS = frozenset({PASSAGE_LABEL, "Document"})
#: relations that are not traversed as facts between entities
TEXT_RELATIONS = frozenset({MENTIONS, CO_OCCURS_WITH})


@dataclass(frozen=True)
class LinkedEntity:
    """A graph node the question names: ``how`` is ``exact``, ``alias``, ``fuzzy`` or ``target``."""

    pos: int
    node_id: str
    name: str
    mention: str
    confidence: float
    how: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "name": self.name,
            "mention": self.mention,
            "confidence": round(self.confidence, 4),
            "how": self.how,
        }


@dataclass
class EntityIndex:
    """Names and the MENTIONS graph of one graph generation (what the graph strategies read).

    Positions are :class:`~cef.graph.index.GraphIndex` node positions.
    ``passages`` are the nodes with MENTIONS edges out (chunk holders), in
    position order; ``passage_entities[i]`` the entity positions passage ``i``
    links to; ``ent_ptr``/``ent_passage``/``ent_weight``/``ent_edge`` a CSR
    from entity position to the passages that mention it (weight, edge position);
    ``title_owners`` maps an entity position to the passages it titles.
    """

    stamp: tuple[int, int]
    gazetteer: Gazetteer
    key_index: dict[str, int]
    names: dict[int, str]
    types: dict[int, list[str]]
    matrix: sparse.csr_matrix | None = None
    push: PushGraph | None = None
    passages: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    passage_index: Mapping[int, int] = field(default_factory=dict)
    passage_entities: Sequence[np.ndarray] = field(default_factory=list)
    df: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ent_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    ent_passage: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ent_weight: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ent_edge: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    title_owners: dict[int, list[int]] = field(default_factory=dict)
    chunk_ids: list[str] = field(default_factory=list)  # grouped by passage
    chunk_passage: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    passage_chunks: Sequence[list[str]] = field(default_factory=list)
    extractor: SpacyEntityExtractor | None = None
    ner_failed: bool = False
    exact_names: dict[str, list[int]] | None = None  # name as written -> positions (built on first use)
    from_file: bool = False  # read from the file saved beside the store (not built from the store)
    _resolver: NameResolver | None = field(default=None, repr=False)
    _resolver_from: Callable[[], NameResolver] | None = field(default=None, repr=False)

    @property
    def resolver(self) -> NameResolver:
        """Names -> node ids (exact … partial); an index read from its file makes it on first use."""
        if self._resolver is None:
            made = self._resolver_from() if self._resolver_from is not None else NameResolver()
            self._resolver, self._resolver_from = made, None
        return self._resolver

    @property
    def has_mentions(self) -> bool:
        return self.matrix is not None and len(self.passages) > 0

    def passages_of(self, entity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(passage indices, edge weights, edge positions) of the passages that mention an entity."""
        if entity + 1 >= len(self.ent_ptr):
            empty = np.zeros(0, dtype=np.int64)
            return empty, np.zeros(0), empty
        a, b = int(self.ent_ptr[entity]), int(self.ent_ptr[entity + 1])
        return self.ent_passage[a:b], self.ent_weight[a:b], self.ent_edge[a:b]


_cache: weakref.WeakKeyDictionary[EngineState, EntityIndex] = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


#: graphs with at least this many nodes + edges keep their entity index in a file beside the store
SAVE_MIN_ITEMS = 200_000


def entity_index(state: EngineState) -> EntityIndex:
    """The :class:`EntityIndex` of the engine's current graph (rebuilt when the graph changed).

    A big graph's index is saved beside the store once built and read back by
    the next process whose graph is in the same state (:mod:`cef.retrieve.entityfile`).
    """
    g = state.graph
    stamp = (id(g), g.generation)
    with _cache_lock:
        cur = _cache.get(state)
        if cur is not None and cur.stamp == stamp:
            return cur
    seq = state.seq
    built = _load_saved(state, g, stamp, seq)
    if built is None:
        built = _build(state, g, stamp)
        _save(state, g, built, seq)
    with _cache_lock:
        _cache[state] = built
    return built


def entity_index_path(state: EngineState) -> Path | None:
    """Where the entity index of a big graph is saved (``<db>-entities``); None: this store has no such place."""
    if state.snapshot_path is None:
        return None
    return Path(str(state.snapshot_path).removesuffix("-graph") + "-entities")


def _saved_header(state: EngineState, g: GraphIndex, seq: int) -> dict[str, Any] | None:
    instance = getattr(state.store, "instance_id", None)
    if not isinstance(instance, str):
        return None
    from cef.retrieve.entityfile import graph_fingerprint

    return {"instance": instance, "seq": seq, "graph": graph_fingerprint(g)}


def _load_saved(state: EngineState, g: GraphIndex, stamp: tuple[int, int], seq: int) -> EntityIndex | None:
    path = entity_index_path(state)
    if path is None or not path.exists():
        return None
    from cef.retrieve.entityfile import load_entity_index, read_header

    want = _saved_header(state, g, seq)
    try:
        head = read_header(path)
        if want is None or any(head.get(k) != v for k, v in want.items()):
            log.info("saved entity index %s is of another graph state; rebuilding it", path)
            return None
        index, _ = load_entity_index(path, stamp)
    except (OSError, ValueError, KeyError, EOFError) as exc:
        log.warning("ignoring the saved entity index %s: %s", path, exc)
        return None
    if (id(state.graph), state.graph.generation) != stamp or state.seq != seq:
        return None  # the graph changed while the file was read
    return index


def _save(state: EngineState, g: GraphIndex, index: EntityIndex, seq: int) -> None:
    path = entity_index_path(state)
    if path is None:
        return
    if len(g.node_ids) + len(g.edge_ids) < SAVE_MIN_ITEMS:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)  # a file of an earlier, bigger state would never match again
        return
    head = _saved_header(state, g, seq)
    if head is None or (id(state.graph), state.graph.generation) != index.stamp or state.seq != seq:
        return
    from cef.retrieve.entityfile import save_entity_index

    save_entity_index(index, path, head)


def _build(state: EngineState, g: GraphIndex, stamp: tuple[int, int]) -> EntityIndex:
    from scipy import sparse

    n = len(g.node_ids)
    alive = g.e_alive.view[: len(g.edge_ids)]
    code = g.relations.get(MENTIONS)
    edges = np.zeros(0, dtype=np.int64)
    if code is not None:
        edges = np.flatnonzero(alive & (g.e_rel.view[: len(alive)] == code)).astype(np.int64)
    src = g.e_src.view[edges].astype(np.int64)
    dst = g.e_dst.view[edges].astype(np.int64)
    w = g.e_weight.view[edges].astype(np.float64)
    keep = g.node_alive.view[src] & g.node_alive.view[dst] if len(edges) else np.zeros(0, dtype=bool)
    edges, src, dst, w = edges[keep], src[keep], dst[keep], w[keep]

    entity_pos = np.unique(dst)
    candidate = g.node_alive.view[:n].copy()
    candidate[entity_pos] = False
    containers = [c for c in (g.labels.get(lb) for lb in CONTAINER_LABELS) if c is not None]
    if containers:
        candidate &= ~np.isin(g.node_label.view[:n], containers)
    other = np.flatnonzero(candidate).tolist()
    nodes = {nd.id: nd for nd in state.get_nodes([g.node_ids[p] for p in [*entity_pos.tolist(), *other]])}
    title_of: dict[int, list[int]] = {}
    passages = np.unique(src)
    pidx = {int(p): i for i, p in enumerate(passages.tolist())}
    if len(edges):
        for rec in state.store.get_edges([g.edge_ids[int(e)] for e in edges]):
            if rec.properties.get("title") is True:
                sp, tp = g.pos(rec.source), g.pos(rec.target)
                if sp is not None and tp is not None and sp in pidx:
                    title_of.setdefault(tp, []).append(pidx[sp])

    gaz = Gazetteer(require_capital=False)
    resolver = NameResolver()
    key_index: dict[str, int] = {}
    names: dict[int, str] = {}
    types: dict[int, list[str]] = {}

    def describe(pos: int) -> Node | None:
        node = nodes.get(g.node_ids[pos])
        if node is None:
            return None
        names[pos] = node.name
        raw = node.properties.get("types")
        extra = [t for t in raw if isinstance(t, str)] if isinstance(raw, list) else []
        types[pos] = list(dict.fromkeys([node.label, *extra]))
        return node

    # 1. every entity of the MENTIONS graph by its key (the research recipe's query gazetteer)
    for p in entity_pos.tolist():
        node = describe(p)
        if node is None:
            continue
        key = _entity_key(node)
        resolver.add(
            node.id, node.label, [node.name, *node.aliases], curated=not _extracted(node), types=types[p]
        )
        if key:
            key_index.setdefault(key, p)
            gaz.add(key, "ENTITY", node.id, aliases=False)
        for alias in node.aliases:
            ak = normalize_name(alias)
            if ak:
                key_index.setdefault(ak, p)
    # 2. titles, with their alias keys (``WUIN (FM)`` is also ``wuin``)
    for p in title_of:
        node = nodes.get(g.node_ids[p])
        if node is not None:
            gaz.add(node.name, TITLE_TYPE, node.id)
    # 3. every other named node (domain nodes of a curated graph)
    for p in other:
        node = describe(p)
        if node is None or (node.name == node.id and "name" not in node.properties):
            continue
        for name in [node.name, *node.aliases]:
            gaz.add(name, node.label, node.id)
            for key in alias_keys(name):
                key_index.setdefault(key, p)
        resolver.add(
            node.id, node.label, [node.name, *node.aliases], curated=not _extracted(node), types=types[p]
        )

    index = EntityIndex(
        stamp=stamp, gazetteer=gaz, key_index=key_index, names=names, types=types, _resolver=resolver
    )
    if not len(edges):
        return index
    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    index.matrix = sparse.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(n, n))
    index.push = PushGraph.from_matrix(index.matrix)
    index.passages = passages
    index.passage_index = SortedIndex(passages)
    # distinct (passage, entity) pairs, by passage then entity: each passage's entity list, and df
    pair = np.unique(src * np.int64(n) + dst)
    p_of, e_of = pair // n, pair % n
    ptr = np.zeros(len(passages) + 1, dtype=np.int64)
    ptr[:-1] = np.searchsorted(p_of, passages, side="left")
    ptr[-1] = len(pair)
    index.passage_entities = Ragged(e_of, ptr)
    index.df = np.bincount(e_of, minlength=n).astype(np.float64)
    order = np.lexsort((src, dst))  # by entity, then passage (a passage list is sorted: searchsorted works)
    index.ent_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=index.ent_ptr[1:])
    index.ent_passage = np.searchsorted(passages, src[order]).astype(np.int64)
    index.ent_weight = w[order]
    index.ent_edge = edges[order]
    index.title_owners = title_of
    holder_ids = [g.node_ids[int(p)] for p in passages]
    linked = state.store.chunks_for_nodes(holder_ids)
    lists = [sorted(linked.get(h, [])) for h in holder_ids]
    counts = np.fromiter((len(cs) for cs in lists), dtype=np.int64, count=len(lists))
    index.chunk_ids = [c for cs in lists for c in cs]
    cptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(counts, out=cptr[1:])
    index.passage_chunks = RaggedStrings(index.chunk_ids, cptr)
    index.chunk_passage = np.repeat(np.arange(len(passages), dtype=np.int64), counts)
    return index


def _extracted(node: Node) -> bool:
    return node.label == ENTITY_LABEL and node.id.startswith("entity:")


def _entity_key(node: Node) -> str:
    if node.id.startswith("entity:") and node.label == ENTITY_LABEL:
        return node.id[len("entity:") :]
    return normalize_name(node.name)


# ----------------------------------------------------------------------------- linking
def _query_mentions(index: EntityIndex, text: str) -> list[Mention]:
    """NER ∪ gazetteer mentions of a question (gazetteer only when spaCy is not installed)."""
    if index.extractor is None and not index.ner_failed:
        index.extractor = SpacyEntityExtractor(titles_as_entities=False, gazetteer=index.gazetteer)
    if index.extractor is not None:
        try:
            return index.extractor.extract_query(text)
        except CefError as exc:  # the nlp extra is missing: names from the graph still work
            log.info("query NER unavailable (%s); matching graph names only", exc)
            index.ner_failed = True
            index.extractor = None
    found = index.gazetteer.match(text, case_sensitive=True)
    return found or index.gazetteer.match(text, case_sensitive=False)


def link_query_entities(
    index: EntityIndex,
    state: EngineState,
    text: str,
    settings: EntityLinkingSettings,
    cache: dict[tuple[str, str], list[LinkedEntity]] | None = None,
) -> list[LinkedEntity]:
    """Graph nodes a question names, best link per node, in order of position (``cache``: one
    query's earlier answers, so the strategies of one route run NER once)."""
    if cache is not None:
        key = (text, settings.model_dump_json())
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = _link_query_entities(index, state, text, settings)
        return list(hit)
    return _link_query_entities(index, state, text, settings)


def _link_query_entities(
    index: EntityIndex, state: EngineState, text: str, settings: EntityLinkingSettings
) -> list[LinkedEntity]:
    g = state.graph
    found: dict[int, LinkedEntity] = {}

    def add(pos: int | None, m: Mention, conf: float, how: str) -> None:
        if pos is None or not g.node_alive[pos]:
            return
        if settings.entity_types and not set(settings.entity_types) & set(index.types.get(pos, [])):
            return
        cur = found.get(pos)
        if cur is None or conf > cur.confidence:
            found[pos] = LinkedEntity(pos, g.node_ids[pos], index.names.get(pos, m.text), m.text, conf, how)

    for m in _query_mentions(index, text):
        pos = index.key_index.get(m.normalized)
        how = "exact"
        if pos is None:
            how = "alias"
            for ak in alias_keys(m.text):
                pos = index.key_index.get(ak)
                if pos is not None:
                    break
        if pos is not None:
            add(pos, m, m.confidence, how)
        elif settings.fuzzy:
            before = len(found)
            for nm in index.gazetteer.lookup(
                m.text, cutoff=settings.fuzzy_cutoff, limit=settings.fuzzy_limit
            ):
                hit = index.key_index.get(nm.key)
                if hit is None and nm.entry.ref is not None:
                    hit = g.pos(nm.entry.ref)
                add(hit, m, nm.score * settings.fuzzy_confidence, "fuzzy")
            if len(found) == before:  # "Dr. Chen": the words of exactly one curated node's name
                got = index.resolver.resolve(m.text, hint=m.type, fuzzy=False)
                if got is not None:
                    add(g.pos(got.node_id), m, got.score * m.confidence, got.how)
    if not found and settings.fuzzy:
        for m, got in _misspelled_names(index, text, settings.fuzzy_cutoff):
            add(g.pos(got.node_id), m, got.score * settings.fuzzy_confidence, got.how)
    return [found[p] for p in sorted(found)]


_QWORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*", re.UNICODE)


def _misspelled_names(index: EntityIndex, text: str, cutoff: float) -> list[tuple[Mention, Resolved]]:
    """Names a question misspells ("warfarine", "atrial fibrilation"): runs of 1-3 words that no
    extractor found, matched fuzzily against curated node names, longest first, non-overlapping."""
    words = [(m.group(), m.start(), m.end()) for m in _QWORD.finditer(text)]
    out: list[tuple[Mention, Resolved]] = []
    taken: set[int] = set()
    stop = spacy_stopwords()
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            if taken.intersection(range(i, i + n)):
                continue
            span = words[i : i + n]
            phrase = text[span[0][1] : span[-1][2]]
            if len(phrase) < 5 or normalize_name(phrase) in stop:
                continue
            got = index.resolver.resolve(phrase, fuzzy=True, partial=False)
            if got is None or got.how != "fuzzy" or got.score < cutoff:
                continue
            taken.update(range(i, i + n))
            m = Mention(phrase, got.key, "FUZZY", span[0][1], span[-1][2], got.score, "fuzzy")
            out.append((m, got))
    return out


def target_entities(qc: QueryContext) -> list[LinkedEntity]:
    """The query's explicit targets, resolved to nodes (anchors), as linked entities."""
    if not qc.query.targets:
        return []
    if not qc.anchors:
        resolve_anchors(qc)
    g = qc.state.graph
    return [
        LinkedEntity(a.pos, a.node_id, a.target or a.node_id, a.target, float(a.score), "target")
        for a in qc.anchors
        if g.node_alive[a.pos]
    ]


def record_entities(qc: QueryContext, linked: Sequence[LinkedEntity]) -> None:
    """Put the query's entities in the result metadata and among the anchors."""
    qc.metadata["query_entities"] = [e.as_dict() for e in linked]
    have = {a.pos for a in qc.anchors}
    for e in linked:
        if e.pos not in have:
            qc.anchors.append(Anchor(e.pos, e.node_id, e.confidence, "entity", e.mention))
            have.add(e.pos)


def minmax(x: np.ndarray) -> np.ndarray:
    """``x`` scaled to 0..1 (all zeros when constant)."""
    if not len(x):
        return x
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)


class PassageCosines:
    """Cosines of the question to passages (a passage's best chunk), computed only for the passages asked about.

    The closest passages come from the chunk vector index (an ANN index on a
    big store), the cosine range from its best and worst match (the worst: the
    best match of the negated question), so no step reads every passage.
    """

    def __init__(self, qc: QueryContext, index: EntityIndex, vec: np.ndarray, fetch: int) -> None:
        self.qc, self.index, self.vec = qc, index, vec
        self._known: dict[int, float] = {}
        vectors = qc.state.chunk_vectors
        hits = vectors.search(vec, fetch)
        self.top: list[tuple[int, float]] = []  # (passage, cosine), best first, one per passage
        for pi, cos in self._passages_of(hits):
            if pi not in self._known:
                self._known[pi] = cos
                self.top.append((pi, cos))
        self.hi = self.top[0][1] if self.top else 0.0
        self._lo: float | None = None

    @property
    def lo(self) -> float:
        """The corpus's worst cosine: minus the best match of the negated question (searched on first use)."""
        if self._lo is None:
            worst = self.qc.state.chunk_vectors.search(-np.asarray(self.vec, dtype=np.float32), 1)
            self._lo = min(-worst[0][1], self.hi) if worst else self.hi
        return self._lo

    def _passages_of(self, hits: list[tuple[str, float]]) -> list[tuple[int, float]]:
        chunks = self.qc.chunks([c for c, _ in hits])
        g, passages = self.qc.state.graph, self.index.passages
        out = []
        for cid, cos in hits:
            ch = chunks.get(cid)
            pos = g.pos(ch.node_id) if ch is not None and ch.node_id is not None else None
            if pos is None:
                continue
            i = int(np.searchsorted(passages, pos))
            if i < len(passages) and passages[i] == pos:
                out.append((i, float(cos)))
        return out

    def of(self, passages: Sequence[int]) -> np.ndarray:
        """The cosine of each passage (its best chunk; -1 when it has no vector)."""
        missing = [i for i in passages if i not in self._known]
        if missing:
            ids = [c for i in missing for c in self.index.passage_chunks[i]]
            sims = self.qc.state.chunk_vectors.similarities(self.vec, ids).tolist() if ids else []
            k = 0
            for i in missing:
                n = len(self.index.passage_chunks[i])
                self._known[i] = max(sims[k : k + n], default=-1.0)
                k += n
        return np.array([self._known[i] for i in passages], dtype=np.float64)

    def scaled(self, passages: Sequence[int]) -> np.ndarray:
        """Min-max scaled cosines (0 for the corpus's worst match, 1 for its best)."""
        span = self.hi - self.lo
        if span <= 0:
            return np.zeros(len(passages))
        return np.clip((self.of(passages) - self.lo) / span, 0.0, 1.0)


def top_order(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values, best first, ties by index: ``argsort(-values, kind="stable")[:k]``."""
    n = len(values)
    if k >= n:
        return np.argsort(-values, kind="stable")
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    kth = np.partition(values, n - k)[n - k]
    above = np.flatnonzero(values > kth)
    tied = np.flatnonzero(values == kth)[: k - len(above)]
    sel = np.concatenate([above, tied])
    return sel[np.lexsort((sel, -values[sel]))]


def passage_ppr(index: EntityIndex, seeds: dict[int, float], settings: PPRSettings) -> np.ndarray:
    """Approximate PPR from ``seeds`` over the MENTIONS graph: a score per graph node (see :mod:`cef.graph.push`)."""
    return _push(index, seeds, settings).scores


def _push(index: EntityIndex, seeds: dict[int, float], settings: PPRSettings) -> PushResult:
    if index.push is None:
        raise ValueError("this entity index has no MENTIONS graph to rank over")
    return forward_push(index.push, seeds, damping=settings.damping, epsilon=settings.epsilon)


# ----------------------------------------------------------------------------- strategy
def ppr_search(qc: QueryContext) -> list[RankedChunk] | None:
    """Rank chunks by personalized PageRank from the question's entities and closest passages.

    ``None`` (not applicable) when the graph has no MENTIONS edges; ``[]`` when
    there is nothing to seed from (no entity found and no embeddings).
    """
    settings = settings_for(PPRSettings, qc.query)
    st = qc.state
    index = entity_index(st)
    if not index.has_mentions:
        return None
    linked = link_query_entities(index, st, qc.query.query, settings.linking, qc.linked)
    linked += [t for t in target_entities(qc) if t.pos not in {e.pos for e in linked}]
    record_entities(qc, linked)
    n_pass = len(index.passages)
    vec = qc.query_vector
    dense = (
        PassageCosines(qc, index, vec, max(4 * settings.dense_seeds, 20))
        if vec is not None and len(st.chunk_vectors) and index.chunk_ids
        else None
    )

    seeds: dict[int, float] = {}
    ent_w = []
    for e in linked:
        df = float(index.df[e.pos]) if e.pos < len(index.df) else 0.0
        if df <= 0 and e.pos not in index.passage_index:
            continue  # not in the MENTIONS graph: it would only leak seed mass
        ent_w.append((e.pos, e.confidence * math.log(1.0 + n_pass / max(df, 1.0))))
    total = sum(w for _, w in ent_w)
    qc.metadata["ppr_seeds"] = {
        "entities": len(ent_w) if total > 0 and settings.entity_seed_weight > 0 else 0
    }
    if total > 0 and settings.entity_seed_weight > 0:
        for pos, w in ent_w:
            seeds[pos] = seeds.get(pos, 0.0) + settings.entity_seed_weight * w / total
    if dense is not None and dense.top and settings.dense_seeds and settings.dense_seed_weight > 0:
        top = dense.top[: settings.dense_seeds]
        cos = np.array([c for _, c in top])
        sw = np.maximum(cos - cos.min() + 1e-3, 0.0)
        for (i, _), w in zip(top, (settings.dense_seed_weight * sw / sw.sum()).tolist(), strict=True):
            pos = int(index.passages[i])
            seeds[pos] = seeds.get(pos, 0.0) + w
    if not seeds and dense is not None:
        for i, _ in dense.top[:5]:
            seeds[int(index.passages[i])] = 1.0
    if not seeds:
        qc.notes.append("ppr: no query entity in the graph and no embeddings to seed from")
        return []

    pushed = _push(index, seeds, settings)
    pr = pushed.scores
    # passages the push reached (every other passage scores 0, the minimum, when some were not reached)
    at = np.minimum(np.searchsorted(index.passages, pushed.touched), n_pass - 1)
    hit = (
        index.passages[at] == pushed.touched
    )  # a binary search per touched node, not a pass over all passages
    reached, cand = pushed.touched[hit], at[hit]
    mass = pr[reached]
    lo = float(mass.min()) if len(cand) == n_pass else 0.0
    hi = float(mass.max()) if len(mass) else 0.0
    score = np.zeros(n_pass)
    if hi > lo:
        score[cand] = (mass - lo) / (hi - lo)
    bonus = np.zeros(n_pass)
    via: dict[int, tuple[int, int]] = {}  # bridged passage -> (parent passage, entity)
    final = score.copy() if len(cand) == n_pass else np.zeros(n_pass)
    if len(cand) < n_pass:
        final[cand] = score[cand]
    if settings.bridge_weight > 0 and settings.bridge_top and dense is not None and len(cand):
        best = cand[top_order(score[cand], settings.bridge_top)]
        top_s = float(score[best[0]]) or 1.0
        for i in best.tolist():
            for j in index.passage_entities[i].tolist():
                owners = [o for o in index.title_owners.get(j, ()) if o != i]
                if len(owners) > 1:  # several passages share the title: the one closest to the question
                    cos = dense.of(owners)
                    owners = [max(zip(owners, cos.tolist(), strict=True), key=lambda oc: (oc[1], -oc[0]))[0]]
                for o in owners:
                    if score[i] / top_s > bonus[o]:
                        bonus[o] = score[i] / top_s
                        via[o] = (i, j)
        if via:
            bridged = np.fromiter(via, dtype=np.int64, count=len(via))
            final[bridged] = score[bridged] + settings.bridge_weight * bonus[bridged] * top_s * dense.scaled(
                bridged.tolist()
            )
            cand = np.union1d(cand, bridged)
    want = max(4 * qc.query.top_k, 256)
    ranking = cand[top_order(final[cand], want)]
    if len(ranking) < min(want, n_pass):  # fewer passages reached than asked for: the rest in index order
        rest = np.setdiff1d(np.arange(n_pass), cand, assume_unique=True)
        ranking = np.concatenate([ranking, rest[: want - len(ranking)]])

    results = _collect(qc, index, ranking, final, score)
    _explain(qc, index, settings, results, linked, pushed, score, bonus, via)
    return [r for r, _ in results]


def _collect(
    qc: QueryContext,
    index: EntityIndex,
    ranking: np.ndarray,
    final: np.ndarray,
    score: np.ndarray,
) -> list[tuple[RankedChunk, int]]:
    """The top-k chunks of the best passages (a passage's chunks in cosine order)."""
    k = qc.query.top_k
    vec = qc.query_vector
    out: list[tuple[RankedChunk, int]] = []
    batch = max(k * 2, 20)
    start = 0
    while len(out) < k and start < len(ranking):
        idx = ranking[start : start + batch].tolist()
        start += batch
        ids = [c for i in idx for c in index.passage_chunks[i]]
        chunks = qc.chunks(ids)
        sims = (
            dict(zip(ids, qc.state.chunk_vectors.similarities(vec, ids).tolist(), strict=True))
            if vec is not None and ids
            else {}
        )
        for rank, i in enumerate(idx, start - batch + 1):
            mine = [c for c in index.passage_chunks[i] if c in chunks]
            mine.sort(key=lambda c: -sims.get(c, 0.0))
            for cid in mine:
                expl = Explanation(
                    strategy=SearchStrategy.PPR,
                    graph_score=round(float(score[i]), 6),
                    vector_score=round(float(sims[cid]), 6) if cid in sims else None,
                    rank_sources={"ppr": rank},
                )
                out.append((RankedChunk(chunk=chunks[cid], score=float(final[i]), explanation=expl), i))
                if len(out) >= k:
                    break
            if len(out) >= k:
                break
    return out


#: a 3-hop explanation path scans at most this many passages of the shorter of two entities' lists
PATH_SCAN = 4096


def _mention_edge(index: EntityIndex, entity: int, passage: int) -> int | None:
    """The MENTIONS edge from ``passage`` (an index) to ``entity``, if any (a binary search of its list)."""
    found, _, edges = index.passages_of(entity)
    i = int(np.searchsorted(found, passage))
    return int(edges[i]) if i < len(found) and found[i] == passage else None


def _common_passages(
    index: EntityIndex, a: int, b: int, skip: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Passages mentioning both entities (not ``skip``): (passages, edge to ``a``, edge to ``b``).

    The shorter list is looked up in the longer one (both sorted) in blocks, and
    the scan stops at the first block with a match or after :data:`PATH_SCAN`
    passages: the cost does not grow with how many passages mention a hub.
    """
    a_pass, _, a_edge = index.passages_of(a)
    b_pass, _, b_edge = index.passages_of(b)
    swap = len(a_pass) > len(b_pass)
    small, small_edge, big, big_edge = (
        (b_pass, b_edge, a_pass, a_edge) if swap else (a_pass, a_edge, b_pass, b_edge)
    )
    empty = np.zeros(0, dtype=np.int64)
    if not len(big):
        return empty, empty, empty
    block = 256
    for start in range(0, min(len(small), PATH_SCAN), block):
        part = small[start : start + block]
        at = np.minimum(np.searchsorted(big, part), len(big) - 1)
        hit = (big[at] == part) & (part != skip)
        if hit.any():
            got, e_small, e_big = part[hit], small_edge[start : start + block][hit], big_edge[at[hit]]
            return (got, e_big, e_small) if swap else (got, e_small, e_big)
    return empty, empty, empty


def seed_path(
    g: GraphIndex,
    index: EntityIndex,
    seeds: Sequence[int],
    passage: int,
    depth: int,
    names: dict[int, str],
    holder_names: dict[str, str],
) -> GraphPath | None:
    """A shortest MENTIONS path from a seed entity to a passage (index), the most confident one found.

    One hop when the passage mentions a seed; else three: the seed, a passage
    mentioning it and one of this passage's entities, that entity, this
    passage (the middle passage among the first found by :func:`_common_passages`).
    Only the lists of the few entities involved are read (a breadth-first walk
    from the seeds would visit their whole neighbourhood).
    """
    conf = g.e_conf.view
    holder = int(index.passages[passage])
    mine = index.passage_entities[passage]
    mentioned = set(mine.tolist())
    best: tuple[float, list[int], list[int]] | None = None
    for s in seeds:
        if s in mentioned:
            direct = _mention_edge(index, s, passage)
            if direct is not None:
                c = float(conf[direct])
                if best is None or c > best[0]:
                    best = (c, [s, holder], [direct])
    if best is None and depth >= 3:
        for s in seeds:
            if not len(index.passages_of(s)[0]):
                continue
            for ent in mine.tolist():
                last = _mention_edge(index, ent, passage)
                if last is None:
                    continue
                common, s_edge, e_edge = _common_passages(index, s, ent, passage)
                if not len(common):
                    continue
                scores = conf[s_edge] * conf[e_edge] * float(conf[last])
                k = int(np.argmax(scores))
                c = float(scores[k])
                if best is None or c > best[0]:
                    mid = int(index.passages[int(common[k])])
                    best = (c, [s, mid, ent, holder], [int(s_edge[k]), int(e_edge[k]), last])
    if best is None:
        return None
    _, nodes, edges = best
    node_ids = [g.node_ids[p] for p in nodes]
    # walking from the seed: a MENTIONS edge runs passage -> entity, so it is walked forward from a passage
    forward = [g.node_ids[int(g.e_src[e])] == node_ids[k] for k, e in enumerate(edges)]
    return GraphPath(
        node_ids=node_ids,
        relation_types=[g.relation_name(e, f) for e, f in zip(edges, forward, strict=True)],
        edge_ids=[g.edge_ids[e] for e in edges],
        node_names=[holder_names.get(n, names.get(p, n)) for p, n in zip(nodes, node_ids, strict=True)],
        weight=float(sum(float(g.e_weight[e]) for e in edges)),
        confidence=float(np.prod([float(conf[e]) for e in edges])),
    )


def _explain(
    qc: QueryContext,
    index: EntityIndex,
    settings: PPRSettings,
    results: list[tuple[RankedChunk, int]],
    linked: Sequence[LinkedEntity],
    pushed: PushResult,
    score: np.ndarray,
    bonus: np.ndarray,
    via: dict[int, tuple[int, int]],
) -> None:
    """Entities, seeds, paths and notes on each result; related entities in the metadata."""
    pr = pushed.scores
    st = qc.state
    g = st.graph
    seed_pos = [e.pos for e in linked if e.pos < len(index.df) and index.df[e.pos] > 0]
    seed_ids = [g.node_ids[p] for p in seed_pos]
    names = index.names
    holders = [int(index.passages[i]) for _, i in results]
    holder_names = {n.id: n.name for n in st.get_nodes([g.node_ids[h] for h in holders])}
    seed_set = set(seed_pos)
    paths: list[GraphPath] = []
    for r, i in results:
        e = r.explanation
        e.anchors = list(seed_ids)
        ents = index.passage_entities[i].tolist()
        ents.sort(key=lambda p: (p not in seed_set, -float(pr[p])))
        e.entities = [names[p] for p in ents[: settings.explain_entities] if p in names]
        if seed_pos and settings.path_depth > 0:
            path = seed_path(g, index, seed_pos, i, settings.path_depth, names, holder_names)
            if path is not None and path.length:
                e.path = path
                paths.append(path)
        if bonus[i] > 0 and i in via:
            parent, ent = via[i]
            e.notes.append(
                f"bridge: titled by {names.get(ent, g.node_ids[ent])!r}, "
                f"which {holder_names.get(g.node_ids[int(index.passages[parent])], 'a top passage')!r} mentions"
            )
        if not seed_pos:
            e.notes.append("seeded by the passages closest to the question (no query entity in the graph)")
    # related entities: most PPR mass among non-seed entities
    ent_pos = pushed.touched[pushed.touched < len(index.df)]
    ent_pos = ent_pos[index.df[ent_pos] > 0]
    related: list[dict[str, Any]] = []
    if len(ent_pos) and settings.related_entities:
        mass = pr[ent_pos]
        top = ent_pos[top_order(mass, settings.related_entities + len(seed_set))]
        peak = float(mass.max()) or 1.0
        for p in top.tolist():
            if p in seed_set:
                continue
            related.append(
                {
                    "node_id": g.node_ids[p],
                    "name": names.get(p, g.node_ids[p]),
                    "score": round(float(pr[p]) / peak, 4),
                }
            )
            if len(related) >= settings.related_entities:
                break
    qc.metadata["related_entities"] = related
    qc.metadata["ppr"] = {
        "seed_entities": seed_ids,
        "passages": len(index.passages),
        "bridged": sum(1 for o in via if bonus[o] > 0),
    }
    if len(results) >= max(qc.query.min_results, 1) and qc.query.include_reasoning_context:
        roots = st.get_nodes(seed_ids)
        rel_nodes = st.get_nodes([x["node_id"] for x in related])
        qc.reasoning = ReasoningContext(
            root_nodes=roots,
            related_nodes=rel_nodes,
            paths=paths,
            context_keywords=[x["name"] for x in related],
            semantic_groups={"mentioned_with": [x["node_id"] for x in related]},
            depth=settings.path_depth,
            metadata={"strategy": "ppr", "seeds": len(seed_ids)},
        )
