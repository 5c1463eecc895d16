"""Both framework retrievers against a real cef REST API (uvicorn on a loopback port), with API keys."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

import cef
from cef.adapters import langchain as lc
from cef.adapters import llamaindex as li
from cef.errors import ConfigurationError, QueryTimeoutError, RetryableStoreError, ValidationError
from cef.server.http import create_app
from cef.server.settings import ServerSettings
from tests.integration.test_http_api import LiveServer
from tests.unit.adapters.conftest import JOHN_DRUGS
from tests.unit.server.test_service import slow_graph_exploration

READ_KEY = "reader-key-0123"
WRITE_KEY = "writer-key-0123"


@pytest.fixture
def server(clinical_kb: cef.KnowledgeBase) -> Iterator[str]:
    """The URL of `cef serve http`'s app over the clinical example, with a read and a write key."""
    settings = ServerSettings(api_keys={READ_KEY: "read", WRITE_KEY: "write"}, max_depth=3)
    live = LiveServer(create_app(clinical_kb, settings))
    yield live.url
    live.close()


@pytest.fixture
def closing() -> Iterator[list[Any]]:
    """Retrievers appended here are closed after the test, whatever happens in it."""
    opened: list[Any] = []
    yield opened
    for r in opened:
        r.close()


class Errors(BaseCallbackHandler):
    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    def on_retriever_error(self, error: BaseException, **kw: Any) -> None:
        self.errors.append(error)


def summary(docs: list[Any]) -> list[tuple[Any, ...]]:
    return [(d.id, round(d.metadata["score"], 9), d.metadata["path"], d.metadata["node_id"]) for d in docs]


def test_langchain_over_rest_matches_the_local_retriever(
    server: str, clinical_kb: cef.KnowledgeBase, closing: list[Any]
) -> None:
    remote = lc.CefRetriever(knowledge_base=server, api_key=READ_KEY, k=3, strategy="paths")
    closing.append(remote)
    local = lc.CefRetriever(knowledge_base=clinical_kb, k=3, strategy="paths")
    docs = remote.invoke(JOHN_DRUGS)
    assert summary(docs) == summary(local.invoke(JOHN_DRUGS))
    assert docs[0].metadata["explanation"]["strategy"] == "paths"
    assert summary(asyncio.run(remote.ainvoke(JOHN_DRUGS))) == summary(docs)
    # options travel over the wire: as_of, relation types, depth, k
    ask: dict[str, Any] = {"relation_types": ["PRESCRIBED"], "depth": 1, "k": 1}
    question = "Which medication does John Miller take?"
    then = remote.invoke(question, as_of=datetime(2019, 1, 1, tzinfo=UTC), **ask)
    now = asyncio.run(remote.ainvoke(question, as_of=datetime(2024, 1, 1, tzinfo=UTC), **ask))
    assert [d.metadata["path"] for d in then] == ["John Miller -[PRESCRIBED]-> Ibuprofen"]
    assert [d.metadata["path"] for d in now] == ["John Miller -[PRESCRIBED]-> Warfarin"]


def test_llamaindex_over_rest_in_a_query_engine(
    server: str, clinical_kb: cef.KnowledgeBase, closing: list[Any]
) -> None:
    remote = li.CefRetriever(server, api_key=WRITE_KEY, similarity_top_k=3, strategy="paths")
    closing.append(remote)
    local = li.CefRetriever(clinical_kb, similarity_top_k=3, strategy="paths")
    expected = [(n.node.node_id, n.node.metadata["path"]) for n in local.retrieve(JOHN_DRUGS)]
    assert [(n.node.node_id, n.node.metadata["path"]) for n in remote.retrieve(JOHN_DRUGS)] == expected
    engine = RetrieverQueryEngine.from_args(remote, llm=MockLLM())
    response = asyncio.run(engine.aquery(JOHN_DRUGS))
    assert [n.node.node_id for n in response.source_nodes] == [i for i, _ in expected]
    assert f"path: {expected[0][1]}" in str(response)


def test_a_wrong_or_missing_key_is_a_clear_error(server: str, closing: list[Any]) -> None:
    seen = Errors()
    wrong = lc.CefRetriever(knowledge_base=server, api_key="reader-key-0124")
    closing.append(wrong)
    with pytest.raises(
        ConfigurationError, match=r"refused the API key \(401 unauthorized: unknown API key\)"
    ):
        wrong.invoke("warfarin", config={"callbacks": [seen]})
    assert len(seen.errors) == 1 and isinstance(seen.errors[0], ConfigurationError)
    with pytest.raises(ConfigurationError, match=r"401 unauthorized: missing API key.*pass api_key="):
        asyncio.run(li.CefRetriever(server).aretrieve("warfarin"))
    wrong_li = li.CefRetriever(server, api_key="nope")
    closing.append(wrong_li)
    with pytest.raises(ConfigurationError, match="unknown API key"):
        wrong_li.retrieve("warfarin")


def test_the_servers_limits_come_back_as_validation_errors(server: str, closing: list[Any]) -> None:
    remote = lc.CefRetriever(knowledge_base=server, api_key=READ_KEY, depth=5)
    closing.append(remote)
    with pytest.raises(
        ValidationError, match=r"refused the query: .*traversal.depth: .* less than or equal to 3"
    ):
        remote.invoke("warfarin")
    with pytest.raises(ValidationError, match=r"refused the query: unknown relation type 'NOPE'"):
        asyncio.run(remote.ainvoke("warfarin", depth=2, relation_types=["NOPE"]))


def test_an_unreachable_server_is_a_retryable_error(closing: list[Any]) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    retriever = lc.CefRetriever(knowledge_base=f"http://127.0.0.1:{port}", api_key=READ_KEY, timeout=5)
    closing.append(retriever)
    with pytest.raises(
        RetryableStoreError, match=r"cannot reach the cef server at .*is `cef serve http` running"
    ):
        retriever.invoke("warfarin")
    with pytest.raises(RetryableStoreError, match="cannot reach"):
        asyncio.run(retriever.ainvoke("warfarin"))


def test_a_server_slower_than_the_timeout_is_a_timeout_error(
    server: str, clinical_kb: cef.KnowledgeBase, closing: list[Any]
) -> None:
    retriever = li.CefRetriever(server, api_key=READ_KEY, timeout=0.3)
    closing.append(retriever)
    with (
        slow_graph_exploration(clinical_kb, 1.5),
        pytest.raises(QueryTimeoutError, match=r"did not answer within 0.3 s"),
    ):
        retriever.retrieve("warfarin")


def test_a_url_that_is_not_the_apis_root_is_a_configuration_error(server: str, closing: list[Any]) -> None:
    retriever = lc.CefRetriever(knowledge_base=f"{server}/cef", api_key=READ_KEY)
    closing.append(retriever)
    with pytest.raises(ConfigurationError, match=r"/cef has no /api/v1/retrieve \(404 not_found: .*root URL"):
        retriever.invoke("warfarin")
