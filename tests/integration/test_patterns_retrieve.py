"""Graph patterns inside GraphQuery: retrieval matches them, explains chunks by their paths, falls back as usual."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import cef
from cef import GraphQuery, KnowledgeBase, SearchStrategy
from cef.model.query import MatchedGraphPath
from cef.patterns import GraphPattern, PatternResult, QueryCombinator
from tests.conftest import clinical_batch

# patients with atrial fibrillation, then what they are prescribed (walks HAS_CONDITION backwards)
AFIB_MEDS = {
    "pattern_id": "afib_meds",
    "description": "medications of patients with the condition",
    "steps": [
        {"relation_type": "HAS_CONDITION", "direction": "INCOMING", "target_label": "Patient"},
        {"relation_type": "PRESCRIBED", "target_label": "Medication"},
    ],
}


def _afib_query(**extra: object) -> GraphQuery:
    return GraphQuery.model_validate(
        {
            "query": "Which medications do patients with atrial fibrillation take?",
            "targets": [{"description": "Atrial fibrillation"}],
            "patterns": [AFIB_MEDS],
            **extra,
        }
    )


def test_pattern_ranks_the_end_nodes_chunks_first_and_explains_them(clinical_kb: KnowledgeBase) -> None:
    result = clinical_kb.retrieve(_afib_query())

    assert result.strategy is SearchStrategy.PATTERN
    assert result.fallbacks == []
    # John (afib) is prescribed warfarin now; his ibuprofen prescription ended in 2021
    first_two = [r.chunk.id for r in result.results[:2]]
    assert set(first_two) == {"drug-warfarin", "drug-warfarin-interactions"}
    rest = {r.chunk.id for r in result.results[2:]}
    assert {"note-john-1", "note-john-2", "cond-afib-overview"} <= rest
    assert "drug-ibuprofen" not in {r.chunk.id for r in result.results}
    assert all(a.score > b.score for a, b in zip(result.results[:2], result.results[2:], strict=False))

    top = result.results[0].explanation
    assert top.strategy is SearchStrategy.PATTERN
    assert top.path is not None
    assert top.path.node_ids == ["cond-afib", "pat-john", "med-warfarin"]
    assert top.path.relation_types == ["CONDITION_OF", "PRESCRIBED"]
    assert top.anchors == ["cond-afib"]
    assert top.entities == ["Warfarin"]
    assert "end node of matched path 1" in top.notes[0]
    assert "Atrial fibrillation -[CONDITION_OF]-> John Miller -[PRESCRIBED]-> Warfarin" in top.notes[0]
    assert "pattern 'afib_meds'" in top.notes[1]

    ctx = result.reasoning_context
    assert ctx is not None
    assert len(ctx.matched_paths) == 1
    matched = ctx.matched_paths[0]
    assert isinstance(matched, MatchedGraphPath)
    assert matched.pattern_id == "afib_meds"
    assert matched.node_names == ["Atrial fibrillation", "John Miller", "Warfarin"]
    assert "step 2 -[PRESCRIBED]-> Medication 'Warfarin'" in matched.explanation
    assert result.metadata["patterns"]["paths"] == 1
    assert "pattern_matches" not in result.metadata
    result.model_dump_json()  # serializable, metadata included


def test_patterns_walk_edges_valid_at_as_of(clinical_kb: KnowledgeBase) -> None:
    result = clinical_kb.retrieve(_afib_query(as_of=datetime(2021, 3, 3, tzinfo=UTC)))

    ends = {p.node_ids[-1] for p in result.reasoning_context.matched_paths}  # type: ignore[union-attr]
    assert ends == {"med-ibuprofen"}  # afib since 2021-03-02; warfarin replaced ibuprofen on 2021-03-05


def test_a_pattern_with_its_own_start_needs_no_targets(clinical_kb: KnowledgeBase) -> None:
    pattern = {
        "start": {"node_ids": ["pat-amira"]},
        "steps": [{"relation_type": "PRESCRIBED", "target_label": "Medication"}],
    }
    result = clinical_kb.retrieve(
        GraphQuery.model_validate({"query": "her medications", "patterns": [pattern]})
    )

    ends = {p.node_ids[-1] for p in result.reasoning_context.matched_paths}  # type: ignore[union-attr]
    assert ends == {"med-metformin", "med-lisinopril"}
    assert {r.chunk.id for r in result.results[:2]} == {"drug-metformin", "drug-lisinopril"}


def test_queries_without_patterns_are_unchanged(clinical_kb: KnowledgeBase) -> None:
    plain = clinical_kb.retrieve(
        GraphQuery(query="Which medications interact with warfarin?", targets=[{"description": "Warfarin"}])  # type: ignore[list-item]
    )
    # a pattern that matches nothing: the usual chain answers, with the same chunks
    nothing = {**AFIB_MEDS, "steps": [{"relation_type": "SPECIALIZES_IN"}]}
    fallback = clinical_kb.retrieve(
        GraphQuery.model_validate(
            {
                "query": "Which medications interact with warfarin?",
                "targets": [{"description": "Warfarin"}],
                "patterns": [nothing],
            }
        )
    )

    assert plain.strategy is not SearchStrategy.PATTERN
    assert "patterns" not in plain.metadata
    assert plain.reasoning_context is not None and plain.reasoning_context.matched_paths == []
    assert all(r.explanation.strategy is not SearchStrategy.PATTERN for r in plain.results)
    assert fallback.fallbacks[0].startswith("pattern: 0 result(s)")
    assert fallback.strategy is plain.strategy
    assert [r.chunk.id for r in fallback.results] == [r.chunk.id for r in plain.results]
    assert [r.score for r in fallback.results] == pytest.approx([r.score for r in plain.results])


def test_a_combinator_through_graph_query(clinical_kb: KnowledgeBase) -> None:
    # medications that treat atrial fibrillation AND interact with warfarin
    combinator = {
        "type": "INTERSECTION",
        "patterns": [
            {
                "pattern_id": "treats_afib",
                "start": {"node_ids": ["cond-afib"]},
                "steps": [{"relation_type": "TREATED_BY"}],
            },
            {
                "pattern_id": "interacts_warfarin",
                "start": {"node_ids": ["med-warfarin"]},
                "steps": [{"relation_type": "INTERACTS_WITH"}],
            },
        ],
    }
    q = GraphQuery.model_validate(
        {"query": "afib drugs that interact with warfarin", "patterns": [combinator]}
    )
    assert isinstance(q.patterns[0], QueryCombinator)

    result = clinical_kb.retrieve(q)

    ctx = result.reasoning_context
    assert ctx is not None
    assert {p.node_ids[-1] for p in ctx.matched_paths} == {"med-amiodarone"}
    assert {p.pattern_id for p in ctx.matched_paths} == {"treats_afib", "interacts_warfarin"}
    assert result.results[0].chunk.id == "drug-amiodarone"
    assert result.results[0].explanation.entities == ["Amiodarone"]


def test_graph_query_schema_describes_patterns_and_combinators() -> None:
    schema = GraphQuery.model_json_schema()
    items = schema["properties"]["patterns"]["items"]["anyOf"]
    assert {i["$ref"] for i in items} == {"#/$defs/GraphPattern", "#/$defs/QueryCombinator"}
    assert "TraversalStep" in schema["$defs"]
    assert "Constraint" in schema["$defs"]
    with pytest.raises(ValueError, match="steps"):
        GraphQuery.model_validate({"query": "q", "patterns": [{"pattern_id": "no steps"}]})


def test_match_patterns_sees_writes_of_this_and_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "clinical.db"
    with cef.open(path, embedder=None) as kb, cef.open(path, embedder=None) as other:
        kb.index_batch(clinical_batch())
        by_brand = GraphPattern.model_validate(
            {
                "start": {"node_ids": ["pat-john"]},
                "steps": [
                    {
                        "relation_type": "PRESCRIBED",
                        "constraints": [
                            {"type": "PROPERTY_EQUALS", "property": "brand", "value": "Coumadin"}
                        ],
                    }
                ],
            }
        )
        first = kb.match_patterns(by_brand)
        assert isinstance(first, PatternResult)
        assert first.end_node_ids == ["med-warfarin"]

        kb.update_node("med-warfarin", {"brand": "Jantoven"})  # this process: the write listener
        assert kb.match_patterns(by_brand).end_node_ids == []

        other.update_node("med-warfarin", {"brand": "Coumadin"})  # another engine on the same file
        assert kb.match_patterns(by_brand).end_node_ids == ["med-warfarin"]

        # another engine writes, then this one writes (replaying the other's commit first)
        other.update_node("med-warfarin", {"brand": "Jantoven"})
        kb.update_node("pat-amira", {"age": 55})
        assert kb.match_patterns(by_brand).end_node_ids == []


def test_match_patterns_starts_from_given_entry_points(clinical_kb: KnowledgeBase) -> None:
    pattern = GraphPattern.model_validate({"steps": [{"relation_type": "TREATED_BY_DOCTOR"}]})

    result = clinical_kb.match_patterns(pattern, start_nodes=["pat-lucas", "pat-amira"])

    assert set(result.end_node_ids) == {"doc-varga", "doc-okafor"}
    assert all(p.explanation for p in result.paths)
