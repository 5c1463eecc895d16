"""Relevance: a fact the question asks must be one the knowledge base holds (issue 27, wave 9).

A property a named thing's kind carries but the thing lacks ("the brand of amiodarone": other
medications have a brand) and a code whose parts no record holds ("INC-2200": the text search finds
every "INC-…") are asked facts the knowledge base does not hold: "nothing matched"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.errors import ValidationError

ROOT = Path(__file__).resolve().parents[3]


def _verdict(result: cef.SearchResult) -> dict[str, object]:
    verdict = result.metadata["relevance"]
    assert isinstance(verdict, dict)
    return verdict


def _nothing(kb: cef.KnowledgeBase, question: str) -> bool:
    return bool(_verdict(kb.retrieve(question))["nothing_matched"])


@pytest.fixture(scope="module")
def services_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    graph = yaml.safe_load((ROOT / "examples" / "services" / "graph.yaml").read_text())
    with cef.open(tmp_path_factory.mktemp("services") / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        yield kb


# ------------------------------------------------------------------ a property the named thing lacks
def test_a_property_the_named_thing_lacks_matches_nothing(clinical_kb: cef.KnowledgeBase) -> None:
    """Medications have a brand, amiodarone has none: another drug's brand is no answer."""
    result = clinical_kb.retrieve("What brand name is amiodarone sold under?")
    assert _verdict(result)["nothing_matched"] is True and result.nodes == []
    assert not _nothing(clinical_kb, "What's the brand name for metformin?")


def test_a_property_the_named_thing_gains_is_held(clinical_kb: cef.KnowledgeBase) -> None:
    """The verdict follows the node's own facts: once amiodarone has a brand, the question is answered."""
    question = "What brand name is amiodarone sold under?"
    assert _nothing(clinical_kb, question)
    clinical_kb.update_node("med-amiodarone", {"brand": "Cordarone"})
    assert not _nothing(clinical_kb, question)


def test_a_property_asked_of_the_answer_is_held_by_the_answer(clinical_kb: cef.KnowledgeBase) -> None:
    """Patients carry no brand: "the brand of the drug John takes" asks it of the answer, warfarin."""
    result = clinical_kb.retrieve("What is the brand name of the drug John Miller takes?")
    assert _verdict(result)["nothing_matched"] is False
    assert "med-warfarin" in [n.node.id for n in result.nodes]


def test_a_word_of_a_named_things_name_is_no_property(services_kb: cef.KnowledgeBase) -> None:
    """The words "price engine" name the pricing service (alias price-engine), though some node has an
    ``engine`` property: the question asks its language, which it has."""
    assert not _nothing(services_kb, "What language is the price engine written in?")


def test_a_property_the_setting_turns_off(clinical_kb: cef.KnowledgeBase) -> None:
    query = cef.GraphQuery(
        query="What brand name is amiodarone sold under?",
        options={"relevance": {"unheld_properties": False}},
    )
    assert _verdict(clinical_kb.retrieve(query))["nothing_matched"] is False


# ------------------------------------------------------------------ codes
def test_a_code_no_record_holds_matches_nothing(services_kb: cef.KnowledgeBase) -> None:
    """The postmortems are INC-1987, INC-2041, …: INC-2200 is none of them."""
    result = services_kb.retrieve("What caused INC-2200?")
    assert _verdict(result)["nothing_matched"] is True
    assert _verdict(result)["unknown"] == ["inc-2200"]
    assert not _nothing(services_kb, "What caused INC-2041?")


@pytest.fixture(scope="module")
def tickets_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    with cef.open(tmp_path_factory.mktemp("tickets") / "kb.db", embedder=None) as kb:
        kb.index_batch(
            cef.Batch(
                nodes=[
                    cef.Node(id="qx-417", label="Incident", properties={"name": "QX-417"}),
                    cef.Node(id="qx-88", label="Incident", properties={"name": "QX-88"}),
                ],
                chunks=[
                    cef.Chunk(
                        id="pm-417",
                        content="Postmortem QX-417: the nightly export stalled because the archive disk filled up.",
                        node_id="qx-417",
                    ),
                    cef.Chunk(
                        id="pm-88",
                        content="Postmortem QX-88: a certificate expired on the billing gateway.",
                        node_id="qx-88",
                    ),
                ],
            )
        )
        yield kb


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=100, max_value=9999).filter(lambda n: n not in (417, 88)))
def test_only_the_codes_held_are_held(tickets_kb: cef.KnowledgeBase, number: int) -> None:
    assert _nothing(tickets_kb, f"What caused QX-{number}?")
    assert not _nothing(tickets_kb, "What caused QX-417?")


def test_a_date_with_a_hyphen_is_no_code(tmp_path: Path) -> None:
    """The word "mid-2024" joins letters and digits like a code, but is written in lower case and names no
    family of codes the contracts hold: the question is answered."""
    graph = yaml.safe_load((ROOT / "bench" / "curated" / "contracts" / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        result = kb.retrieve("Which company owned Halcyon Data Labs in mid-2024?")
        assert "mid-2024" not in _verdict(result)["unknown"]  # type: ignore[operator]


def test_a_property_word_naming_the_answers_is_no_fact_asked(tmp_path: Path, embedder: object) -> None:
    """Editors have a job ``title``; "which titles are printed at Northgate" asks for the books the
    printer prints (answer nodes found), not a printer's title. With the default embedder, as shipped."""
    graph = yaml.safe_load((ROOT / "bench" / "curated" / "publishing" / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=embedder) as kb:  # type: ignore[arg-type]
        kb.index_batch(cef.Batch.model_validate(graph))
        assert not _nothing(kb, "Which titles are printed at Northgate Litho at the moment?")


# ------------------------------------------------------------------ the question's evidence in the calibration
def test_the_questions_evidence_joins_the_calibration(clinical_kb: cef.KnowledgeBase) -> None:
    """``RelevanceSettings.evidence`` adds the question's own evidence to the calibration's logistic:
    weighing what is asked and held nowhere ("manufactures") against the answer refuses a question the
    rule alone answers, leaves a question whose asked words are held answered, and keeps results' order."""
    cost = "Who manufactures Warfarin?"
    assert not _nothing(clinical_kb, cost)  # warfarin is named, the verb is phrasing: the rule answers it
    weighed = {"relevance": {"evidence": [0.0, -3.0, 0.0, 0.0]}}
    assert (
        _verdict(clinical_kb.retrieve(cef.GraphQuery(query=cost, options=weighed)))["nothing_matched"] is True
    )
    held = "What conditions does John Miller have?"
    plain = clinical_kb.retrieve(held)
    both = clinical_kb.retrieve(cef.GraphQuery(query=held, options=weighed))
    assert _verdict(both)["nothing_matched"] is False
    assert [c.chunk.id for c in both.results] == [c.chunk.id for c in plain.results]
    with pytest.raises(ValidationError):
        clinical_kb.retrieve(cef.GraphQuery(query=held, options={"relevance": {"evidence": [1.0]}}))
