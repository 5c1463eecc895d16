"""`cef tools`: the same definitions as the MCP server, as OpenAI functions or MCP tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cef
from cef.cli import app
from cef.schema.discovery import discover_schema
from cef.server.service import load_context_support
from cef.server.settings import ServerSettings
from cef.server.tools import tool_definitions
from tests.conftest import clinical_batch


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "tools.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    return path


def run(*args: str) -> list[dict]:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["tools", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def expected(db: Path, writable: bool) -> list:  # type: ignore[type-arg]
    with cef.open(db, embedder=None) as kb:
        schema = discover_schema(kb)
    context = load_context_support()
    return tool_definitions(
        schema, ServerSettings(), writable=writable, context_model=context.request_model if context else None
    )


def test_openai_format(db: Path) -> None:
    tools = run("--format", "openai", "--db", str(db))
    assert tools == [d.to_openai() for d in expected(db, writable=False)]
    rk = tools[0]["function"]
    assert rk["name"] == "retrieve_knowledge" and "HAS_CONDITION" in rk["description"]
    assert {t["function"]["name"] for t in tools}.isdisjoint({"index_nodes", "delete_node"})


def test_mcp_format_with_write_tools(db: Path) -> None:
    tools = run("--format", "mcp", "--db", str(db), "--writable")
    assert tools == [d.to_mcp() for d in expected(db, writable=True)]
    assert tools[-1]["name"] == "delete_node" and "inputSchema" in tools[-1]


def test_settings_from_the_environment(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEF_REQUIRED_FIELDS", "graphHints,semanticKeywords")
    monkeypatch.setenv("CEF_MAX_DEPTH", "1")
    tools = {t["name"]: t for t in run("--format", "mcp", "--db", str(db))}
    assert tools["retrieve_context"]["inputSchema"]["required"] == [
        "textQuery",
        "graphHints",
        "semanticKeywords",
    ]
    assert (
        tools["retrieve_knowledge"]["inputSchema"]["properties"]["traversal"]["properties"]["depth"][
            "maximum"
        ]
        == 1
    )


def test_without_a_knowledge_base(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["tools", "--db", str(tmp_path / "missing.db")], catch_exceptions=False)
    assert result.exit_code == 0
    assert "does not exist" in result.stderr
    tools = json.loads(result.stdout)
    assert "GRAPH SCHEMA" not in tools[0]["function"]["description"]
    assert not (tmp_path / "missing.db").exists()


def test_cef_schema_prints_the_registry_and_the_data(db: Path) -> None:
    from cef.schema.kinds import NodeKind

    with cef.open(db, embedder=None) as kb:
        kb.schema.register_node_type("Patient", NodeKind.INSTANCE, description="a person under care")
    text = CliRunner().invoke(app, ["schema", "--db", str(db)], catch_exceptions=False)
    assert text.exit_code == 0, text.output
    assert "- Patient [instance]: " in text.stdout and "a person under care" in text.stdout
    data = CliRunner().invoke(app, ["schema", "--db", str(db), "--json"], catch_exceptions=False)
    patient = next(n for n in json.loads(data.stdout)["node_types"] if n["label"] == "Patient")
    assert (patient["kind"], patient["count"]) == ("instance", 3)
