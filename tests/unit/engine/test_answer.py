"""KnowledgeBase.answer: retrieve, let the LLM answer from the passages, keep the ids it cites."""

from __future__ import annotations

import json
import re

import anyio
import pytest

import cef
from cef.engine.answer import ANSWER_SYSTEM, cited_ids
from cef.llm import ChatMessage, MockLLMClient
from cef.server.service import CefService, LimitExceededError
from cef.server.settings import ServerSettings
from cef.server.tools import AnswerQuestionInput


def citing(messages: list[ChatMessage]) -> str:
    """An LLM that cites the first two passages it was given, and one id that was not given."""
    ids = re.findall(r"^\[([^\]]+)\]", messages[-1].content, re.M)
    return f"Warfarin interacts with amiodarone [{ids[0]}] and more [{ids[1]}, not-given]."


def test_answer_cites_only_retrieved_chunks(clinical_kb: cef.KnowledgeBase) -> None:
    llm = MockLLMClient(citing)
    got = clinical_kb.answer("Which medications interact with warfarin?", llm, understand=False, top_k=4)
    assert got.answer is not None and got.answer.startswith("Warfarin interacts")
    ids = [s.id for s in got.sources]
    assert len(ids) == 4 and got.citations == ids[:2]  # "not-given" was never in the context
    assert [s.cited for s in got.sources] == [True, True, False, False]
    system, user = llm.calls[0]
    assert system.content == ANSWER_SYSTEM
    assert user.content.startswith("Context:") and user.content.endswith(
        "Question: Which medications interact with warfarin?"
    )
    assert got.context and got.context in user.content
    assert not got.understood


def test_without_an_llm_the_context_is_returned(clinical_kb: cef.KnowledgeBase) -> None:
    got = clinical_kb.answer("warfarin", top_k=3)
    assert got.answer is None and got.citations == []
    assert len(got.sources) == 3
    assert got.context.startswith(f"[{got.sources[0].id}]")


def test_understanding_turns_the_question_into_a_graph_query(clinical_kb: cef.KnowledgeBase) -> None:
    plan = {
        "targets": [{"description": "Warfarin", "type_hint": "Medication"}],
        "relation_types": ["INTERACTS_WITH"],
        "depth": 1,
    }
    llm = MockLLMClient([json.dumps(plan), "It interacts with amiodarone [drug-amiodarone]."])
    got = clinical_kb.answer("Which drugs interact with warfarin?", llm, top_k=5)
    assert got.understood and got.query.traversal.relation_types == ["INTERACTS_WITH"]
    assert got.citations == ["drug-amiodarone"]
    # a reply that is not a query falls back to the plain question and says why
    llm2 = MockLLMClient(["no idea", "An answer."])
    got2 = clinical_kb.answer("Which drugs interact with warfarin?", llm2)
    assert not got2.understood and any("not a JSON object" in n for n in got2.notes)
    assert got2.answer == "An answer." and got2.citations == []


def test_cited_ids_reads_lists_in_brackets() -> None:
    assert cited_ids("a [x, y] b [z] [x]", ["x", "y", "z"]) == ["x", "y", "z"]
    assert cited_ids("[unknown]", ["x"]) == []


def test_the_service_answers_with_the_configured_llm(clinical_kb: cef.KnowledgeBase) -> None:
    svc = CefService(clinical_kb, ServerSettings(llm="mock", graph_timeout_ms=0, max_limit=5), context=False)
    out = anyio.run(
        lambda: svc.call_tool(
            "answer_question",
            {"question": "warfarin interactions", "understand": False, "top_k": 3},
            writable=False,
        )
    )
    assert out.answer is not None and out.answer.startswith("[mock] ") and out.citations  # extractive
    assert out.sources
    with pytest.raises(LimitExceededError, match="top_k 6 is more than this server returns"):
        anyio.run(svc.answer, AnswerQuestionInput(question="x", top_k=6))
    plain = CefService(clinical_kb, ServerSettings(graph_timeout_ms=0), context=False)
    none = anyio.run(plain.answer, AnswerQuestionInput(question="warfarin"))
    assert none.answer is None and none.sources
