"""LLM query understanding and ``cef ask``: against the mock client and loopback OpenAI/Ollama-compatible servers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import cef
from cef.cli import app
from cef.errors import LLMError
from cef.llm import ChatMessage, MockLLMClient
from cef.llm.understand import QueryUnderstanding, extract_json_object
from cef.model import GraphQuery, SearchStrategy
from cef.schema.discovery import GraphSchema, discover_schema
from tests.conftest import clinical_batch
from tests.support.http import LoopbackServer
from tests.support.ollama_server import start_ollama_server
from tests.support.openai_server import OpenAIHandler, OpenAIState

PLAN = {
    "targets": [{"description": "Warfarin", "type_hint": "Medication"}],
    "relation_types": ["INTERACTS_WITH"],
    "depth": 1,
}


@pytest.fixture
def schema(clinical_kb: cef.KnowledgeBase) -> GraphSchema:
    return discover_schema(clinical_kb)


def understand(reply: str | list[str], schema: GraphSchema, **kw: Any) -> Any:
    llm = MockLLMClient([reply] if isinstance(reply, str) else reply)
    return QueryUnderstanding(llm, **kw).understand("Which drugs interact with warfarin?", schema), llm


# ------------------------------------------------------------------ understanding
def test_the_llm_answer_becomes_a_graph_query(schema: GraphSchema) -> None:
    got, llm = understand(f"Sure! Here it is:\n```json\n{json.dumps(PLAN)}\n```", schema)
    assert got.used_llm and not got.notes
    q = got.query
    assert q.query == "Which drugs interact with warfarin?"
    assert [(t.description, t.type_hint) for t in q.targets] == [("Warfarin", "Medication")]
    assert q.traversal.relation_types == ["INTERACTS_WITH"] and q.traversal.depth == 1
    system = llm.calls[0][0].content
    assert "HAS_CONDITION [ASSOCIATION]: Patient → Condition" in system  # the schema is in the prompt
    assert "- Medication: name, brand" in system
    assert llm.calls[0][1] == ChatMessage.user("Which drugs interact with warfarin?")


def test_names_outside_the_schema_are_dropped(schema: GraphSchema) -> None:
    plan = {
        "targets": [{"description": "Warfarin", "type_hint": "Drug"}, "ibuprofen"],
        "traversal": {"relation_types": ["INTERACTS_WITH", "CAUSES", "TREATED_BY"], "depth": 9},
    }
    got, _ = understand(json.dumps(plan), schema, max_depth=3)
    assert got.used_llm
    assert [(t.description, t.type_hint) for t in got.query.targets] == [
        ("Warfarin", None),
        ("ibuprofen", None),
    ]
    assert got.query.traversal.relation_types == ["INTERACTS_WITH", "TREATED_BY"]  # an inverse name is fine
    assert got.query.traversal.depth == 3
    assert "dropped unknown node type 'Drug'" in got.notes
    assert "dropped unknown relation type 'CAUSES'" in got.notes


@pytest.mark.parametrize(
    ("reply", "note"),
    [
        ("I cannot help with that.", "not a JSON object"),
        ('{"targets": "Warfarin"}', "targets must be a list"),
        ('{"targets": [{"description": ""}]}', "invalid query from the LLM"),
        ('{"targets": [], "depth": "deep"}', "invalid query from the LLM"),
        ("[1, 2, 3]", "not a JSON object"),
    ],
)
def test_unusable_answers_fall_back_to_the_plain_question(schema: GraphSchema, reply: str, note: str) -> None:
    base = GraphQuery(query="ignored", top_k=4, strategy=SearchStrategy.HYBRID)
    llm = MockLLMClient([reply])
    got = QueryUnderstanding(llm).understand("Which drugs interact with warfarin?", schema, base=base)
    assert not got.used_llm
    assert any(note in n for n in got.notes), got.notes
    assert got.query.query == "Which drugs interact with warfarin?"
    assert got.query.targets == [] and got.query.top_k == 4 and got.query.strategy is SearchStrategy.HYBRID


def test_an_llm_failure_falls_back(schema: GraphSchema) -> None:
    def broken(messages: list[ChatMessage]) -> str:
        raise LLMError("the model server is down")

    got = QueryUnderstanding(MockLLMClient(broken)).understand("warfarin?", schema)
    assert not got.used_llm and got.query == GraphQuery(query="warfarin?")
    assert got.notes == ["LLM failed: the model server is down"]


def test_extract_json_object() -> None:
    assert extract_json_object('{"a": 1}') == {"a": 1}
    assert extract_json_object('text ```json\n{"a": {"b": 2}}\n``` more') == {"a": {"b": 2}}
    assert extract_json_object('Answer: {"a": 1} done') == {"a": 1}
    assert extract_json_object("{broken") is None


# ------------------------------------------------------------------ cef ask
@dataclass
class PlanningState(OpenAIState):
    """An OpenAI-compatible server that answers query-understanding prompts with ``plan``."""

    plan: dict[str, Any] = field(default_factory=lambda: dict(PLAN))


class PlanningHandler(OpenAIHandler):
    state: PlanningState

    def reply_words(self, body: dict[str, Any]) -> tuple[list[str], str]:  # type: ignore[override]
        system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
        if "JSON query for a knowledge graph" in system:
            return json.dumps(self.state.plan).split(" "), "stop"
        return OpenAIHandler.reply_words(body)


@pytest.fixture
def clinical_db(tmp_path: Path) -> Path:
    path = tmp_path / "ask.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    return path


@pytest.fixture
def openai_server() -> Iterator[LoopbackServer[PlanningState]]:
    with LoopbackServer(PlanningHandler, PlanningState()) as server:
        yield server


def ask(*args: str) -> Any:
    result = CliRunner().invoke(app, ["ask", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_ask_with_an_openai_compatible_server(
    clinical_db: Path, openai_server: LoopbackServer[PlanningState]
) -> None:
    question = "Which drugs interact with warfarin?"
    out = ask(question, "--db", str(clinical_db), "--embedder", "none", "--llm", "openai",
              "--base-url", openai_server.url + "/v1", "--model", "echo-1", "--api-key", "sk-test", "--format", "json")  # fmt: skip
    data = json.loads(out.stdout)
    assert data["understood"] is True
    assert data["query"]["targets"] == [
        {"description": "Warfarin", "type_hint": "Medication", "max_matches": 1}
    ]
    assert data["query"]["traversal"]["relation_types"] == ["INTERACTS_WITH"]
    ids = [c["id"] for c in data["chunks"]]
    assert {"drug-amiodarone", "drug-ibuprofen"} <= set(ids)
    # the echo server repeats the prompt: the answer quotes the passages with their ids
    assert data["answer"].startswith("echo: Context:")
    assert data["citations"] and set(data["citations"]) <= set(ids)
    chat = [r for r in openai_server.state.requests if r.path.endswith("/chat/completions")]
    assert len(chat) == 2  # understanding, then the answer
    assert chat[1].headers["Authorization"] == "Bearer sk-test"
    answer_prompt = chat[1].body["messages"]
    assert "cite the passages" in answer_prompt[0]["content"]
    assert "[drug-amiodarone]" in answer_prompt[1]["content"] and question in answer_prompt[1]["content"]


def test_ask_with_ollama_cites_chunks(clinical_db: Path) -> None:
    with start_ollama_server() as server:
        out = ask("What interacts with warfarin?", "--db", str(clinical_db), "--embedder", "none",
                  "--llm", "ollama", "--base-url", server.url, "--model", "llama3.2", "--no-understand")  # fmt: skip
        assert len(server.state.requests) == 1  # no understanding call
    assert out.stdout.startswith("echo: Context:")
    sources = next(line for line in out.stdout.splitlines() if line.startswith("Sources: "))
    assert "drug-warfarin-interactions" in sources.removeprefix("Sources: ").split(", ")


def test_ask_when_understanding_fails_still_answers(clinical_db: Path) -> None:
    with start_ollama_server() as server:  # echoes: never valid JSON
        out = ask("What interacts with warfarin?", "--db", str(clinical_db), "--embedder", "none",
                  "--llm", "ollama", "--base-url", server.url, "--model", "llama3.2", "--format", "json")  # fmt: skip
    data = json.loads(out.stdout)
    assert data["understood"] is False and "LLM answer is not a JSON object" in data["notes"]
    assert data["query"]["targets"] == [] and data["citations"]


def test_ask_without_an_llm_prints_the_context(clinical_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CEF_LLM", raising=False)
    out = ask("What interacts with warfarin?", "--db", str(clinical_db), "--embedder", "none")
    assert "[drug-warfarin-interactions]" in out.stdout
    assert "no LLM configured" in out.stderr


def test_ask_reports_an_unknown_provider(clinical_db: Path) -> None:
    result = CliRunner().invoke(app, ["ask", "q", "--db", str(clinical_db), "--llm", "gpt9000"])
    assert result.exit_code == 2  # a configuration error is a usage error
    assert "unknown LLM provider 'gpt9000'" in result.stderr
