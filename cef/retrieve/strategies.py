"""The strategy registry: for each :class:`~cef.model.SearchStrategy`, its stages, its function and its chain.

Each :class:`~cef.engine.kb.KnowledgeBase` owns one registry
(``kb.strategies``), filled with the built-in strategies at construction
(:meth:`StrategyRegistry.default`); registering a strategy on one knowledge base
changes no other. A strategy is a plain function ``(QueryContext) ->
list[RankedChunk] | None``; ``None`` means it does not apply to this knowledge
base and is skipped without counting as a fallback. The :class:`Stage` list
registered with it runs first (each stage once per query, whichever strategy
of the chain asks for it): anchors and the traversal from them, the path-text
vectors, the query's patterns. :meth:`StrategyRegistry.plan` gives the template
(:func:`cef.retrieve.pipeline.retrieve`) the strategies to try and their stages,
so the template names no strategy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cef.model import GraphQuery, RankedChunk, SearchStrategy
from cef.retrieve.anchors import resolve_anchors
from cef.retrieve.context import QueryContext
from cef.retrieve.expand import expand_anchors
from cef.retrieve.route import has_hints

__all__ = ["ANCHORS", "PATH_VECTORS", "PATTERNS", "Stage", "StrategyFn", "StrategyRegistry"]

StrategyFn = Callable[[QueryContext], list[RankedChunk] | None]

_TAIL = (SearchStrategy.VECTOR, SearchStrategy.BM25)


def _always(qc: QueryContext) -> bool:
    return True


@dataclass(frozen=True)
class Stage:
    """Work a strategy needs done before it runs, once per query (stages are told apart by name).

    ``run`` checks the query's deadline itself; ``applies`` says whether this query needs it."""

    name: str
    run: Callable[[QueryContext], None]
    applies: Callable[[QueryContext], bool] = _always


def anchor_and_expand(qc: QueryContext) -> None:
    """Resolve the query's anchors, walk the graph from them, and widen the question with the
    context keywords the walk found (the hybrid strategy's inputs)."""
    resolve_anchors(qc)
    qc.stages.anchors_resolved = True
    qc.check_deadline("anchors")
    ctx = expand_anchors(qc)
    qc.check_deadline("expansion")
    query = qc.query.query
    if ctx is not None and ctx.context_keywords:
        extra = [k for k in ctx.context_keywords if k not in query.lower()][:10]
        qc.enhanced_query = f"{query} {' '.join(extra)}".strip() if extra else query


def _load_path_vectors(qc: QueryContext) -> None:
    from cef.retrieve.pathvectors import path_vectors

    path_vectors(qc.state)  # the saved path-text vectors, read once per engine


def _match_patterns(qc: QueryContext) -> None:
    from cef.retrieve.patterns import match_query_patterns

    match_query_patterns(qc)
    qc.check_deadline("patterns")


#: anchors and the traversal from them
ANCHORS = Stage("anchors", anchor_and_expand)
#: the relation-path scorer's saved path-text vectors
PATH_VECTORS = Stage("path vectors", _load_path_vectors)
#: the query's graph patterns, matched (the PATTERN strategy ranks their paths)
PATTERNS = Stage("patterns", _match_patterns, lambda qc: bool(qc.query.patterns))


@dataclass(frozen=True)
class _Entry:
    fn: StrategyFn
    chain: tuple[SearchStrategy, ...]
    stages: tuple[Stage, ...]


class StrategyRegistry:
    """Strategy functions, the stages each needs first, and the chains they fall back along."""

    def __init__(self) -> None:
        self._entries: dict[SearchStrategy, _Entry] = {}

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
        reg.register(S.PATTERN, pattern_search, [S.PATTERN, S.HYBRID, *_TAIL], graph=False, stages=[PATTERNS])
        # the steered walk only when the query steers it (targets, relation types)
        hinted = Stage(ANCHORS.name, anchor_and_expand, has_hints)
        reg.register(S.AUTO, auto_search, DEFAULT_CHAIN, graph=False, stages=[PATH_VECTORS, hinted])
        # they link the question themselves: no anchor resolution before them
        reg.register(S.GRAPH, graph_first_search, GRAPH_FIRST.chain, graph=False)
        reg.register(S.PPR, ppr_search, PPR_DEFAULT.chain, graph=False)
        reg.register(S.PATHS, relation_path_search, graph=False, stages=[PATH_VECTORS])
        return reg

    def register(
        self,
        strategy: SearchStrategy,
        fn: StrategyFn,
        chain: Sequence[SearchStrategy] | None = None,
        *,
        graph: bool = True,
        stages: Sequence[Stage] = (),
    ) -> None:
        """Add or replace a strategy and the chain it starts (default: itself, then vector, then BM25).

        ``stages`` run before it (each once per query); ``graph=True`` puts :data:`ANCHORS` first
        among them: resolve anchors and expand them before it runs. ``False``: it finds its own way
        into the graph (or needs none).
        """
        needs = (ANCHORS, *(s for s in stages if s.name != ANCHORS.name)) if graph else tuple(stages)
        self._entries[strategy] = _Entry(fn, tuple(chain) if chain else (strategy, *_TAIL), needs)

    def set_default_chain(self, chain: Sequence[SearchStrategy]) -> None:
        """Choose what ``strategy=auto`` runs."""
        if not chain:
            raise ValueError("the default chain needs at least one strategy, e.g. [SearchStrategy.HYBRID]")
        auto = self._entries.get(SearchStrategy.AUTO)
        if auto is None:
            raise ValueError("register SearchStrategy.AUTO before choosing its chain")
        self._entries[SearchStrategy.AUTO] = _Entry(auto.fn, tuple(chain), auto.stages)

    def function(self, strategy: SearchStrategy) -> StrategyFn | None:
        """The function that runs ``strategy`` (None when none is registered)."""
        entry = self._entries.get(strategy)
        return entry.fn if entry is not None else None

    def chain(self, strategy: SearchStrategy) -> list[SearchStrategy]:
        """The strategies tried, in order, when ``strategy`` is requested."""
        entry = self._entries.get(strategy)
        return list(entry.chain) if entry is not None else [strategy, *_TAIL]

    def stages(self, strategy: SearchStrategy) -> tuple[Stage, ...]:
        """The stages that run before ``strategy``."""
        entry = self._entries.get(strategy)
        return entry.stages if entry is not None else ()

    def needs_graph(self, strategy: SearchStrategy) -> bool:
        """Whether anchors and a traversal are prepared before ``strategy`` runs."""
        return ANCHORS in self.stages(strategy)

    def plan(self, query: GraphQuery) -> list[tuple[SearchStrategy, tuple[Stage, ...]]]:
        """The strategies to try for ``query``, in order, each with the stages to run before it.

        A query with patterns tries the PATTERN strategy first (matched paths rank first; the
        requested chain is the fallback), after the chain's own stages (its anchors are where a
        pattern without a start of its own starts)."""
        steps = [(s, self.stages(s)) for s in self.chain(query.strategy)]
        if not query.patterns:
            return steps
        rest = [(s, stages) for s, stages in steps if s is not SearchStrategy.PATTERN]
        first = (*(stage for _, stages in rest for stage in stages), *self.stages(SearchStrategy.PATTERN))
        return [(SearchStrategy.PATTERN, first), *rest]
