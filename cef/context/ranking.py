"""Entity relevance: the query's terms against node names, types and properties, plus meaning."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cef.context.knowledge import RankedEntity
from cef.context.rules import (
    unique,
    words,
)
from cef.model import Node
from cef.retrieve.qwords import names, relation_words
from cef.text import STOP_WORDS, stem

__all__ = ["EntityRelevanceRanker", "matches_term", "query_terms"]


# ------------------------------------------------------------------- ranker
def query_terms(text: str) -> list[str]:
    """Distinct lower-case words of more than two letters, stop words removed."""
    return unique(w for w in words(text) if len(w) > 2 and w not in STOP_WORDS)


def matches_term(term: str, vocab: set[str]) -> bool:
    """``term`` names a word of ``vocab``: the same word, the same stem, or (5+ letters) a prefix of one."""
    if term in vocab:
        return True
    root = stem(term)
    if root in vocab or any(stem(w) == root for w in vocab):
        return True
    return len(term) >= 5 and any(w.startswith(term) for w in vocab)


@dataclass
class EntityRelevanceRanker:
    """Scores nodes against a query: term matches (name > type > properties) plus embedding similarity.

    ``score = (name_weight·#name matches + type_weight·#type matches +
    property_weight·#property matches) / #terms + vector_weight·max(0, (cos −
    vector_floor) / (1 − vector_floor))``. The floor discounts the similarity
    unrelated texts share under sentence embedders.
    """

    name_weight: float = 1.0
    type_weight: float = 0.5
    property_weight: float = 0.3
    vector_weight: float = 1.0
    vector_floor: float = 0.2

    def rank(
        self, query: str, nodes: Sequence[Node], similarities: Mapping[str, float] | None = None
    ) -> list[RankedEntity]:
        """``nodes`` by relevance to ``query``, highest first (ties by id)."""
        terms = query_terms(query)
        sims = similarities or {}
        out = [self.score(terms, node, sims.get(node.id)) for node in nodes]
        out.sort(key=lambda r: (-r.score, r.node.id))
        return out

    def score(self, terms: Sequence[str], node: Node, similarity: float | None = None) -> RankedEntity:
        name_vocab = set(words(" ".join([node.name, *node.aliases])))
        type_vocab = relation_words(node.label)
        prop_vocab: set[str] = set()
        for key, value in node.properties.items():
            if key in ("name", "title", "label_text", "aliases"):
                continue
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                prop_vocab.update(words(str(value)))
            elif isinstance(value, list):
                prop_vocab.update(w for v in value if isinstance(v, str) for w in words(v))
        total = 0.0
        matched: list[str] = []
        for term in terms:
            hit = False
            if matches_term(term, name_vocab):
                total += self.name_weight
                hit = True
            if any(names(term, w) for w in type_vocab):  # the question names the node's type
                total += self.type_weight
                hit = True
            if matches_term(term, prop_vocab):
                total += self.property_weight
                hit = True
            if hit:
                matched.append(term)
        lexical = total / len(terms) if terms else 0.0
        vector = 0.0
        if similarity is not None and math.isfinite(similarity) and self.vector_floor < 1.0:
            vector = self.vector_weight * max(
                0.0, (similarity - self.vector_floor) / (1.0 - self.vector_floor)
            )
        return RankedEntity(
            node=node,
            score=lexical + vector,
            lexical_score=lexical,
            vector_score=vector,
            matched_terms=matched,
        )
