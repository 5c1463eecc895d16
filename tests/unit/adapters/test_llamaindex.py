"""The LlamaIndex retriever with the real llama-index-core: retrieve, a query engine with MockLLM, events, errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pydantic
import pytest
from llama_index.core.callbacks import CallbackManager, CBEventType, EventPayload, LlamaDebugHandler
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent, RetrievalStartEvent
from llama_index.core.instrumentation.events.span import SpanDropEvent
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

import cef
from cef.adapters.llamaindex import CefRetriever
from cef.errors import ConfigurationError, UnknownRelationTypeError
from tests.unit.adapters.conftest import JOHN_DRUGS


class Collect(BaseEventHandler):
    """Instrumentation events seen by the root dispatcher."""

    events: list[BaseEvent] = pydantic.Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Collect"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        self.events.append(event)

    def of(self, kind: type[BaseEvent]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
def instrumentation() -> Iterator[Collect]:
    root = get_dispatcher()
    handler = Collect()
    root.add_event_handler(handler)
    yield handler
    root.event_handlers.remove(handler)


def test_retrieve_returns_scored_text_nodes_with_metadata(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(clinical_kb, similarity_top_k=3, strategy="paths")
    found = retriever.retrieve(JOHN_DRUGS)
    nodes = [n for n in found if n.node.metadata["chunk_id"] is not None]
    assert len(nodes) == 3 and found[:3] == nodes  # k chunks, then answer nodes that have none
    assert all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    for n in nodes:
        meta = n.node.metadata
        assert n.node.node_id == meta["chunk_id"]
        assert n.score == meta["score"]
        assert meta["strategy"] == "paths"
        assert n.node.source_node is not None
        assert n.node.source_node.node_id == meta["node_id"]  # the cef node the chunk is about
        # the LLM reads the path and the chunk's own metadata, not ids and scores
        shown = n.node.get_content(MetadataMode.LLM)
        assert f"path: {meta['path']}" in shown and "chunk_id" not in shown and "score" not in shown
        assert n.node.get_content(MetadataMode.EMBED) == f"kind: {meta['kind']}\n\n{n.node.text}"
    assert (
        nodes[0].node.metadata["path"].startswith("John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]->")
    )


def test_options_reach_the_query(clinical_kb: cef.KnowledgeBase) -> None:
    question = "Which medication does John Miller take?"
    ask: dict[str, Any] = {"strategy": "paths", "relation_types": ["PRESCRIBED"], "depth": 1}
    then = CefRetriever(clinical_kb, similarity_top_k=1, as_of=datetime(2019, 1, 1, tzinfo=UTC), **ask)
    now = CefRetriever(clinical_kb, similarity_top_k=1, as_of=datetime(2024, 1, 1, tzinfo=UTC), **ask)
    assert then.retrieve(question)[0].node.metadata["path"] == "John Miller -[PRESCRIBED]-> Ibuprofen"
    assert now.retrieve(question)[0].node.metadata["path"] == "John Miller -[PRESCRIBED]-> Warfarin"


def test_an_answer_node_without_chunks_is_a_node_of_its_own(clinical_kb: cef.KnowledgeBase) -> None:
    nodes = CefRetriever(clinical_kb, similarity_top_k=2, strategy="paths").retrieve(
        "What drug class is warfarin?"
    )
    last = nodes[-1].node
    assert len(nodes) == 3 and last.node_id == "class-anticoagulant"
    assert last.metadata["chunk_id"] is None and last.source_node is None
    assert last.get_content() == "DrugClass Anticoagulant\n(path: Warfarin -[IS_A]-> Anticoagulant)"


def test_aretrieve_matches_retrieve(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(clinical_kb, similarity_top_k=4)
    sync = retriever.retrieve(JOHN_DRUGS)
    got = asyncio.run(retriever.aretrieve(JOHN_DRUGS))
    assert [(n.node.node_id, n.score) for n in got] == [(n.node.node_id, n.score) for n in sync]


def test_in_a_query_engine_with_mock_llm(clinical_kb: cef.KnowledgeBase, instrumentation: Collect) -> None:
    debug = LlamaDebugHandler()
    retriever = CefRetriever(
        clinical_kb, similarity_top_k=3, strategy="paths", callback_manager=CallbackManager([debug])
    )
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query(JOHN_DRUGS)
    expected = retriever.retrieve(JOHN_DRUGS)
    assert [n.node.node_id for n in response.source_nodes] == [n.node.node_id for n in expected]
    # MockLLM answers with its prompt: every passage reached it with its explanation path
    answer = str(response)
    for n in expected:
        assert n.node.get_content() in answer
        assert f"path: {n.node.metadata['path']}" in answer
    assert JOHN_DRUGS in answer
    # the callback manager saw the retrieval (with our nodes) inside the query
    pairs = debug.get_event_pairs(CBEventType.RETRIEVE)
    assert len(pairs) == 2  # the engine's query, then ours above
    start, end = pairs[0]
    assert start.payload[EventPayload.QUERY_STR] == JOHN_DRUGS
    assert [n.node.node_id for n in end.payload[EventPayload.NODES]] == [n.node.node_id for n in expected]
    # and so did the instrumentation dispatcher
    starts, ends = instrumentation.of(RetrievalStartEvent), instrumentation.of(RetrievalEndEvent)
    assert len(starts) == len(ends) == 2
    assert [n.node.node_id for n in ends[0].nodes] == [n.node.node_id for n in expected]


def test_async_query_engine(clinical_kb: cef.KnowledgeBase) -> None:
    retriever = CefRetriever(clinical_kb, similarity_top_k=2)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = asyncio.run(engine.aquery("What is John Miller prescribed?"))
    assert [n.node.node_id for n in response.source_nodes] == [
        n.node.node_id for n in retriever.retrieve("What is John Miller prescribed?")
    ]


def test_errors_reach_the_callbacks_and_the_caller(
    clinical_kb: cef.KnowledgeBase, instrumentation: Collect
) -> None:
    debug = LlamaDebugHandler()
    retriever = CefRetriever(clinical_kb, relation_types=["NOPE"], callback_manager=CallbackManager([debug]))
    with pytest.raises(UnknownRelationTypeError, match="unknown relation type 'NOPE'") as info:
        retriever.retrieve("warfarin")
    ((_, end),) = debug.get_event_pairs(CBEventType.RETRIEVE)
    assert end.payload[EventPayload.EXCEPTION] is info.value
    drops = instrumentation.of(SpanDropEvent)
    assert drops and "unknown relation type 'NOPE'" in drops[-1].err_str
    assert not instrumentation.of(RetrievalEndEvent)


def test_bad_options_and_missing_store(tmp_path: Path) -> None:
    with pytest.raises(pydantic.ValidationError, match="depth"):
        CefRetriever(tmp_path / "kb.db", depth=-1)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        CefRetriever(tmp_path / "kb.db", k=3)  # LlamaIndex's name is similarity_top_k
    with pytest.raises(ValueError, match="similarity_top_k must be at least 1"):
        CefRetriever(tmp_path / "kb.db", similarity_top_k=0)
    retriever = CefRetriever(tmp_path / "missing.db", embedder=None)
    with pytest.raises(ConfigurationError, match="does not exist: build it first"):
        asyncio.run(retriever.aretrieve("warfarin"))
    assert not (tmp_path / "missing.db").exists()


def test_opens_a_file_itself(clinical_file: Path) -> None:
    retriever = CefRetriever(clinical_file, embedder=None, similarity_top_k=2)
    try:
        found = retriever.retrieve(JOHN_DRUGS)
        assert len([n for n in found if n.node.metadata["chunk_id"] is not None]) == 2
    finally:
        retriever.close()
