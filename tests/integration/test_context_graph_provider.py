"""Graph context provider on the clinical example with the real embedding model (seed 002 test list + rules)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

import cef
from cef import Batch, Chunk, Edge, Node
from cef.context import (
    ContextFormat,
    DocumentInput,
    GraphContextProvider,
    KnowledgeContextOptions,
)
from cef.context.tokens import make_token_counter

RULES = Path(__file__).resolve().parents[2] / "examples" / "clinical" / "rules.yaml"
QUERY = "Which medications interact with warfarin?"


@pytest.fixture
def kb(clinical_embedded: cef.KnowledgeBase) -> Iterator[cef.KnowledgeBase]:
    """The embedded clinical example plus its axioms and claims."""
    clinical_embedded.index_batch(Batch.model_validate(yaml.safe_load(RULES.read_text())))
    yield clinical_embedded


@pytest.fixture
def provider(kb: cef.KnowledgeBase) -> GraphContextProvider:
    return GraphContextProvider(kb, "cl100k")


def names(ctx: object) -> list[str]:
    return [e.name for e in ctx.entities]  # type: ignore[attr-defined]


# ----------------------------------------------------------- seed 002 list
def test_get_context_returns_relevant_entities(provider: GraphContextProvider) -> None:
    ctx = provider.get_context(QUERY)
    assert ctx.entities[0].id == "med-warfarin"
    assert {"Ibuprofen", "Amiodarone"} <= set(names(ctx))
    assert "warfarin" in ctx.entities[0].matched_terms
    assert all(e.type not in ("Axiom", "NodeType", "Claim") for e in ctx.entities)
    assert ctx.original_query == QUERY and ctx.reason is None
    assert ctx.metadata["candidates"] >= len(ctx.entities)


@pytest.mark.parametrize("fmt", list(ContextFormat))
@pytest.mark.parametrize("budget", [120, 300, 700, 3000])
def test_get_context_respects_token_budget(
    provider: GraphContextProvider, fmt: ContextFormat, budget: int
) -> None:
    opts = KnowledgeContextOptions(max_tokens=budget, format=fmt, include_claims=True, include_chunks=True)
    ctx = provider.get_context(QUERY, opts)
    counter = make_token_counter("cl100k")
    assert counter.count(ctx.formatted_context) == ctx.token_count <= budget
    assert ctx.token_budget == budget
    if budget <= 300:
        assert ctx.truncated  # something relevant had to be left out
    if fmt in (ContextFormat.JSON, ContextFormat.YAML):
        data = (
            json.loads(ctx.formatted_context)
            if fmt is ContextFormat.JSON
            else yaml.safe_load(ctx.formatted_context)
        )
        assert data["meta"]["truncated"] is ctx.truncated
        assert data["meta"]["total_tokens"] == ctx.token_count
        assert [e["name"] for e in data["entities"]] == names(ctx)


def test_get_context_includes_relationships(provider: GraphContextProvider) -> None:
    ctx = provider.get_context(QUERY, KnowledgeContextOptions(max_tokens=3000))
    rels = {(r.source_name, r.relation, r.target_name): r for r in ctx.relationships}
    interaction = rels[("Warfarin", "INTERACTS_WITH", "Ibuprofen")]
    assert interaction.properties == {"severity": "major", "effect": "bleeding risk"}
    assert ("Warfarin", "INTERACTS_WITH", "Amiodarone") in rels
    # rule and claim bookkeeping is not a relationship
    assert not any(r.relation in ("APPLIES_TO", "ABOUT", "CLAIMS") for r in ctx.relationships)
    none = provider.get_context(QUERY, KnowledgeContextOptions(max_tokens=3000, include_relationships=False))
    assert none.relationships == []


def test_relationships_respect_time_validity(provider: GraphContextProvider) -> None:
    opts = KnowledgeContextOptions(max_tokens=3000, relationship_depth=1)
    now = provider.get_context_for_entities(["pat-john"], opts)
    current = {(r.relation, r.target) for r in now.relationships}
    assert ("PRESCRIBED", "med-warfarin") in current
    assert ("PRESCRIBED", "med-ibuprofen") not in current  # stopped in 2021
    back = provider.get_context_for_entities(
        ["pat-john"], opts.model_copy(update={"as_of": datetime(2019, 1, 1, tzinfo=UTC)})
    )
    then = {(r.relation, r.target) for r in back.relationships}
    assert ("PRESCRIBED", "med-ibuprofen") in then and ("PRESCRIBED", "med-warfarin") not in then


def test_relationships_skip_superseded_versions_and_other_scopes_nodes(
    provider: GraphContextProvider, kb: cef.KnowledgeBase
) -> None:
    kb.index_batch(
        Batch(
            nodes=[
                Node(id="cond-b", label="Condition", properties={"name": "Gout"}, scope="clinic-b"),
                Node(id="cond-old", label="Condition", properties={"name": "Anaemia"}),
            ],
            edges=[
                Edge(id="lucas-b", relation_type="HAS_CONDITION", source="pat-lucas", target="cond-b"),
                Edge(
                    id="lucas-old",
                    relation_type="HAS_CONDITION",
                    source="pat-lucas",
                    target="cond-old",
                    properties={"superseded_at": "2024-01-01T00:00:00+00:00"},
                ),
            ],
        )
    )
    opts = KnowledgeContextOptions(max_tokens=4000)
    everything = {r.target for r in provider.get_context_for_entities(["pat-lucas"], opts).relationships}
    assert "cond-b" in everything and "cond-ckd" in everything
    assert "cond-old" not in everything  # a superseded version is history, not current knowledge
    scoped = provider.get_context_for_entities(["pat-lucas"], opts.model_copy(update={"scope": "clinic-a"}))
    targets = {r.target for r in scoped.relationships}
    assert "cond-ckd" in targets and "cond-b" not in targets  # the walk never enters another scope's node


def test_relationship_depth_reaches_further(provider: GraphContextProvider) -> None:
    one = provider.get_context_for_entities(["pat-lucas"], KnowledgeContextOptions(max_tokens=4000))
    two = provider.get_context_for_entities(
        ["pat-lucas"], KnowledgeContextOptions(max_tokens=4000, relationship_depth=2)
    )
    assert len(two.relationships) > len(one.relationships)
    assert all("pat-lucas" in (r.source, r.target) for r in one.relationships)
    # a second hop: Chronic kidney disease <- CONTRAINDICATED_IN - Metformin
    assert any(r.relation == "CONTRAINDICATED_IN" and r.target == "cond-ckd" for r in two.relationships)


def test_rank_entities_highest_score_first(provider: GraphContextProvider, kb: cef.KnowledgeBase) -> None:
    ctx = provider.get_context(QUERY, KnowledgeContextOptions(max_tokens=3000))
    scores = [e.score for e in ctx.entities]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    meds = kb.find_nodes_by_label("Medication")
    ranked = provider.ranker.rank(QUERY, meds)
    assert ranked[0].node.id == "med-warfarin"
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_format_context_markdown(provider: GraphContextProvider) -> None:
    ctx = provider.get_context(QUERY, KnowledgeContextOptions(max_tokens=3000, include_claims=True))
    text = ctx.formatted_context
    assert text.startswith(f"# Knowledge context\nQuery: {QUERY}\nTokens: {ctx.token_count} of 3000")
    assert "- **Medication: Warfarin** (id: med-warfarin) — brand: Coumadin" in text
    assert "- Warfarin → `INTERACTS_WITH` → Ibuprofen (severity: major; effect: bleeding risk)" in text
    tokens = MarkdownIt("commonmark").parse(text)
    h2 = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
    assert h2 == ["Entities", "Relationships", "Domain rules", "Claims"]
    items = sum(1 for t in tokens if t.type == "list_item_open")
    assert items == len(ctx.entities) + len(ctx.relationships) + len(ctx.axioms) + len(ctx.claims)


# ------------------------------------------------------------ axioms and claims
def test_axioms_of_types_in_context_are_returned(provider: GraphContextProvider) -> None:
    ctx = provider.get_context("warfarin", KnowledgeContextOptions(max_tokens=3000))
    rules = {a.id: a for a in ctx.axioms}
    assert "axiom-check-interactions" in rules and rules["axiom-check-interactions"].applies_to == [
        "Medication"
    ]
    # attached to the Anticoagulant class, reaches Warfarin through IS_A
    assert rules["axiom-anticoagulant-bleeding"].severity == "must"
    assert "axiom-current-treatment" not in rules  # no Patient in context
    assert "Domain rules" in ctx.formatted_context
    off = provider.get_context("warfarin", KnowledgeContextOptions(max_tokens=3000, include_axioms=False))
    assert off.axioms == []


def test_axioms_follow_the_entities_not_the_words(provider: GraphContextProvider) -> None:
    ctx = provider.get_context(
        "Dr. Maria Chen cardiology",
        KnowledgeContextOptions(max_tokens=3000, entity_types=["Doctor", "Specialty"]),
    )
    assert ctx.entities and {e.type for e in ctx.entities} <= {"Doctor", "Specialty"}
    assert ctx.axioms == []


def test_claims_are_returned_when_asked(provider: GraphContextProvider) -> None:
    default = provider.get_context("warfarin atrial fibrillation", KnowledgeContextOptions(max_tokens=3000))
    assert default.claims == []
    ctx = provider.get_context(
        "warfarin atrial fibrillation", KnowledgeContextOptions(max_tokens=3000, include_claims=True)
    )
    (claim,) = [c for c in ctx.claims if c.id == "claim-doac-preferred"]
    assert claim.source == "Anticoagulation in atrial fibrillation"
    assert claim.confidence == 0.9 and "Warfarin" in claim.about
    assert claim.statement in ctx.formatted_context


def test_chunks_of_selected_entities_are_ranked_by_the_query(
    provider: GraphContextProvider, kb: cef.KnowledgeBase
) -> None:
    query = "warfarin interactions"
    ctx = provider.get_context(
        query, KnowledgeContextOptions(max_tokens=3000, include_chunks=True, max_entities=3)
    )
    warfarin = [c for c in ctx.chunks if c.node_id == "med-warfarin"]
    assert {c.id for c in warfarin} == {"drug-warfarin", "drug-warfarin-interactions"}
    assert kb.embedder is not None
    qv = kb.embedder.embed_query(query)
    for c in warfarin:  # the score is the cosine of the query to the chunk
        assert c.score == pytest.approx(
            float(qv @ kb.embedder.embed_query(c.content)), abs=5e-3
        )  # int8 vectors move slightly with what they are batched with
    assert [c.score for c in warfarin] == sorted((c.score for c in warfarin), reverse=True)  # type: ignore[type-var]
    selected = {e.id for e in ctx.entities}
    assert all(c.node_id in selected for c in ctx.chunks)


# ------------------------------------------------------------- other front doors
def test_context_for_entities_skips_invalid_ids(provider: GraphContextProvider) -> None:
    ctx = provider.get_context_for_entities(
        ["med-warfarin", "no-such-id", "", "pat-john", "axiom-current-treatment"]
    )
    assert [e.id for e in ctx.entities] == ["med-warfarin", "pat-john"]
    assert ctx.skipped_ids == ["", "no-such-id", "axiom-current-treatment"]
    assert any("no-such-id" in w and "does not exist" in w for w in ctx.warnings)
    assert {a.id for a in ctx.axioms} >= {"axiom-check-interactions", "axiom-current-treatment"}
    empty = provider.get_context_for_entities(["nope", "nada"])
    assert empty.is_empty and empty.reason == "none of the given entity ids exist"
    assert empty.skipped_ids == ["nope", "nada"]


def test_context_from_document(provider: GraphContextProvider, kb: cef.KnowledgeBase) -> None:
    (note,) = kb.store.get_chunks(["note-lucas-1"])
    ctx = provider.get_context_from_document(note)
    assert ctx.entities[0].id == "pat-lucas"
    assert ctx.entities[0].score is not None  # scored against the note's text
    assert "axiom-current-treatment" in {a.id for a in ctx.axioms}
    linked = provider.get_context_from_document(
        DocumentInput(content="Reviewing anticoagulation.", linked_entities=["med-apixaban", "missing"])
    )
    assert [e.id for e in linked.entities] == ["med-apixaban"] and linked.skipped_ids == ["missing"]
    unlinked = provider.get_context_from_document("Metformin and chronic kidney disease stage 4")
    assert {"Metformin", "Chronic kidney disease"} <= set(names(unlinked))
    via_chunk = provider.get_context_from_document(Chunk(id="x", content="Loose text about ibuprofen."))
    assert "Ibuprofen" in names(via_chunk)


# ----------------------------------------------------------------- errors
def test_no_match_gives_an_empty_context(provider: GraphContextProvider) -> None:
    ctx = provider.get_context(
        "qqqz vvvx", KnowledgeContextOptions(min_relevance=0.5, format=ContextFormat.JSON)
    )
    assert ctx.is_empty and ctx.reason is not None and ctx.reason.startswith("no match")
    data = json.loads(ctx.formatted_context)  # still a valid (empty) document
    assert data["entities"] == [] and data["meta"]["total_tokens"] == ctx.token_count
    assert provider.get_context("   ").reason == "empty query"


def test_graph_unavailable_gives_an_empty_context_with_a_reason(tmp_path: Path, embedder: object) -> None:
    from tests.conftest import clinical_batch

    path = tmp_path / "broken.db"
    with cef.open(path, embedder=embedder) as kb:  # type: ignore[arg-type]
        kb.index_batch(clinical_batch())
        other = sqlite3.connect(path)
        other.execute("DROP TABLE node_fts")
        other.commit()
        other.close()
        ctx = GraphContextProvider(kb, "cl100k").get_context(QUERY)
    assert ctx.is_empty and ctx.reason is not None and ctx.reason.startswith("knowledge graph unavailable")


def test_budget_exceeded_truncates_and_flags(provider: GraphContextProvider) -> None:
    big = provider.get_context(QUERY, KnowledgeContextOptions(max_tokens=4000, include_claims=True))
    small = provider.get_context(QUERY, KnowledgeContextOptions(max_tokens=200, include_claims=True))
    assert small.truncated and small.token_count <= 200
    assert len(small.entities) < len(big.entities)
    assert small.entities[0].id == big.entities[0].id == "med-warfarin"  # the most relevant survives
    assert small.metadata["dropped"] > 0


def test_a_small_scope_is_searched_inside_itself(
    provider: GraphContextProvider, kb: cef.KnowledgeBase
) -> None:
    """Vector candidates come from inside the request's scope: forty closer nodes of another scope
    do not push the scope's only match out of the top k."""
    kb.index_batch(
        Batch(
            nodes=[
                Node(id=f"y{i}", label="Brand", properties={"name": f"Warfarin dose {i}"}, scope="clinic-y")
                for i in range(40)
            ]
            + [Node(id="z-coumadin", label="Brand", properties={"name": "Coumadin"}, scope="clinic-z")]
        )
    )
    opts = KnowledgeContextOptions(
        max_tokens=4000, scope="clinic-z", entity_types=["Brand"], min_relevance=0.0, max_entities=2
    )
    found = [e.id for e in provider.get_context("warfarin dose", opts).entities]
    assert found == ["z-coumadin"]
