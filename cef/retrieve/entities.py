"""Entities of the text graph at query time: the entity index (names, gazetteer, resolver) and query linking.

The index is built once per graph version from the ``Entity`` nodes ingest
wrote (:mod:`cef.schema.textgraph`) and cached per engine; :func:`link_query_entities`
finds the entities a question names (NER, gazetteer, fuzzy names).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
import weakref
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.errors import CefError
from cef.extract.base import Mention
from cef.extract.normalize import alias_keys, normalize_name
from cef.extract.resolve import NameResolver, Resolved
from cef.extract.spacy_ner import Gazetteer, GazetteerEntry, SpacyEntityExtractor, spacy_stopwords
from cef.graph.arrays import Overlay, Ragged, RaggedStrings, SortedIndex
from cef.graph.index import GraphChanges, GraphIndex
from cef.graph.push import PushGraph
from cef.model import Node
from cef.retrieve.entityindex import EntityIndex
from cef.retrieve.presets import EntityLinkingSettings
from cef.retrieve.visibility import sees
from cef.schema.textgraph import (
    CO_OCCURS_WITH,
    CONTAINER_LABELS,
    ENTITY_LABEL,
    MENTIONS,
    TITLE_TYPE,
)

if TYPE_CHECKING:
    from cef.retrieve.ports import EngineView

__all__ = [
    "TEXT_RELATIONS",
    "EntityIndex",
    "LinkedEntity",
    "entity_index",
    "kept_in_file",
    "link_query_entities",
]

log = logging.getLogger(__name__)

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


_cache: weakref.WeakKeyDictionary[EngineView, EntityIndex] = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()
_build_locks: weakref.WeakKeyDictionary[EngineView, threading.Lock] = weakref.WeakKeyDictionary()


#: graphs with at least this many nodes + edges keep their entity index in a file beside the store
SAVE_MIN_ITEMS = 200_000


def kept_in_file(g: GraphIndex) -> bool:
    """Whether the graph is big enough for its entity index to be saved beside the store."""
    return len(g.node_ids) + len(g.edge_ids) >= SAVE_MIN_ITEMS


def entity_index(state: EngineView) -> EntityIndex:
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
        building = _build_locks.setdefault(state, threading.Lock())
    # one build per engine at a time: queries arriving together after a write wait for it instead of
    # each building the same index (a minute of CPU each at a million passages)
    with building:
        with _cache_lock:
            cur = _cache.get(state)
            if cur is not None and cur.stamp == stamp:
                return cur
        seq = state.seq
        built = None
        if cur is not None and cur.stamp[0] == id(g):  # the same graph, changed since: follow the changes
            changes = g.changes_since(cur.stamp[1])
            if changes is not None:
                built = follow_changes(state, g, cur, changes, stamp)
        if built is None:
            built = _load_saved(state, g, stamp, seq)
        if built is None:
            built = _build(state, g, stamp)
            _save(state, g, built, seq)
        with _cache_lock:
            _cache[state] = built
    return built


def entity_index_path(state: EngineView) -> Path | None:
    """Where the entity index of a big graph is saved (``<db>-entities``); None: this store has no such place."""
    if state.snapshot_path is None:
        return None
    return Path(str(state.snapshot_path).removesuffix("-graph") + "-entities")


def _saved_header(state: EngineView, g: GraphIndex, seq: int) -> dict[str, Any] | None:
    instance = getattr(state.store, "instance_id", None)
    if not isinstance(instance, str):
        return None
    from cef.retrieve.entityfile import graph_fingerprint

    return {"instance": instance, "seq": seq, "graph": graph_fingerprint(g)}


def _load_saved(state: EngineView, g: GraphIndex, stamp: tuple[int, int], seq: int) -> EntityIndex | None:
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


def _save(state: EngineView, g: GraphIndex, index: EntityIndex, seq: int) -> None:
    path = entity_index_path(state)
    if path is None:
        return
    if not kept_in_file(g):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)  # a file of an earlier, bigger state would never match again
        return
    head = _saved_header(state, g, seq)
    if head is None or (id(state.graph), state.graph.generation) != index.stamp or state.seq != seq:
        return
    from cef.retrieve.entityfile import save_entity_index

    save_entity_index(index, path, head)


def _build(state: EngineView, g: GraphIndex, stamp: tuple[int, int]) -> EntityIndex:
    n = len(g.node_ids)
    edges, src, dst, w = _mentions(g)

    entity_pos = _unique(dst)
    candidate = g.node_alive.view[:n].copy()
    candidate[entity_pos] = False
    containers = [c for c in (g.labels.get(lb) for lb in CONTAINER_LABELS) if c is not None]
    if containers:
        candidate &= ~np.isin(g.node_label.view[:n], containers)
    other = np.flatnonzero(candidate).tolist()
    nodes = {nd.id: nd for nd in state.get_nodes([g.node_ids[p] for p in [*entity_pos.tolist(), *other]])}
    passages = _unique(src)
    title_of = _titles(state, g, edges, src, dst, passages)

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
        if not _extracted(node):  # a curated node the text mentions: named by its aliases as in step 3
            _add_names(gaz, key_index, node, p)
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
        _add_names(gaz, key_index, node, p)
        resolver.add(
            node.id, node.label, [node.name, *node.aliases], curated=not _extracted(node), types=types[p]
        )

    index = EntityIndex(
        stamp=stamp, gazetteer=gaz, key_index=key_index, names=names, types=types, _resolver=resolver
    )
    if not len(edges):
        return index
    holder_ids = [g.node_ids[int(p)] for p in passages]
    linked = state.store.chunks_for_nodes(holder_ids)
    lists = [sorted(linked.get(h, [])) for h in holder_ids]
    counts = np.fromiter((len(cs) for cs in lists), dtype=np.int64, count=len(lists))
    _mention_arrays(index, n, edges, src, dst, w, passages, title_of, [c for cs in lists for c in cs], counts)
    return index


def _unique(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an integer array, by sorting: numpy 2.4's ``np.unique`` hashes
    first and is about 100x slower on the position arrays here (3 s against 0.035 s for 750K int64)."""
    if not len(values):
        return values.copy()
    s = np.sort(values)
    keep = np.empty(len(s), dtype=np.bool_)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _mentions(g: GraphIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The live MENTIONS edges between live nodes: positions, sources, targets, weights."""
    alive = g.e_alive.view[: len(g.edge_ids)]
    code = g.relations.get(MENTIONS)
    edges = np.zeros(0, dtype=np.int64)
    if code is not None:
        edges = np.flatnonzero(alive & (g.e_rel.view[: len(alive)] == code)).astype(np.int64)
    src = g.e_src.view[edges].astype(np.int64)
    dst = g.e_dst.view[edges].astype(np.int64)
    w = g.e_weight.view[edges].astype(np.float64)
    keep = g.node_alive.view[src] & g.node_alive.view[dst] if len(edges) else np.zeros(0, dtype=bool)
    return edges[keep], src[keep], dst[keep], w[keep]


def _titles(
    state: EngineView,
    g: GraphIndex,
    edges: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    passages: np.ndarray,
) -> dict[int, list[int]]:
    """Entity position -> the passages (indexes into ``passages``) whose MENTIONS edge to it is a title
    edge, in edge order (one property read, no edge records made)."""
    title_of: dict[int, list[int]] = {}
    if not len(edges):
        return title_of
    ids = [g.edge_ids[e] for e in edges.tolist()]
    flags = state.store.edge_property(ids, "title")
    pidx = np.searchsorted(passages, src)
    for k in [k for k, eid in enumerate(ids) if flags.get(eid) is True]:
        title_of.setdefault(int(dst[k]), []).append(int(pidx[k]))
    return title_of


def _mention_arrays(
    index: EntityIndex,
    n: int,
    edges: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    w: np.ndarray,
    passages: np.ndarray,
    title_of: Mapping[int, list[int]],
    chunk_ids: list[str],
    chunk_counts: np.ndarray,
) -> None:
    """The MENTIONS graph's arrays of ``index`` (see :class:`EntityIndex`), from the edges and the
    passages' sorted chunk ids (``chunk_counts`` of them for each passage, in passage order)."""
    from scipy import sparse

    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    index.matrix = sparse.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(n, n))
    index.push = PushGraph.from_matrix(index.matrix)
    index.passages = passages
    index.passage_index = SortedIndex(passages)
    # distinct (passage, entity) pairs, by passage then entity: each passage's entity list, and df
    pair = _unique(src * np.int64(n) + dst)
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
    index.chunk_ids = chunk_ids
    cptr = np.zeros(len(chunk_counts) + 1, dtype=np.int64)
    np.cumsum(chunk_counts, out=cptr[1:])
    index.passage_chunks = RaggedStrings(index.chunk_ids, cptr)
    index.chunk_passage = np.repeat(np.arange(len(passages), dtype=np.int64), chunk_counts)


def _add_names(gaz: Gazetteer, key_index: MutableMapping[str, int], node: Node, pos: int) -> None:
    """A curated node's name and aliases, with their variants, in the gazetteer and the key index."""
    for name in [node.name, *node.aliases]:
        gaz.add(name, node.label, node.id)
        for key in alias_keys(name):
            key_index.setdefault(key, pos)


def _extracted(node: Node) -> bool:
    return node.label == ENTITY_LABEL and node.id.startswith("entity:")


def _entity_key(node: Node) -> str:
    if node.id.startswith("entity:") and node.label == ENTITY_LABEL:
        return node.id[len("entity:") :]
    return normalize_name(node.name)


# ----------------------------------------------------------------------------- linking
def _query_mentions(index: EntityIndex, text: str) -> list[Mention]:
    """NER ∪ gazetteer mentions of a question (gazetteer only when spaCy is not installed, or when the
    gazetteer's matches already cover every capitalized word NER could read as a name: then NER adds
    nothing, and a cold process skips loading spaCy)."""
    gaz = index.gazetteer.match(text, case_sensitive=True) or index.gazetteer.match(
        text, case_sensitive=False
    )
    if gaz and _names_covered(text, gaz):
        return gaz
    if index.extractor is None and not index.ner_failed:
        index.extractor = SpacyEntityExtractor(titles_as_entities=False, gazetteer=index.gazetteer)
    if index.extractor is not None:
        try:
            return index.extractor.extract_query(text)
        except CefError as exc:  # the nlp extra is missing: names from the graph still work
            log.info("query NER unavailable (%s); matching graph names only", exc)
            index.ner_failed = True
            index.extractor = None
    return gaz


_CAPITALIZED = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)


def _names_covered(text: str, mentions: list[Mention]) -> bool:
    """Whether every capitalized word of ``text`` (but a stopword, e.g. a question word) lies in a mention."""
    stop = spacy_stopwords()
    spans = [(m.start, m.end) for m in mentions if m.start >= 0]
    for w in _CAPITALIZED.finditer(text):
        word = w.group()
        if not word[0].isupper() or word.lower() in stop:
            continue
        if not any(a <= w.start() and w.end() <= b for a, b in spans):
            return False
    return True


def link_query_entities(
    index: EntityIndex,
    state: EngineView,
    text: str,
    settings: EntityLinkingSettings,
    cache: dict[tuple[str, ...], list[LinkedEntity]] | None = None,
    *,
    scope: str | None = None,
) -> list[LinkedEntity]:
    """Graph nodes a question names, best link per node, in order of position (``cache``: one
    query's earlier answers, so the strategies of one route run NER once). With ``scope``, only
    nodes of that scope and shared ones are linked: a name another tenant gave a node links to
    nothing, and a name both use links to the node this scope sees."""
    if cache is not None:
        key = (text, settings.model_dump_json(), scope or "")
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = _link_query_entities(index, state, text, settings, scope)
        return list(hit)
    return _link_query_entities(index, state, text, settings, scope)


def _link_query_entities(
    index: EntityIndex, state: EngineView, text: str, settings: EntityLinkingSettings, scope: str | None
) -> list[LinkedEntity]:
    g = state.graph
    found: dict[int, LinkedEntity] = {}
    visible = sees(g, scope)

    def add(pos: int | None, m: Mention, conf: float, how: str) -> None:
        if pos is None or not g.node_alive[pos] or not visible(pos):
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
        if pos is not None and visible(pos):
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


# ----------------------------------------------------------------------------- following writes
def _types_of(node: Node) -> list[str]:
    raw = node.properties.get("types")
    extra = [t for t in raw if isinstance(t, str)] if isinstance(raw, list) else []
    return list(dict.fromkeys([node.label, *extra]))


#: names added since the last build after which the next change builds the index again (an Overlay's
#: added keys are copied into the next version's)
FOLLOW_MAX = 200_000


def follow_changes(
    state: EngineView, g: GraphIndex, old: EntityIndex, changes: GraphChanges, stamp: tuple[int, int]
) -> EntityIndex | None:
    """The index of the graph after ``changes``, made from ``old`` and the records the changes touched,
    equal to what :func:`_build` would make; None when the changes are of a kind it does not follow
    (a removal, a changed node record, a node that turned into an entity): then the index is built.

    ``old`` stays as it was (queries may still read it): the new index's names read through to its
    mappings (:class:`~cef.graph.arrays.Overlay`), and the MENTIONS arrays are computed again from the
    graph (numpy), with only the new edges' title flags and the new or touched passages' chunk lists
    read from the store.
    """
    if changes.removed:
        return None
    n = len(g.node_ids)
    old_n = old.matrix.shape[0] if old.matrix is not None else n - len(changes.new_nodes)
    containers = {c for c in (g.labels.get(lb) for lb in CONTAINER_LABELS) if c is not None}
    for p in changes.updated_nodes:  # a changed record may change names: only unnamed containers are followed
        if p >= old_n or p in old.names or int(g.node_label[p]) not in containers:
            return None
    ent_ptr = old.ent_ptr

    def old_entity(p: int) -> bool:
        return p + 1 < len(ent_ptr) and bool(ent_ptr[p + 1] > ent_ptr[p])

    code = g.relations.get(MENTIONS)
    for e in changes.edges:  # an updated MENTIONS edge may have changed its title flag
        if (
            e < len(g.edge_ids)
            and code is not None
            and int(g.e_rel[e]) == code
            and e not in changes.new_edges
        ):
            return None
    new_edges = sorted(
        e
        for e in changes.new_edges
        if g.e_alive[e]
        and code is not None
        and int(g.e_rel[e]) == code
        and g.node_alive[int(g.e_src[e])]
        and g.node_alive[int(g.e_dst[e])]
    )
    new_entities: list[int] = []
    seen: set[int] = set()
    for e in new_edges:
        d = int(g.e_dst[e])
        if d in seen:
            continue
        seen.add(d)
        if d >= old_n:
            new_entities.append(d)
        elif not old_entity(d):
            return None  # a node that was not an entity is one now: its names move (build again)
    new_entities.sort()
    entity_set = set(new_entities)
    new_other = [
        p
        for p in sorted(changes.new_nodes)
        if p not in entity_set and g.node_alive[p] and int(g.node_label[p]) not in containers
    ]
    flags = state.store.edge_property([g.edge_ids[e] for e in new_edges], "title") if new_edges else {}
    title_edges = [e for e in new_edges if flags.get(g.edge_ids[e]) is True]
    new_titled = list(
        dict.fromkeys(int(g.e_dst[e]) for e in title_edges if int(g.e_dst[e]) not in old.title_owners)
    )
    wanted = dict.fromkeys([*new_entities, *new_other, *new_titled])
    records = {nd.id: nd for nd in state.get_nodes([g.node_ids[p] for p in wanted])}

    def record(p: int) -> Node | None:
        return records.get(g.node_ids[p])

    if any((nd := record(p)) is not None and not _extracted(nd) for p in new_entities):
        return (
            None  # a new curated node mentioned by text: its names go between the old entities' and others'
        )

    def is_entity(p: int | None) -> bool:
        return p is not None and (p in entity_set or old_entity(p))

    def step(entry: GazetteerEntry) -> int:
        if entry.type == TITLE_TYPE:
            return 2
        return 1 if is_entity(g.pos(entry.ref) if entry.ref else None) else 3

    gaz = Gazetteer(require_capital=old.gazetteer.require_capital, min_chars=old.gazetteer.min_chars)
    gaz._entries = Overlay(old.gazetteer._entries)
    gaz._max_words = old.gazetteer._max_words
    if len(gaz._entries.top) > FOLLOW_MAX:  # what was added since the last build: time to build afresh
        return None
    key_index: Overlay[str, int] = Overlay(old.key_index)
    names: Overlay[int, str] = Overlay(old.names)
    types: Overlay[int, list[str]] = Overlay(old.types)
    resolver_adds: list[tuple[str, str, list[str], bool, list[str], bool]] = []

    def claim(key: str, p: int, first: bool) -> bool:
        """key_index.setdefault in build order: False when a non-entity holds a key an entity takes."""
        holder = key_index.get(key)
        if holder is None:
            key_index[key] = p
        elif first and not is_entity(holder):
            return False
        return True

    after_entities = lambda e: step(e) >= 2  # noqa: E731
    after_titles = lambda e: step(e) >= 3  # noqa: E731
    # 1. new entities (after every old one: their positions are higher), before titles and other names
    for p in new_entities:
        node = record(p)
        if node is None:
            continue
        names[p], types[p] = node.name, _types_of(node)
        resolver_adds.append((node.id, node.label, [node.name, *node.aliases], False, types[p], True))
        key = _entity_key(node)
        if key:
            if not claim(key, p, True):
                return None
            gaz.add(key, "ENTITY", node.id, aliases=False, before=after_entities)
        for alias in node.aliases:
            ak = normalize_name(alias)
            if ak and not claim(ak, p, True):
                return None
    # 2. titles first seen in these edges, in edge order
    for p in new_titled:
        node = record(p)
        if node is not None:
            gaz.add(node.name, TITLE_TYPE, node.id, before=after_titles)
    # 3. other named nodes, after everything
    for p in new_other:
        node = record(p)
        if node is None:
            continue
        names[p], types[p] = node.name, _types_of(node)
        if node.name == node.id and "name" not in node.properties:
            continue
        _add_names(gaz, key_index, node, p)
        resolver_adds.append(
            (node.id, node.label, [node.name, *node.aliases], not _extracted(node), types[p], False)
        )

    index = EntityIndex(stamp=stamp, gazetteer=gaz, key_index=key_index, names=names, types=types)
    index._resolver_from = functools.partial(_derive_resolver, old, resolver_adds, is_entity, g)
    edges, src, dst, w = _mentions(g)
    if not len(edges):
        return index
    passages = _unique(src)
    _mention_arrays(
        index,
        n,
        edges,
        src,
        dst,
        w,
        passages,
        _follow_titles(g, old, passages, src, dst, title_edges),
        *_follow_chunks(state, g, old, passages, changes.touched_nodes | changes.new_nodes),
    )
    return index


def _derive_resolver(
    old: EntityIndex,
    adds: list[tuple[str, str, list[str], bool, list[str], bool]],
    is_entity: Callable[[int | None], bool],
    g: GraphIndex,
) -> NameResolver:
    """``old``'s resolver with the new nodes added as a build adds them: a new entity's key that an
    older non-entity node holds goes to the entity (entities are added first), unless that node is
    curated and the entity is not (a curated name wins a key)."""
    res = old.resolver.derive()
    for node_id, label, all_names, curated, types, entity in adds:
        if entity:
            keys = [k for name in all_names for k in alias_keys(name)]
            held = {k: res._keys[k] for k in keys if k in res._keys}
            res.add(node_id, label, all_names, curated=curated, types=types)
            for k, cur in held.items():
                if not is_entity(g.pos(cur.node_id)) and not (cur.curated and not curated):
                    res._keys[k] = res._entries[node_id]
        else:
            res.add(node_id, label, all_names, curated=curated, types=types)
    return res


def _follow_titles(
    g: GraphIndex,
    old: EntityIndex,
    passages: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    title_edges: list[int],
) -> Mapping[int, list[int]]:
    """The title owners after new title edges: the old lists (passage indexes moved to the new
    passage list) with the new edges' passages appended."""
    moved = len(old.passages) and not (
        len(passages) >= len(old.passages) and np.array_equal(passages[: len(old.passages)], old.passages)
    )
    out: Overlay[int, list[int]] | dict[int, list[int]]
    if moved:  # passages were inserted between old ones: every index moves
        out = {
            int(t): np.searchsorted(passages, old.passages[np.asarray(ps, dtype=np.int64)]).tolist()
            for t, ps in old.title_owners.items()
        }
    else:
        out = Overlay(old.title_owners)
    for e in title_edges:
        t = int(g.e_dst[e])
        i = int(np.searchsorted(passages, int(g.e_src[e])))
        cur = out.get(t)
        out[t] = [*cur, i] if cur is not None else [i]
    return out


def _follow_chunks(
    state: EngineView, g: GraphIndex, old: EntityIndex, passages: np.ndarray, touched: set[int]
) -> tuple[list[str], np.ndarray]:
    """The passages' sorted chunk ids, flat, and how many each has: the old lists, read again for new
    and touched passages (when no old passage moved or changed: the old list with the new appended)."""
    k = len(old.passages)
    old_ptr = (
        old.passage_chunks.ptr
        if isinstance(old.passage_chunks, RaggedStrings)
        else np.cumsum([0, *(len(cs) for cs in old.passage_chunks)])
    )
    if (
        len(passages) >= k
        and np.array_equal(passages[:k], old.passages)
        and not np.isin(old.passages, np.fromiter(touched, dtype=np.int64, count=len(touched))).any()
    ):
        fresh = passages[k:].tolist()
        linked = state.store.chunks_for_nodes([g.node_ids[p] for p in fresh]) if fresh else {}
        lists = [sorted(linked.get(g.node_ids[p], [])) for p in fresh]
        counts = np.concatenate([np.diff(old_ptr), [len(cs) for cs in lists]]).astype(np.int64)
        return [*old.chunk_ids, *(c for cs in lists for c in cs)], counts
    old_at = {int(p): i for i, p in enumerate(old.passages.tolist())}
    redo = [p for p in passages.tolist() if p in touched or p not in old_at]
    linked = state.store.chunks_for_nodes([g.node_ids[p] for p in redo]) if redo else {}
    out: list[list[str]] = []
    for p in passages.tolist():
        if p in old_at and p not in touched:
            i = old_at[p]
            out.append(old.chunk_ids[int(old_ptr[i]) : int(old_ptr[i + 1])])
        else:
            out.append(sorted(linked.get(g.node_ids[p], [])))
    return [c for cs in out for c in cs], np.fromiter(map(len, out), dtype=np.int64, count=len(out))
