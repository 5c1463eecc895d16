"""Which query terms BM25 scores: the same rule for every store, so backends rank alike.

Scoring a term costs time in proportion to its document frequency (SQLite FTS5
and PostgreSQL both score every matching row before taking the top k), while a
term found in a large share of the documents adds almost nothing to the ranking
(its IDF is near zero). :func:`plan_terms` therefore scores the rarest terms
whose document frequencies add up to at most a budget of postings, which bounds
the work of a query whatever the collection size. When even the rarest term is
over the budget (a query made only of common words), the documents must contain
every term (a conjunction is much smaller than any of its terms), and the store
tops that up from the rarest term when it finds fewer than k documents.
Collections smaller than :data:`MIN_DOCS_FOR_PRUNING` score every term.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["MIN_DOCS_FOR_PRUNING", "SCORE_BUDGET", "TermPlan", "plan_terms"]

#: below this many documents every query term is scored
MIN_DOCS_FOR_PRUNING = 5000
#: postings (summed document frequencies) a query scores at most, unless a single term has more
SCORE_BUDGET = 10_000


@dataclass(frozen=True)
class TermPlan:
    """The terms to score, in query order; ``conjunctive``: documents must contain all of them."""

    terms: list[str] = field(default_factory=list)
    conjunctive: bool = False
    #: the rarest term, scored alone to top up a conjunction that found fewer than k documents
    fallback: str | None = None


def plan_terms(
    terms: Sequence[str], df: Mapping[str, int], docs: int, budget: int = SCORE_BUDGET
) -> TermPlan:
    """The plan for ``terms`` given each term's document frequency ``df`` in ``docs`` documents."""
    present = [t for t in dict.fromkeys(terms) if df.get(t, 0) > 0]
    if len(present) < 2 or docs < MIN_DOCS_FOR_PRUNING:
        return TermPlan(present)
    by_df = sorted(present, key=lambda t: (df[t], present.index(t)))
    chosen: set[str] = set()
    total = 0
    for t in by_df:
        if total + df[t] > budget:
            break
        chosen.add(t)
        total += df[t]
    if chosen:
        return TermPlan([t for t in present if t in chosen])
    return TermPlan(present, conjunctive=True, fallback=by_df[0])
