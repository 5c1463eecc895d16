"""What pattern execution returns: matched paths with scores and explanations."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from cef.model import GraphPath
from cef.model.patterns import RankingStrategy


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MatchedPath(_Model):
    """One path that matched: ``node_ids[i] -relation_types[i]-> node_ids[i+1]``."""

    pattern_id: str = Field(
        description="the pattern that produced the path (a SEQUENTIAL chain joins ids with '>')"
    )
    node_ids: list[str]
    edge_ids: list[str] = Field(default_factory=list)
    relation_types: list[str] = Field(
        default_factory=list, description="relation names as walked (the inverse name when walked backward)"
    )
    node_labels: list[str] = Field(default_factory=list)
    node_names: list[str] = Field(default_factory=list)
    score: float = Field(default=0.0, description="higher is better; comparable within one result only")
    score_components: dict[str, float] = Field(
        default_factory=dict, description="raw ranking inputs: hops, edge_weight, node_centrality, semantic"
    )
    properties: dict[str, float] = Field(
        default_factory=dict, description="path facts: hops, weight_product, confidence_product"
    )
    explanation: str = Field(default="", description="which steps and constraints matched, and how it scored")

    @property
    def length(self) -> int:
        return len(self.edge_ids)

    @property
    def start_node_id(self) -> str:
        return self.node_ids[0]

    @property
    def end_node_id(self) -> str:
        return self.node_ids[-1]

    def node_at_step(self, step: int) -> str:
        """The node reached by step ``step`` (0-based); ``-1`` gives the start node."""
        return self.node_ids[step + 1]

    def to_path_string(self) -> str:
        names = self.node_names or self.node_ids
        parts = [names[0]]
        for rel, name in zip(self.relation_types, names[1:], strict=False):
            parts.append(f"-[{rel}]-> {name}")
        return " ".join(parts)

    def to_graph_path(self) -> GraphPath:
        """As the retrieval pipeline's :class:`cef.model.GraphPath`."""
        return GraphPath(
            node_ids=self.node_ids,
            relation_types=self.relation_types,
            edge_ids=self.edge_ids,
            node_names=self.node_names,
            weight=self.properties.get("weight_sum", 0.0),
            confidence=self.properties.get("confidence_product", 1.0),
        )


class StepStats(_Model):
    """What one step of one pattern did (summed over the search)."""

    moves: int = Field(
        default=0, description="edges leaving the distinct end nodes that relation/direction/time allow"
    )
    pruned_by_edge: int = Field(default=0, description="moves dropped by edge constraints")
    pruned_by_node: int = Field(
        default=0, description="moves dropped by labels, node constraints or the end filter"
    )
    pruned_cycles: int = Field(default=0, description="extensions dropped for revisiting a node")
    paths: int = Field(default=0, description="partial paths this step produced")


class PatternStats(_Model):
    """How the search of one pattern went."""

    pattern_id: str
    start_nodes: int = Field(default=0, description="candidate start nodes")
    start_matched: int = Field(default=0, description="start nodes that met the start conditions")
    paths: int = Field(default=0, description="complete paths found (before ranking and max_paths)")
    timed_out: bool = False
    truncated: bool = False
    steps: list[StepStats] = Field(default_factory=list)


class PatternResult(_Model):
    """The answer to a pattern or combinator: paths (best first) and how the search went."""

    paths: list[MatchedPath] = Field(default_factory=list, description="best first")
    ranking: RankingStrategy = Field(
        description="the strategy used (SEMANTIC_SCORE falls back to HYBRID when there is no query to compare)"
    )
    timed_out: bool = Field(default=False, description="the time limit stopped the search; paths are partial")
    truncated: bool = Field(
        default=False, description="the search stopped at its candidate cap; more paths may exist"
    )
    elapsed_ms: float = 0.0
    warnings: list[str] = Field(
        default_factory=list, description="unknown labels/relations, ranking fallbacks"
    )
    stats: list[PatternStats] = Field(
        default_factory=list,
        description="per pattern: start nodes, complete paths, moves pruned at each step",
    )

    @property
    def end_node_ids(self) -> list[str]:
        """End nodes of the paths, in rank order, without repeats."""
        return list(dict.fromkeys(p.end_node_id for p in self.paths))

    @property
    def node_ids(self) -> list[str]:
        """Every node on any path, in rank order of first appearance."""
        return list(dict.fromkeys(n for p in self.paths for n in p.node_ids))
