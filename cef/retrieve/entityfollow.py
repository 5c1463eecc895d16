"""Following graph writes in the entity index: the next index made from the last one and the changes.

:func:`follow_changes` is what :func:`cef.retrieve.entities.entity_index` tries first when
the graph it indexed has changed since: it reads only the records the changes touched and
makes the index a build would make, or says (None) that the changes are of a kind it does
not follow, and the index is built again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from cef.extract.normalize import alias_keys, normalize_name
from cef.extract.resolve import NameResolver
from cef.extract.spacy_ner import Gazetteer, GazetteerEntry
from cef.graph.arrays import Overlay, RaggedStrings
from cef.graph.index import GraphIndex
from cef.graph.journal import GraphChanges
from cef.model import Node
from cef.retrieve.entityindex import EntityIndex
from cef.retrieve.entityparts import (
    add_names,
    entity_key,
    fill_mention_arrays,
    is_extracted,
    is_text_container,
    mention_edges,
    types_of,
    unique_sorted,
)
from cef.retrieve.names import name_finder
from cef.schema.textgraph import CONTAINER_LABELS, MENTIONS, TITLE_TYPE

if TYPE_CHECKING:
    from cef.retrieve.ports import EngineView

__all__ = ["FOLLOW_MAX", "follow_changes"]

#: names added since the last build after which the next change builds the index again (an Overlay's
#: added keys are copied into the next version's)
FOLLOW_MAX = 200_000

#: what the resolver of a followed index adds to the old one's: node id, label, names, curated,
#: types, entity (see :func:`_derive_resolver`)
_ResolverAdd = tuple[str, str, list[str], bool, list[str], bool]


def follow_changes(
    state: EngineView, g: GraphIndex, old: EntityIndex, changes: GraphChanges, stamp: tuple[int, int]
) -> EntityIndex | None:
    """The index of the graph after ``changes``, made from ``old`` and the records the changes touched,
    equal to what :func:`cef.retrieve.entities._build` would make; None when the changes are of a kind
    it does not follow (a removal, a changed node record, a node that turned into an entity): then the
    index is built.

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
    if not _followable(g, old, changes, old_n, containers):
        return None
    found = _find_named(state, g, old, changes, old_n, containers)
    if found is None:
        return None
    named = _follow_names(old, found)
    if named is None:
        return None
    index = EntityIndex(
        stamp=stamp, gazetteer=named.gaz, key_index=named.key_index, names=named.names, types=named.types
    )
    index._resolver_from = functools.partial(_derive_resolver, old, named.resolver_adds, found.is_entity, g)
    edges, src, dst, w = mention_edges(g)
    if not len(edges):
        return index
    passages = unique_sorted(src)
    fill_mention_arrays(
        index,
        n,
        edges,
        src,
        dst,
        w,
        passages,
        _follow_titles(g, old, passages, src, dst, found.title_edges),
        *_follow_chunks(state, g, old, passages, changes.touched_nodes | changes.new_nodes),
    )
    return index


def _old_entity(old: EntityIndex, p: int) -> bool:
    """Whether node ``p`` is an entity of ``old`` (the target of a MENTIONS edge)."""
    ent_ptr = old.ent_ptr
    return p + 1 < len(ent_ptr) and bool(ent_ptr[p + 1] > ent_ptr[p])


def _followable(
    g: GraphIndex, old: EntityIndex, changes: GraphChanges, old_n: int, containers: set[int]
) -> bool:
    """False when a node or MENTIONS edge the changes updated may have changed names or title flags."""
    for p in changes.updated_nodes:  # a changed record may change names: only unnamed containers are followed
        if p >= old_n or p in old.names or int(g.node_label[p]) not in containers:
            return False
    code = g.relations.get(MENTIONS)
    for e in changes.edges:  # an updated MENTIONS edge may have changed its title flag
        if (
            e < len(g.edge_ids)
            and code is not None
            and int(g.e_rel[e]) == code
            and e not in changes.new_edges
        ):
            return False
    return True


def _new_mention_edges(g: GraphIndex, changes: GraphChanges) -> list[int]:
    """The live MENTIONS edges between live nodes the changes added, in position order."""
    code = g.relations.get(MENTIONS)
    return sorted(
        e
        for e in changes.new_edges
        if g.e_alive[e]
        and code is not None
        and int(g.e_rel[e]) == code
        and g.node_alive[int(g.e_src[e])]
        and g.node_alive[int(g.e_dst[e])]
    )


def _new_entities(g: GraphIndex, old: EntityIndex, new_edges: list[int], old_n: int) -> list[int] | None:
    """The new nodes the new edges mention, sorted; None when one of them mentions an old node that
    was not an entity (it is one now: its names move, build again)."""
    new_entities: list[int] = []
    seen: set[int] = set()
    for e in new_edges:
        d = int(g.e_dst[e])
        if d in seen:
            continue
        seen.add(d)
        if d >= old_n:
            new_entities.append(d)
        elif not _old_entity(old, d):
            return None  # a node that was not an entity is one now: its names move (build again)
    new_entities.sort()
    return new_entities


@dataclass
class _Named:
    """The nodes a run of changes names: new entities (positions past the old index's), other new
    named nodes, titles first seen in the new title edges, and the records of those nodes."""

    g: GraphIndex
    old: EntityIndex
    new_entities: list[int]
    new_other: list[int]
    new_titled: list[int]
    title_edges: list[int]
    records: dict[str, Node]
    entity_set: set[int] = field(init=False)

    def __post_init__(self) -> None:
        self.entity_set = set(self.new_entities)

    def record(self, p: int) -> Node | None:
        return self.records.get(self.g.node_ids[p])

    def is_entity(self, p: int | None) -> bool:
        return p is not None and (p in self.entity_set or _old_entity(self.old, p))

    def step(self, entry: GazetteerEntry) -> int:
        """Where a gazetteer entry comes in a build: 1 entities, 2 titles, 3 other names."""
        if entry.type == TITLE_TYPE:
            return 2
        return 1 if self.is_entity(self.g.pos(entry.ref) if entry.ref else None) else 3


def _find_named(
    state: EngineView,
    g: GraphIndex,
    old: EntityIndex,
    changes: GraphChanges,
    old_n: int,
    containers: set[int],
) -> _Named | None:
    """The nodes ``changes`` name, with their records read from the store; None when a node becomes an
    entity, a new curated node is mentioned by text, or a new node's naming value is shared (names
    move: build again)."""
    new_edges = _new_mention_edges(g, changes)
    new_entities = _new_entities(g, old, new_edges, old_n)
    if new_entities is None:
        return None
    entity_set = set(new_entities)
    new_other = [
        p
        for p in sorted(changes.new_nodes)
        if p not in entity_set
        and g.node_alive[p]
        and (int(g.node_label[p]) not in containers or not is_text_container(g, p))
    ]
    flags = state.store.edge_property([g.edge_ids[e] for e in new_edges], "title") if new_edges else {}
    title_edges = [e for e in new_edges if flags.get(g.edge_ids[e]) is True]
    new_titled = list(
        dict.fromkeys(int(g.e_dst[e]) for e in title_edges if int(g.e_dst[e]) not in old.title_owners)
    )
    wanted = dict.fromkeys([*new_entities, *new_other, *new_titled])
    records = {nd.id: nd for nd in state.get_nodes([g.node_ids[p] for p in wanted])}
    found = _Named(g, old, new_entities, new_other, new_titled, title_edges, records)
    finder = name_finder(state)
    named = [nd for p in new_other if (nd := found.record(p)) is not None]
    if any(not finder.tells_apart(v, nd.id) for nd in named for v in nd.value_names):
        return None  # a value a new node shares with another node names neither of them: build again
    if any((nd := found.record(p)) is not None and not is_extracted(nd) for p in new_entities):
        return (
            None  # a new curated node mentioned by text: its names go between the old entities' and others'
        )
    return found


@dataclass
class _Names:
    """The names part of the followed index: each mapping reads through to the old index's."""

    gaz: Gazetteer
    key_index: Overlay[str, int]
    names: Overlay[int, str]
    types: Overlay[int, list[str]]
    resolver_adds: list[_ResolverAdd] = field(default_factory=list)


def _follow_names(old: EntityIndex, found: _Named) -> _Names | None:
    """``old``'s names with those of the new nodes added in build order; None when the names added
    since the last build are too many (:data:`FOLLOW_MAX`) or an entity takes a key another node holds."""
    gaz = Gazetteer(require_capital=old.gazetteer.require_capital, min_chars=old.gazetteer.min_chars)
    entries = Overlay(old.gazetteer._entries)
    gaz._entries = entries
    gaz._max_words = old.gazetteer._max_words
    if len(entries.top) > FOLLOW_MAX:  # what was added since the last build: time to build afresh
        return None
    out = _Names(gaz, Overlay(old.key_index), Overlay(old.names), Overlay(old.types))
    # 1. new entities (after every old one: their positions are higher), before titles and other names
    if not _add_entities(out, found):
        return None
    # 2. titles first seen in these edges, in edge order
    after_titles = lambda e: found.step(e) >= 3  # noqa: E731
    for p in found.new_titled:
        node = found.record(p)
        if node is not None:
            gaz.add(node.name, TITLE_TYPE, node.id, before=after_titles)
    # 3. other named nodes, after everything
    for p in found.new_other:
        node = found.record(p)
        if node is None:
            continue
        out.names[p], out.types[p] = node.name, types_of(node)
        if node.name == node.id and "name" not in node.properties:
            continue
        add_names(gaz, out.key_index, node, p, node.names)
        out.resolver_adds.append(
            (node.id, node.label, [node.name, *node.aliases], not is_extracted(node), out.types[p], False)
        )
    return out


def _add_entities(out: _Names, found: _Named) -> bool:
    """The new entities' names and keys; False when a non-entity holds a key an entity takes."""

    def claim(key: str, p: int, first: bool) -> bool:
        """key_index.setdefault in build order: False when a non-entity holds a key an entity takes."""
        holder = out.key_index.get(key)
        if holder is None:
            out.key_index[key] = p
        elif first and not found.is_entity(holder):
            return False
        return True

    after_entities = lambda e: found.step(e) >= 2  # noqa: E731
    for p in found.new_entities:
        node = found.record(p)
        if node is None:
            continue
        out.names[p], out.types[p] = node.name, types_of(node)
        out.resolver_adds.append((node.id, node.label, [node.name, *node.aliases], False, out.types[p], True))
        key = entity_key(node)
        if key:
            if not claim(key, p, True):
                return False
            out.gaz.add(key, "ENTITY", node.id, aliases=False, before=after_entities)
        for alias in node.aliases:
            ak = normalize_name(alias)
            if ak and not claim(ak, p, True):
                return False
    return True


def _derive_resolver(
    old: EntityIndex,
    adds: list[_ResolverAdd],
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
