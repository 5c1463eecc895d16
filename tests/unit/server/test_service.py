"""CefService: the operations behind both front doors (limits, cache, time limit, tool dispatch)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

import cef
from cef import Chunk
from cef.errors import NotFoundError, UnknownRelationTypeError, ValidationError
from cef.model import GraphQuery, ResolutionTarget, SearchStrategy, TraversalHint
from cef.server.responses import SearchResponse
from cef.server.service import CefService, LimitExceededError
from cef.server.settings import ServerSettings
from cef.server.tools import RetrieveContextInput, SearchMemoryInput


def make(kb: cef.KnowledgeBase, **settings: Any) -> CefService:
    # no time limit unless a test sets one: a first retrieval in a process pays one-time costs
    return CefService(kb, ServerSettings(**{"graph_timeout_ms": 0, **settings}), context=False)


@pytest.fixture
def service(clinical_kb: cef.KnowledgeBase) -> Iterator[CefService]:
    svc = make(clinical_kb)
    yield svc
    svc.close()


def search(svc: CefService, **req: Any) -> SearchResponse:
    return anyio.run(svc.search, SearchMemoryInput.model_validate(req))


def context(svc: CefService, **req: Any) -> SearchResponse:
    return anyio.run(svc.retrieve_context, RetrieveContextInput.model_validate(req))


def test_search_response_explains_the_graph(service: CefService) -> None:
    r = search(service, query="Which medications interact with warfarin?", limit=10)
    s = r.exploration_summary
    assert r.success and r.results_count == len(r.results) == 10
    assert s.graph_enabled and r.exploration_depth == 2
    assert [a.node_id for a in s.anchors] == ["med-warfarin"]
    # the typed paths explored from warfarin: the two drugs it interacts with, by their edges
    assert s.entities_explored >= 3 and s.relationships_traversed >= 2
    assert {"Ibuprofen", "Amiodarone"} <= {e.text for e in r.related_entities}
    # from the graph: the two answers' chunks and the anchor's two (paths ending at conditions, which the
    # question does not ask for, add none); the rest: BM25 (no text graph here)
    assert s.chunks_combined == 10 and s.chunks_from_graph >= 4
    assert [h.rank for h in r.results] == list(range(1, 11))
    # a chunk reached over one INTERACTS_WITH edge explains itself (whichever drug the engine ranks first)
    hit = next(h for h in r.results if h.path and h.path.startswith("Warfarin -[INTERACTS_WITH]-> "))
    other = hit.path.removeprefix("Warfarin -[INTERACTS_WITH]-> ")
    assert hit.found_by_graph
    assert [(x.subject, x.predicate, x.object) for x in hit.relationships] == [
        ("Warfarin", "INTERACTS_WITH", other)
    ]
    assert {e.text for e in hit.entities} == {"Warfarin", other}
    related = {e.text: e for e in r.related_entities}
    assert related[other].relationship_to_query == hit.path
    assert related[other].hops == 1 and related[other].mentions >= 1
    assert r.suggested_queries and all("Warfarin" in q for q in r.suggested_queries)


def test_search_without_graph(service: CefService) -> None:
    r = search(service, query="warfarin bleeding", enable_graph=False)
    assert not r.exploration_summary.graph_enabled
    assert r.exploration_depth == 0
    assert r.exploration_summary.strategy.value in ("vector", "bm25")
    assert r.related_entities == [] and r.exploration_summary.entities_explored == 0
    assert r.results and not any(h.found_by_graph for h in r.results)


def test_tags_filter(clinical_kb: cef.KnowledgeBase, service: CefService) -> None:
    clinical_kb.index_chunk(
        Chunk(id="t1", content="Warfarin dosing table", node_id="med-warfarin", metadata={"tags": ["dosing"]})
    )
    clinical_kb.index_chunk(
        Chunk(
            id="t2",
            content="Warfarin dosing in the elderly",
            node_id="med-warfarin",
            metadata={"tags": "dosing, elderly"},
        )
    )
    r = search(service, query="warfarin dosing", tags="Dosing", limit=10)
    assert {h.chunk_id for h in r.results} == {"t1", "t2"}
    assert r.total_found == 2
    assert all("dosing" in h.tags for h in r.results)
    # the filter is part of the query: the engine fills the limit with tagged chunks only
    one = search(service, query="warfarin dosing", tags=["elderly"], limit=1)
    assert [h.chunk_id for h in one.results] == ["t2"] and one.total_found == 1


def test_limits(clinical_kb: cef.KnowledgeBase) -> None:
    svc = make(clinical_kb, max_depth=2, max_limit=5, max_query_length=20)
    with pytest.raises(LimitExceededError, match="deeper than this server allows"):
        search(svc, query="warfarin", graph_depth=3)
    with pytest.raises(LimitExceededError, match="at most 5"):
        search(svc, query="warfarin", limit=6)
    with pytest.raises(LimitExceededError, match="at most 20"):
        search(svc, query="x" * 21)
    with pytest.raises(LimitExceededError, match=r"traversal.depth 3"):
        anyio.run(svc.retrieve_knowledge, GraphQuery(query="q", traversal=TraversalHint(depth=3)))
    with pytest.raises(LimitExceededError, match="top_k 6"):
        anyio.run(svc.retrieve_knowledge, GraphQuery(query="q", top_k=6))
    assert search(svc, query="warfarin", graph_depth=2, limit=5).results


def test_graph_hints_find_the_entity_by_property(service: CefService) -> None:
    hints = {
        "entityLabel": "Patient",
        "entityProperty": "name",
        "entityValue": "John Miller",
        "traverseRelations": ["HAS_CONDITION"],
        "depth": 1,
    }
    r = context(service, textQuery="which conditions?", graphHints=hints)
    assert [a.node_id for a in r.exploration_summary.anchors] == ["pat-john"]
    assert {e.text for e in r.related_entities} == {"Atrial fibrillation", "Osteoarthritis"}
    by_icd = context(
        service,
        textQuery="which patients?",
        graphHints={"entityLabel": "Condition", "entityProperty": "icd10", "entityValue": "I48"},
    )
    assert [a.node_id for a in by_icd.exploration_summary.anchors] == ["cond-afib"]
    by_id = context(
        service,
        textQuery="x",
        graphHints={"entityLabel": "Patient", "entityProperty": "id", "entityValue": "pat-amira"},
    )
    assert [a.node_id for a in by_id.exploration_summary.anchors] == ["pat-amira"]
    fuzzy = context(
        service,
        textQuery="x",
        graphHints={"entityLabel": "Patient", "entityProperty": "name", "entityValue": "Jon Miller"},
    )
    assert [a.node_id for a in fuzzy.exploration_summary.anchors] == ["pat-john"]


def test_graph_hint_mistakes_name_the_choices(service: CefService) -> None:
    with pytest.raises(ValidationError, match=r"unknown node type 'Pationt'; node types: .*Patient"):
        context(
            service,
            textQuery="x",
            graphHints={"entityLabel": "Pationt", "entityProperty": "name", "entityValue": "J"},
        )
    with pytest.raises(UnknownRelationTypeError, match="HAS_CONDITION"):
        context(
            service,
            textQuery="x",
            graphHints={
                "entityLabel": "Patient",
                "entityProperty": "name",
                "entityValue": "John Miller",
                "traverseRelations": ["HAS_CONDTION"],
            },
        )


def test_keywords_join_the_query(service: CefService) -> None:
    r = context(service, textQuery="John Miller", semanticKeywords=["osteoarthritis", "john miller"])
    assert r.query == "John Miller osteoarthritis"


def test_cache_hits_until_any_write(clinical_kb: cef.KnowledgeBase, service: CefService) -> None:
    first = search(service, query="metformin kidney")
    again = search(service, query="metformin kidney")
    assert (first.cached, again.cached) == (False, True)
    assert again.results == first.results
    clinical_kb.index_chunk(
        Chunk(id="new", content="metformin and kidney function, new advice", node_id="med-metformin")
    )
    after = search(service, query="metformin kidney")
    assert not after.cached
    assert "new" in {h.chunk_id for h in after.results}
    q = GraphQuery(query="metformin kidney", targets=[ResolutionTarget(description="Metformin")])
    a = anyio.run(service.retrieve_knowledge, q)
    b = anyio.run(service.retrieve_knowledge, q)
    assert "cached" not in a.metadata and b.metadata["cached"] is True


def hold_engine(kb: cef.KnowledgeBase, seconds: float) -> threading.Thread:
    """Keep the engine busy (as a long write or another query would) for ``seconds``."""
    started = threading.Event()

    def busy() -> None:
        with kb.state.lock:
            started.set()
            time.sleep(seconds)

    t = threading.Thread(target=busy)
    t.start()
    started.wait()
    return t


@contextmanager
def slow_graph_exploration(kb: cef.KnowledgeBase, seconds: float) -> Iterator[list[str]]:
    """Make ``kb``'s default strategy a graph strategy that takes ``seconds``, then the built-in one again.

    Yields how each exploration ended: ``"deadline"`` when its query's deadline stopped it before its
    ``seconds`` were up, ``"finished"`` when it ran them all. Only ``kb``'s own strategy registry
    changes: no other knowledge base sees the slow strategy.
    """
    from cef.retrieve.context import DeadlineExceeded
    from cef.retrieve.search import hybrid_search
    from cef.retrieve.strategies import StrategyRegistry

    endings: list[str] = []

    def slow(qc: Any) -> Any:  # a long exploration that checks its deadline as it goes, as stages do
        until = time.perf_counter() + seconds
        try:
            while True:
                time.sleep(0.02)
                qc.check_deadline("slow exploration")  # checked first: a deadline before `until` stops it
                if time.perf_counter() >= until:
                    break
        except DeadlineExceeded:
            endings.append("deadline")
            raise
        endings.append("finished")
        return hybrid_search(qc)

    graph_chain = [SearchStrategy.GRAPH, SearchStrategy.VECTOR, SearchStrategy.BM25]
    kb.strategies.register(SearchStrategy.GRAPH, slow, graph_chain)
    kb.strategies.set_default_chain(graph_chain)
    try:
        yield endings
    finally:
        built_in = StrategyRegistry.default()
        graph_first = built_in.function(SearchStrategy.GRAPH)
        assert graph_first is not None
        kb.strategies.register(
            SearchStrategy.GRAPH, graph_first, built_in.chain(SearchStrategy.GRAPH), graph=False
        )
        kb.strategies.set_default_chain(built_in.chain(SearchStrategy.AUTO))


def test_graph_time_limit_falls_back_to_vector_search(clinical_kb: cef.KnowledgeBase) -> None:
    clinical_kb.warm()  # what a server does before it reports ready: one-time loading is not exploring
    svc = make(clinical_kb, graph_timeout_ms=1000)
    anyio.run(svc.ensure_ready)
    with slow_graph_exploration(clinical_kb, 2.0) as endings:
        r = search(svc, query="Which medications interact with warfarin?")
    s = r.exploration_summary
    assert s.timed_out and s.fallback == s.strategy.value
    assert s.strategy.value in ("vector", "bm25")  # vector search (BM25 when there is no embedding model)
    assert "1000 ms time limit" in s.fallbacks[0]
    assert any("time limit" in n for n in r.notes)
    assert r.results
    assert endings == ["deadline"]  # the exploration stopped at its deadline, before its 2 s were up
    assert clinical_kb.state.lock.readers == 0  # and left the engine free
    normal = search(svc, query="Which medications interact with warfarin?")
    assert not normal.cached  # a degraded (timed-out) answer is never cached
    assert not normal.exploration_summary.timed_out
    assert normal.exploration_summary.strategy.value == "auto"


def test_waiting_for_the_engine_is_not_exploring(clinical_kb: cef.KnowledgeBase) -> None:
    clinical_kb.warm()
    svc = make(clinical_kb, graph_timeout_ms=1000, cache_ttl_seconds=0)
    t = hold_engine(clinical_kb, 1.5)  # busy with something else for longer than the limit
    r = search(svc, query="Which medications interact with warfarin?")
    t.join()
    assert not r.exploration_summary.timed_out
    assert r.exploration_summary.strategy.value == "auto"


def test_errors_inside_a_timed_retrieval_keep_their_type(clinical_kb: cef.KnowledgeBase) -> None:
    svc = make(clinical_kb, graph_timeout_ms=1000)
    q = GraphQuery(query="x", traversal=TraversalHint(relation_types=["NOPE"]))
    with pytest.raises(UnknownRelationTypeError):
        anyio.run(svc.retrieve_knowledge, q)


def test_tool_dispatch(clinical_kb: cef.KnowledgeBase, service: CefService) -> None:
    with pytest.raises(NotFoundError, match="unknown tool 'nope'; tools: retrieve_knowledge"):
        anyio.run(lambda: service.call_tool("nope", {}, writable=False))
    with pytest.raises(ValidationError, match="start the server with --writable"):
        anyio.run(lambda: service.call_tool("delete_node", {"node_id": "pat-john"}, writable=False))
    out = anyio.run(lambda: service.call_tool("delete_node", {"node_id": "pat-john"}, writable=True))
    assert out.model_dump()["nodes"] == 1
    assert clinical_kb.find_node("pat-john") is None
    schema = anyio.run(lambda: service.call_tool("get_graph_schema", {}, writable=False))
    assert "Patient" in schema.model_dump_json()
