"""What the engine decides for a query, whichever door it came through (REST, MCP, CLI, Python).

A door parses its request, builds a :class:`~cef.model.GraphQuery` (a free-text search request
through :func:`search_query`), has its :class:`QueryPolicy` bound it (``kb.retrieve(policy.bound(query))``;
``kb.answer`` and the context provider take the policy) and renders what comes back. The rules
live here, once:

* **time limit** — a query that sets no ``deadline_ms`` of its own gets the door's limit, for
  every strategy (paths, pattern and PPR included): past it the graph work stops and vector
  search answers (``metadata["timed_out"]``, a fallback note);
* **minimum results** — the query's ``min_results`` (default 3), never more than ``top_k``
  (:class:`~cef.model.GraphQuery` clamps it);
* **strategy** — a search request that explores the graph (``graph`` and a depth above 0) runs
  the ``auto`` route; one that does not runs vector search.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from cef.model import GraphQuery, ResolutionTarget, SearchStrategy, TraversalHint

__all__ = ["QueryPolicy", "search_query"]


class QueryPolicy(BaseModel):
    """How a door bounds the queries it passes to the engine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    time_limit_ms: int | None = Field(
        default=None,
        ge=1,
        le=600_000,
        description="graph time limit of a query without a deadline_ms of its own (None: no limit)",
    )

    @classmethod
    def limited(cls, time_limit_ms: int | None) -> QueryPolicy:
        """The policy of a door configured with ``time_limit_ms`` (0 or None: no limit)."""
        return cls(time_limit_ms=time_limit_ms or None)

    def bound(self, query: GraphQuery) -> GraphQuery:
        """``query`` as the engine runs it: with the time limit unless it sets its own deadline."""
        if self.time_limit_ms is None or query.deadline_ms is not None:
            return query
        return query.model_copy(update={"deadline_ms": self.time_limit_ms})


def search_query(
    text: str,
    *,
    top_k: int,
    depth: int,
    graph: bool = True,
    scope: str | None = None,
    tags: Sequence[str] = (),
    targets: Sequence[ResolutionTarget] = (),
    relation_types: Sequence[str] = (),
) -> GraphQuery:
    """A door's free-text search as a query: the ``auto`` route when it explores the graph
    (``graph`` and ``depth`` > 0), vector search when it does not; ``min_results`` the query's
    default (at most ``top_k``)."""
    explores = graph and depth > 0
    return GraphQuery(
        query=text,
        top_k=top_k,
        targets=list(targets),
        traversal=TraversalHint(depth=depth, relation_types=list(relation_types)),
        strategy=SearchStrategy.AUTO if explores else SearchStrategy.VECTOR,
        scope=scope,
        tags=list(tags),
    )
