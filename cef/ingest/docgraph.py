"""The records one document adds to the text graph: passage nodes, entity nodes, MENTIONS edges, co-mentions.

:class:`~cef.ingest.enrich.EntityEnricher` finds the mentions; :class:`DocGraph`
turns them into records, linking each to the node its name already belongs to
(:class:`KnownNames`) or to a new ``Entity`` node.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cef.extract.base import Mention
from cef.extract.cooccur import cooccurrence
from cef.extract.normalize import alias_keys, normalize_name
from cef.extract.resolve import NameResolver, Resolved
from cef.extract.spacy_ner import Gazetteer
from cef.model import Chunk, Edge, Node, stable_id
from cef.schema.textgraph import (
    CO_OCCURS_WITH,
    ENTITY_LABEL,
    MENTIONS,
    PASSAGE_LABEL,
    TITLE_TYPE,
    entity_id,
    passage_id,
)

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = [
    "DocGraph",
    "KnownNames",
    "MentionLink",
    "NewEntity",
    "chunk_title",
    "cooccurrence_edges",
    "first_words",
]

_FIRST_WORDS = 8
_MAX_ALIASES = 10
_WORDS = re.compile(r"\S+")


@dataclass
class KnownNames:
    """Names already in the knowledge base: a gazetteer whose entries point at nodes, and the
    resolver that says which node a name stands for (exact, alias, fuzzy, partial)."""

    gazetteer: Gazetteer  # names extracted from text: matched in running text only when capitalised
    resolver: NameResolver
    curated_gazetteer: Gazetteer  # names of curated nodes: matched in any case ("started on warfarin")
    names: dict[str, str]  # node id -> display name
    curated: list[tuple[str, str]] = field(default_factory=list)  # (node id, name) of curated nodes


@dataclass
class MentionLink:
    """Everything one chunk says about one target node (becomes one MENTIONS edge)."""

    target: str
    mention: str
    type: str
    weight: float
    confidence: float
    title: bool = False  # the chunk's title names this target
    offsets: list[list[int]] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)

    def add(self, m: Mention, weight: float) -> None:
        if m.start >= 0 and [m.start, m.end] not in self.offsets:
            self.offsets.append([m.start, m.end])
        self.weight = max(self.weight, weight)
        self.confidence = max(self.confidence, m.confidence)
        if m.source:
            self.sources.add(m.source)


@dataclass
class NewEntity:
    name: str
    title: bool
    scope: str | None = None
    aliases: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)

    def saw(self, text: str, type_: str, *, title: bool) -> None:
        if title and not self.title:  # a title is the best display name
            if self.name not in self.aliases:
                self.aliases.insert(0, self.name)
            self.name, self.title = text, True
        elif text != self.name and text not in self.aliases and len(self.aliases) < _MAX_ALIASES:
            self.aliases.append(text)
        if type_ and type_ not in self.types:
            self.types.append(type_)


class DocGraph:
    """The records one document adds: passage nodes, entity nodes, MENTIONS edges, co-mentions."""

    def __init__(
        self,
        kb: KnowledgeBase,
        known: KnownNames,
        local: KnownNames,
        batch_nodes: set[str],
        title_weight: float,
        embedded: dict[str, str] | None = None,
    ) -> None:
        self.graph = kb.state.graph
        self.known = known
        self.local = local  # the document's own nodes
        self.batch_nodes = batch_nodes
        self.title_weight = title_weight
        self.embedded = embedded or {}
        self.passages: list[Node] = []
        self.entities: dict[str, NewEntity] = {}
        self.display: dict[str, str] = {}  # target node id -> name (for synonyms)
        self.edges: list[Edge] = []
        self.co_mentions: list[list[Mention]] = []  # per chunk, normalized = target node id
        self.linked: set[str] = set()  # existing (or same-document) nodes mentions resolved to
        self.tiers: dict[str, int] = {}  # resolution tier -> distinct names resolved by it
        self._seen: dict[tuple[str, str | None, str | None], str] = {}
        self.scope: str | None = None  # the scope of the chunk being linked (its text's tenant)

    def _visible(self, target: str | None) -> str | None:
        """``target`` if the current chunk's scope may link to it (its own scope's and shared nodes,
        and the batch's own), else None: text never points at another tenant's node."""
        if target is None or self.scope is None or target in self.batch_nodes:
            return target
        if self.graph.has_node(target):
            return target if self.graph.sees(target, self.scope) else None
        return target if target in self.entities and self.entities[target].scope == self.scope else None

    def resolve(self, text: str, key: str, hint: str | None = None) -> str:
        """The node a name stands for: a node of this document or of the knowledge base (exact or
        alias name first, then fuzzy and partial names of curated nodes, then name embeddings),
        else the id of its (new) entity."""
        cached = self._seen.get((text, hint, self.scope))
        if cached is not None:
            return cached
        got: Resolved | None = None
        for tier in ({"fuzzy": False, "partial": False}, {}):
            for resolver in (self.local.resolver, self.known.resolver):
                got = resolver.resolve(text, hint=hint, **tier)
                if got is not None and self._visible(got.node_id) is None:
                    got = None  # another tenant's node: as if the name were unknown
                if got is not None:
                    break
            if got is not None:
                break
        how = got.how if got is not None else None
        target = got.node_id if got is not None else None
        if target is None and self._visible(self.embedded.get(text)) is not None:
            target, how = self.embedded[text], "embedding"
        if target is None:
            target = entity_id(key, self.scope)
        if how is not None:
            self.linked.add(target)
            if how not in ("exact", "alias"):
                self.tiers[how] = self.tiers.get(how, 0) + 1
        self._seen[(text, hint, self.scope)] = target
        return target

    def note(self, target: str, text: str, type_: str, *, title: bool) -> None:
        """Remember the target's display name, and the entity node to create if it is new."""
        known_name = self.known.names.get(target) or self.local.names.get(target)
        if known_name is not None:
            self.display.setdefault(target, known_name)
        elif title or target not in self.display:
            self.display[target] = text
        if target in self.batch_nodes or known_name is not None or self.graph.has_node(target):
            return
        ent = self.entities.get(target)
        if ent is None:
            self.entities[target] = NewEntity(text, title, self.scope, [], [type_] if type_ else [])
        else:
            ent.saw(text, type_, title=title)

    def add_chunk(
        self, chunk: Chunk, title: str | None, mentions: list[Mention], gazetteers: Sequence[Gazetteer]
    ) -> Chunk:
        """Link one chunk to what it mentions; returns the chunk (linked to its passage node if new)."""
        self.scope = chunk.scope
        holder = chunk.node_id
        if holder is None:
            holder = passage_id(chunk.id)
            self.passages.append(
                Node(
                    id=holder,
                    label=PASSAGE_LABEL,
                    properties={"name": title or first_words(chunk.content), "chunk_id": chunk.id},
                    scope=chunk.scope,
                )
            )
            chunk = chunk.model_copy(update={"node_id": holder})
        links: dict[str, MentionLink] = {}
        co: list[Mention] = []
        spans: set[tuple[str, int, int]] = set()  # a span found by NER and by a gazetteer counts once

        def link(target: str, m: Mention, weight: float, *, is_title: bool = False) -> None:
            if target == holder:
                return
            cur = links.get(target)
            if cur is None:
                cur = links[target] = MentionLink(target, m.text, m.type, weight, m.confidence, is_title)
            cur.add(m, weight)
            span = (target, m.start, m.end)
            if span not in spans:
                spans.add(span)
                co.append(Mention(m.text, target, m.type, m.start, m.end, m.confidence, m.source))

        if title:
            key = normalize_name(title)
            if key:
                target = self.resolve(title, key)
                self.note(target, title, TITLE_TYPE, title=True)
                link(
                    target,
                    Mention(title, key, TITLE_TYPE, -1, -1, 1.0, "title"),
                    self.title_weight,
                    is_title=True,
                )
        for m in mentions:
            target = self.resolve(m.text, m.normalized, m.type)
            self.note(target, m.text, m.type, title=False)
            link(target, m, 1.0)
        for gaz in gazetteers:
            if not len(gaz):
                continue
            for m in gaz.match(chunk.content):
                for entry in gaz.entries(m.normalized):
                    if entry.ref is not None and self._visible(entry.ref) is not None:
                        target = entry.ref
                    else:
                        keys = alias_keys(entry.name)
                        if not keys:
                            continue
                        target = self.resolve(entry.name, keys[0], entry.type)
                    self.note(target, entry.name, entry.type, title=entry.type == TITLE_TYPE)
                    link(target, m, 1.0)
        for lk in links.values():
            self.edges.append(
                Edge(
                    id=stable_id("mentions", chunk.id, lk.target),
                    relation_type=MENTIONS,
                    source=holder,
                    target=lk.target,
                    weight=lk.weight,
                    confidence=round(lk.confidence, 4),
                    properties={
                        "offsets": lk.offsets,
                        "mention": lk.mention,
                        "type": lk.type,
                        "title": lk.title,
                        "chunk_id": chunk.id,
                        "sources": sorted(lk.sources),
                    },
                    scope=chunk.scope,
                )
            )
        self.co_mentions.append(co)
        return chunk

    def nodes(self) -> list[Node]:
        """The passage nodes and the new entity nodes."""
        ents = [
            Node(
                id=target,
                label=ENTITY_LABEL,
                properties={"name": ent.name, "aliases": ent.aliases, "types": ent.types},
                scope=ent.scope,
            )
            for target, ent in self.entities.items()
        ]
        return [*self.passages, *ents]


def chunk_title(chunk: Chunk) -> str | None:
    value = chunk.metadata.get("title")
    return value.strip() if isinstance(value, str) and value.strip() else None


def first_words(text: str) -> str:
    words = _WORDS.findall(text)
    head = " ".join(words[:_FIRST_WORDS])
    return head + ("…" if len(words) > _FIRST_WORDS else "")


def cooccurrence_edges(
    doc_key: str, texts: list[str], mentions: list[list[Mention]], max_distance: int | None
) -> list[Edge]:
    """CO_OCCURS_WITH edges between the targets mentioned together in a document's chunks."""
    stats = cooccurrence(texts, mentions, max_distance=max_distance)
    return [
        Edge(
            id=stable_id("cooccurs", doc_key, a, b),
            relation_type=CO_OCCURS_WITH,
            source=a,
            target=b,
            weight=float(st.doc_count),
            # one shared passage is weak evidence; each further one makes it stronger
            confidence=round(st.doc_count / (st.doc_count + 1.0), 4),
            properties={
                "count": st.count,
                "doc_count": st.doc_count,
                "avg_proximity": round(st.avg_proximity, 3),
            },
        )
        for (a, b), st in stats.items()
    ]
