"""``cef context`` end to end: a real knowledge base file, the real model, the CLI app."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from cef.cli import app
from cef.context.tokens import make_token_counter

RULES = Path(__file__).resolve().parents[2] / "examples" / "clinical" / "rules.yaml"


@pytest.fixture
def db(clinical_db_embedded: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "clinical.db"
    shutil.copy(clinical_db_embedded, dst)
    return dst


def run(*args: str) -> Result:
    return CliRunner().invoke(app, ["context", *args], catch_exceptions=False)


def test_json_context_for_two_queries(db: Path) -> None:
    result = run(
        "Which medications interact with warfarin?",
        "kidney function",
        "--budget",
        "600",
        "--format",
        "json",
        "--db",
        str(db),
        "--tokenizer",
        "cl100k",
    )
    assert result.exit_code == 0, result.output
    text = result.stdout
    data = json.loads(text)
    meta = data["meta"]
    assert meta["token_budget"] == 600
    assert meta["total_tokens"] == make_token_counter("cl100k").count(text.rstrip("\n") + "\n") <= 600
    assert isinstance(meta["truncated"], bool)
    assert meta["queries"] == ["Which medications interact with warfarin?", "kidney function"]
    ids = [c["id"] for c in data["chunks"]]
    assert "drug-warfarin-interactions" in ids and len(ids) == len(set(ids))


def test_markdown_by_default_with_a_wordpiece_budget(db: Path) -> None:
    result = run(
        "Which medications interact with warfarin?",
        "--budget",
        "300",
        "--db",
        str(db),
        "--tokenizer",
        "wordpiece",
    )
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith("# Context\nQuery: Which medications interact with warfarin?\nTokens: ")
    assert "## Retrieved information" in text
    assert make_token_counter("wordpiece").count(text) <= 300


def test_yaml_and_plain(db: Path) -> None:
    out = run("metformin", "--budget", "400", "--format", "yaml", "--db", str(db))
    data = yaml.safe_load(out.stdout)
    assert data["meta"]["token_budget"] == 400 and data["chunks"]
    plain = run("metformin", "--format", "plain", "--no-paths", "--ranking", "rrf", "--db", str(db))
    assert plain.stdout.startswith("CONTEXT\n") and "GRAPH PATHS" not in plain.stdout


def test_graph_mode_shows_entities_rules_and_claims(db: Path) -> None:
    from cef import Batch, open

    with open(db) as kb:
        kb.index_batch(Batch.model_validate(yaml.safe_load(RULES.read_text())))
    result = run("warfarin", "--graph", "--budget", "1500", "--db", str(db))
    assert result.exit_code == 0
    text = result.stdout
    assert "## Entities" in text and "Domain rules" in text and "Anticoagulant bleeding risk" in text
    bad = CliRunner().invoke(app, ["context", "a", "b", "--graph", "--db", str(db)])
    assert bad.exit_code == 2 and "exactly one query" in bad.output


def test_errors_are_one_line_with_an_exit_code(db: Path) -> None:
    unknown = CliRunner().invoke(app, ["context", "warfarin", "--tokenizer", "nope", "--db", str(db)])
    assert unknown.exit_code == 2 and "unknown token counter 'nope'" in unknown.stderr
    small = CliRunner().invoke(
        app, ["context", "warfarin", "--budget", "5", "--format", "json", "--db", str(db)]
    )
    assert small.exit_code == 2 and "128" in small.stderr
    reserve = CliRunner().invoke(
        app, ["context", "warfarin", "--budget", "100", "--reserve", "200", "--db", str(db)]
    )
    assert reserve.exit_code == 2 and "--reserve" in reserve.output


def test_no_match_prints_an_empty_document_and_says_why(db: Path) -> None:
    result = CliRunner().invoke(
        app, ["context", "qqqz", "--format", "json", "--embedder", "none", "--db", str(db)]
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout)["chunks"] == []
    assert "empty context" in result.stderr


def test_help_has_an_example() -> None:
    result = CliRunner().invoke(app, ["context", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "cef context" in result.output
