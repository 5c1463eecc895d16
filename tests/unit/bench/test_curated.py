"""The curated-graph benchmark: the shipped services data is consistent, gold paths are realizable at their
``as_of``, scoring reads typed paths (inverse names, reversed hops), and the harness runs end to end."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from bench.cli import app
from bench.harness.curated import (
    CuratedQuestion,
    RelationMap,
    check_questions,
    format_table,
    gold_reach,
    judge,
    load_graph,
    question_query,
    read_graph,
    read_questions,
    run_benchmark,
    score,
)
from cef.errors import ValidationError
from cef.model import GraphPath, Node, RankedChunk, RankedNode, SearchResult, SearchStrategy
from cef.model.graph import Chunk
from cef.model.query import Explanation

ROOT = Path(__file__).resolve().parents[3]
GRAPH = ROOT / "examples" / "services" / "graph.yaml"
QUESTIONS = ROOT / "examples" / "services" / "questions.yaml"

BATCH = read_graph(GRAPH)
QS = read_questions(QUESTIONS)
RELMAP = RelationMap(BATCH.relation_types)


# ----------------------------------------------------------------------------- the shipped data
def test_services_example_has_the_promised_size_and_shape() -> None:
    assert len(BATCH.nodes) >= 40 and len(BATCH.edges) >= 60 and len(BATCH.chunks) >= 25
    assert all(rt.description for rt in BATCH.relation_types)
    linked = {c.node_id for c in BATCH.chunks}
    assert linked <= {n.id for n in BATCH.nodes}
    # ownership and on-call changed over time: some edges have ended
    expired = [e for e in BATCH.edges if e.valid_to is not None]
    assert {e.relation_type for e in expired} >= {"OWNED_BY", "ON_CALL_FOR", "MEMBER_OF", "LED_BY"}
    assert len(QS) >= 25
    assert {q.hops for q in QS} == {1, 2, 3}
    assert sum(1 for q in QS if q.as_of is not None) >= 5
    assert len({q.question for q in QS}) == len(QS)


def test_every_gold_path_reaches_exactly_the_gold_answers() -> None:
    assert check_questions(BATCH, QS) == []


def test_as_of_questions_have_a_different_answer_today() -> None:
    """A question pinned to a past moment must not be answerable by ignoring its date."""
    now = datetime.now(UTC)
    for q in QS:
        if q.as_of is not None:
            assert gold_reach(BATCH, RELMAP, q.anchor, q.path, now) != set(q.answers), q.id


def test_questions_do_not_spell_out_their_gold_path() -> None:
    """The wording is a user's, not the relation names: no question holds every word of its gold path."""
    for q in QS:
        words = set(re.findall(r"[a-z]+", q.question.lower()))
        path_words = {w for name in q.path for w in name.lower().split("_")}
        assert not path_words <= words, q.id
        assert not any(name in q.question for name in q.path), q.id


# ----------------------------------------------------------------------------- gold walks
def test_gold_reach_respects_validity_and_direction() -> None:
    jan = datetime(2025, 1, 15, tzinfo=UTC)
    later = datetime(2026, 1, 15, tzinfo=UTC)
    assert gold_reach(BATCH, RELMAP, "svc-payments", ["OWNED_BY"], jan) == {"team-platform"}
    assert gold_reach(BATCH, RELMAP, "svc-payments", ["OWNED_BY"], later) == {"team-payments"}
    # the inverse name walks the same edges backwards
    assert "svc-payments" in gold_reach(BATCH, RELMAP, "team-payments", ["OWNS"], later)
    assert "svc-payments" not in gold_reach(BATCH, RELMAP, "team-payments", ["OWNS"], jan)
    # the forward name from the wrong end reaches nothing
    assert gold_reach(BATCH, RELMAP, "team-payments", ["OWNED_BY"], later) == set()


def _inverted(path: list[str]) -> list[str]:
    """The path read from its end back to its start (each hop by its inverse name)."""
    inverse = {}
    for rt in BATCH.relation_types:
        if rt.bidirectional:
            inverse[rt.name] = rt.name
        elif rt.inverse:
            inverse[rt.name], inverse[rt.inverse] = rt.inverse, rt.name
    return [inverse[h] for h in reversed(path)]


_HOP_NAMES = sorted(RELMAP.hops)
_NODE_IDS = sorted(n.id for n in BATCH.nodes)
_MOMENTS = [
    datetime(2024, 6, 1, tzinfo=UTC),
    datetime(2025, 2, 1, tzinfo=UTC),
    datetime(2026, 1, 1, tzinfo=UTC),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anchor=st.sampled_from(_NODE_IDS),
    path=st.lists(st.sampled_from(_HOP_NAMES), min_size=1, max_size=3),
    at=st.sampled_from(_MOMENTS),
)
def test_walking_a_path_back_returns_to_its_anchor(anchor: str, path: list[str], at: datetime) -> None:
    back = _inverted(path)
    for end in gold_reach(BATCH, RELMAP, anchor, path, at):
        assert anchor in gold_reach(BATCH, RELMAP, end, back, at)


def test_check_questions_names_what_is_wrong() -> None:
    bad = [
        CuratedQuestion("wrong-answer", "Who owns payments?", "svc-payments", ("OWNED_BY",), ("team-web",)),
        CuratedQuestion("ghost", "Who owns ghosts?", "svc-ghost", ("OWNED_BY",), ("team-web",)),
        CuratedQuestion("no-rel", "Who owns payments?", "svc-payments", ("OWNER_OF",), ("team-payments",)),
        CuratedQuestion(
            "stale",
            "Who owned payments?",
            "svc-payments",
            ("OWNED_BY",),
            ("team-platform",),
            chunks=("nope",),
        ),
    ]
    problems = check_questions(BATCH, bad)
    assert len(problems) == 4
    assert problems[0].startswith("wrong-answer:") and "['team-payments']" in problems[0]
    assert "unknown anchor 'svc-ghost'" in problems[1]
    assert "unknown relation 'OWNER_OF'" in problems[2]
    assert "unknown chunk 'nope'" in problems[3]


# ----------------------------------------------------------------------------- reading questions
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "questions: [{id: a, question: q, anchor: x, path: [R], answers: [y], answer: [z]}]",
            "unknown field",
        ),
        (
            "questions: [{id: a, question: q, anchor: x, path: [R], answers: [y]},"
            " {id: a, question: r, anchor: x, path: [R], answers: [y]}]",
            "duplicate id 'a'",
        ),
        (
            "questions: [{id: a, question: q, anchor: x, path: [R], answers: [y], as_of: soon}]",
            "as_of 'soon'",
        ),
        ("questions: [{id: a, question: q, anchor: x, path: [], answers: [y]}]", "path: must not be empty"),
        ("questions: [{id: a, question: '', anchor: x, path: [R], answers: [y]}]", "'question' must be"),
        ("items: []", "'questions' list"),
    ],
)
def test_read_questions_refuses_bad_files_precisely(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "q.yaml"
    p.write_text(text)
    with pytest.raises(ValidationError, match=r"q\.yaml") as info:
        read_questions(p)
    assert message in str(info.value)


def test_the_query_carries_only_the_text_and_as_of() -> None:
    dated = next(q for q in QS if q.as_of is not None)
    query = question_query(dated)
    assert query.query == dated.question
    assert query.as_of == dated.as_of
    assert query.strategy is SearchStrategy.AUTO
    assert query.targets == [] and query.patterns == [] and query.traversal.relation_types == []
    assert question_query(next(q for q in QS if q.as_of is None)).as_of is None


# ----------------------------------------------------------------------------- scoring
def _node(nid: str) -> Node:
    return Node(id=nid, label="Person", properties={"name": nid})


def _result(paths: list[tuple[str, GraphPath | None]], chunks: list[str]) -> SearchResult:
    expl = Explanation(strategy=SearchStrategy.PATHS)
    return SearchResult(
        query="q",
        strategy=SearchStrategy.PATHS,
        nodes=[
            RankedNode(node=_node(n), score=1.0 / (i + 1), strategy=SearchStrategy.PATHS, path=p)
            for i, (n, p) in enumerate(paths)
        ],
        results=[RankedChunk(chunk=Chunk(id=c, content=c), score=1.0, explanation=expl) for c in chunks],
    )


Q = CuratedQuestion(
    "deps-pager",
    "Who is on call for what checkout calls?",
    "svc-checkout",
    ("DEPENDS_ON", "HAS_ON_CALL"),
    ("per-daniel", "per-kofi"),
    chunks=("c1", "c2"),
)


def test_a_path_with_the_inverse_name_or_a_reversed_hop_matches_the_gold() -> None:
    ids = ["svc-checkout", "svc-payments", "per-daniel"]
    by_inverse = GraphPath(node_ids=ids, relation_types=["DEPENDS_ON", "HAS_ON_CALL"])
    by_arrow = GraphPath(node_ids=ids, relation_types=["DEPENDS_ON", "ON_CALL_FOR"], reversed=[False, True])
    for path in (by_inverse, by_arrow):
        run = judge(Q, _result([("per-daniel", path)], ["c1", "x", "c2", "c3"]), RELMAP, 5.0)
        assert run.hit1 and run.hit5 and run.path_ok and run.anchor_ok
        assert run.chunk_recall == 1.0


def test_a_wrong_direction_or_anchor_is_not_the_gold_path() -> None:
    ids = ["svc-checkout", "svc-gateway", "per-tomasz"]
    backwards = GraphPath(node_ids=ids, relation_types=["DEPENDED_ON_BY", "HAS_ON_CALL"])
    run = judge(Q, _result([("per-tomasz", backwards), ("per-kofi", None)], ["c2"]), RELMAP, 5.0)
    assert not run.hit1 and run.hit5 and not run.path_ok and run.anchor_ok
    assert run.chunk_recall == 0.5
    other_anchor = GraphPath(node_ids=["svc-shipping", "per-kofi"], relation_types=["HAS_ON_CALL"])
    run = judge(Q, _result([("per-kofi", other_anchor)], []), RELMAP, 5.0)
    assert run.hit1 and not run.path_ok and not run.anchor_ok and run.chunk_recall == 0.0


def test_no_answer_nodes_scores_zero_and_the_table_counts_each_hop() -> None:
    empty = judge(Q, _result([], ["c1"]), RELMAP, 3.0)
    assert not (empty.hit1 or empty.hit5 or empty.path_ok) and empty.path is None
    one = CuratedQuestion("one", "Who owns payments?", "svc-payments", ("OWNED_BY",), ("team-payments",))
    hit = judge(
        one,
        _result(
            [
                (
                    "team-payments",
                    GraphPath(node_ids=["svc-payments", "team-payments"], relation_types=["OWNED_BY"]),
                )
            ],
            [],
        ),
        RELMAP,
        1.0,
    )
    rows = score([empty, hit])
    assert [r.label for r in rows] == ["1 hop", "2 hops", "all"]
    assert (rows[0].hits1, rows[1].hits1, rows[2].hits1) == (100.0, 0.0, 50.0)
    assert rows[2].chunk_n == 1 and rows[2].chunk_recall == 50.0  # c1 of c1, c2
    table = format_table(rows)
    # every gold answer in the first five: only "one"; every gold chunk in the first five: not c2
    assert rows[2].all5 == 50.0 and rows[2].chunks_all5 == 0.0 and not empty.all5 and hit.all5
    assert (
        table.count("\n") == 4 and "| all | 2 | 50.0 | 50.0 | 50.0 | 50.0 | 50.0 | 50.0 (1) | 0.0 |" in table
    )


# ----------------------------------------------------------------------------- end to end
def test_the_harness_runs_three_questions_end_to_end(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    report = run_benchmark(
        GRAPH, QUESTIONS, tmp_path / "bench.db", embedder=None, limit=3, progress=lambda *a: seen.append(a)
    )
    assert [r.id for r in report.runs] == [q.id for q in QS[:3]]
    assert ("questions", 3, 3) in seen
    assert report.nodes == len(BATCH.nodes) and report.chunks == len(BATCH.chunks)
    assert sum(report.answered_by.values()) == 3
    assert report.rows[-1].label == "all" and report.rows[-1].n == 3
    gold = {q.id: q for q in QS}
    for r in report.runs:  # well formed, whatever the score
        assert r.hit5 or not r.hit1
        assert r.path is not None or not (r.path_ok or r.anchor_ok)
        assert r.ms > 0
        as_of = gold[r.id].as_of
        assert r.as_of == (as_of.date().isoformat() if as_of else None)


def test_load_graph_refuses_an_existing_store(tmp_path: Path) -> None:
    db = tmp_path / "taken.db"
    db.write_bytes(b"")
    with pytest.raises(ValidationError, match="does not exist yet"):
        load_graph(GRAPH, db, embedder=None)


def test_the_cli_prints_a_score_table(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["curated", "--graph", str(GRAPH), "--questions", str(QUESTIONS)]
    out = runner.invoke(app, [*args, "--limit", "3", "--embedder", "none", "--no-progress", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [s["label"] for s in data["scores"]][-1] == "all"
    assert len(data["runs"]) == 3 and {"hit1", "path_ok", "chunk_recall", "path"} <= set(data["runs"][0])


def test_the_cli_reports_gold_data_that_does_not_match(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "questions: [{id: x, question: 'Who owns payments?', anchor: svc-payments, path: [OWNED_BY], answers: [team-web]}]"
    )
    out = CliRunner().invoke(
        app, ["curated", "--graph", str(GRAPH), "--questions", str(bad), "--embedder", "none"]
    )
    assert out.exit_code != 0
    said = " ".join(out.output.split())
    assert "gold data does not match" in said
    assert (
        "x: OWNED_BY from svc-payments at now reaches ['team-payments'], gold answers are ['team-web']"
        in said
    )


def test_a_gold_mismatch_can_be_warned_and_scored_as_written(tmp_path: Path) -> None:
    """A frozen set whose gold disagrees with the check is scored against its gold as written, the problem said."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "questions: [{id: x, question: 'Who owns payments?', anchor: svc-payments, path: [OWNED_BY], answers: [team-web]}]"
    )
    args = ["curated", "--graph", str(GRAPH), "--questions", str(bad), "--embedder", "none", "--no-progress"]
    out = CliRunner().invoke(app, [*args, "--gold-mismatch", "warn", "--json"])
    assert out.exit_code == 0, out.output
    said = " ".join(out.stderr.split())
    assert "warning: gold data: x: OWNED_BY from svc-payments at now reaches ['team-payments']" in said
    run = json.loads(out.stdout)["runs"][0]
    assert run["hit1"] is (run["answers"][:1] == ["team-web"])  # scored against the gold as written
