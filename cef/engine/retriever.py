"""KnowledgeRetriever: lookups, graph navigation, context extraction and search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from cef.engine.state import EngineState
from cef.errors import NotFoundError, UnknownRelationTypeError
from cef.graph.filter import EdgeFilter
from cef.model import (
    Chunk,
    Edge,
    GraphPath,
    GraphQuery,
    Node,
    RankedChunk,
    ReasoningContext,
    RelationSemantics,
    SearchResult,
    SearchStrategy,
    utcnow,
)
from cef.patterns import GraphPattern, PatternResult, QueryCombinator
from cef.retrieve import pathvectors, pipeline
from cef.retrieve.context import QueryContext
from cef.retrieve.expand import build_reasoning_context
from cef.retrieve.patterns import at_query_time, runner_for
from cef.retrieve.search import bm25_search, vector_search
from cef.retrieve.strategies import StrategyRegistry


class KnowledgeRetriever:
    """Reads. Traversal uses only the in-memory graph; records come from the store."""

    def __init__(self, state: EngineState, strategies: StrategyRegistry | None = None) -> None:
        self.state = state
        #: the strategies ``retrieve`` runs (the knowledge base's own registry)
        self.strategies = strategies if strategies is not None else StrategyRegistry.default()

    # ------------------------------------------------------------ lookups
    def find_node(self, node_id: str) -> Node | None:
        """The node with id ``node_id``, or None."""
        with self.state.reading():
            found = self.state.store.get_nodes([node_id])
            return found[0] if found else None

    def get_nodes(self, node_ids: Sequence[str]) -> list[Node]:
        """The nodes among ``node_ids`` that exist (in no particular order; unknown ids are left out)."""
        with self.state.reading():
            return self.state.store.get_nodes(list(node_ids))

    def get_edge(self, edge_id: str) -> Edge | None:
        """The edge with id ``edge_id``, or None."""
        with self.state.reading():
            found = self.state.store.get_edges([edge_id])
            return found[0] if found else None

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        """The chunk with id ``chunk_id``, or None."""
        with self.state.reading():
            found = self.state.store.get_chunks([chunk_id])
            return found[0] if found else None

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks among ``chunk_ids`` that exist (in no particular order; unknown ids are left out)."""
        with self.state.reading():
            return self.state.store.get_chunks(list(chunk_ids))

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """Ids of the chunks linked to each of ``node_ids`` (nodes without chunks are left out)."""
        with self.state.reading():
            return self.state.store.chunks_for_nodes(list(node_ids))

    def find_nodes_by_label(self, label: str, limit: int = 1000) -> list[Node]:
        """Nodes whose label is ``label`` (exactly), at most ``limit`` of them."""
        with self.state.reading():
            g = self.state.graph
            ids = [g.node_ids[int(p)] for p in g.nodes_with_label(label)[:limit]]
            return self.state.store.get_nodes(ids)

    def find_nodes_by_property(
        self, key: str, value: Any, label: str | None = None, limit: int = 100
    ) -> list[Node]:
        """Nodes whose property ``key`` equals ``value`` (optionally only of label ``label``), at most
        ``limit`` of them."""
        with self.state.reading():
            return self.state.store.nodes_by_property(key, value, label=label, limit=limit)

    # --------------------------------------------------------- navigation
    def _pos(self, node_id: str) -> int:
        p = self.state.graph.pos(node_id)
        if p is None:
            raise NotFoundError(f"node {node_id!r} does not exist")
        return p

    def _structural_filter(
        self, toward_parent: bool, semantics: Sequence[RelationSemantics] | None
    ) -> EdgeFilter:
        """Moves from a node to its parents (or children) across structural relations."""
        g = self.state.graph
        n = len(g.relations)
        fwd = np.zeros(n, dtype=np.bool_)
        bwd = np.zeros(n, dtype=np.bool_)
        for code, name in enumerate(g.relations.names):
            rt = g.rel_types.get(name)
            if rt is None or rt.parent_end is None:
                continue
            if semantics and rt.semantics not in semantics:
                continue
            # walking forward reaches the target; it is the parent when parent_end == "target"
            if (rt.parent_end == "target") == toward_parent:
                fwd[code] = True
            else:
                bwd[code] = True
        return EdgeFilter(forward_ok=fwd, backward_ok=bwd, valid_at=utcnow().timestamp())

    def _nodes_at(self, positions: Sequence[int]) -> list[Node]:
        g = self.state.graph
        ids = list(dict.fromkeys(g.node_ids[int(p)] for p in positions))
        return self.state.get_nodes(ids)

    def get_parents(self, node_id: str, semantics: Sequence[RelationSemantics] | None = None) -> list[Node]:
        """The nodes directly above ``node_id`` across structural relations (HIERARCHY, CONTAINMENT,
        CLASSIFICATION: those whose type says which end is the parent).

        Args:
            node_id: the node.
            semantics: only relations of these semantics (default: every structural one).

        Raises:
            NotFoundError: no node has id ``node_id``.
        """
        with self.state.reading():
            _, _, targets, _ = self.state.graph.step(
                np.array([self._pos(node_id)]), self._structural_filter(True, semantics)
            )
            return self._nodes_at(targets.tolist())

    def get_children(self, node_id: str, semantics: Sequence[RelationSemantics] | None = None) -> list[Node]:
        """The nodes directly below ``node_id`` across structural relations (see :meth:`get_parents`).

        Args:
            node_id: the node.
            semantics: only relations of these semantics (default: every structural one).

        Raises:
            NotFoundError: no node has id ``node_id``.
        """
        with self.state.reading():
            _, _, targets, _ = self.state.graph.step(
                np.array([self._pos(node_id)]), self._structural_filter(False, semantics)
            )
            return self._nodes_at(targets.tolist())

    def get_siblings(self, node_id: str, semantics: Sequence[RelationSemantics] | None = None) -> list[Node]:
        """The nodes that share a parent with ``node_id`` (itself left out).

        Args:
            node_id: the node.
            semantics: the relations that make a parent (default: CLASSIFICATION).

        Raises:
            NotFoundError: no node has id ``node_id``.
        """
        sem = list(semantics) if semantics else [RelationSemantics.CLASSIFICATION]
        with self.state.reading():
            g = self.state.graph
            me = self._pos(node_id)
            _, _, parents, _ = g.step(np.array([me]), self._structural_filter(True, sem))
            if not len(parents):
                return []
            _, _, kids, _ = g.step(np.unique(parents), self._structural_filter(False, sem))
            return self._nodes_at([k for k in kids.tolist() if k != me])

    def get_neighbors(
        self, node_id: str, relation_types: Sequence[str] | None = None, direction: str = "both"
    ) -> list[Node]:
        """The nodes one edge (valid now) away from ``node_id``.

        Args:
            node_id: the node.
            relation_types: only across these relation types (default: any).
            direction: ``"out"`` (edges from the node), ``"in"`` (edges to it) or ``"both"``.

        Raises:
            NotFoundError: no node has id ``node_id``.
            UnknownRelationTypeError: a relation type is not registered.
        """
        with self.state.reading():
            g = self.state.graph
            self._check_relations(relation_types)
            flt = g.edge_filter(relation_types=relation_types, direction=direction, valid_at=utcnow())
            _, _, targets, _ = g.step(np.array([self._pos(node_id)]), flt)
            return self._nodes_at(targets.tolist())

    def edges_among(self, node_ids: Sequence[str], *, limit: int = 1000) -> list[Edge]:
        """The live edges (valid now) whose two ends are both in ``node_ids`` (unknown ids are ignored), at
        most ``limit`` of them."""
        with self.state.reading():
            g = self.state.graph
            positions = [p for p in (g.pos(i) for i in dict.fromkeys(node_ids)) if p is not None]
            if not positions:
                return []
            among = g.edges_among(positions, g.edge_filter(valid_at=utcnow()))
            return self.state.store.get_edges([g.edge_ids[e] for e in among[:limit].tolist()])

    def find_path(
        self,
        source_id: str,
        target_id: str,
        *,
        relation_types: Sequence[str] | None = None,
        weighted: bool = True,
        max_depth: int = 12,
    ) -> GraphPath | None:
        """The shortest path between two nodes, walking edges in either direction.

        Args:
            source_id: where the path starts.
            target_id: where it ends.
            relation_types: only across these relation types (default: any).
            weighted: cost 1/weight per edge; False counts hops.
            max_depth: the most edges a path may have.

        Returns:
            The path (nodes, relation types, edge ids, cost, confidence), or None when there is none.

        Raises:
            NotFoundError: either node does not exist.
            UnknownRelationTypeError: a relation type is not registered.
        """
        with self.state.reading():
            g = self.state.graph
            self._check_relations(relation_types)
            flt = g.edge_filter(relation_types=relation_types, valid_at=utcnow())
            found = g.shortest_path(
                self._pos(source_id), self._pos(target_id), flt, weighted=weighted, max_depth=max_depth
            )
            if found is None:
                return None
            nodes, edges, fwd, cost = found
            ids = [g.node_ids[n] for n in nodes]
            names = {n.id: n.name for n in self.state.store.get_nodes(ids)}
            conf = float(np.prod([g.e_conf[e] for e in edges])) if edges else 1.0
            return GraphPath(
                node_ids=ids,
                relation_types=[g.relation_name(e, f) for e, f in zip(edges, fwd, strict=True)],
                edge_ids=[g.edge_ids[e] for e in edges],
                node_names=[names.get(i, i) for i in ids],
                weight=cost,
                confidence=conf,
            )

    def extract_context(
        self,
        node_id: str | Sequence[str],
        depth: int = 2,
        semantics: Sequence[RelationSemantics] | None = None,
        *,
        relation_types: Sequence[str] | None = None,
        max_nodes: int = 500,
        direction: str = "both",
        scope: str | None = None,
    ) -> ReasoningContext:
        """Related nodes within ``depth`` hops, the paths to them, context keywords and semantic groups.

        Args:
            node_id: the start node, or several.
            depth: the most hops from a start node.
            semantics: only across relations of these semantics (default: any).
            relation_types: only across these relation types (default: any).
            max_nodes: the most nodes to collect.
            direction: ``"out"``, ``"in"`` or ``"both"``.
            scope: walk only that scope's records and shared (unscoped) ones.

        Raises:
            NotFoundError: a start node does not exist.
            UnknownRelationTypeError: a relation type is not registered.
        """
        ids = [node_id] if isinstance(node_id, str) else list(node_id)
        with self.state.reading():
            g = self.state.graph
            self._check_relations(relation_types)
            seeds = [self._pos(i) for i in ids]
            flt = g.edge_filter(
                relation_types=relation_types,
                semantics=semantics,
                direction=direction,
                valid_at=utcnow(),
                scope=scope,
            )
            ctx, _ = build_reasoning_context(g, self.state.get_nodes, seeds, depth, flt, max_nodes=max_nodes)
            return ctx

    def _check_relations(self, relation_types: Sequence[str] | None) -> None:
        g = self.state.graph
        for name in relation_types or ():
            if not g.known_relation(name):
                raise UnknownRelationTypeError(name, "relation_types", list(g.rel_types))

    # -------------------------------------------------------------- search
    def vector_search(self, query: str, top_k: int = 10, *, scope: str | None = None) -> list[RankedChunk]:
        """The ``top_k`` chunks nearest to the text ``query`` by embedding (only the vector stage, no graph),
        best first; with ``scope``, only that scope's and shared chunks. Empty without an embedding model."""
        q = GraphQuery(query=query, top_k=top_k, strategy=SearchStrategy.VECTOR, scope=scope)
        with self.state.reading():
            return vector_search(QueryContext(self.state, q, 0.0))

    def full_text_search(self, query: str, top_k: int = 10, *, scope: str | None = None) -> list[RankedChunk]:
        """The ``top_k`` chunks best matching the words of ``query`` by BM25 (only that stage, no graph),
        best first; with ``scope``, only that scope's and shared chunks."""
        q = GraphQuery(query=query, top_k=top_k, strategy=SearchStrategy.BM25, scope=scope)
        with self.state.reading():
            return bm25_search(QueryContext(self.state, q, 0.0))

    def match_patterns(
        self,
        pattern: GraphPattern | QueryCombinator,
        query_text: str | None = None,
        *,
        start_nodes: Sequence[str] | None = None,
    ) -> PatternResult:
        """Match a graph pattern (or a combinator of patterns): the paths, best first, with explanations.

        Like retrieval, patterns see the graph as it is now: a pattern without
        ``valid_at`` walks only edges valid at this moment (give ``valid_at`` for another time).

        Args:
            pattern: a :class:`~cef.patterns.GraphPattern` or a combinator of patterns.
            query_text: what SEMANTIC_SCORE / HYBRID ranking compares nodes with (when the pattern has
                no ``semantic_query``).
            start_nodes: entry points for a pattern without a start of its own.

        Returns:
            The matched paths, best first, with explanations, statistics and whether a limit stopped it.
        """
        timed = at_query_time(pattern, utcnow())
        with self.state.reading():
            return runner_for(self.state).run(timed, start_nodes=start_nodes, query_text=query_text)

    def warm(self) -> dict[str, float]:
        """Load the embedding model, entity index, query NER and relation-path vectors now rather than
        inside the first query (see :func:`cef.retrieve.pipeline.warm`); servers call it before they say
        ready. Returns seconds per part."""
        return pipeline.warm(self.state)

    def prepare_paths(self, limit: int = 10_000) -> int:
        """Embed the texts of the relation paths the schema allows (up to ``limit`` paths; those
        not saved yet) and save them beside the store, so that a query in a new process embeds
        only its question (see :func:`cef.retrieve.pathvectors.path_vectors`). Returns how many
        path-text vectors are held; 0 without an embedder or typed relations."""
        with self.state.reading():
            return pathvectors.path_vectors(self.state, embed=limit)

    def prepare_entities(self, progress: Callable[[str, int, int], None] | None = None) -> bool:
        """Build the entity index of a big graph now and save it beside the store (see
        :func:`cef.retrieve.entities.entity_index`), so that the next query, in this process or a
        new one, reads it instead of rebuilding it from the store. Returns whether the graph is big
        enough to keep it in a file (small graphs build theirs in the first query, quickly)."""
        with self.state.reading():
            return pipeline.prepare_entities(self.state, progress)

    def save_caches(self) -> None:
        """Save beside the store the path-text vectors queries embedded since the last save."""
        pathvectors.save_path_vectors(self.state)

    def retrieve(
        self,
        query: GraphQuery | str,
        *,
        strategy: SearchStrategy | str | None = None,
        top_k: int | None = None,
        min_results: int | None = None,
        scope: str | None = None,
        tags: Sequence[str] | None = None,
        as_of: datetime | None = None,
        deadline_ms: int | None = None,
        max_token_budget: int | None = None,
    ) -> SearchResult:
        """The main entry point: anchors → traversal → hybrid search → fallbacks, each result explained.

        Args:
            query: a question, or a :class:`~cef.model.GraphQuery` (targets, traversal hints, patterns
                and every other setting).
            strategy: the route; see :class:`~cef.model.SearchStrategy`.
            top_k: how many chunks to return.
            min_results: below this many results the next strategy of the fallback chain runs.
            scope: see only that scope's records and shared (unscoped) ones.
            tags: only chunks carrying one of these tags (chunk metadata ``tags``).
            as_of: walk only edges valid at this time (default: now).
            deadline_ms: time limit of the graph exploration; past it, vector search answers.
            max_token_budget: the most tokens of chunk text to return.

        The keywords are :class:`~cef.model.GraphQuery` fields (their defaults and limits are there):
        with a question they build the query, with a ``GraphQuery`` they replace its value (None: the
        query's own); validated like the query.

        Returns:
            The ranked chunks with explanations, the strategy that answered, timings and notes.

        Raises:
            pydantic.ValidationError: a keyword's value is out of range.
            ValidationError: ``options`` of the query hold settings no strategy knows.
            UnknownRelationTypeError: a traversal hint names an unregistered relation type.
        """
        given = {
            key: value
            for key, value in (
                ("strategy", strategy),
                ("top_k", top_k),
                ("min_results", min_results),
                ("scope", scope),
                ("tags", list(tags) if tags is not None else None),
                ("as_of", as_of),
                ("deadline_ms", deadline_ms),
                ("max_token_budget", max_token_budget),
            )
            if value is not None
        }
        if isinstance(query, str):
            q = GraphQuery.model_validate({"query": query, **given})
        else:
            q = GraphQuery.model_validate({**query.model_dump(), **given}) if given else query
        return pipeline.retrieve(self.state, q, self.strategies)
