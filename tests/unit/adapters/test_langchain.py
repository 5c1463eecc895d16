"""The LangChain retriever with the real langchain-core: invoke, LCEL chains, callbacks, errors, async."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import pydantic
import pytest
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel, FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.runnables import RunnablePassthrough

import cef
from cef.adapters.langchain import CefRetriever
from cef.errors import ConfigurationError, UnknownRelationTypeError
from tests.unit.adapters.conftest import JOHN_DRUGS


class Recorder(BaseCallbackHandler):
    """Every retriever and LLM callback LangChain fires, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_retriever_start(self, serialized: dict[str, Any], query: str, **kw: Any) -> None:
        self.events.append(("retriever_start", query))

    def on_retriever_end(self, documents: Any, **kw: Any) -> None:
        self.events.append(("retriever_end", list(documents)))

    def on_retriever_error(self, error: BaseException, **kw: Any) -> None:
        self.events.append(("retriever_error", error))

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kw: Any) -> None:
        self.events.append(("llm_start", prompts))

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[Any]], **kw: Any) -> None:
        self.events.append(("chat_model_start", messages))

    def kinds(self) -> list[str]:
        return [k for k, _ in self.events]

    def first(self, kind: str) -> Any:
        return next(v for k, v in self.events if k == kind)


class AsyncRecorder(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    async def on_retriever_start(
        self, serialized: dict[str, Any], query: str, *, run_id: UUID, **kw: Any
    ) -> None:
        self.events.append(("retriever_start", query))

    async def on_retriever_end(self, documents: Any, *, run_id: UUID, **kw: Any) -> None:
        self.events.append(("retriever_end", list(documents)))

    async def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.events.append(("retriever_error", error))


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"[{d.metadata['path']}] {d.page_content}" for d in docs)


def test_invoke_returns_documents_with_ids_and_metadata(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(knowledge_base=clinical_kb, k=3, strategy="paths")
    found = retriever.invoke(JOHN_DRUGS)
    docs = [d for d in found if d.metadata["chunk_id"] is not None]
    assert len(docs) == 3 and found[:3] == docs  # k chunks, then answer nodes that have none
    assert all(isinstance(d, Document) for d in docs)
    for d in docs:
        assert d.id == d.metadata["chunk_id"]
        assert {"score", "chunk_id", "node_id", "strategy", "path", "explanation"} <= d.metadata.keys()
        assert d.metadata["strategy"] == "paths"
    assert docs[0].metadata["path"].startswith("John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]->")
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


def test_k_and_options_per_call(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(knowledge_base=clinical_kb, k=4)
    assert len(retriever.invoke("warfarin")) == 4
    assert len(retriever.invoke("warfarin", k=2)) == 2
    question = "Which medication does John Miller take?"
    ask = {"strategy": "paths", "relation_types": ["PRESCRIBED"], "depth": 1, "k": 1}
    then = retriever.invoke(question, as_of=datetime(2019, 1, 1, tzinfo=UTC), **ask)
    now = retriever.invoke(question, as_of=datetime(2024, 1, 1, tzinfo=UTC), **ask)
    assert then[0].metadata["path"] == "John Miller -[PRESCRIBED]-> Ibuprofen"
    assert now[0].metadata["path"] == "John Miller -[PRESCRIBED]-> Warfarin"
    assert retriever.k == 4 and retriever.strategy == "auto"  # one call's options do not stick


def test_scope_and_targets(scoped_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(knowledge_base=scoped_kb, k=10, strategy="bm25", scope="a")
    ids = [d.id for d in retriever.invoke("warfarin dosing note tenant")]
    assert "note-a" in ids and "note-b" not in ids
    graph = CefRetriever(knowledge_base=scoped_kb, k=10, strategy="graph", targets=["Lucas Brandt"], depth=1)
    anchors = {a for d in graph.invoke("notes") for a in d.metadata["explanation"]["anchors"]}
    assert anchors == {"pat-lucas"}


def test_in_an_lcel_chain_with_a_fake_llm(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(knowledge_base=clinical_kb, k=3, strategy="paths")
    prompt = PromptTemplate.from_template("Answer from the context.\n{context}\nQuestion: {question}")
    llm = FakeListLLM(responses=["Amiodarone and ibuprofen."])
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | llm
        | StrOutputParser()
    )
    seen = Recorder()
    answer = chain.invoke(JOHN_DRUGS, config={"callbacks": [seen]})
    assert answer == "Amiodarone and ibuprofen."
    assert (
        seen.kinds().index("retriever_start")
        < seen.kinds().index("retriever_end")
        < seen.kinds().index("llm_start")
    )
    assert seen.first("retriever_start") == JOHN_DRUGS
    sent = seen.first("llm_start")[0]
    docs = seen.first("retriever_end")
    assert [d.id for d in docs] == [d.id for d in retriever.invoke(JOHN_DRUGS)]
    for d in docs:  # the LLM got every passage with the path that explains it
        assert f"[{d.metadata['path']}] {d.page_content}" in sent
    assert sent.endswith(f"Question: {JOHN_DRUGS}")


def test_in_an_async_chat_chain(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(knowledge_base=clinical_kb, k=2)
    prompt = ChatPromptTemplate.from_messages([("system", "Context:\n{context}"), ("human", "{question}")])
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | FakeListChatModel(responses=["Warfarin."])
        | StrOutputParser()
    )
    seen = AsyncRecorder()
    assert (
        asyncio.run(chain.ainvoke("What is John Miller prescribed?", config={"callbacks": [seen]}))
        == "Warfarin."
    )
    assert [k for k, _ in seen.events] == ["retriever_start", "retriever_end"]
    assert [d.id for d in seen.events[1][1]] == [
        d.id for d in retriever.invoke("What is John Miller prescribed?")
    ]


def test_async_and_batch_match_invoke(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(knowledge_base=clinical_kb, k=3)
    questions = [JOHN_DRUGS, "Who treats Amira Haddad?"]
    sync = [retriever.invoke(q) for q in questions]
    assert retriever.batch(questions) == sync
    assert asyncio.run(retriever.abatch(questions)) == sync
    assert asyncio.run(retriever.ainvoke(questions[0], k=1))[:1] == sync[0][:1]


def test_engine_errors_reach_on_retriever_error_and_the_caller(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(knowledge_base=clinical_kb)
    seen = Recorder()
    with pytest.raises(UnknownRelationTypeError, match="unknown relation type 'NOPE'") as info:
        retriever.invoke("warfarin", relation_types=["NOPE"], config={"callbacks": [seen]})
    assert seen.kinds() == ["retriever_start", "retriever_error"]
    assert seen.first("retriever_error") is info.value


def test_bad_options_raise_validation_errors(clinical_kb: cef.KnowledgeBase) -> None:
    with pytest.raises(pydantic.ValidationError, match="depth"):
        CefRetriever(knowledge_base=clinical_kb, depth=42)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        CefRetriever(knowledge_base=clinical_kb, top_k=3)  # LangChain's name is k
    retriever = CefRetriever(knowledge_base=clinical_kb)
    seen = AsyncRecorder()
    with pytest.raises(pydantic.ValidationError, match="top_k"):
        asyncio.run(retriever.ainvoke("warfarin", k=0, config={"callbacks": [seen]}))
    assert [k for k, _ in seen.events] == ["retriever_start", "retriever_error"]


def test_a_missing_store_raises_a_clear_error(tmp_path: Path) -> None:
    retriever = CefRetriever(knowledge_base=tmp_path / "missing.db", embedder=None)
    seen = Recorder()
    with pytest.raises(ConfigurationError, match="does not exist: build it first"):
        retriever.invoke("warfarin", config={"callbacks": [seen]})
    assert seen.kinds() == ["retriever_start", "retriever_error"]
    assert not (tmp_path / "missing.db").exists()


def test_opens_a_file_itself(clinical_file: Path) -> None:
    retriever = CefRetriever(knowledge_base=str(clinical_file), embedder=None, k=2)
    try:
        docs = retriever.invoke(JOHN_DRUGS)
        chunks = [d for d in docs if d.metadata["chunk_id"] is not None]
        assert len(chunks) == 2 and docs[:2] == chunks and docs[0].metadata["node_id"]
    finally:
        retriever.close()


def test_batch_over_a_file_opens_it_once(clinical_file: Path) -> None:
    retriever = CefRetriever(knowledge_base=clinical_file, embedder=None, k=2)
    try:
        questions = [JOHN_DRUGS, "Who treats Amira Haddad?", "warfarin", "metformin"]
        results = retriever.batch(questions, config={"max_concurrency": 4})
        # k chunks each, then answer nodes that have no chunk of their own (Amira's doctor)
        assert [len([d for d in r if d.metadata["chunk_id"]]) for r in results] == [2, 2, 2, 2]
        assert all(d.metadata["node_id"] for r in results for d in r if not d.metadata["chunk_id"])
        source = retriever.source
        assert retriever.batch(questions[:2]) == results[:2]
        assert retriever.source is source
    finally:
        retriever.close()
