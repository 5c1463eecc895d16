"""Entities of the text graph at query time: the entity index (names, gazetteer, resolver) and query linking.

The index is built once per graph version from the ``Entity`` nodes ingest
wrote (:mod:`cef.schema.textgraph`) and cached per engine; :func:`link_query_entities`
finds the entities a question names (NER, gazetteer, fuzzy names).
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.errors import CefError
from cef.extract.base import Mention
from cef.extract.normalize import alias_keys, normalize_name
from cef.extract.resolve import NameResolver, Resolved
from cef.extract.spacy_ner import Gazetteer, SpacyEntityExtractor, spacy_stopwords
from cef.graph.index import GraphIndex
from cef.model import Node
from cef.retrieve.entityfollow import follow_changes
from cef.retrieve.entityindex import EntityIndex
from cef.retrieve.entityparts import (
    add_names,
    entity_key,
    fill_mention_arrays,
    is_extracted,
    mention_edges,
    text_containers,
    title_passages,
    unique_sorted,
)
from cef.retrieve.names import name_finder
from cef.retrieve.presets import EntityLinkingSettings
from cef.retrieve.visibility import sees
from cef.schema.textgraph import (
    CO_OCCURS_WITH,
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
    edges, src, dst, w = mention_edges(g)

    entity_pos = unique_sorted(dst)
    candidate = g.node_alive.view[:n].copy()
    candidate[entity_pos] = False
    # text containers have no names of their own; a domain node of such a label does
    candidate &= ~text_containers(g)
    other = np.flatnonzero(candidate).tolist()
    nodes = {nd.id: nd for nd in state.get_nodes([g.node_ids[p] for p in [*entity_pos.tolist(), *other]])}
    passages = unique_sorted(src)
    title_of = title_passages(state, g, edges, src, dst, passages)

    gaz = Gazetteer(require_capital=False)
    resolver = NameResolver()
    key_index: dict[str, int] = {}
    names: dict[int, str] = {}
    types: dict[int, list[str]] = {}

    names_of = name_finder(state).names_of

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
        key = entity_key(node)
        resolver.add(
            node.id, node.label, [node.name, *node.aliases], curated=not is_extracted(node), types=types[p]
        )
        if key:
            key_index.setdefault(key, p)
            gaz.add(key, "ENTITY", node.id, aliases=False)
        for alias in node.aliases:
            ak = normalize_name(alias)
            if ak:
                key_index.setdefault(ak, p)
        if not is_extracted(node):  # a curated node the text mentions: named by its aliases as in step 3
            add_names(gaz, key_index, node, p, names_of(node))
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
        add_names(gaz, key_index, node, p, names_of(node))
        resolver.add(
            node.id, node.label, [node.name, *node.aliases], curated=not is_extracted(node), types=types[p]
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
    fill_mention_arrays(
        index, n, edges, src, dst, w, passages, title_of, [c for cs in lists for c in cs], counts
    )
    return index


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
