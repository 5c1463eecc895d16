"""Both framework retrievers over a postgresql:// URL (a throwaway PostgreSQL with pgvector)."""

from __future__ import annotations

import asyncio

import cef
from cef.adapters import langchain as lc
from cef.adapters import llamaindex as li
from tests.conftest import clinical_batch
from tests.support.pg import pg_dsn, pg_server  # noqa: F401  (fixtures)
from tests.unit.adapters.conftest import JOHN_DRUGS

INTERACTIONS = {
    "John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> Amiodarone",
    "John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> Ibuprofen",
}


def test_retrievers_over_a_postgresql_url(pg_dsn: str) -> None:  # noqa: F811
    with cef.open(pg_dsn, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    lc_retriever = lc.CefRetriever(knowledge_base=pg_dsn, embedder=None, k=2, strategy="paths")
    li_retriever = li.CefRetriever(pg_dsn, embedder=None, similarity_top_k=2, strategy="paths")
    try:
        docs = [d for d in lc_retriever.invoke(JOHN_DRUGS) if d.metadata["chunk_id"] is not None]
        assert {d.metadata["path"] for d in docs} == INTERACTIONS
        assert {d.id for d in docs} == {"drug-amiodarone", "drug-ibuprofen"}
        nodes = [n for n in asyncio.run(li_retriever.aretrieve(JOHN_DRUGS)) if n.node.metadata["chunk_id"]]
        assert [(n.node.node_id, n.score) for n in nodes] == [(d.id, d.metadata["score"]) for d in docs]
        # as_of reaches the database-backed engine too
        then = lc_retriever.invoke(
            "Which medication does John Miller take?",
            relation_types=["PRESCRIBED"],
            depth=1,
            k=1,
            as_of="2019-01-01T00:00:00Z",
        )
        assert then[0].metadata["path"] == "John Miller -[PRESCRIBED]-> Ibuprofen"
    finally:
        lc_retriever.close()
        li_retriever.close()
