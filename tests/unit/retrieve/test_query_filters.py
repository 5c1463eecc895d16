"""Filters and limits that are part of the query: tags, and the cooperative deadline."""

from __future__ import annotations

import time

import numpy as np
import pydantic
import pytest

import cef
from cef import Chunk
from cef.model import GraphQuery, SearchStrategy
from cef.retrieve.context import DeadlineExceeded, QueryContext, chunk_tags


def _tagged(kb: cef.KnowledgeBase) -> None:
    for i in range(12):
        kb.index_chunk(
            Chunk(
                id=f"w{i}",
                content=f"Warfarin dosing note {i}: adjust the warfarin dose by INR",
                node_id="med-warfarin",
                metadata={"tags": ["dosing"] if i % 3 == 0 else "monitoring, inr"},
            )
        )


@pytest.mark.parametrize("strategy", [SearchStrategy.AUTO, SearchStrategy.BM25, SearchStrategy.HYBRID])
def test_tags_filter_inside_the_query(clinical_kb: cef.KnowledgeBase, strategy: SearchStrategy) -> None:
    _tagged(clinical_kb)
    r = clinical_kb.retrieve(GraphQuery(query="warfarin dose", tags=["DOSING"], top_k=4, strategy=strategy))
    ids = [rc.chunk.id for rc in r.results]
    assert ids and set(ids) <= {"w0", "w3", "w6", "w9"}
    assert all("dosing" in chunk_tags(rc.chunk.metadata) for rc in r.results)
    # a tag given as part of a comma-separated metadata string matches too, and fills top_k
    r2 = clinical_kb.retrieve(GraphQuery(query="warfarin dose", tags=["inr"], top_k=5, strategy=strategy))
    assert len(r2.results) == 5
    assert all(int(rc.chunk.id[1:]) % 3 != 0 for rc in r2.results)


def test_no_tagged_chunk_means_no_result(clinical_kb: cef.KnowledgeBase) -> None:
    _tagged(clinical_kb)
    r = clinical_kb.retrieve(GraphQuery(query="warfarin dose", tags=["nope"], top_k=4))
    assert r.results == []


def test_deadline_is_validated() -> None:
    with pytest.raises(pydantic.ValidationError, match="deadline_ms"):
        GraphQuery(query="x", deadline_ms=0)


def test_expansion_checks_the_deadline_before_each_hop(clinical_kb: cef.KnowledgeBase) -> None:
    g = clinical_kb.state.graph
    seed = g.pos("pat-john")
    assert seed is not None
    hops: list[int] = []
    exp = g.expand([seed], 3, g.edge_filter(), on_hop=lambda: hops.append(1))
    assert len(hops) >= 2 and len(exp.nodes) > 1
    q = GraphQuery(query="x", deadline_ms=1)
    qc = QueryContext(state=clinical_kb.state, query=q, started=time.perf_counter() - 1.0)
    assert qc.expired()
    with pytest.raises(DeadlineExceeded) as info:
        g.expand(np.array([seed]), 3, g.edge_filter(), on_hop=lambda: qc.check_deadline("expansion"))
    assert info.value.stage == "expansion"


def test_no_deadline_never_expires(clinical_kb: cef.KnowledgeBase) -> None:
    qc = QueryContext(state=clinical_kb.state, query=GraphQuery(query="x"), started=0.0)
    assert not qc.expired()
    qc.check_deadline("anything")  # does not raise
