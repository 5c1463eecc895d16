"""Retrieval settings, presets and per-query overrides."""

from __future__ import annotations

import pytest
from pydantic import ValidationError as PydanticValidationError

from cef import GraphQuery, SearchStrategy
from cef.errors import ValidationError
from cef.retrieve.presets import (
    BM25_ONLY,
    DEFAULT_CHAIN,
    GRAPH_FIRST,
    HYBRID_DEFAULT,
    PPR_DEFAULT,
    PRESETS,
    VECTOR_ONLY,
    GraphFirstSettings,
    PPRSettings,
    RetrievalPreset,
    settings_for,
)


def test_defaults_are_the_measured_recipe() -> None:
    s = PPRSettings()
    assert (s.damping, s.epsilon) == (0.5, 1e-5)
    assert (s.entity_seed_weight, s.dense_seeds, s.dense_seed_weight) == (1.0, 5, 0.5)
    assert (s.bridge_weight, s.bridge_top) == (0.4, 3)
    assert (s.linking.fuzzy_cutoff, s.linking.fuzzy_limit, s.linking.fuzzy_confidence) == (0.85, 2, 0.9)
    g = GraphFirstSettings()
    assert (g.vector_weight, g.graph_weight, g.bm25_weight, g.fusion) == (0.6, 0.4, 0.0, "weighted")


def test_validators() -> None:
    with pytest.raises(PydanticValidationError, match="damping"):
        PPRSettings(damping=1.0)
    with pytest.raises(PydanticValidationError, match="needs seeds"):
        PPRSettings(entity_seed_weight=0.0, dense_seed_weight=0.0)
    with pytest.raises(PydanticValidationError, match="must be > 0"):
        GraphFirstSettings(vector_weight=0, graph_weight=0, bm25_weight=0)
    with pytest.raises(PydanticValidationError, match="starts with"):
        RetrievalPreset(name="x", strategy=SearchStrategy.PPR, chain=[SearchStrategy.VECTOR])
    with pytest.raises(PydanticValidationError, match="not auto"):
        RetrievalPreset(name="x", strategy=SearchStrategy.AUTO, chain=[SearchStrategy.AUTO])
    with pytest.raises(PydanticValidationError, match="twice"):
        RetrievalPreset(
            name="x", strategy=SearchStrategy.BM25, chain=[SearchStrategy.BM25, SearchStrategy.BM25]
        )
    with pytest.raises(PydanticValidationError):
        GraphFirstSettings(depth=11)


def test_named_presets() -> None:
    assert set(PRESETS) == {"hybrid_default", "graph_first", "ppr_default", "vector_only", "bm25_only"}
    for preset in (HYBRID_DEFAULT, GRAPH_FIRST, PPR_DEFAULT, VECTOR_ONLY, BM25_ONLY):
        assert preset.chain[0] is preset.strategy
        assert preset.chain[-1] is SearchStrategy.BM25
    assert DEFAULT_CHAIN == [SearchStrategy.AUTO]  # the fused route of cef.retrieve.route
    q = GRAPH_FIRST.query("who wrote it?", top_k=3)
    assert q.strategy is SearchStrategy.GRAPH and q.options == {"preset": "graph_first"} and q.top_k == 3


def test_query_options_override_flat_nested_and_preset() -> None:
    q = GraphQuery(
        query="x",
        options={"damping": 0.7, "ppr": {"bridge_weight": 0.1}, "fuzzy_cutoff": 0.9, "vector_weight": 0.2},
    )
    s = settings_for(PPRSettings, q)
    assert (s.damping, s.bridge_weight, s.linking.fuzzy_cutoff) == (0.7, 0.1, 0.9)
    g = settings_for(GraphFirstSettings, q)
    assert g.vector_weight == 0.2 and g.linking.fuzzy_cutoff == 0.9
    # nested beats flat; unknown keys of another strategy are ignored when flat, refused when nested
    q2 = GraphQuery(query="x", options={"graph": {"depth": 3}, "depth": 1})
    assert settings_for(GraphFirstSettings, q2).depth == 3
    with pytest.raises(ValidationError, match="options: nope"):
        settings_for(PPRSettings, GraphQuery(query="x", options={"ppr": {"nope": 1}}))
    with pytest.raises(ValidationError, match="unknown preset"):
        settings_for(PPRSettings, GraphQuery(query="x", options={"preset": "fast"}))
    with pytest.raises(ValidationError, match="must be an object"):
        settings_for(PPRSettings, GraphQuery(query="x", options={"ppr": 3}))
