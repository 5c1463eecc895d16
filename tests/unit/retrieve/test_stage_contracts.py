"""Retrieval stages tell each other things through typed fields, never through untyped dict keys.

Two checks: the source of ``cef/retrieve`` touches no attribute a :class:`QueryContext` does not
declare (``qc.metadata["paths"] = ...`` or ``qc.flag = True`` would), and a retrieval along every
strategy reports only the metadata :meth:`StageState.report` builds from the typed records.
"""

from __future__ import annotations

import ast
import json
from dataclasses import fields
from pathlib import Path

import pytest

import cef
from cef import GraphQuery, SearchStrategy, TraversalHint
from cef.model.patterns import GraphPattern
from cef.retrieve.context import QueryContext
from cef.retrieve.stagestate import StageState

RETRIEVE = Path(cef.__file__).parent / "retrieve"

#: the names a query context goes by in the stages, besides parameters annotated ``QueryContext``
_CONTEXT_NAMES = {"qc", "sub"}
#: the result metadata's entries: StageState.report's, then the pipeline's anchors and notes
REPORTED = {
    "patterns",
    "paths",
    "query_entities",
    "ppr_seeds",
    "related_entities",
    "ppr",
    "graph",
    "route",
    "timed_out",
    "token_budget",
    "relevance",
    "anchors",
    "notes",
}


def _declared() -> set[str]:
    return {f.name for f in fields(QueryContext)} | {n for n in dir(QueryContext) if not n.startswith("__")}


def undeclared_uses(source: str, filename: str = "<source>") -> list[str]:
    """``file:line name.attr`` for every attribute of a query context the class does not declare."""
    declared = _declared()
    out: list[str] = []
    for fn in ast.walk(ast.parse(source, filename)):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        names = set(_CONTEXT_NAMES)
        args = fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs
        names |= {
            a.arg for a in args if a.annotation is not None and "QueryContext" in ast.unparse(a.annotation)
        }
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in names
                and node.attr not in declared
            ):
                out.append(f"{filename}:{node.lineno} {node.value.id}.{node.attr}")
    return sorted(set(out))


def test_no_stage_uses_an_undeclared_channel() -> None:
    found = [
        u for path in sorted(RETRIEVE.glob("*.py")) for u in undeclared_uses(path.read_text(), path.name)
    ]
    assert found == [], "stages pass things through typed fields of qc.stages (cef/retrieve/stagestate.py)"


@pytest.mark.parametrize(
    "planted",
    [
        'def stage(qc: QueryContext) -> None:\n    qc.metadata["paths"] = {"named": 1.0}\n',
        'def stage(qc: QueryContext) -> None:\n    x = qc.metadata.get("ppr_seeds", {})\n',
        "def stage(ctx: QueryContext) -> None:\n    ctx.confident = True\n",
    ],
)
def test_a_planted_untyped_channel_is_found(planted: str) -> None:
    assert undeclared_uses(planted)


def test_the_context_has_no_untyped_metadata() -> None:
    assert "metadata" not in {f.name for f in fields(QueryContext)}
    for f in fields(StageState):
        assert "Any" not in str(f.type), f"StageState.{f.name} is untyped: {f.type}"


def _check(result: cef.SearchResult) -> None:
    assert set(result.metadata) <= REPORTED, set(result.metadata) - REPORTED
    json.dumps(result.metadata)  # plain data, nothing a stage passes on to the next


def test_every_strategy_reports_only_the_typed_records(
    clinical_kb: cef.KnowledgeBase, text_kb: cef.KnowledgeBase
) -> None:
    pattern = GraphPattern.model_validate(
        {
            "pattern_id": "takes",
            "start": {"label": "Patient"},
            "steps": [{"relation_type": "PRESCRIBED", "target_label": "Medication"}],
        }
    )
    for kb, question in (
        (clinical_kb, "Which drugs interact with warfarin?"),
        (text_kb, "Who wrote Hamlet?"),
    ):
        for strategy in SearchStrategy:
            _check(kb.retrieve(GraphQuery(query=question, strategy=strategy, max_token_budget=200)))
        _check(kb.retrieve(GraphQuery(query=question, deadline_ms=1)))
    _check(clinical_kb.retrieve(GraphQuery(query="What does John take?", patterns=[pattern])))
    hinted = GraphQuery(query="What does John take?", traversal=TraversalHint(relation_types=["PRESCRIBED"]))
    _check(clinical_kb.retrieve(hinted))


def test_the_report_reads_route_settings_only_for_a_path_answer(clinical_kb: cef.KnowledgeBase) -> None:
    """A BM25 query's options are not checked against the auto route's settings by the report."""
    res = clinical_kb.retrieve(
        GraphQuery(query="warfarin", strategy=SearchStrategy.BM25, options={"fuse_k": -1})
    )
    assert res.strategy is SearchStrategy.BM25 and res.results
    paths = clinical_kb.retrieve(
        GraphQuery(query="What does warfarin interact with?", strategy=SearchStrategy.PATHS)
    )
    assert paths.metadata["paths"]["confident"] is True  # AutoSettings.confident_named / confident_anchor
