"""The LLM extractor and its use at ingest: offsets, confidences, thresholds, relations, bad answers.

The LLM is :class:`~cef.llm.mock.MockLLMClient` (the shipped offline client) scripted
with a function of the messages: a tiny deterministic "model" that reads the
passage it is given and answers with the entities and relations of a fact table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cef
from cef.cli import app
from cef.extract.llm import LLMExtractor
from cef.ingest.enrich import EntityEnricher
from cef.ingest.pipeline import ingest_sources, make_enricher
from cef.llm.base import ChatMessage
from cef.llm.mock import MockLLMClient
from cef.schema.textgraph import relation_type_name

#: name -> (type, confidence the "model" gives)
ENTITIES = {
    "Ada Lovelace": ("PERSON", 0.95),
    "Charles Babbage": ("PERSON", 0.9),
    "Analytical Engine": ("WORK", 0.8),
    "London": ("PLACE", 0.3),  # below the default threshold of 0.5
    "Mars": ("PLACE", None),  # no confidence given: the extractor's default (0.7)
}
#: (subject, predicate, object, confidence)
RELATIONS = [
    ("Ada Lovelace", "worked with", "Charles Babbage", 0.9),
    ("Charles Babbage", "designed", "Analytical Engine", 0.85),
    ("Ada Lovelace", "lived in", "London", 0.9),  # its object is dropped by the entity threshold
    ("Ada Lovelace", "admired", "Analytical Engine", 0.2),  # below the relation threshold
    ("Ada Lovelace", "mentions", "Analytical Engine", 0.9),  # a name the enricher's own edges use
]


def fact_model(messages: list[ChatMessage]) -> str:
    passage = messages[-1].content.split("Passage:\n", 1)[-1]
    if "GARBAGE" in passage:
        return "Sorry, I cannot help with that."
    ents = [
        {"name": name, "type": t, **({"confidence": c} if c is not None else {})}
        for name, (t, c) in ENTITIES.items()
        if name.lower() in passage.lower()
    ]
    ents.append({"name": "Someone Not In The Text", "type": "PERSON", "confidence": 0.99})
    ents.append({"type": "PERSON"})  # malformed: no name
    rels = [
        {"subject": s, "predicate": p, "object": o, "confidence": c}
        for s, p, o, c in RELATIONS
        if s.lower() in passage.lower() and o.lower() in passage.lower()
    ]
    return "Here you go:\n```json\n" + json.dumps({"entities": ents, "relations": rels}) + "\n```"


TEXT = (
    "Ada Lovelace worked with Charles Babbage in London on the Analytical Engine. ADA LOVELACE wrote notes."
)


def test_offsets_types_and_confidences() -> None:
    ex = LLMExtractor(MockLLMClient(fact_model))
    [result] = ex.extract_relations([TEXT])
    by_name: dict[str, list] = {}
    for m in result.mentions:
        assert TEXT[m.start : m.end] == m.text and m.source == "llm"
        by_name.setdefault(m.normalized, []).append(m)
    assert len(by_name["ada lovelace"]) == 2  # every occurrence, case-insensitive
    assert by_name["ada lovelace"][0].type == "PERSON" and by_name["ada lovelace"][0].confidence == 0.95
    assert by_name["london"][0].confidence == 0.3
    assert not any("someone" in k for k in by_name)  # a name the passage does not contain is dropped
    preds = {(r.subject.normalized, r.predicate, r.object.normalized): r.confidence for r in result.relations}
    assert preds[("ada lovelace", "worked with", "charles babbage")] == 0.9
    assert ("ada lovelace", "lived in", "london") in preds  # thresholds are the enricher's job
    assert ex.take_warnings() == []


def test_confidence_clamped_and_defaulted() -> None:
    answer = json.dumps(
        {
            "entities": [
                {"name": "Mars", "confidence": 7},
                {"name": "Venus", "confidence": -1},
                {"name": "Moon"},
            ]
        }
    )
    ex = LLMExtractor(MockLLMClient([answer]), default_confidence=0.6)
    [mentions] = ex.extract(["Mars, Venus and the Moon."])
    assert {m.text: m.confidence for m in mentions} == {"Mars": 1.0, "Venus": 0.0, "Moon": 0.6}


def test_bad_answers_and_errors_cost_only_their_passage() -> None:
    ex = LLMExtractor(MockLLMClient(fact_model))
    ok, bad = ex.extract(["Mars is red.", "GARBAGE Mars"])
    assert [m.text for m in ok] == ["Mars"] and bad == []
    warnings = ex.take_warnings()
    assert len(warnings) == 1 and "not a JSON object" in warnings[0] and "GARBAGE" in warnings[0]
    assert ex.take_warnings() == []
    failing = LLMExtractor(MockLLMClient(["{}"]))  # a one-answer script: the second call raises LLMError
    first, second = failing.extract(["Mars", "Venus"])
    assert first == [] and second == []
    assert "LLM extraction failed" in failing.take_warnings()[0]


def test_relation_type_names() -> None:
    assert relation_type_name("worked with") == "WORKED_WITH"
    assert relation_type_name(" is-part of ") == "IS_PART_OF"
    assert relation_type_name("3 sons") == "R_3_SONS"
    assert relation_type_name("!!") is None


def test_enricher_thresholds_must_be_probabilities() -> None:
    with pytest.raises(ValueError, match="min_relation_confidence"):
        EntityEnricher(LLMExtractor(MockLLMClient(fact_model)), min_relation_confidence=1.5)


def _corpus(path: Path, rows: list[dict]) -> None:  # type: ignore[type-arg]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_ingest_with_an_llm_writes_entities_and_relations_above_the_thresholds(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    _corpus(src / "a.jsonl", [{"id": "p1", "title": "Ada Lovelace", "text": TEXT}])
    _corpus(
        src / "b.jsonl", [{"id": "p2", "text": "Mars is far from London."}, {"id": "p3", "text": "GARBAGE"}]
    )
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(src)], enricher=make_enricher(MockLLMClient(fact_model)))
        assert report.failures == [] and report.succeeded == 2
        assert any("b.jsonl" in w and "not a JSON object" in w for w in report.warnings)
        assert kb.find_node("entity:ada lovelace") is not None
        assert kb.find_node("entity:mars") is not None  # default confidence 0.7 >= 0.5
        assert kb.find_node("entity:london") is None  # 0.3 < 0.5
        worked = kb.get_neighbors("entity:ada lovelace", relation_types=["WORKED_WITH"])
        assert [n.id for n in worked] == ["entity:charles babbage"]
        edges = [
            e for e in kb.store.iter_edges() if e.relation_type in ("WORKED_WITH", "DESIGNED", "ADMIRED")
        ]
        assert {(e.source, e.relation_type, e.target, e.confidence) for e in edges} == {
            ("entity:ada lovelace", "WORKED_WITH", "entity:charles babbage", 0.9),
            ("entity:charles babbage", "DESIGNED", "entity:analytical engine", 0.85),
        }
        # MENTIONS stays the passage -> entity edge: the stated relation gets a type of its own
        assert all(
            e.source.startswith("passage:") for e in kb.store.iter_edges() if e.relation_type == "MENTIONS"
        )
        assert [n.id for n in kb.get_neighbors("entity:ada lovelace", relation_types=["MENTIONS_REL"])] == [
            "entity:analytical engine"
        ]
        rt = kb.state.graph.rel_types["DESIGNED"]
        assert rt.metadata["extracted"] is True and rt.semantics.value == "ASSOCIATION"
        assert all(e.properties["chunk_id"] == "p1" and e.properties["source"] == "llm" for e in edges)

        # a stricter relation threshold on another knowledge base keeps only the surest relation
    with cef.open(tmp_path / "strict.db", embedder=None) as kb:
        ingest_sources(
            kb,
            [str(src / "a.jsonl")],
            enricher=make_enricher(MockLLMClient(fact_model), min_relation_confidence=0.88),
        )
        kinds = {e.relation_type for e in kb.store.iter_edges()}
        assert "WORKED_WITH" in kinds and "DESIGNED" not in kinds


def test_reingest_replaces_and_deletion_removes_relation_edges(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    _corpus(src / "a.jsonl", [{"id": "p1", "text": "Ada Lovelace worked with Charles Babbage."}])
    enricher = make_enricher(MockLLMClient(fact_model))

    def relations(kb: cef.KnowledgeBase) -> set[tuple[str, str, str]]:
        return {
            (e.source, e.relation_type, e.target)
            for e in kb.store.iter_edges()
            if e.relation_type in ("WORKED_WITH", "DESIGNED")
        }

    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        ingest_sources(kb, [str(src)], enricher=enricher)
        assert relations(kb) == {("entity:ada lovelace", "WORKED_WITH", "entity:charles babbage")}
        _corpus(src / "a.jsonl", [{"id": "p1", "text": "Charles Babbage designed the Analytical Engine."}])
        again = ingest_sources(kb, [str(src)], enricher=enricher)
        assert [o.status for o in again.outcomes] == ["replaced"]
        assert relations(kb) == {("entity:charles babbage", "DESIGNED", "entity:analytical engine")}
        assert kb.find_node("entity:ada lovelace") is None  # nothing references it any more
        (src / "a.jsonl").unlink()
        ingest_sources(kb, [str(src)], enricher=enricher)
        assert relations(kb) == set()


def test_cli_ingest_with_the_mock_llm_degrades_to_warnings(tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nAda Lovelace worked with Charles Babbage.\n")
    result = CliRunner().invoke(
        app,
        [
            "ingest",
            str(doc),
            "--db",
            str(tmp_path / "kb.db"),
            "--embedder",
            "none",
            "--llm",
            "mock",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "1 ingested" in result.output
    assert "not a JSON object" in result.output  # the unscripted mock describes its input instead
    bad = CliRunner().invoke(
        app, ["ingest", str(doc), "--db", str(tmp_path / "kb2.db"), "--min-entity-confidence", "2"]
    )
    assert bad.exit_code == 2 and "min-entity-confidence" in bad.output
