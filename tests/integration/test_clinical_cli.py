"""The README's own example through the CLI: ingest the clinical graph, ask its question, read the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cef
from cef.cli import app
from cef.extract.normalize import alias_keys
from cef.schema.textgraph import ENTITY_LABEL

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Which drugs interact with the medication John Miller takes?"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("readme") / "demo.db"
    result = CliRunner().invoke(
        app, ["ingest", str(ROOT / "examples" / "clinical" / "graph.yaml"), "--db", str(db)]
    )
    assert result.exit_code == 0, result.output
    assert "entities: " in result.output and "linked to existing nodes" in result.output
    return db


def query(db: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["query", QUESTION, "--db", str(db), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_ingest_leaves_no_entity_duplicating_a_curated_name(demo_db: Path) -> None:
    with cef.open(demo_db, embedder=None) as kb:
        nodes = list(kb.store.iter_nodes())
    curated = {
        k for n in nodes if n.label != ENTITY_LABEL for name in [n.name, *n.aliases] for k in alias_keys(name)
    }
    assert [n.id for n in nodes if n.label == ENTITY_LABEL and set(alias_keys(n.name)) & curated] == []


def test_the_readme_question_is_answered_through_warfarin(demo_db: Path) -> None:
    out = query(demo_db)
    top3 = [r["chunk"]["id"] for r in out["results"][:3]]
    assert {"drug-ibuprofen", "drug-amiodarone"} <= set(top3), top3
    for r in out["results"][:3]:
        path = r["explanation"]["path"]
        assert path["node_ids"][:2] == ["pat-john", "med-warfarin"]
        assert path["relation_types"] == ["PRESCRIBED", "INTERACTS_WITH"]
    assert {n["node"]["properties"]["name"] for n in out["nodes"][:2]} == {"Ibuprofen", "Amiodarone"}
    text = CliRunner().invoke(app, ["query", QUESTION, "--db", str(demo_db)]).output
    assert "John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> Amiodarone" in text


def test_as_of_uses_the_prescription_valid_then(demo_db: Path) -> None:
    now = query(demo_db)
    assert all(
        n["path"]["node_ids"][1] == "med-warfarin" for n in now["nodes"][:2]
    )  # ibuprofen stopped in 2021
    then = query(demo_db, "--as-of", "2020-01-01")
    first = then["nodes"][0]["path"]
    assert first["node_ids"][:2] == ["pat-john", "med-ibuprofen"]  # prescribed 2018-2021
    assert {n["node"]["properties"]["name"] for n in then["nodes"][:2]} == {"Warfarin", "Lisinopril"}
    bad = CliRunner().invoke(app, ["query", QUESTION, "--db", str(demo_db), "--as-of", "last tuesday"])
    assert bad.exit_code == 2 and "not an ISO date" in bad.output


def test_a_pattern_file_steers_the_query(demo_db: Path, tmp_path: Path) -> None:
    pattern = tmp_path / "prescribed.yaml"
    pattern.write_text(
        "start: {node_ids: [pat-john]}\nsteps:\n  - {relation_type: PRESCRIBED, direction: OUTGOING}\n",
        encoding="utf-8",
    )
    out = query(demo_db, "--pattern", str(pattern))
    assert out["results"][0]["chunk"]["id"] in {"drug-warfarin", "drug-warfarin-interactions"}
    broken = tmp_path / "broken.yaml"
    broken.write_text("steps: 3\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["query", QUESTION, "--db", str(demo_db), "--pattern", str(broken)])
    assert bad.exit_code == 2 and "not a graph pattern" in bad.output


def test_context_names_the_patient_first_with_his_relationships(demo_db: Path) -> None:
    result = CliRunner().invoke(app, ["context", QUESTION, "--db", str(demo_db)])
    assert result.exit_code == 0, result.output
    text = result.output
    entities = text.split("## Entities", 1)[1].split("##", 1)[0].strip().splitlines()
    assert entities[0].startswith("- **Patient: John Miller**")
    assert "John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]->" in text
