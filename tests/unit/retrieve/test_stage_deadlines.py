"""A query's time limit is checked inside the stages that can run long, not only between them; the
same checks let a long read step aside for a write.

The clock is not read here: a spy counts the deadline checks each stage makes (what a deadline
needs to stop that stage near its limit), and a check made to fail at a chosen call shows that the
stage stops there and the query still answers (by vector search, ``timed_out``).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import cef
from cef import GraphQuery, SearchStrategy
from cef.model import Batch, Chunk, Edge, Node, RelationType, ResolutionTarget
from cef.retrieve import pipeline
from cef.retrieve.context import DeadlineExceeded, QueryContext
from cef.retrieve.pathscore import PathScorer
from cef.retrieve.relpaths import CHECK_EVERY

RELS = [f"REL_{c}" for c in "ABCDEFGHIJKL"]  # 12 types: up to 24^3 typed paths of 3 hops


@pytest.fixture(scope="module")
def wide_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    """A hub with edges of every relation type both ways to a ring of nodes: thousands of
    candidate relation paths from one anchor."""
    path: Path = tmp_path_factory.mktemp("deadlines") / "kb.db"
    nodes = [Node(id="hub", label="Hub", properties={"name": "Quillon Hub"})]
    nodes += [Node(id=f"n{i}", label=f"Kind{i % 4}", properties={"name": f"Node {i}"}) for i in range(48)]
    edges = []
    for i in range(48):
        rel = RELS[i % len(RELS)]
        edges.append(Edge(id=f"h{i}", relation_type=rel, source="hub", target=f"n{i}"))
        edges.append(
            Edge(
                id=f"r{i}", relation_type=RELS[(i * 5) % len(RELS)], source=f"n{i}", target=f"n{(i + 1) % 48}"
            )
        )
        edges.append(
            Edge(
                id=f"b{i}", relation_type=RELS[(i * 7) % len(RELS)], source=f"n{(i + 3) % 48}", target=f"n{i}"
            )
        )
    chunks = [
        Chunk(id=f"c{i}", node_id=f"n{i}", content=f"Node {i} is a part of the ring.") for i in range(48)
    ]
    chunks.append(Chunk(id="c-hub", node_id="hub", content="Quillon Hub connects the ring."))
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(
            Batch(
                relation_types=[RelationType(name=r) for r in RELS], nodes=nodes, edges=edges, chunks=chunks
            )
        )
        yield kb


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every deadline check by stage (the checks themselves still run)."""
    seen: Counter[str] = Counter()
    real = QueryContext.check_deadline

    def spy(self: QueryContext, stage: str) -> None:
        seen[stage] += 1
        real(self, stage)

    monkeypatch.setattr(QueryContext, "check_deadline", spy)
    return seen


def fail_at(monkeypatch: pytest.MonkeyPatch, stage: str, call: int) -> None:
    """The ``call``-th check of ``stage`` finds the deadline passed."""
    seen: Counter[str] = Counter()

    def check(self: QueryContext, name: str) -> None:
        seen[name] += 1
        if name == stage and seen[name] >= call:
            raise DeadlineExceeded(name)

    monkeypatch.setattr(QueryContext, "check_deadline", check)


def paths_query(**kw: object) -> GraphQuery:
    return GraphQuery(query="What is related to Quillon Hub?", strategy=SearchStrategy.PATHS, top_k=5, **kw)


def test_path_scoring_checks_the_deadline_while_it_scores(
    wide_kb: cef.KnowledgeBase, checks: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scored: list[int] = []
    real = PathScorer.rank

    def counting(self: PathScorer, question: str, span: object, paths: list[object], **kw: object) -> object:
        scored.append(len(paths))
        return real(self, question, span, paths, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(PathScorer, "rank", counting)
    res = wide_kb.retrieve(paths_query(deadline_ms=600_000))
    assert not res.metadata.get("timed_out") and res.nodes
    candidates = sum(scored)
    assert candidates > 2 * CHECK_EVERY  # the graph gives the scorer real work
    # one check per CHECK_EVERY paths scored, plus the stage's own (per anchor, after scoring)
    assert checks["paths"] >= candidates // CHECK_EVERY + 2


def test_a_deadline_inside_path_scoring_stops_it_and_vector_search_answers(
    wide_kb: cef.KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_at(monkeypatch, "paths", 3)  # in the middle of scoring
    res = wide_kb.retrieve(paths_query(deadline_ms=50))
    assert res.metadata["timed_out"] is True
    assert "during paths" in res.fallbacks[0]
    assert res.strategy in (SearchStrategy.VECTOR, SearchStrategy.BM25) and res.results
    assert res.nodes == []  # no half-scored answers


def test_anchor_resolution_checks_the_deadline_between_targets(
    wide_kb: cef.KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved: list[str] = []
    import cef.retrieve.anchors as anchors

    real = anchors.resolve_target

    def counting(qc: QueryContext, target: ResolutionTarget) -> list[anchors.Anchor]:
        resolved.append(target.description)
        return real(qc, target)

    monkeypatch.setattr(anchors, "resolve_target", counting)
    fail_at(monkeypatch, "anchors", 3)
    targets = [ResolutionTarget(description=f"Node {i}") for i in range(40)]
    res = wide_kb.retrieve(
        GraphQuery(query="ring", strategy=SearchStrategy.HYBRID, targets=targets, deadline_ms=50, top_k=3)
    )
    assert res.metadata["timed_out"] is True and "during anchors" in res.fallbacks[0]
    assert len(resolved) == 2  # stopped at the third target, not after all forty


def test_graph_search_checks_the_deadline_between_its_steps(
    wide_kb: cef.KnowledgeBase, checks: Counter[str]
) -> None:
    wide_kb.retrieve(
        GraphQuery(query="Quillon Hub", strategy=SearchStrategy.GRAPH, deadline_ms=600_000, top_k=3)
    )
    assert {"graph entity linking", "graph exploration", "graph ranking"} <= set(checks)


def test_the_best_first_traversal_checks_the_deadline_between_its_batches(
    wide_kb: cef.KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = GraphQuery(
        query="ring",
        strategy=SearchStrategy.HYBRID,
        targets=[ResolutionTarget(description="Quillon Hub")],
        deadline_ms=50,
        top_k=3,
        options={"walk": {"order": "best", "batch": 1}},
    )
    fail_at(monkeypatch, "expansion", 2)  # the second node expanded
    res = wide_kb.retrieve(query)
    assert res.metadata["timed_out"] is True and "during expansion" in res.fallbacks[0]


# ------------------------------------------------------------------ a write never waits for a long read
def test_a_long_read_steps_aside_for_a_write_and_then_sees_it(
    wide_kb: cef.KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read is held at its first check until the write waits for it; it then lets go, the write
    goes first, and the read starts again and answers with the write in its graph."""
    lock = wide_kb.state.lock
    at_check = threading.Event()
    real = QueryContext.check_deadline
    saw_late: list[bool] = []  # per check: the read's graph holds the write

    def check(self: QueryContext, stage: str) -> None:
        if not at_check.is_set() and stage == "paths":
            at_check.set()
            while lock.writers_waiting == 0:  # the write below arrives and waits for this read
                time.sleep(0.001)
        saw_late.append(self.state.graph.has_node("late"))
        real(self, stage)

    monkeypatch.setattr(QueryContext, "check_deadline", check)
    order: list[str] = []
    results: list[cef.SearchResult] = []

    def read() -> None:
        results.append(wide_kb.retrieve(paths_query()))
        order.append("read")

    reader = threading.Thread(target=read)
    reader.start()
    assert at_check.wait(60)
    wide_kb.index_batch(
        Batch(
            nodes=[Node(id="late", label="Kind0", properties={"name": "Latecomer"})],
            edges=[Edge(id="h-late", relation_type="REL_A", source="hub", target="late")],
        )
    )
    order.append("write")
    reader.join(60)
    assert order == ["write", "read"]  # the write did not wait for the read to finish
    assert not results[0].metadata.get("timed_out") and results[0].nodes
    # the first check let go of the engine; every check after it is the new attempt, which sees the write
    assert saw_late[0] is False and len(saw_late) > 1 and all(saw_late[1:])
    wide_kb.delete_node("late")


def test_a_read_steps_aside_at_most_max_yields_times(
    wide_kb: cef.KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[bool] = []
    real = pipeline._retrieve_once

    def counting(*args: object, yields: bool) -> cef.SearchResult:
        attempts.append(yields)
        return real(*args, yields=yields)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "_retrieve_once", counting)
    monkeypatch.setattr(type(wide_kb.state), "writer_waits_on_me", lambda self: True)  # writes keep coming
    res = wide_kb.retrieve(paths_query())
    assert attempts == [True] * pipeline.MAX_YIELDS + [False]
    assert res.nodes and not res.metadata.get("timed_out")  # the last attempt held the engine to its end
