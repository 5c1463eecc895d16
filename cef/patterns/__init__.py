"""Graph patterns: structured multi-hop queries with constraints, combinators and ranking.

Write a :class:`GraphPattern` (or a :class:`QueryCombinator` of several),
then run it with :class:`PatternExecutor` over a :class:`cef.graph.index.GraphIndex`::

    from cef.patterns import GraphPattern, InMemoryNodeLookup, PatternExecutor

    executor = PatternExecutor(graph, InMemoryNodeLookup(graph, nodes))
    result = executor.execute(GraphPattern.model_validate({
        "start": {"label": "Patient", "properties": {"name": "Ann"}},
        "steps": [
            {"relation_type": "HAS_CONDITION", "target_label": "Condition"},
            {"relation_type": "TREATED_BY", "target_label": "Drug",
             "constraints": [{"type": "NOT_IN", "property": "status", "value": ["withdrawn"]}]},
        ],
        "ranking": "EDGE_WEIGHT",
    }))
    for path in result.paths:
        print(path.to_path_string(), path.score, path.explanation)
"""

from cef.model.patterns import (
    CombinatorType,
    Constraint,
    ConstraintTarget,
    ConstraintType,
    Direction,
    GraphPattern,
    HybridWeights,
    PatternStart,
    QueryCombinator,
    RankingStrategy,
    TraversalStep,
)
from cef.patterns.executor import PatternExecutor, PatternTimeoutError
from cef.patterns.lookup import CachedNodeLookup, InMemoryNodeLookup, NodeLookup, NodeVectors, SimilarityFn
from cef.patterns.ranking import CentralityCache
from cef.patterns.result import MatchedPath, PatternResult, PatternStats, StepStats

__all__ = [
    "CachedNodeLookup",
    "CentralityCache",
    "CombinatorType",
    "Constraint",
    "ConstraintTarget",
    "ConstraintType",
    "Direction",
    "GraphPattern",
    "HybridWeights",
    "InMemoryNodeLookup",
    "MatchedPath",
    "NodeLookup",
    "NodeVectors",
    "PatternExecutor",
    "PatternResult",
    "PatternStart",
    "PatternStats",
    "PatternTimeoutError",
    "QueryCombinator",
    "RankingStrategy",
    "SimilarityFn",
    "StepStats",
    "TraversalStep",
]
