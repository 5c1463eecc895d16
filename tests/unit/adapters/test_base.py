"""The shared core of the framework retrievers: options → GraphQuery, results → hits, where queries go."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.adapters.base import CEF_METADATA_KEYS, CefRetrieverOptions, hits
from cef.adapters.source import LocalSource, RestSource, open_source
from cef.errors import ConfigurationError
from cef.model import ResolutionTarget, SearchStrategy, TraversalHint
from tests.unit.adapters.conftest import JOHN_DRUGS

WHEN = datetime(2019, 6, 1, tzinfo=UTC)


def test_every_option_reaches_the_graph_query(tmp_path: Path) -> None:
    opts = CefRetrieverOptions(
        knowledge_base=tmp_path / "kb.db",
        strategy="paths",
        depth=3,
        relation_types=["PRESCRIBED", "INTERACTS_WITH"],
        traversal=TraversalHint(direction="out", min_confidence=0.5, depth=1, relation_types=["IS_A"]),
        targets=[
            "John Miller",
            ResolutionTarget(description="Warfarin", type_hint="Medication", max_matches=2),
        ],
        as_of=WHEN,
        scope="tenant-a",
        max_token_budget=800,
        search_kwargs={"min_results": 0, "max_graph_nodes": 77, "include_reasoning_context": False},
    )
    q = opts.graph_query("what does John take?", 7)
    assert q.query == "what does John take?"
    assert q.top_k == 7
    assert q.strategy is SearchStrategy.PATHS
    # depth and relation_types win over traversal's; the rest of traversal is kept
    assert q.traversal == TraversalHint(
        direction="out", min_confidence=0.5, depth=3, relation_types=["PRESCRIBED", "INTERACTS_WITH"]
    )
    assert q.targets == [
        ResolutionTarget(description="John Miller"),
        ResolutionTarget(description="Warfarin", type_hint="Medication", max_matches=2),
    ]
    assert (q.as_of, q.scope, q.max_token_budget) == (WHEN, "tenant-a", 800)
    assert (q.min_results, q.max_graph_nodes, q.include_reasoning_context) == (0, 77, False)
    assert not (tmp_path / "kb.db").exists(), "building a query must not open the knowledge base"


def test_defaults_are_graph_query_defaults(tmp_path: Path) -> None:
    q = CefRetrieverOptions(knowledge_base=tmp_path / "kb.db").graph_query("warfarin", 4)
    expected = cef.GraphQuery(query="warfarin", top_k=4)
    assert q == expected


OVERRIDES = st.fixed_dictionaries(
    {},
    optional={
        "strategy": st.sampled_from(list(SearchStrategy)),
        "depth": st.integers(0, 10),
        "relation_types": st.lists(
            st.sampled_from(["PRESCRIBED", "TREATS", "IS_A"]), unique=True, max_size=3
        ),
        "as_of": st.datetimes(timezones=st.just(UTC)),
        "scope": st.text(min_size=1, max_size=20),
        "max_token_budget": st.integers(1, 100_000),
        "targets": st.lists(st.text(min_size=1, max_size=30).filter(str.strip), max_size=3),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(overrides=OVERRIDES, top_k=st.integers(1, 1000))
def test_overrides_win_for_one_call_and_leave_the_retriever_as_it_was(
    tmp_path: Path, overrides: dict[str, Any], top_k: int
) -> None:
    opts = CefRetrieverOptions(knowledge_base=tmp_path / "kb.db", strategy="graph", depth=1, scope="base")
    before = opts.model_dump()
    q = opts.graph_query("question", top_k, **overrides)
    assert q.top_k == top_k
    assert q.strategy == overrides.get("strategy", SearchStrategy.GRAPH)
    assert q.traversal.depth == overrides.get("depth", 1)
    assert q.traversal.relation_types == overrides.get("relation_types", [])
    assert q.as_of == overrides.get("as_of")
    assert q.scope == overrides.get("scope", "base")
    assert q.max_token_budget == overrides.get("max_token_budget")
    assert [t.description for t in q.targets] == overrides.get("targets", [])
    assert opts.model_dump() == before


def test_bad_options_are_refused_naming_the_field(tmp_path: Path) -> None:
    kb = tmp_path / "kb.db"
    with pytest.raises(pydantic.ValidationError, match="depth"):
        CefRetrieverOptions(knowledge_base=kb, depth=11)
    with pytest.raises(pydantic.ValidationError, match="strategy"):
        CefRetrieverOptions(knowledge_base=kb, strategy="telepathy")
    with pytest.raises(pydantic.ValidationError, match="top_k"):
        CefRetrieverOptions(knowledge_base=kb).graph_query("q", 0)
    with pytest.raises(pydantic.ValidationError, match="max_token_budget"):
        CefRetrieverOptions(knowledge_base=kb).graph_query("q", 3, max_token_budget=0)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        CefRetrieverOptions(knowledge_base=kb, depht=2)
    with pytest.raises(
        TypeError, match=r"unknown retrieval option\(s\) depht; options: answer_nodes, as_of, depth"
    ):
        CefRetrieverOptions(knowledge_base=kb).graph_query("q", 3, depht=2)


def test_search_kwargs_reach_other_graph_query_fields_only(tmp_path: Path) -> None:
    kb = tmp_path / "kb.db"
    with pytest.raises(pydantic.ValidationError, match="set scope, top_k with the retriever's own fields"):
        CefRetrieverOptions(knowledge_base=kb, search_kwargs={"top_k": 3, "scope": "a"})
    with pytest.raises(
        pydantic.ValidationError, match=r"unknown GraphQuery field\(s\) min_result;.*min_results"
    ):
        CefRetrieverOptions(knowledge_base=kb, search_kwargs={"min_result": 0})
    q = CefRetrieverOptions(knowledge_base=kb, search_kwargs={"options": {"x": 1}}).graph_query("q", 3)
    assert q.options == {"x": 1}


def test_an_api_key_needs_a_server_url(tmp_path: Path) -> None:
    with pytest.raises(pydantic.ValidationError, match="api_key is for a cef server URL"):
        CefRetrieverOptions(knowledge_base=tmp_path / "kb.db", api_key="k")
    opts = CefRetrieverOptions(knowledge_base="http://127.0.0.1:1/", api_key="secret-key")
    assert "secret-key" not in repr(opts)  # a SecretStr
    with pytest.raises(ConfigurationError, match="drop api_key"):
        open_source(tmp_path / "kb.db", api_key="k")


def test_sources_by_location(clinical_kb: cef.KnowledgeBase, tmp_path: Path) -> None:
    assert isinstance(open_source("http://127.0.0.1:8080"), RestSource)
    assert isinstance(open_source("HTTPS://cef.example/"), RestSource)
    assert isinstance(open_source(clinical_kb), LocalSource)
    assert isinstance(open_source("postgresql://u@h/db"), LocalSource)  # cef.open() takes store URLs
    assert isinstance(open_source(tmp_path / "kb.db"), LocalSource)


# ------------------------------------------------------------------ running queries
def test_hits_carry_score_ids_strategy_and_path(clinical_kb: cef.KnowledgeBase) -> None:
    opts = CefRetrieverOptions(knowledge_base=clinical_kb, strategy="paths")
    found = opts.search(JOHN_DRUGS, 5)
    result = clinical_kb.retrieve(opts.graph_query(JOHN_DRUGS, 5))
    chunk_hits = [h for h in found if h.metadata["chunk_id"] is not None]
    assert [h.id for h in chunk_hits] == [rc.chunk.id for rc in result.results]
    # answer nodes without chunks follow the chunks
    assert found[: len(chunk_hits)] == chunk_hits
    assert [h.id for h in found[len(chunk_hits) :]] == [a.node.id for a in result.nodes if not a.chunk_ids]
    for hit, rc in zip(chunk_hits, result.results, strict=True):
        m = hit.metadata
        assert set(CEF_METADATA_KEYS) <= m.keys()
        assert (m["score"], m["chunk_id"], m["node_id"]) == (rc.score, rc.chunk.id, rc.chunk.node_id)
        assert m["strategy"] == "paths" == rc.explanation.strategy
        assert rc.explanation.path is not None
        assert m["path"] == rc.explanation.path.describe()
        assert m["explanation"]["path"]["node_ids"] == rc.explanation.path.node_ids
        assert m["kind"] == rc.chunk.metadata["kind"]  # the chunk's own metadata is kept
        assert hit.text == rc.chunk.content
    assert found[0].metadata["path"].startswith("John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> ")
    assert chunk_hits == sorted(chunk_hits, key=lambda h: -h.score)


def test_answer_nodes_without_chunks_come_after_the_chunks(clinical_kb: cef.KnowledgeBase) -> None:
    question = "What drug class is warfarin?"
    opts = CefRetrieverOptions(knowledge_base=clinical_kb, strategy="paths")
    found = opts.search(question, 3)
    assert [h.metadata["chunk_id"] is None for h in found] == [False, False, False, True]
    node = found[-1]
    assert (node.id, node.metadata["node_id"], node.metadata["label"]) == (
        "class-anticoagulant",
        "class-anticoagulant",
        "DrugClass",
    )
    assert node.metadata["path"] == "Warfarin -[IS_A]-> Anticoagulant"
    assert node.text == "DrugClass Anticoagulant\n(path: Warfarin -[IS_A]-> Anticoagulant)"
    assert [h.id for h in opts.search(question, 3, answer_nodes=False)] == [h.id for h in found[:3]]
    result = clinical_kb.retrieve(opts.graph_query(question, 3))
    assert [h.id for h in hits(result, answer_nodes=False)] == [rc.chunk.id for rc in result.results]


def test_as_of_relation_types_and_depth_change_what_is_found(clinical_kb: cef.KnowledgeBase) -> None:
    opts = CefRetrieverOptions(
        knowledge_base=clinical_kb, strategy="paths", relation_types=["PRESCRIBED"], depth=1
    )
    question = "Which medication does John Miller take?"
    then = opts.search(question, 1, as_of=datetime(2019, 1, 1, tzinfo=UTC))
    now = opts.search(question, 1, as_of=datetime(2024, 1, 1, tzinfo=UTC))
    assert then[0].metadata["path"] == "John Miller -[PRESCRIBED]-> Ibuprofen"  # stopped in 2021
    assert now[0].metadata["path"] == "John Miller -[PRESCRIBED]-> Warfarin"


def test_scope_hides_other_tenants_chunks(scoped_kb: cef.KnowledgeBase) -> None:
    opts = CefRetrieverOptions(knowledge_base=scoped_kb, strategy="bm25")
    ids = {h.id for h in opts.search("warfarin dosing note tenant", 10)}
    assert {"note-a", "note-b"} <= ids
    ids_a = {h.id for h in opts.search("warfarin dosing note tenant", 10, scope="a")}
    assert "note-a" in ids_a and "note-b" not in ids_a


async def _asearch(opts: CefRetrieverOptions, text: str, k: int) -> list[Any]:
    return await opts.asearch(text, k)


def test_async_search_matches_sync(clinical_kb: cef.KnowledgeBase) -> None:
    import anyio

    opts = CefRetrieverOptions(knowledge_base=clinical_kb)
    assert anyio.run(_asearch, opts, JOHN_DRUGS, 4) == opts.search(JOHN_DRUGS, 4)


# ------------------------------------------------------------------ opening and closing
def test_a_missing_file_is_an_error_not_a_new_knowledge_base(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    opts = CefRetrieverOptions(knowledge_base=missing, embedder=None)
    with pytest.raises(ConfigurationError, match=r"knowledge base file '.*nope.db' does not exist: build it"):
        opts.search("warfarin", 3)
    with pytest.raises(ConfigurationError, match="does not exist"):
        CefRetrieverOptions(knowledge_base=f"sqlite:///{missing}", embedder=None).search("warfarin", 3)
    assert not missing.exists()
    with pytest.raises(ConfigurationError, match=r"would be empty: pass the open cef\.KnowledgeBase itself"):
        CefRetrieverOptions(knowledge_base=":memory:", embedder=None).search("warfarin", 3)


def test_a_path_is_opened_on_first_use_and_closed_by_close(clinical_file: Path) -> None:
    opts = CefRetrieverOptions(knowledge_base=str(clinical_file), embedder=None)
    source = opts.source
    assert isinstance(source, LocalSource) and source.owned
    assert opts.search("warfarin", 2)
    kb = source.knowledge_base()
    opts.close()
    with pytest.raises(Exception, match="closed"):
        kb.retrieve("warfarin")
    assert opts.search("warfarin", 2), "a closed retriever opens the file again when used"
    opts.close()


def test_close_leaves_a_knowledge_base_it_was_given_open(clinical_kb: cef.KnowledgeBase) -> None:
    opts = CefRetrieverOptions(knowledge_base=clinical_kb)
    assert opts.search("warfarin", 2)
    opts.close()
    assert clinical_kb.retrieve("warfarin", top_k=2).results


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("cef.adapters.langchain", "langchain_core", "langchain"),
        ("cef.adapters.llamaindex", "llama_index", "llamaindex"),
    ],
)
def test_a_missing_framework_names_the_extra(module: str, blocked: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "from cef.errors import MissingExtraError\n"
        "try:\n"
        f"    import {module}\n"
        "except MissingExtraError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert (
        done.stdout.strip()
        == f"{module} needs the optional dependency {blocked!r}: pip install 'cef-context[{extra}]'"
    )


def test_where_is_fixed_and_how_may_change(clinical_kb: cef.KnowledgeBase, tmp_path: Path) -> None:
    opts = CefRetrieverOptions(knowledge_base=clinical_kb, strategy="bm25")
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        opts.knowledge_base = tmp_path / "other.db"
    opts.strategy = SearchStrategy.PATHS
    assert opts.search(JOHN_DRUGS, 1)[0].metadata["strategy"] == "paths"
    with pytest.raises(pydantic.ValidationError, match="depth"):
        opts.depth = 99
