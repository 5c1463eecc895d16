"""Context assembly: token counting, packing to a budget, formats, and the two context providers.

* :class:`ContextProvider` — several queries, one token budget: retrieved
  chunks (deduplicated, ranked across queries) plus the graph reasoning that
  explains them. ``provider.provide_context(ContextRequest(...))``.
* :class:`GraphContextProvider` — the entities relevant to a query, their
  relationships, the domain rules (axioms) of their types and the claims about
  them. ``provider.get_context(query, KnowledgeContextOptions(...))``.
* :func:`add_axiom` / :func:`add_claim` store rules and claims in the graph
  (see :mod:`cef.context.rules`).

Both providers and the semantic memory's ``retrieve_context`` go through one
packer (:func:`cef.context.budget.pack`) and one renderer
(:mod:`cef.context.formats`); what a context can hold are item kinds
(:mod:`cef.context.items`: entities, relationships, rules, claims, paths,
chunks; :mod:`cef.context.facts`: the memory's facts, beliefs, conflicts and
changes). Budgets hold for the rendered text (Markdown, YAML, JSON or plain)
as counted by a :class:`TokenCounter` chosen to match the target model.
"""

from cef.context.budget import BudgetTooSmallError
from cef.context.cuts import TRUNCATION_MARKER, split_sentences
from cef.context.formats import ContextDocument, ContextFormat, render
from cef.context.graph_provider import (
    DocumentInput,
    EntityRelevanceRanker,
    GraphContextProvider,
    KnowledgeContext,
    KnowledgeContextOptions,
    RankedEntity,
)
from cef.context.provider import ContextProvider
from cef.context.request import ContextRequest, ContextResponse, QuerySpec, RankingStrategy
from cef.context.rules import add_axiom, add_claim
from cef.context.tokens import TokenCounter, make_token_counter

__all__ = [
    "TRUNCATION_MARKER",
    "BudgetTooSmallError",
    "ContextDocument",
    "ContextFormat",
    "ContextProvider",
    "ContextRequest",
    "ContextResponse",
    "DocumentInput",
    "EntityRelevanceRanker",
    "GraphContextProvider",
    "KnowledgeContext",
    "KnowledgeContextOptions",
    "QuerySpec",
    "RankedEntity",
    "RankingStrategy",
    "TokenCounter",
    "add_axiom",
    "add_claim",
    "make_token_counter",
    "render",
    "split_sentences",
]
