"""A graph from plain text at ingest, without an LLM: entities, mentions, co-occurrence, synonyms.

:class:`EntityEnricher` is an ingest :data:`~cef.ingest.pipeline.Enricher`: it
takes a parsed document and returns it with more records in its batch:

* every chunk gets a graph node: the node it is already linked to (a shared
  document node, a domain node), else its own ``Passage`` node
  (id ``passage:<chunk id>``, named by the chunk's title or first words);
* entities found in each chunk — spaCy NER names, the chunk's title (metadata
  ``title``), and gazetteer matches of names already in the graph (node names
  and aliases) or found earlier in the run — are normalized
  (:func:`~cef.extract.normalize.normalize_name`, :func:`~cef.extract.normalize.alias_keys`)
  and linked: to the existing node a name belongs to (text naming "Warfarin"
  links to the ``Medication`` node), else to an ``Entity`` node
  (id ``entity:<normalized name>``, properties ``name``, ``aliases``, ``types``);
* ``MENTIONS`` edges (chunk node → entity) carry the character offsets, the
  mention text, its type, the chunk id, the extractors that found it and their
  confidence; the edge to the title entity has ``"title": true`` and weighs
  ``title_weight``, other mentions 1;
* ``CO_OCCURS_WITH`` edges join entities of the same chunk (``count``,
  ``doc_count``, ``avg_proximity`` in words), one set per document;
* ``SYNONYM`` edges join near-duplicate entity names by embedding similarity
  (confidence = cosine) when the knowledge base has an embedder.

Ids are stable (the same text gives the same ids), so re-ingesting a document
updates its records instead of duplicating them; co-occurrence and synonym
edge ids include the document, so each document replaces its own. Entity
nodes are written only when new: an entity many files mention belongs to none
of them, and the ingest pipeline removes it only when nothing references it.

Any :class:`~cef.extract.base.EntityExtractor` (an LLM one, later) can replace
the spaCy extractor; the title, gazetteer, normalization and graph records
stay the same.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.engine.embedding import embed_texts
from cef.errors import ConfigurationError, MissingExtraError
from cef.extract.base import EntityExtractor, Mention, RelationExtractor, RelationMention
from cef.extract.normalize import near_duplicates
from cef.extract.resolve import NameResolver
from cef.extract.spacy_ner import DEFAULT_MODEL, Gazetteer, SpacyEntityExtractor
from cef.ingest.docgraph import DocGraph, KnownNames, chunk_title, cooccurrence_edges
from cef.ingest.notelinks import NOTE_PROPERTY, first_line, mask_markup
from cef.ingest.parsers.base import ParsedDocument
from cef.ingest.windows import in_windows
from cef.model import Batch, Chunk, Edge, Node, RelationSemantics, RelationType, stable_id
from cef.schema.textgraph import (
    CO_OCCURS_WITH,
    MENTIONED_IN,
    MENTIONS,
    PASSAGE_LABEL,
    RELATION_TYPES,
    SYNONYM,
    TITLE_TYPE,
    is_extracted,
    relation_type_name,
)

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.engine.kb import KnowledgeBase
    from cef.engine.state import ProgressFn
    from cef.graph.index import GraphIndex

__all__ = ["EntityEnricher", "merge_cooccurrence"]

log = logging.getLogger(__name__)

#: the embedding tier of entity resolution compares mentions with at most this many curated names
_MAX_EMBEDDED_NAMES = 20_000
#: entity-name vectors kept between documents (and parts of a file) for synonym detection
_NAME_CACHE = 50_000
_OWN_RELATIONS = frozenset({MENTIONS, MENTIONED_IN, CO_OCCURS_WITH, SYNONYM})

#: the longest text handed to the extractor at once (spaCy's limit is 1,000,000 characters): longer
#: records are read in windows of this size (:func:`cef.ingest.windows.in_windows`)
MAX_EXTRACT_CHARS = 100_000


def _node_types(node: Node) -> list[str]:
    raw = node.properties.get("types")
    return [t for t in raw if isinstance(t, str)] if isinstance(raw, list) else []


class EntityEnricher:
    """Ingest enricher: entity mentions, title entities, co-occurrence and synonyms as graph records.

    ``extractor``: any :class:`~cef.extract.base.EntityExtractor` (default: spaCy
    NER, :class:`~cef.extract.spacy_ner.SpacyEntityExtractor`; raises
    :class:`~cef.errors.MissingExtraError` when the ``nlp`` extra is missing).
    ``title_weight``: weight of the MENTIONS edge from a chunk to its title entity.
    ``cooccurrence``/``synonyms``: write CO_OCCURS_WITH / SYNONYM edges.
    ``max_cooccur_distance``: co-occurring mentions farther apart than this many
    words are not paired (``None``: any distance in the chunk).
    ``synonym_threshold``/``synonym_neighbors``: cosine a synonym pair needs, and
    partners per name. ``title_in_embedding``: embed a titled chunk as
    ``title + text`` (the title gives a passage its context). ``container_labels``:
    node labels that stand for text containers, not things — their names are
    not looked for in text. ``min_entity_confidence``: extracted mentions below it
    are dropped (spaCy's are 0.85, titles and gazetteer matches 0.9-1.0; an LLM
    says its own). ``min_relation_confidence``: relations an extractor that also
    implements :class:`~cef.extract.base.RelationExtractor` (the LLM one) states
    become typed edges between the two entities when at least this confident.

    Entity resolution (:class:`~cef.extract.resolve.NameResolver`): a mention
    links to the node it names — a node of the same document, or one already in
    the knowledge base, curated or extracted — by exact name or alias key, then
    (curated nodes only) by fuzzy similarity ≥ ``fuzzy_cutoff``, by partial name
    (its words in exactly one node name), then by the cosine of name embeddings
    ≥ ``embedding_threshold`` (None: off). A new ``Entity`` node is made only when
    nothing matches. The document's ``entities`` counts say how many mentions
    were linked, how many entities are new, and by which tier.

    Example::

        from cef.ingest.pipeline import ingest_sources
        ingest_sources(kb, ["corpus.jsonl.gz"], enricher=EntityEnricher(title_weight=4.0))
    """

    #: passages extracted between two progress reports
    PROGRESS_STEP = 128

    def __init__(
        self,
        extractor: EntityExtractor | None = None,
        *,
        title_weight: float = 4.0,
        cooccurrence: bool = True,
        synonyms: bool = True,
        max_cooccur_distance: int | None = 30,
        synonym_threshold: float = 0.9,
        synonym_neighbors: int = 3,
        title_in_embedding: bool = True,
        container_labels: Iterable[str] = (PASSAGE_LABEL, "Document"),
        min_entity_confidence: float = 0.5,
        min_relation_confidence: float = 0.5,
        fuzzy_cutoff: float = 0.88,
        embedding_threshold: float | None = 0.9,
    ) -> None:
        if title_weight <= 0:
            raise ValueError("title_weight must be > 0")
        for name, value in (
            ("min_entity_confidence", min_entity_confidence),
            ("min_relation_confidence", min_relation_confidence),
        ):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        if max_cooccur_distance is not None and max_cooccur_distance < 0:
            raise ValueError("max_cooccur_distance must be >= 0 or None")
        if not 0.0 < synonym_threshold <= 1.0:
            raise ValueError("synonym_threshold must be in (0, 1]")
        if extractor is None:
            _check_spacy()
            extractor = SpacyEntityExtractor(titles_as_entities=False, n_process=_workers())
        self.extractor = extractor
        self.title_weight = float(title_weight)
        self.cooccurrence = cooccurrence
        self.synonyms = synonyms
        self.max_cooccur_distance = max_cooccur_distance
        self.synonym_threshold = synonym_threshold
        self.synonym_neighbors = synonym_neighbors
        self.title_in_embedding = title_in_embedding
        self.container_labels = frozenset(container_labels)
        self.min_entity_confidence = float(min_entity_confidence)
        self.min_relation_confidence = float(min_relation_confidence)
        self.fuzzy_cutoff = float(fuzzy_cutoff)
        self.embedding_threshold = embedding_threshold
        self._name_vectors: tuple[tuple[int, int], list[str], Any] | None = None
        self._name_cache: tuple[str, OrderedDict[str, Any]] = ("", OrderedDict())
        #: names extracted so far in this run (titles and NER names), matched in later text
        self.run_gazetteer = Gazetteer()
        self._known: tuple[tuple[int, int], KnownNames] | None = None

    # ------------------------------------------------------------------ entry point
    def __call__(self, kb: KnowledgeBase, doc: ParsedDocument) -> ParsedDocument:
        return self.enrich(kb, doc)

    def enrich(
        self, kb: KnowledgeBase, doc: ParsedDocument, *, progress: ProgressFn | None = None
    ) -> ParsedDocument:
        """``doc`` with its entities, mentions and relations; ``progress`` counts passages (and embeddings)."""
        batch = doc.batch
        if not batch.chunks:
            return doc
        known = self.known_names(kb)
        chunks = list(batch.chunks)
        titles = [chunk_title(c) for c in chunks]
        texts = [mask_markup(c.content) for c in chunks]  # link syntax never inside a mention
        relations: list[list[RelationMention]] = [[] for _ in chunks]
        found = self._extract(texts, titles, relations, progress)
        if len(found) != len(chunks) or len(relations) != len(chunks):
            raise ValueError(f"extractor returned {len(found)} results for {len(chunks)} texts")
        take = getattr(self.extractor, "take_warnings", None)
        extractor_warnings: list[str] = list(take()) if callable(take) else []
        floor = self.min_entity_confidence
        ner = [
            [m for m in map(first_line, ms) if m.start >= 0 and m.normalized and m.confidence >= floor]
            for ms in found
        ]
        for title in titles:
            if title:
                self.run_gazetteer.add(title, TITLE_TYPE)
        for ms in ner:
            for m in ms:
                self.run_gazetteer.add(m.text, m.type)

        local = self._names_of(batch.nodes)
        embedded = self._embedding_matches(kb, known, local, titles, ner)
        build = DocGraph(kb, known, local, {n.id for n in batch.nodes}, self.title_weight, embedded)
        gazetteers = (
            local.curated_gazetteer,
            local.gazetteer,
            known.curated_gazetteer,
            known.gazetteer,
            self.run_gazetteer,
        )
        out_chunks = [
            build.add_chunk(chunk, title, mentions, gazetteers)
            for chunk, title, mentions in zip(chunks, titles, ner, strict=True)
        ]
        new_nodes = build.nodes()
        edges = build.edges
        doc_key = _doc_key(doc, chunks)
        if self.cooccurrence:
            edges.extend(cooccurrence_edges(doc_key, texts, build.co_mentions, self.max_cooccur_distance))
        warnings = [*doc.warnings, *extractor_warnings]
        relation_edges, relation_types = self._relation_edges(
            kb, doc_key, build, out_chunks, relations, batch
        )
        edges.extend(relation_edges)
        if self.synonyms and kb.embedder is not None:
            try:
                edges.extend(self._synonym_edges(kb, doc_key, build.display, progress))
            except Exception as exc:  # synonyms are a bonus: never lose the document over them
                log.warning("synonym detection failed: %s", exc)
                warnings.append(f"synonym detection skipped: {exc}")
        if self.title_in_embedding and kb.embedder is not None:
            out_chunks = self._embed_with_titles(kb, out_chunks, progress)
        scopes = {c.scope for c in chunks}
        if len(scopes) == 1 and None not in scopes:  # what a tenant's text says stays the tenant's
            (scope,) = scopes
            edges = [e if e.scope is not None else e.model_copy(update={"scope": scope}) for e in edges]

        rel_names = {r.name for r in batch.relation_types}
        registered = kb.state.graph.rel_types
        extra_types = [rt for rt in RELATION_TYPES if rt.name not in rel_names and rt.name not in registered]
        new_batch = Batch(
            relation_types=[*batch.relation_types, *extra_types, *relation_types],
            nodes=[*batch.nodes, *new_nodes],
            edges=[*batch.edges, *edges],
            chunks=out_chunks,
        )
        counts = {"linked": len(build.linked), "new": len(new_nodes) - len(build.passages)}
        counts.update({f"by_{how}": n for how, n in sorted(build.tiers.items())})
        return doc.model_copy(update={"batch": new_batch, "warnings": warnings, "entities": counts})

    def _extract(
        self,
        texts: list[str],
        titles: list[str | None],
        relations: list[list[RelationMention]],
        progress: ProgressFn | None,
    ) -> list[list[Mention]]:
        """The extractor's mentions per text (and, for a relation extractor, its relations into ``relations``)."""
        if any(len(t) > MAX_EXTRACT_CHARS for t in texts) and not isinstance(
            self.extractor, RelationExtractor
        ):
            return in_windows(
                lambda parts, part_titles: self._extract(parts, part_titles, [[] for _ in parts], progress),
                texts,
                titles,
                MAX_EXTRACT_CHARS,
            )
        what = "extracting entities (passages)"
        if isinstance(self.extractor, SpacyEntityExtractor):  # all texts in one call: its workers stay busy
            report = None if progress is None else lambda done, total: progress(what, done, total)
            return self.extractor.extract(texts, titles, progress=report)
        found: list[list[Mention]] = []
        step = self.PROGRESS_STEP if progress is not None else max(len(texts), 1)
        for start in range(0, len(texts), step):
            part, part_titles = texts[start : start + step], titles[start : start + step]
            if isinstance(self.extractor, RelationExtractor):
                extractions = self.extractor.extract_relations(part, part_titles)
                found += [x.mentions for x in extractions]
                relations[start : start + len(part)] = [x.relations for x in extractions]
            else:
                found += self.extractor.extract(part, part_titles)
            if progress is not None:
                progress(what, start + len(part), len(texts))
        return found

    # ------------------------------------------------------------------ known names
    def known_names(self, kb: KnowledgeBase) -> KnownNames:
        """The knowledge base's node names as a gazetteer and a resolver (rebuilt when the graph changed)."""
        graph = kb.state.graph
        stamp = (id(graph), graph.generation)
        if self._known is not None and self._known[0] == stamp:
            return self._known[1]
        known = self._names_of(kb.store.iter_nodes())
        self._known = (stamp, known)
        return known

    def _names_of(self, nodes: Iterable[Node]) -> KnownNames:
        gaz = Gazetteer()
        cgaz = Gazetteer(require_capital=False)
        resolver = NameResolver(fuzzy_cutoff=self.fuzzy_cutoff)
        names: dict[str, str] = {}
        curated: list[tuple[str, str]] = []
        for node in nodes:
            note = node.properties.get(NOTE_PROPERTY) is True  # a note is named by its title
            if node.label in self.container_labels and not note:
                continue
            if node.name == node.id and "name" not in node.properties:
                continue  # an unnamed node: nothing to look for in text
            names[node.id] = node.name
            extracted = is_extracted(node) or note  # a note's title matches only when written like a name
            if not extracted:
                curated.append((node.id, node.name))
            all_names = [node.name, *node.aliases]
            # a user's own names are looked for in any case ("started on warfarin"); names extracted
            # from text only when written like names
            target_gaz = gaz if extracted else cgaz
            for name in all_names:
                target_gaz.add(name, node.label, node.id)
            resolver.add(node.id, node.label, all_names, curated=not extracted, types=_node_types(node))
        return KnownNames(gaz, resolver, cgaz, names, curated)

    # ------------------------------------------------------------------ edges
    def _relation_edges(
        self,
        kb: KnowledgeBase,
        doc_key: str,
        build: DocGraph,
        chunks: Sequence[Chunk],
        relations: Sequence[Sequence[RelationMention]],
        batch: Batch,
    ) -> tuple[list[Edge], list[RelationType]]:
        """Typed edges for the relations an extractor stated, between entities this document links."""
        graph = kb.state.graph
        known = {**graph.rel_types, **{r.name: r for r in batch.relation_types}}
        inverses = {rt.inverse for rt in known.values() if rt.inverse}
        new_types: dict[str, RelationType] = {}
        labels = {n.id: n.label for n in [*batch.nodes, *build.nodes()]}
        best: dict[tuple[str, str, str], Edge] = {}
        for chunk, found in zip(chunks, relations, strict=True):
            for rel in found:
                if rel.confidence < self.min_relation_confidence:
                    continue
                name = relation_type_name(rel.predicate)
                if name in _OWN_RELATIONS:  # the enricher's own edges mean something precise: keep them apart
                    name = f"{name}_REL"
                src = build.resolve(rel.subject.text, rel.subject.normalized, rel.subject.type)
                dst = build.resolve(rel.object.text, rel.object.normalized, rel.object.type)
                if name is None or src == dst or src not in build.display or dst not in build.display:
                    continue  # an endpoint this document does not link (dropped below the threshold)
                rt = known.get(name)
                if rt is None and name not in inverses:
                    rt = new_types.get(name)
                    if rt is None:
                        rt = new_types[name] = RelationType(
                            name=name,
                            semantics=RelationSemantics.ASSOCIATION,
                            description=f"extracted from text ({rel.predicate!r})",
                            metadata={"extracted": True, "source": rel.source or "extractor"},
                        )
                if rt is not None and (rt.source_types or rt.target_types):
                    ends = (
                        labels.get(src) or _label(graph, src),
                        labels.get(dst) or _label(graph, dst),
                    )
                    if (rt.source_types and ends[0] not in rt.source_types) or (
                        rt.target_types and ends[1] not in rt.target_types
                    ):
                        log.debug("relation %s %s %s does not fit %s's endpoint types", src, name, dst, name)
                        continue
                edge = Edge(
                    id=stable_id("relation", doc_key, src, name, dst),
                    relation_type=name,
                    source=src,
                    target=dst,
                    confidence=round(rel.confidence, 4),
                    properties={
                        "predicate": rel.predicate,
                        "evidence": rel.evidence,
                        "chunk_id": chunk.id,
                        "source": rel.source or "extractor",
                    },
                )
                key = (src, name, dst)
                if key not in best or best[key].confidence < edge.confidence:
                    best[key] = edge
        return list(best.values()), list(new_types.values())

    def _synonym_edges(
        self, kb: KnowledgeBase, doc_key: str, display: dict[str, str], progress: ProgressFn | None = None
    ) -> list[Edge]:
        by_name: dict[str, str] = {}
        for target, name in display.items():
            by_name.setdefault(name, target)
        names = list(by_name)
        if len(names) < 2:
            return []
        assert kb.embedder is not None
        vectors = self._name_vectors_of(kb.embedder, names, progress)
        out = []
        for pair in near_duplicates(
            names, vectors, threshold=self.synonym_threshold, max_neighbors=self.synonym_neighbors
        ):
            a, b = sorted((by_name[pair.left], by_name[pair.right]))
            if a == b:
                continue
            out.append(
                Edge(
                    id=stable_id("synonym", doc_key, a, b),
                    relation_type=SYNONYM,
                    source=a,
                    target=b,
                    confidence=min(1.0, max(0.0, pair.similarity)),
                    properties={"names": [pair.left, pair.right], "similarity": pair.similarity},
                )
            )
        return out

    def _name_vectors_of(self, embedder: Embedder, names: list[str], progress: ProgressFn | None) -> Any:
        """Vectors of entity names, from a cache of the names embedded lately (the parts of a large file
        name the same entities again and again)."""
        cache = self._name_cache
        if cache[0] != embedder.name:
            cache = self._name_cache = (embedder.name, OrderedDict())
        known = cache[1]
        todo = [n for n in names if n not in known]
        if todo:
            for name, vec in zip(
                todo, embed_texts(embedder, todo, "embedding entity names", progress), strict=True
            ):
                known[name] = vec
        out = np.stack([known[n] for n in names])
        for name in names:
            known.move_to_end(name)
        while len(known) > _NAME_CACHE:
            known.popitem(last=False)
        return out

    def _embedding_matches(
        self,
        kb: KnowledgeBase,
        known: KnownNames,
        local: KnownNames,
        titles: Sequence[str | None],
        ner: Sequence[Sequence[Mention]],
    ) -> dict[str, str]:
        """Mention texts no name tier resolves whose embedding is within ``embedding_threshold`` of a
        curated node's name: text -> node id. Off without an embedder or curated nodes."""
        threshold = self.embedding_threshold
        emb = kb.embedder
        curated = [*local.curated, *known.curated]
        if threshold is None or emb is None or not curated or len(curated) > _MAX_EMBEDDED_NAMES:
            return {}
        texts = [t for t in titles if t] + [m.text for ms in ner for m in ms]
        todo = [
            t
            for t in dict.fromkeys(texts)
            if local.resolver.resolve(t) is None and known.resolver.resolve(t) is None
        ]
        if not todo:
            return {}
        ids = [i for i, _ in curated]
        names = [n for _, n in curated]
        stamp = (id(kb.state.graph), kb.state.graph.generation)
        cached = self._name_vectors
        if cached is None or cached[0] != stamp or cached[1] != ids:
            cached = self._name_vectors = (stamp, ids, embed_texts(emb, names, "embedding curated names"))
        sims = embed_texts(emb, todo, "embedding mentions") @ cached[2].T
        out: dict[str, str] = {}
        for t, row in zip(todo, sims, strict=True):
            j = int(row.argmax())
            if float(row[j]) >= threshold:
                out[t] = ids[j]
        return out

    def _embed_with_titles(
        self, kb: KnowledgeBase, chunks: list[Chunk], progress: ProgressFn | None = None
    ) -> list[Chunk]:
        todo = [i for i, c in enumerate(chunks) if c.embedding is None and chunk_title(c)]
        if not todo:
            return chunks
        assert kb.embedder is not None
        vectors = embed_texts(
            kb.embedder,
            [f"{chunk_title(chunks[i])}\n{chunks[i].content}" for i in todo],
            "embedding chunks",
            progress,
        )
        out = list(chunks)
        for i, vec in zip(todo, vectors, strict=True):
            out[i] = chunks[i].model_copy(update={"embedding": [float(x) for x in vec]})
        return out


def merge_cooccurrence(kb: KnowledgeBase, edges: Sequence[Edge], run: str) -> list[Edge]:
    """``edges`` with the CO_OCCURS_WITH ones of a part of a streamed file added to what earlier parts
    of the same ingest ``run`` wrote under the same id (their ``run`` property says which run wrote
    them), so a file ingested in parts ends with the counts of one pass over the whole file.
    Edges an earlier run (a replaced version) wrote are overwritten, not added to."""
    ids = [e.id for e in edges if e.relation_type == CO_OCCURS_WITH]
    if not ids:
        return list(edges)
    earlier = {
        e.id: e
        for e in kb.store.get_edges(sorted(kb.store.existing_ids("edge", ids)))
        if e.properties.get("run") == run
    }
    out: list[Edge] = []
    for edge in edges:
        if edge.relation_type != CO_OCCURS_WITH:
            out.append(edge)
            continue
        props = {**edge.properties, "run": run}
        old = earlier.get(edge.id)
        if old is not None:
            docs_new, docs_old = int(props["doc_count"]), int(old.properties.get("doc_count", 0))
            docs = docs_new + docs_old
            proximity = (
                float(props["avg_proximity"]) * docs_new
                + float(old.properties.get("avg_proximity", 0.0)) * docs_old
            ) / max(docs, 1)
            props.update(
                count=int(props["count"]) + int(old.properties.get("count", 0)),
                doc_count=docs,
                avg_proximity=round(proximity, 3),
            )
            edge = edge.model_copy(
                update={
                    "weight": float(docs),
                    "confidence": round(docs / (docs + 1.0), 4),
                    "properties": props,
                }
            )
        else:
            edge = edge.model_copy(update={"properties": props})
        out.append(edge)
    return out


def _label(graph: GraphIndex, node_id: str) -> str | None:
    pos = graph.pos(node_id)
    return None if pos is None else graph.label_of(pos)


def _workers() -> int:
    """spaCy worker processes for ingest: one per core, at most 2 (``CEF_NLP_PROCESSES`` overrides)."""
    raw = os.environ.get("CEF_NLP_PROCESSES", "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise ConfigurationError(f"CEF_NLP_PROCESSES must be an integer >= 1, got {raw!r}") from None
        if value < 1:
            raise ConfigurationError(f"CEF_NLP_PROCESSES must be an integer >= 1, got {raw!r}")
        return value
    return max(1, min(2, os.cpu_count() or 1))


def _check_spacy() -> None:
    if importlib.util.find_spec("spacy") is None:
        raise MissingExtraError("spaCy entity extraction", "nlp", "spacy")
    if importlib.util.find_spec(DEFAULT_MODEL) is None:
        raise MissingExtraError(f"spaCy model {DEFAULT_MODEL!r}", "nlp", DEFAULT_MODEL.replace("_", "-"))


def _doc_key(doc: ParsedDocument, chunks: Sequence[Chunk]) -> str:
    if doc.document_id:
        return doc.document_id
    path = chunks[0].metadata.get("path")
    if isinstance(path, str) and path:
        return path
    return chunks[0].id
