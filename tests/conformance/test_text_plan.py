"""Which terms BM25 scores on a large collection: the plan, and both record stores following it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cef import Batch, Chunk
from cef.store.textplan import MIN_DOCS_FOR_PRUNING, plan_terms

from .backends import Deployment

WORDS = st.text(alphabet="abcdefgh", min_size=1, max_size=3)


@given(
    st.lists(WORDS, max_size=8),
    st.dictionaries(WORDS, st.integers(0, 50_000)),
    st.integers(0, 200_000),
    st.integers(1, 30_000),
)
def test_plan_scores_rare_terms_within_the_budget(terms, df, docs, budget) -> None:  # type: ignore[no-untyped-def]
    plan = plan_terms(terms, df, docs, budget)
    present = [t for t in dict.fromkeys(terms) if df.get(t, 0) > 0]
    assert plan.terms == [t for t in present if t in plan.terms]  # a subset, in query order
    if len(present) < 2 or docs < MIN_DOCS_FOR_PRUNING:
        assert plan.terms == present and not plan.conjunctive
    elif plan.conjunctive:  # only when even the rarest term is over the budget
        assert plan.terms == present and min(df[t] for t in present) > budget
        assert plan.fallback is not None and df[plan.fallback] == min(df[t] for t in present)
    else:
        assert plan.terms and sum(df[t] for t in plan.terms) <= budget
        # nothing rarer than a chosen term was left out
        assert max(df[t] for t in plan.terms) <= min(
            (df[t] for t in present if t not in plan.terms), default=10**9
        )


def _corpus() -> list[Chunk]:
    """6,000 documents: 'common' and 'usual' in most, 'rare' in 3, 'alpha' and 'beta' together in only 2."""
    chunks = []
    for i in range(6000):
        words = ["filler", f"w{i}"]
        if i % 10:
            words.append("common")
        if i % 7:
            words.append("usual")
        if i in (5, 6, 7):
            words += ["rare", "rare"]
        if i % 2 == 0 and i < 3000:
            words.append("alpha")
        if (i % 2 == 1 and i % 3 == 1) or i in (10, 20):
            words.append("beta")
        chunks.append(Chunk(id=f"c{i}", content=" ".join(words)))
    return chunks


@pytest.mark.parametrize("deployment", ["sqlite", "postgres"], indirect=True)
def test_large_collection_follows_the_plan(deployment: Deployment) -> None:
    kb = deployment.open(embedder=None)
    kb.index_batch(Batch(chunks=_corpus()))
    store = kb.store
    store.score_budget = 100  # type: ignore[attr-defined]  # a small budget makes 6,000 documents "large"
    # the rare term is scored, the common ones (thousands of postings) are not: the rare documents come first
    hits = store.search_text("chunk", "common rare usual", 5)
    assert {h.id for h in hits} == {"c5", "c6", "c7"}
    # only common terms: documents must hold all of them; 'alpha' and 'beta' share 2 documents,
    # and the rarer of the two ('beta') tops the list up to k
    hits = store.search_text("chunk", "alpha beta", 6)
    assert [h.id for h in hits][:2] in (["c10", "c20"], ["c20", "c10"])
    assert len(hits) == 6 and len({h.id for h in hits}) == 6
    assert all(int(h.id[1:]) % 2 == 1 and int(h.id[1:]) % 3 == 1 for h in hits[2:])
    # a generous budget scores every term: documents with both words still first
    store.score_budget = 10**6  # type: ignore[attr-defined]
    hits = store.search_text("chunk", "alpha beta", 3)
    assert {h.id for h in hits[:2]} == {"c10", "c20"}
