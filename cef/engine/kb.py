"""KnowledgeBase: one engine, the object every front door talks to."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cef.engine.indexer import IndexResult, KnowledgeIndexer
from cef.engine.retriever import KnowledgeRetriever
from cef.engine.state import EngineState, ProgressFn
from cef.model import (
    Batch,
    Chunk,
    Edge,
    GraphPath,
    GraphQuery,
    Node,
    RankedChunk,
    ReasoningContext,
    RelationSemantics,
    RelationType,
    SearchResult,
)
from cef.retrieve.strategies import StrategyRegistry
from cef.store.base import GraphStore, Mirror, RecordStore, VectorStore

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.engine.answer import Answer
    from cef.engine.policy import QueryPolicy
    from cef.llm.base import LLMClient
    from cef.patterns import GraphPattern, PatternResult, QueryCombinator

log = logging.getLogger(__name__)


class KnowledgeBase:
    """A knowledge graph with linked text chunks, searchable by graph, vector and BM25.

    Use :func:`cef.open` to create one. ``kb.indexer`` writes, ``kb.retriever``
    reads; the most used methods of both are available on the knowledge base
    itself. Close it (or use it as a context manager) when done.
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
        self.indexer = KnowledgeIndexer(self.state, embed_nodes=embed_nodes)
        #: this knowledge base's retrieval strategies and fallback chains (defaults registered here)
        self.strategies = StrategyRegistry.default()
        self.retriever = KnowledgeRetriever(self.state, self.strategies)

    # ------------------------------------------------------------ lifecycle
    @property
    def store(self) -> RecordStore:
        return self.state.store

    @property
    def embedder(self) -> Embedder | None:
        return self.state.embedder

    def close(self) -> None:
        """Save the caches queries filled (path-text vectors) beside the store, then close the stores."""
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
    def initialize(self, root_nodes: Sequence[Node], relation_types: Sequence[RelationType]) -> IndexResult:
        return self.indexer.initialize(root_nodes, relation_types)

    def register_relation_type(self, relation_type: RelationType) -> IndexResult:
        return self.indexer.register_relation_types([relation_type])

    def index_node(self, node: Node) -> Node:
        return self.indexer.index_node(node)

    def index_edge(self, edge: Edge) -> Edge:
        return self.indexer.index_edge(edge)

    def index_chunk(self, chunk: Chunk) -> Chunk:
        return self.indexer.index_chunk(chunk)

    def index_batch(self, batch: Batch, *, progress: ProgressFn | None = None) -> IndexResult:
        return self.indexer.index_batch(batch, progress=progress)

    def update_node(self, node_id: str, properties: dict[str, Any] | None = None, **kw: Any) -> Node:
        return self.indexer.update_node(node_id, properties, **kw)

    def update_edge(self, edge: Edge) -> Edge:
        """Replace an edge's attributes (same id, endpoints and relation type)."""
        return self.indexer.update_edge(edge)

    def update_chunk(
        self,
        chunk_id: str,
        *,
        content: str | None = None,
        metadata: dict[str, Any] | None = None,
        node_id: str | None = None,
        unlink: bool = False,
        merge: bool = True,
    ) -> Chunk:
        """Change a chunk's text, metadata (merged by default) or linked node; re-embeds changed text."""
        return self.indexer.update_chunk(
            chunk_id, content=content, metadata=metadata, node_id=node_id, unlink=unlink, merge=merge
        )

    def delete_node(self, node_id: str, cascade: bool = True) -> IndexResult:
        return self.indexer.delete_node(node_id, cascade)

    def delete_edge(self, edge_id: str) -> None:
        self.indexer.delete_edge(edge_id)

    def delete_chunk(self, chunk_id: str) -> None:
        self.indexer.delete_chunk(chunk_id)

    def full_reindex(self, *, reembed: bool = False, progress: ProgressFn | None = None) -> IndexResult:
        return self.indexer.full_reindex(reembed=reembed, progress=progress)

    # -------------------------------------------------------------- reading
    def retrieve(self, query: GraphQuery | str, **options: Any) -> SearchResult:
        return self.retriever.retrieve(query, **options)

    def answer(
        self,
        question: str | GraphQuery,
        llm: LLMClient | None = None,
        *,
        understand: bool = True,
        top_k: int = 6,
        depth: int = 2,
        max_tokens: int = 512,
        scope: str | None = None,
        policy: QueryPolicy | None = None,
    ) -> Answer:
        """Answer ``question`` with ``llm`` from the retrieved chunks, citing their ids.

        Without an LLM the :class:`~cef.engine.answer.Answer` holds the retrieved
        context and no answer. See :func:`cef.engine.answer.answer_question`.
        """
        from cef.engine.answer import answer_question

        return answer_question(
            self,
            question,
            llm,
            understand=understand,
            top_k=top_k,
            depth=depth,
            max_tokens=max_tokens,
            scope=scope,
            policy=policy,
        )

    def warm(self) -> dict[str, float]:
        """Load the embedding model, entity index, query NER and relation-path vectors now, so the
        first query answers at full speed; returns seconds per part. Servers call it before ready."""
        return self.retriever.warm()

    def match_patterns(
        self,
        pattern: GraphPattern | QueryCombinator,
        query_text: str | None = None,
        *,
        start_nodes: Sequence[str] | None = None,
    ) -> PatternResult:
        """Match a graph pattern or combinator (see :meth:`KnowledgeRetriever.match_patterns`)."""
        return self.retriever.match_patterns(pattern, query_text, start_nodes=start_nodes)

    def find_node(self, node_id: str) -> Node | None:
        return self.retriever.find_node(node_id)

    def get_nodes(self, node_ids: Sequence[str]) -> list[Node]:
        """The nodes among ``node_ids`` that exist (in no particular order)."""
        return self.retriever.get_nodes(node_ids)

    def get_edge(self, edge_id: str) -> Edge | None:
        return self.retriever.get_edge(edge_id)

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        return self.retriever.get_chunk(chunk_id)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks among ``chunk_ids`` that exist (in no particular order)."""
        return self.retriever.get_chunks(chunk_ids)

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """Ids of the chunks linked to each node (nodes without chunks are left out)."""
        return self.retriever.chunk_ids_for_nodes(node_ids)

    def find_nodes_by_label(self, label: str, limit: int = 1000) -> list[Node]:
        return self.retriever.find_nodes_by_label(label, limit)

    def find_nodes_by_property(
        self, key: str, value: Any, label: str | None = None, limit: int = 100
    ) -> list[Node]:
        return self.retriever.find_nodes_by_property(key, value, label, limit)

    def get_parents(self, node_id: str, semantics: Sequence[RelationSemantics] | None = None) -> list[Node]:
        return self.retriever.get_parents(node_id, semantics)

    def get_children(self, node_id: str, semantics: Sequence[RelationSemantics] | None = None) -> list[Node]:
        return self.retriever.get_children(node_id, semantics)

    def get_siblings(self, node_id: str, semantics: Sequence[RelationSemantics] | None = None) -> list[Node]:
        return self.retriever.get_siblings(node_id, semantics)

    def get_neighbors(
        self, node_id: str, relation_types: Sequence[str] | None = None, direction: str = "both"
    ) -> list[Node]:
        return self.retriever.get_neighbors(node_id, relation_types, direction)

    def edges_among(self, node_ids: Sequence[str], *, limit: int = 1000) -> list[Edge]:
        return self.retriever.edges_among(node_ids, limit=limit)

    def find_path(self, source_id: str, target_id: str, **kw: Any) -> GraphPath | None:
        return self.retriever.find_path(source_id, target_id, **kw)

    def extract_context(
        self,
        node_id: str | Sequence[str],
        depth: int = 2,
        semantics: Sequence[RelationSemantics] | None = None,
        **kw: Any,
    ) -> ReasoningContext:
        return self.retriever.extract_context(node_id, depth, semantics, **kw)

    def vector_search(self, query: str, top_k: int = 10, *, scope: str | None = None) -> list[RankedChunk]:
        return self.retriever.vector_search(query, top_k, scope=scope)

    def full_text_search(self, query: str, top_k: int = 10, *, scope: str | None = None) -> list[RankedChunk]:
        return self.retriever.full_text_search(query, top_k, scope=scope)
