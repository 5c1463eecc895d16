"""The strategy registry: which function runs a :class:`~cef.model.SearchStrategy` and what it falls back to.

Each :class:`~cef.engine.kb.KnowledgeBase` owns one registry
(``kb.strategies``), filled with the built-in strategies at construction
(:meth:`StrategyRegistry.default`); registering a strategy on one knowledge base
changes no other. A strategy is a plain function ``(QueryContext) ->
list[RankedChunk] | None``; ``None`` means it does not apply to this knowledge
base and is skipped without counting as a fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cef.model import RankedChunk, SearchStrategy
from cef.retrieve.context import QueryContext

__all__ = ["StrategyFn", "StrategyRegistry"]

StrategyFn = Callable[[QueryContext], list[RankedChunk] | None]

_TAIL = (SearchStrategy.VECTOR, SearchStrategy.BM25)


class StrategyRegistry:
    """Strategy functions, their fallback chains, and which need anchors and a traversal first."""

    def __init__(self) -> None:
        self._fns: dict[SearchStrategy, StrategyFn] = {}
        self._chains: dict[SearchStrategy, list[SearchStrategy]] = {}
        self._graph: set[SearchStrategy] = set()

    @classmethod
    def default(cls) -> StrategyRegistry:
        """The built-in strategies and chains (see :mod:`cef.retrieve.presets`)."""
        from cef.retrieve.graphfirst import graph_first_search
        from cef.retrieve.patterns import pattern_search
        from cef.retrieve.ppr import ppr_search
        from cef.retrieve.presets import DEFAULT_CHAIN, GRAPH_FIRST, PPR_DEFAULT
        from cef.retrieve.relpaths import relation_path_search
        from cef.retrieve.route import auto_search
        from cef.retrieve.search import bm25_search, hybrid_search, vector_search

        S = SearchStrategy
        reg = cls()
        reg.register(S.HYBRID, hybrid_search, [S.HYBRID, *_TAIL])
        reg.register(S.VECTOR, vector_search, list(_TAIL), graph=False)
        reg.register(S.BM25, bm25_search, [S.BM25], graph=False)
        reg.register(S.PATTERN, pattern_search, [S.PATTERN, S.HYBRID, *_TAIL], graph=False)
        reg.register(S.AUTO, auto_search, [S.HYBRID, *_TAIL], graph=False)
        # they link the question themselves: no anchor resolution before them
        reg.register(S.GRAPH, graph_first_search, list(GRAPH_FIRST.chain), graph=False)
        reg.register(S.PPR, ppr_search, list(PPR_DEFAULT.chain), graph=False)
        reg.register(S.PATHS, relation_path_search, graph=False)
        reg.set_default_chain(DEFAULT_CHAIN)
        return reg

    def register(
        self,
        strategy: SearchStrategy,
        fn: StrategyFn,
        chain: Sequence[SearchStrategy] | None = None,
        *,
        graph: bool = True,
    ) -> None:
        """Add or replace a strategy and the chain it starts (default: itself, then vector, then BM25).

        ``graph=True``: resolve anchors and expand them before it runs; ``False``: it finds its own
        way into the graph (or needs none).
        """
        self._fns[strategy] = fn
        self._chains[strategy] = list(chain) if chain else [strategy, *_TAIL]
        if graph:
            self._graph.add(strategy)
        else:
            self._graph.discard(strategy)

    def set_default_chain(self, chain: Sequence[SearchStrategy]) -> None:
        """Choose what ``strategy=auto`` runs."""
        if not chain:
            raise ValueError("the default chain needs at least one strategy, e.g. [SearchStrategy.HYBRID]")
        self._chains[SearchStrategy.AUTO] = list(chain)

    def function(self, strategy: SearchStrategy) -> StrategyFn | None:
        """The function that runs ``strategy`` (None when none is registered)."""
        return self._fns.get(strategy)

    def chain(self, strategy: SearchStrategy) -> list[SearchStrategy]:
        """The strategies tried, in order, when ``strategy`` is requested."""
        return list(self._chains.get(strategy) or [strategy, *_TAIL])

    def needs_graph(self, strategy: SearchStrategy) -> bool:
        """Whether anchors and a traversal are prepared before ``strategy`` runs."""
        return strategy in self._graph
