"""Semantic support: the question's remainder against the results' evidence, a cosine in [0, 1], reported on request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.embed.base import Embedder
from cef.ingest.pipeline import ingest_sources

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def clinical_kb(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[cef.KnowledgeBase]:
    """The shipped clinical example with the real offline embedder (support is a cosine)."""
    with cef.open(tmp_path_factory.mktemp("support") / "kb.db", embedder=embedder) as kb:
        assert not ingest_sources(kb, [str(ROOT / "examples" / "clinical" / "graph.yaml")]).failures
        yield kb


def _features(kb: cef.KnowledgeBase, question: str, support: bool = True) -> dict[str, float]:
    options = {"relevance": {"support": support}}
    features = kb.retrieve(cef.GraphQuery(query=question, options=options)).metadata["relevance"]["features"]
    assert isinstance(features, dict)
    return features


def test_support_is_reported_only_when_asked(clinical_kb: cef.KnowledgeBase) -> None:
    question = "Which drugs interact with the medication John Miller takes?"
    assert "support" not in _features(clinical_kb, question, support=False)
    on = _features(clinical_kb, question)
    off = _features(clinical_kb, question, support=False)
    assert 0.0 <= on["support"] <= 1.0
    assert {k: v for k, v in on.items() if k != "support"} == off  # it changes no verdict


def test_support_is_higher_for_what_the_evidence_says(clinical_kb: cef.KnowledgeBase) -> None:
    # what John Miller takes is in the evidence; his home address is not
    held = _features(clinical_kb, "Which drugs interact with the medication John Miller takes?")["support"]
    missing = _features(clinical_kb, "What is John Miller's home address?")["support"]
    assert held > missing + 0.3


def test_a_question_asking_nothing_beyond_its_names_is_supported(clinical_kb: cef.KnowledgeBase) -> None:
    assert _features(clinical_kb, "John Miller")["support"] == pytest.approx(1.0)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(codec="ascii", categories=["L", "Zs"]), min_size=1, max_size=40))
def test_support_is_in_the_unit_interval(clinical_kb: cef.KnowledgeBase, text: str) -> None:
    if not text.strip():
        return
    support = _features(clinical_kb, text).get("support", 0.0)
    assert 0.0 <= support <= 1.0
