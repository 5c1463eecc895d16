"""PPR over the entity–passage graph: the bridge passage of a 2-hop question, explanations, settings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cef
from cef import GraphQuery, SearchStrategy
from cef.errors import ValidationError
from cef.retrieve.entities import entity_index, link_query_entities
from cef.retrieve.ppr import first_unreached
from cef.retrieve.presets import EntityLinkingSettings
from cef.schema.textgraph import entity_id, passage_id
from tests.unit.retrieve.corpus import GOLD, QUESTION


def ranked(kb: cef.KnowledgeBase, strategy: SearchStrategy, **kw: object) -> list[str]:
    res = kb.retrieve(GraphQuery(query=QUESTION, strategy=strategy, top_k=5, **kw))  # type: ignore[arg-type]
    assert res.strategy is strategy
    return [r.chunk.id for r in res.results]


def test_ppr_finds_the_bridge_passage_vector_misses(text_kb: cef.KnowledgeBase) -> None:
    vector = ranked(text_kb, SearchStrategy.VECTOR)
    ppr = ranked(text_kb, SearchStrategy.PPR)
    assert vector[0] == "tides"
    assert "varga" not in vector  # the composer's page shares no words or topic with the question
    assert set(ppr[:2]) == set(GOLD)


def test_ppr_explains_each_result(text_kb: cef.KnowledgeBase) -> None:
    res = text_kb.retrieve(GraphQuery(query=QUESTION, strategy=SearchStrategy.PPR, top_k=5))
    seed = entity_id("symphony of tides")
    assert res.metadata["query_entities"][0]["node_id"] == seed
    assert res.metadata["query_entities"][0]["mention"] == "Symphony of Tides"
    assert seed in [a["node_id"] for a in res.metadata["anchors"]]
    related = [r["node_id"] for r in res.metadata["related_entities"]]
    assert entity_id("elena varga") in related[:3] and seed not in related
    by_id = {r.chunk.id: r for r in res.results}
    varga = by_id["varga"].explanation
    assert varga.strategy is SearchStrategy.PPR
    assert varga.anchors == [seed]
    assert varga.graph_score is not None and 0 <= varga.graph_score <= 1
    assert varga.vector_score is not None
    assert varga.entities[0] == "Elena Varga"  # its title entity has the most PPR mass
    assert varga.path is not None
    assert varga.path.node_ids[0] == seed and varga.path.node_ids[-1] == passage_id("varga")
    assert entity_id("elena varga") in varga.path.node_ids
    assert any("bridge" in n and "Elena Varga" in n for n in varga.notes)
    # scores are non-increasing and the reasoning context names the seed
    scores = [r.score for r in res.results]
    assert scores == sorted(scores, reverse=True)
    assert res.reasoning_context is not None
    assert [n.id for n in res.reasoning_context.root_nodes] == [seed]


def test_query_entity_linking_exact_fuzzy_and_type(text_kb: cef.KnowledgeBase) -> None:
    st = text_kb.state
    index = entity_index(st)
    plain = EntityLinkingSettings()
    exact = link_query_entities(index, st, "Who wrote Symphony of Tides?", plain)
    assert [(e.node_id, e.how) for e in exact] == [(entity_id("symphony of tides"), "exact")]
    typo = link_query_entities(index, st, "Where was Elena Vargaa born?", plain)
    assert entity_id("elena varga") in [e.node_id for e in typo]
    fuzzy = next(e for e in typo if e.node_id == entity_id("elena varga"))
    assert fuzzy.how == "fuzzy" and 0.85 * 0.9 <= fuzzy.confidence < 0.9
    assert (
        link_query_entities(index, st, "Where was Elena Vargaa born?", EntityLinkingSettings(fuzzy=False))
        == []
    )
    # by type: the person is a TITLE entity and (for spaCy) a PERSON; a type nobody has matches nothing
    assert link_query_entities(index, st, "Elena Varga", EntityLinkingSettings(entity_types=["GPE"])) == []
    assert link_query_entities(index, st, "Elena Varga", EntityLinkingSettings(entity_types=["TITLE"]))


def test_options_override_settings(text_kb: cef.KnowledgeBase) -> None:
    base = text_kb.retrieve(GraphQuery(query=QUESTION, strategy=SearchStrategy.PPR, top_k=5))
    # without the bridge and the dense seeds the ranking comes from entity-seeded PPR alone
    bare = text_kb.retrieve(
        GraphQuery(
            query=QUESTION,
            strategy=SearchStrategy.PPR,
            top_k=5,
            options={"ppr": {"bridge_weight": 0.0, "dense_seed_weight": 0.0}},
        )
    )
    assert all(not r.explanation.notes for r in bare.results)
    assert any(r.explanation.notes for r in base.results)
    assert [r.score for r in bare.results] != [r.score for r in base.results]
    with pytest.raises(ValidationError, match="damping"):
        text_kb.retrieve(GraphQuery(query=QUESTION, strategy=SearchStrategy.PPR, options={"damping": 1.5}))


def test_index_follows_graph_changes(text_kb: cef.KnowledgeBase) -> None:
    first = entity_index(text_kb.state)
    assert entity_index(text_kb.state) is first  # cached while the graph is unchanged
    from cef.ingest.enrich import EntityEnricher
    from cef.ingest.parsers.base import ParsedDocument
    from cef.model import Batch, Chunk

    doc = ParsedDocument(
        batch=Batch(
            chunks=[
                Chunk(
                    id="kodaly",
                    content="Zoltan Kodaly admired Elena Varga.",
                    metadata={"title": "Zoltan Kodaly"},
                )
            ]
        )
    )
    text_kb.indexer.upsert_batch(EntityEnricher(synonyms=False)(text_kb, doc).batch)
    second = entity_index(text_kb.state)
    assert second is not first
    assert len(second.passages) == len(first.passages) + 1
    res = text_kb.retrieve(GraphQuery(query="Who admired Elena Varga?", strategy=SearchStrategy.PPR, top_k=3))
    assert "kodaly" in [r.chunk.id for r in res.results]


def test_query_ner_runs_only_when_a_capitalized_word_is_not_a_known_name(
    text_kb_plain: cef.KnowledgeBase,
) -> None:
    st = text_kb_plain.state
    index = entity_index(st)
    index.extractor, index.ner_failed = None, False
    known = link_query_entities(index, st, "Who wrote Symphony of Tides?", EntityLinkingSettings())
    assert [e.node_id for e in known] == [entity_id("symphony of tides")]
    assert index.extractor is None and not index.ner_failed  # the gazetteer named it: spaCy was not asked
    link_query_entities(index, st, "Where was Elena Vargaa born?", EntityLinkingSettings())
    assert index.extractor is not None or index.ner_failed  # "Vargaa" is no known name: NER reads it


@pytest.mark.parametrize("k", [1, 3, 5])
def test_auto_reads_only_its_top_k_when_entity_seeded_ppr_answers_alone(
    text_kb: cef.KnowledgeBase, k: int
) -> None:
    deep = text_kb.retrieve(GraphQuery(query=QUESTION, strategy=SearchStrategy.PPR, top_k=30))
    auto = text_kb.retrieve(GraphQuery(query=QUESTION, top_k=k))
    route = auto.metadata["route"]["sources"]
    assert list(route) == ["ppr"] and auto.metadata["ppr_seeds"]["entities"] > 0
    assert route["ppr"]["results"] == k  # not the fusion depth: nothing else is fused beside it
    # the same chunks, order and explanations as the first k of the deep list
    assert [r.chunk.id for r in auto.results] == [r.chunk.id for r in deep.results[:k]]
    for a, d in zip(auto.results, deep.results, strict=False):
        assert a.explanation.path == d.explanation.path
        assert a.explanation.entities == d.explanation.entities
        assert a.explanation.notes[1:] == d.explanation.notes
    assert auto.reasoning_context is not None and len(auto.reasoning_context.paths) <= k


@given(st.integers(0, 300), st.sets(st.integers(0, 299), max_size=80), st.integers(0, 300))
def test_first_unreached_is_the_set_difference_head(n: int, cand: set[int], count: int) -> None:
    c = np.asarray(sorted(x for x in cand if x < n), dtype=np.int64)
    want = np.setdiff1d(np.arange(n), c)[:count]
    assert first_unreached(n, c, count).tolist() == want.tolist()
