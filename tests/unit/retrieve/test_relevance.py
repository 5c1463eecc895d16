"""Relevance in [0, 1] from the sources' evidence, and "nothing matched" below the documented threshold."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.retrieve.relevance import NOTHING_MATCHED_BELOW

ROOT = Path(__file__).resolve().parents[3]


def _verdict(result: cef.SearchResult) -> dict[str, object]:
    verdict = result.metadata["relevance"]
    assert isinstance(verdict, dict)
    return verdict


def test_an_unrelated_question_matches_nothing(clinical_kb: cef.KnowledgeBase) -> None:
    result = clinical_kb.retrieve("quantum chromodynamics of gluon fields")
    verdict = _verdict(result)
    assert verdict["nothing_matched"] is True and verdict["threshold"] == NOTHING_MATCHED_BELOW
    assert result.nodes == []
    assert any(n.startswith("nothing matched") for n in result.metadata["notes"])
    assert all((r.relevance or 0) < NOTHING_MATCHED_BELOW for r in result.results)


def test_a_named_thing_without_what_is_asked_matches_nothing(clinical_kb: cef.KnowledgeBase) -> None:
    """Lucas Brandt is in the graph; a dentist is not: his other doctors are no answer."""
    result = clinical_kb.retrieve("Who is Lucas Brandt's dentist?")
    verdict = _verdict(result)
    assert verdict["nothing_matched"] is True and verdict["unknown"] == ["dentist"]
    assert result.nodes == []
    asked = clinical_kb.retrieve("Which doctor looks after Lucas Brandt?")
    assert _verdict(asked)["nothing_matched"] is False
    assert [n.node.id for n in asked.nodes] == ["doc-varga"]
    assert all((n.relevance or 0) >= NOTHING_MATCHED_BELOW for n in asked.nodes)


def test_relevance_is_not_rank(clinical_kb: cef.KnowledgeBase) -> None:
    good = clinical_kb.retrieve("Which drugs interact with the medication John Miller takes?")
    bad = clinical_kb.retrieve("Who is Lucas Brandt's dentist?")
    assert good.results and bad.results
    assert good.results[0].relevance is not None and bad.results[0].relevance is not None
    assert good.results[0].relevance > 0.7 > NOTHING_MATCHED_BELOW > bad.results[0].relevance
    ranked_alike = abs(good.results[0].score - bad.results[0].score) < 0.3  # both are someone's rank 1
    assert ranked_alike


@pytest.mark.parametrize("example", ["clinical", "services"])
def test_the_shipped_questions_are_matched(tmp_path: Path, example: str) -> None:
    questions = yaml.safe_load((ROOT / "examples" / example / "questions.yaml").read_text())["questions"]
    graph = yaml.safe_load((ROOT / "examples" / example / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        missed = [q["question"] for q in questions if _verdict(kb.retrieve(q["question"]))["nothing_matched"]]
    assert missed == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(alphabet=st.characters(codec="ascii", categories=["L", "N", "P", "Zs"]), min_size=1, max_size=60)
)
def test_every_relevance_is_in_the_unit_interval(clinical_kb: cef.KnowledgeBase, text: str) -> None:
    if not text.strip():
        return
    result = clinical_kb.retrieve(text)
    verdict = _verdict(result)
    assert 0.0 <= float(verdict["best"]) <= 1.0  # type: ignore[arg-type]
    for r in result.results:
        assert r.relevance is not None and 0.0 <= r.relevance <= 1.0
    for n in result.nodes:
        assert n.relevance is not None and NOTHING_MATCHED_BELOW <= n.relevance <= 1.0
    assert verdict["nothing_matched"] == (float(verdict["best"]) < NOTHING_MATCHED_BELOW)  # type: ignore[arg-type]
