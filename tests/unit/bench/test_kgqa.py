"""KGQA harness helpers on a tiny triple file: loading, qtype → pattern, ceiling, text-mode path choice, CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cef
from bench.cli import app
from bench.harness.kgqa import (
    METAQA_ROLES,
    KgqaLine,
    RelationHop,
    RoleMap,
    TripleIndex,
    answer_pattern,
    ceiling,
    load_triples,
    pattern_for_relation_path,
    read_triples,
    run_questions,
    score_entities,
)
from cef.embed import Embedder
from cef.engine.kb import KnowledgeBase
from cef.errors import ValidationError
from cef.patterns import Direction

TRIPLES = """\
Alpha Movie\tdirected_by\tDana Director
Alpha Movie\tstarred_actors\tAnn Actor
Alpha Movie\tstarred_actors\tBob Actor
Alpha Movie\twritten_by\tWes Writer
Alpha Movie\trelease_year\t1999
Alpha Movie\thas_genre\tDrama
Beta Movie\tdirected_by\tDana Director
Beta Movie\tstarred_actors\tAnn Actor
Beta Movie\twritten_by\tWendy Writer
Beta Movie\trelease_year\t2005
Beta Movie\thas_genre\tComedy
Gamma Movie\tdirected_by\tDirk Director
Gamma Movie\tstarred_actors\tBob Actor
Gamma Movie\trelease_year\t1999
Gamma Movie\trelease_year\t1999
"""

QUESTIONS = [
    {
        "id": "q1",
        "question": "who directed the movies starred by Ann Actor",
        "topic_entity": "Ann Actor",
        "answers": ["Dana Director"],
        "qtype": "actor_to_movie_to_director",
    },
    {
        "id": "q2",
        "question": "which movies share the director of Alpha Movie",
        "topic_entity": "Alpha Movie",
        "answers": ["Beta Movie"],
        "qtype": "movie_to_director_to_movie",
    },
    {
        "id": "q3",
        "question": "who acted in the movies that share actors with Alpha Movie",
        "topic_entity": "Alpha Movie",
        "answers": ["Ann Actor", "Bob Actor", "Cy Missing"],
        "qtype": "movie_to_actor_to_movie_to_actor",
    },
]


@pytest.fixture
def triples_file(tmp_path: Path) -> Path:
    path = tmp_path / "kb.tsv"
    path.write_text(TRIPLES, encoding="utf-8")
    return path


@pytest.fixture
def tiny_kb(triples_file: Path, tmp_path: Path) -> Iterator[KnowledgeBase]:
    kb, _ = load_triples(read_triples(triples_file), tmp_path / "kgqa.db")
    with kb:
        yield kb


def test_triples_load_as_named_entities_and_registered_relations(triples_file: Path, tmp_path: Path) -> None:
    triples = read_triples(triples_file)
    assert len(triples) == 14  # the repeated Gamma/1999 line is dropped
    kb, report = load_triples(triples, tmp_path / "k.db")
    with kb:
        assert (report.nodes, report.edges) == (13, 14)
        assert report.relations["starred_actors"] == 4
        stats = kb.stats()
        assert stats["relation_type_names"] == sorted(report.relations)
        node = kb.find_node("Ann Actor")
        assert node is not None and node.name == "Ann Actor" and node.label == "Entity"
        assert {n.id for n in kb.get_neighbors("Dana Director", ["directed_by"], "in")} == {
            "Alpha Movie",
            "Beta Movie",
        }


def test_malformed_triple_lines_are_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"bad.tsv:1"):
        read_triples(bad)


def test_qtype_hops_walk_relations_from_the_head_role_forward_and_into_it_backward() -> None:
    assert METAQA_ROLES.relation_path("actor_to_movie_to_director") == (
        RelationHop("starred_actors", False),
        RelationHop("directed_by", True),
    )
    assert METAQA_ROLES.relation_path("movie_to_writer_to_movie_to_year") == (
        RelationHop("written_by", True),
        RelationHop("written_by", False),
        RelationHop("release_year", True),
    )
    pattern = pattern_for_relation_path("Ann Actor", METAQA_ROLES.relation_path("actor_to_movie_to_director"))
    assert pattern.start.node_ids == ["Ann Actor"]
    assert [s.direction for s in pattern.steps] == [Direction.INCOMING, Direction.OUTGOING]
    assert pattern.allow_cycles
    with pytest.raises(ValidationError, match="director -> writer"):
        METAQA_ROLES.relation_path("director_to_writer")
    with pytest.raises(ValidationError, match="no hop"):
        RoleMap("movie", {}).relation_path("movie")


def test_pattern_answers_exclude_the_topic_but_allow_other_revisits(tiny_kb: KnowledgeBase) -> None:
    def answers(topic: str, qtype: str) -> list[str]:
        result = tiny_kb.match_patterns(pattern_for_relation_path(topic, METAQA_ROLES.relation_path(qtype)))
        return answer_pattern(result, exclude=[topic])

    assert answers("Ann Actor", "actor_to_movie_to_director") == ["Dana Director"]
    assert answers("Alpha Movie", "movie_to_director_to_movie") == ["Beta Movie"]
    # Alpha's actors → their other films → those films' actors: Ann (via Beta) and Bob (via Gamma)
    assert sorted(answers("Alpha Movie", "movie_to_actor_to_movie_to_actor")) == ["Ann Actor", "Bob Actor"]
    # ranked by how many paths reach an answer: 1999 twice (Alpha, Gamma), 2005 once
    assert answers("Dana Director", "director_to_movie_to_year") == ["1999", "2005"]


def test_pattern_mode_f1_equals_the_engine_independent_ceiling(
    tiny_kb: KnowledgeBase, triples_file: Path
) -> None:
    lines = run_questions(tiny_kb, QUESTIONS, "pattern")
    metrics = score_entities(lines, QUESTIONS)
    top = ceiling(TripleIndex(read_triples(triples_file)), QUESTIONS)

    assert metrics["hits@1"] == 100.0
    assert top["recall"] == pytest.approx(
        100 * (1 + 1 + 2 / 3) / 3, abs=0.01
    )  # Cy Missing is not in the graph
    assert metrics["f1"] == top["f1"]
    assert metrics["recall"] == top["recall"]


def test_score_entities_follows_score_py() -> None:
    questions = [
        {"id": "a", "answers": ["X", "Y"]},
        {"id": "b", "answers": ["Z"]},
        {"id": "c", "answers": ["W"]},
    ]
    lines = [
        KgqaLine("a", ["y ", "Q"], ["Y", "Q"], 2.0),  # hit@1 (case/space-insensitive), P=1/2, R=1/2
        KgqaLine("b", ["Q", "Z"], ["Q", "Z"], 4.0),  # miss@1, hit@5, P=1/2, R=1
    ]
    m = score_entities(lines, questions)  # c unanswered: zeros
    assert m["questions"] == 3 and m["answered"] == 2
    assert m["hits@1"] == pytest.approx(33.33)
    assert m["hits@5"] == pytest.approx(66.67)
    assert m["precision"] == pytest.approx(33.33)
    assert m["recall"] == pytest.approx(50.0)
    assert m["f1"] == pytest.approx(round(100 * (0.5 + 2 / 3) / 3, 2))
    assert m["latency_ms_p50"] == 4.0


@pytest.mark.slow
def test_text_mode_answers_through_the_default_route(
    triples_file: Path, tmp_path: Path, embedder: Embedder
) -> None:
    """Text mode is the product: kb.retrieve with the question alone, answers read from result.nodes."""
    loaded, _ = load_triples(read_triples(triples_file), tmp_path / "t.db")
    loaded.close()
    with cef.open(tmp_path / "t.db", embedder=embedder) as kb:
        lines = run_questions(kb, QUESTIONS[:2], "text")
    assert lines[0].ranked[:1] == ["Dana Director"]
    assert lines[0].anchor == "Ann Actor" and lines[0].path == "starred_actors > directed_by"
    assert lines[1].ranked[:1] == ["Beta Movie"]
    assert score_entities(lines, QUESTIONS[:2])["hits@1"] == 100.0


def test_cli_writes_a_run_score_py_reads(triples_file: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions_2hop.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    run = tmp_path / "run.jsonl"

    result = CliRunner().invoke(
        app,
        [
            "kgqa",
            "--kb",
            str(triples_file),
            "--questions",
            str(questions),
            "--mode",
            "pattern",
            "--out",
            str(run),
        ],
    )

    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in run.read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == ["q1", "q2", "q3"]
    assert lines[0]["ranked"] == ["Dana Director"] and lines[0]["answers"] == ["Dana Director"]
    assert all(isinstance(x["latency_ms"], float) for x in lines)
    assert "| pattern | 2 | 3 | 100.0 |" in result.output
