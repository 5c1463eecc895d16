"""KnowledgeBase: one engine, the object every front door talks to.

Most of its methods *are* its components' methods (:mod:`cef.engine.facade`):
``kb.index_node`` is ``kb.indexer.index_node``, ``kb.retrieve`` is
``kb.retriever.retrieve``, ``kb.answer`` is :func:`cef.engine.answer.answer_question`;
each signature and docstring is written once, where the work is done.
``docs/api.md`` is generated from them (``scripts/gen_api_docs.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cef.engine.answer import answer_question
from cef.engine.facade import delegate
from cef.engine.indexer import IndexResult, KnowledgeIndexer
from cef.engine.retriever import KnowledgeRetriever
from cef.engine.state import EngineState
from cef.engine.upgrade import refresh_node_text
from cef.model import RelationType
from cef.retrieve.strategies import StrategyRegistry
from cef.store.base import GraphStore, Mirror, RecordStore, VectorStore

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.schema.registry import SchemaRegistry

log = logging.getLogger(__name__)

_INDEXER = "indexer"
_RETRIEVER = "retriever"


class KnowledgeBase:
    """A knowledge graph with linked text chunks, searchable by graph, vector and BM25.

    Use :func:`cef.open` to create one. ``kb.indexer`` (:class:`~cef.engine.indexer.KnowledgeIndexer`)
    writes, ``kb.retriever`` (:class:`~cef.engine.retriever.KnowledgeRetriever`) reads, ``kb.strategies``
    holds the retrieval strategies and their fallback chains, ``kb.state`` the store and in-memory
    indexes kept consistent; the most used methods of the indexer and the retriever are methods of the
    knowledge base itself. Close it (or use it as a context manager) when done.

    Args:
        store: the record store (SQLite, PostgreSQL...); the knowledge base owns it from now on.
        embedder: the embedding model of node texts, chunks and questions; None: no vectors
            (BM25 and graph search only).
        embed_nodes: which nodes get a vector: ``"all"``, ``"content"`` (only nodes with content) or
            ``"none"``.
        vectors: a vector store mirrored on every write (Qdrant, DuckDB...), instead of the in-memory index.
        graph: a graph store mirrored on every write (Neo4j, FalkorDB).
        mirrors: further stores that receive every committed write.

    Raises:
        ValueError: ``embed_nodes`` is none of the three values.
    """

    def __init__(
        self,
        store: RecordStore,
        embedder: Embedder | None,
        *,
        embed_nodes: str = "all",
        vectors: VectorStore | None = None,
        graph: GraphStore | None = None,
        mirrors: Sequence[Mirror] = (),
    ) -> None:
        self.state = EngineState(store, embedder, vectors=vectors, graph=graph, mirrors=mirrors)
        refresh_node_text(self.state)  # a store written by an older cef: its node text made current once
        self.indexer = KnowledgeIndexer(self.state, embed_nodes=embed_nodes)
        #: this knowledge base's retrieval strategies and fallback chains (defaults registered here)
        self.strategies = StrategyRegistry.default()
        self.retriever = KnowledgeRetriever(self.state, self.strategies)

    # ------------------------------------------------------------ lifecycle
    @property
    def store(self) -> RecordStore:
        """The record store every write goes to (records, vectors, full text, meta)."""
        return self.state.store

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model, or None when the knowledge base has no vectors."""
        return self.state.embedder

    @property
    def schema(self) -> SchemaRegistry:
        """The vocabulary of this knowledge base: node types (each label, with its universal kind),
        relation types, vocabularies. Every write is checked against it; labels written for the first
        time are registered, relation types are declared (``register_relation_type``, a batch's
        ``relation_types`` or ``schema.register_edge_type``)."""
        return self.state.schema

    def close(self) -> None:
        """Save the caches queries filled (path-text vectors) beside the store, then close the stores.

        A cache that cannot be saved is logged, never raised: closing always closes.
        """
        try:
            self.retriever.save_caches()
        except Exception:  # a cache must never break closing
            log.exception("saving the retrieval caches on close failed")
        self.state.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stats(self) -> dict[str, Any]:
        """Counts of what the knowledge base holds.

        Returns:
            ``relation_types``, ``nodes``, ``edges`` and ``chunks`` (the store's counts), ``labels``
            (nodes per label), ``relation_type_names``, ``node_vectors`` and ``chunk_vectors`` (held in
            memory), ``embedding_model`` and ``embedding_dim`` (as recorded in the store).
        """
        with self.state.reading():
            counts = self.state.store.counts()
            g = self.state.graph
            return {
                **counts,
                "labels": dict(self.state.store.labels()),
                "relation_type_names": sorted(g.rel_types),
                "node_vectors": len(self.state.node_vectors),
                "chunk_vectors": len(self.state.chunk_vectors),
                "embedding_model": self.state.store.get_meta("embedding.model"),
                "embedding_dim": self.state.store.get_meta("embedding.dim"),
            }

    # -------------------------------------------------------------- writing
    initialize = delegate(_INDEXER, KnowledgeIndexer.initialize)

    def register_relation_type(self, relation_type: RelationType) -> IndexResult:
        """Register one relation type (see :meth:`KnowledgeIndexer.register_relation_types` for several).

        Args:
            relation_type: the type; edges may use its name (or its ``inverse``) from now on.

        Returns:
            What was written (``relation_types == 1``); registering a name again replaces its type.

        Raises:
            ValidationError: its ``inverse`` is already the name of another relation type.
        """
        return self.indexer.register_relation_types([relation_type])

    index_node = delegate(_INDEXER, KnowledgeIndexer.index_node)
    index_edge = delegate(_INDEXER, KnowledgeIndexer.index_edge)
    index_chunk = delegate(_INDEXER, KnowledgeIndexer.index_chunk)
    index_batch = delegate(_INDEXER, KnowledgeIndexer.index_batch)
    update_node = delegate(_INDEXER, KnowledgeIndexer.update_node)
    update_edge = delegate(_INDEXER, KnowledgeIndexer.update_edge)
    update_chunk = delegate(_INDEXER, KnowledgeIndexer.update_chunk)
    delete_node = delegate(_INDEXER, KnowledgeIndexer.delete_node)
    delete_edge = delegate(_INDEXER, KnowledgeIndexer.delete_edge)
    delete_chunk = delegate(_INDEXER, KnowledgeIndexer.delete_chunk)
    full_reindex = delegate(_INDEXER, KnowledgeIndexer.full_reindex)

    # -------------------------------------------------------------- reading
    retrieve = delegate(_RETRIEVER, KnowledgeRetriever.retrieve)
    #: answer a question with an LLM from the retrieved chunks (:func:`cef.engine.answer.answer_question`)
    answer = answer_question
    warm = delegate(_RETRIEVER, KnowledgeRetriever.warm)
    match_patterns = delegate(_RETRIEVER, KnowledgeRetriever.match_patterns)
    find_node = delegate(_RETRIEVER, KnowledgeRetriever.find_node)
    get_nodes = delegate(_RETRIEVER, KnowledgeRetriever.get_nodes)
    get_edge = delegate(_RETRIEVER, KnowledgeRetriever.get_edge)
    get_chunk = delegate(_RETRIEVER, KnowledgeRetriever.get_chunk)
    get_chunks = delegate(_RETRIEVER, KnowledgeRetriever.get_chunks)
    chunk_ids_for_nodes = delegate(_RETRIEVER, KnowledgeRetriever.chunk_ids_for_nodes)
    find_nodes_by_label = delegate(_RETRIEVER, KnowledgeRetriever.find_nodes_by_label)
    find_nodes_by_property = delegate(_RETRIEVER, KnowledgeRetriever.find_nodes_by_property)
    get_parents = delegate(_RETRIEVER, KnowledgeRetriever.get_parents)
    get_children = delegate(_RETRIEVER, KnowledgeRetriever.get_children)
    get_siblings = delegate(_RETRIEVER, KnowledgeRetriever.get_siblings)
    get_neighbors = delegate(_RETRIEVER, KnowledgeRetriever.get_neighbors)
    edges_among = delegate(_RETRIEVER, KnowledgeRetriever.edges_among)
    find_path = delegate(_RETRIEVER, KnowledgeRetriever.find_path)
    extract_context = delegate(_RETRIEVER, KnowledgeRetriever.extract_context)
    vector_search = delegate(_RETRIEVER, KnowledgeRetriever.vector_search)
    full_text_search = delegate(_RETRIEVER, KnowledgeRetriever.full_text_search)
