"""What one retrieval stage tells the next: typed records on ``QueryContext.stages``.

Every stage writes what it found to a field of :class:`StageState`, and later stages read the field
(the anchored traversal's reach, the path stage's measure of how much of the question its best path
names, how PPR was seeded, the matched patterns). The result's ``metadata`` — what REST, MCP, the
CLI and the Python API report — is built from these records once, by :meth:`StageState.report`,
when the pipeline wraps its result; the records that only pass work between stages (the traversal,
the matched paths themselves, the chunks' roles) are not reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cef.model import GraphQuery
from cef.retrieve.presets import AutoSettings, settings_for

if TYPE_CHECKING:
    from cef.graph.filter import Expansion
    from cef.patterns import MatchedPath, PatternResult
    from cef.retrieve.entities import LinkedEntity

__all__ = [
    "BestPath",
    "DialogueInfo",
    "GraphReach",
    "PathsInfo",
    "PatternMatches",
    "PatternsInfo",
    "PprInfo",
    "Reached",
    "RelatedEntity",
    "RouteInfo",
    "RouteSource",
    "StageState",
    "TokenBudget",
    "Traversal",
    "Verdict",
]


@dataclass
class Traversal:
    """The anchored traversal (``expand_anchors``), read by ``hybrid_search``: the walk, and the
    score of each anchor it started from (by node position)."""

    walk: Expansion
    anchor_score: dict[int, float]


@dataclass
class BestPath:
    """One of the best relation paths the path stage found."""

    anchor: str
    path: str
    score: float

    def report(self) -> dict[str, Any]:
        return {"anchor": self.anchor, "path": self.path, "score": self.score}


@dataclass
class PathsInfo:
    """The relation-path stage (``relation_path_search``), read by the ``auto`` route and by relevance."""

    #: the anchors' node ids
    anchors: list[str]
    #: the share of the best path's hops the question's words name
    named: float
    #: the same measure for the path behind each answer node (by node id)
    answer_named: dict[str, float]
    #: how surely the best path's anchor was linked to the question
    anchor_confidence: float
    best: list[BestPath]
    #: each returned chunk's role: ``answer``, ``chain``, ``path``, ``anchor`` or ``weak answer`` (by chunk id)
    roles: dict[str, str] = field(default_factory=dict)

    def confident(self, auto: AutoSettings) -> bool:
        """The question names the best path from an anchor it surely names: paths lead the ``auto``
        route (``AutoSettings.confident_named`` and ``confident_anchor`` say how surely)."""
        return self.named >= auto.confident_named and self.anchor_confidence >= auto.confident_anchor

    def report(self, auto: AutoSettings) -> dict[str, Any]:
        return {
            "anchors": self.anchors,
            "named": self.named,
            "answer_named": self.answer_named,
            "confident": self.confident(auto),
            "best": [b.report() for b in self.best],
        }


@dataclass
class RelatedEntity:
    """An entity near the query's own (PPR mass, or the graph-first walk's score and hops)."""

    node_id: str
    name: str
    score: float
    hops: int | None = None

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node_id": self.node_id, "name": self.name, "score": self.score}
        if self.hops is not None:
            out["hops"] = self.hops
        return out


@dataclass
class PprInfo:
    """How PPR ran: the seed entities' ids, the passages it ranked, how many it reached by a bridge."""

    seed_entities: list[str]
    passages: int
    bridged: int

    def report(self) -> dict[str, Any]:
        return {"seed_entities": self.seed_entities, "passages": self.passages, "bridged": self.bridged}


@dataclass
class GraphReach:
    """How far the graph-first strategy got."""

    entities_reached: int
    chunks_from_graph: int

    def report(self) -> dict[str, Any]:
        return {"entities_reached": self.entities_reached, "chunks_from_graph": self.chunks_from_graph}


@dataclass
class PatternMatches:
    """What the query's patterns matched: paths best first (merged over patterns), and per-pattern results."""

    paths: list[MatchedPath]
    results: list[PatternResult]

    @property
    def timed_out(self) -> bool:
        return any(r.timed_out for r in self.results)


@dataclass
class PatternsInfo:
    """The query's patterns: what they matched (read by the PATTERN strategy) and a summary."""

    matches: PatternMatches
    elapsed_ms: float

    def report(self) -> dict[str, Any]:
        paths = self.matches.paths
        return {
            "paths": len(paths),
            "end_nodes": len({p.end_node_id for p in paths}),
            "timed_out": self.matches.timed_out,
            "elapsed_ms": self.elapsed_ms,
        }


@dataclass
class RouteSource:
    """One source of a fused route: its weight and how many chunks it ranked."""

    weight: float
    results: int

    def report(self) -> dict[str, Any]:
        return {"weight": self.weight, "results": self.results}


@dataclass
class DialogueInfo:
    """The conversation route: how many sessions it scored and the speaker the question names."""

    sessions: int
    speaker: str | None

    def report(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "speaker": self.speaker}


@dataclass
class RouteInfo:
    """The fused route the ``auto`` strategy took: its sources (by name) and the query's hints."""

    sources: dict[str, RouteSource]
    hints: list[str]
    dialogue: DialogueInfo | None = None

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sources": {name: s.report() for name, s in self.sources.items()}}
        if self.dialogue is not None:
            out["dialogue"] = self.dialogue.report()
        out["hints"] = self.hints
        return out


@dataclass
class TokenBudget:
    """The query's token budget: the budget, the tokens the kept chunks use, the chunks dropped."""

    budget: int
    used: int
    dropped: int

    def report(self) -> dict[str, Any]:
        return {"budget": self.budget, "used": self.used, "dropped": self.dropped}


@dataclass
class Verdict:
    """The relevance stage's verdict on the results (see :mod:`cef.retrieve.relevance`)."""

    best: float
    threshold: float
    nothing_matched: bool
    named: list[str]
    asked: list[str]
    unknown: list[str]
    #: each measured word's weight: how specific it is in the knowledge base
    weights: dict[str, float] = field(default_factory=dict)
    #: the question's evidence the verdict was calibrated on (see :mod:`cef.retrieve.relevance`)
    features: dict[str, float] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        return {
            "best": self.best,
            "features": self.features,
            "threshold": self.threshold,
            "nothing_matched": self.nothing_matched,
            "named": self.named,
            "asked": self.asked,
            "unknown": self.unknown,
            "weights": self.weights,
        }


@dataclass
class Reached:
    """A node the walk reached: its priority, hops from its seed, and the edge it was reached over
    (``parent`` -1 for a seed)."""

    pos: int
    priority: float
    depth: int
    parent: int = -1
    edge: int = -1
    forward: bool = True
    anchor_how: str | None = None


@dataclass
class StageState:
    """What the stages of one retrieval told each other (None: the stage did not run or found nothing)."""

    #: the query's anchors were resolved (the anchors stage ran, or a pattern needed them)
    anchors_resolved: bool = False
    #: the entities linked in the question (PPR, graph-first)
    query_entities: list[LinkedEntity] | None = None
    #: the anchored traversal, read by the hybrid strategy
    traversal: Traversal | None = None
    #: the best-first walk's nodes by position (:func:`cef.retrieve.bestfirst.walk_stage`), when it ran
    walked: dict[int, Reached] | None = None
    patterns: PatternsInfo | None = None
    paths: PathsInfo | None = None
    #: how many linked entities seeded PPR (0: it was seeded by dense hits alone)
    ppr_seed_entities: int | None = None
    related_entities: list[RelatedEntity] | None = None
    ppr: PprInfo | None = None
    graph: GraphReach | None = None
    route: RouteInfo | None = None
    #: the query's deadline passed during graph work; vector search (or BM25) answered
    timed_out: bool = False
    token_budget: TokenBudget | None = None
    relevance: Verdict | None = None

    def report(self, query: GraphQuery) -> dict[str, Any]:
        """The result's metadata entries of these records for ``query`` (the pipeline adds anchors
        and notes)."""
        out: dict[str, Any] = {}
        if self.patterns is not None:
            out["patterns"] = self.patterns.report()
        if self.paths is not None:
            out["paths"] = self.paths.report(settings_for(AutoSettings, query))  # when a path leads
        if self.query_entities is not None:
            out["query_entities"] = [e.as_dict() for e in self.query_entities]
        if self.ppr_seed_entities is not None:
            out["ppr_seeds"] = {"entities": self.ppr_seed_entities}
        if self.related_entities is not None:
            out["related_entities"] = [e.report() for e in self.related_entities]
        if self.ppr is not None:
            out["ppr"] = self.ppr.report()
        if self.graph is not None:
            out["graph"] = self.graph.report()
        if self.route is not None:
            out["route"] = self.route.report()
        if self.timed_out:
            out["timed_out"] = True
        if self.token_budget is not None:
            out["token_budget"] = self.token_budget.report()
        if self.relevance is not None:
            out["relevance"] = self.relevance.report()
        return out
