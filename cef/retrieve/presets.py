"""Retrieval settings as pydantic models, and named presets.

The graph strategies read their settings from these models; a query may
override any of them in :attr:`~cef.model.GraphQuery.options`, either nested
under the strategy's key or flat::

    GraphQuery(query="...", strategy="ppr", options={"ppr": {"damping": 0.7}})
    GraphQuery(query="...", strategy="graph", options={"vector_weight": 0.5, "graph_weight": 0.5})
    GraphQuery(query="...", options={"preset": "graph_first"})   # start from a preset's settings

A :class:`RetrievalPreset` bundles a strategy, its fallback chain and the
settings of every strategy; :data:`PRESETS` holds the named ones
(:data:`HYBRID_DEFAULT`, :data:`GRAPH_FIRST`, :data:`PPR_DEFAULT`,
:data:`VECTOR_ONLY`, :data:`BM25_ONLY`). :data:`DEFAULT_CHAIN` is what
``strategy=auto`` runs (chosen by measurement: see ``bench/README.md``).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import Field, model_validator
from pydantic import ValidationError as PydanticValidationError

from cef.errors import ValidationError
from cef.model import GraphQuery, SearchStrategy
from cef.retrieve.anchorsettings import AnchorSettings
from cef.retrieve.dialoguesettings import DialogueSettings
from cef.retrieve.pathsettings import PathSettings
from cef.retrieve.settingsbase import EntityLinkingSettings
from cef.retrieve.settingsbase import Settings as _Settings

__all__ = [
    "BM25_ONLY",
    "DEFAULT_CHAIN",
    "GRAPH_FIRST",
    "HYBRID_DEFAULT",
    "PPR_DEFAULT",
    "PRESETS",
    "VECTOR_ONLY",
    "AnchorSettings",
    "AutoSettings",
    "DialogueSettings",
    "EntityLinkingSettings",
    "GraphFirstSettings",
    "HybridSettings",
    "PPRSettings",
    "PathSettings",
    "RelevanceSettings",
    "RetrievalPreset",
    "settings_for",
]


class PPRSettings(_Settings):
    """Personalized PageRank over the entity–passage (MENTIONS) graph.

    Seeds: the question's entities (each ∝ link confidence × log(1 + N/df),
    together ``entity_seed_weight``) and the ``dense_seeds`` passages closest to
    the question (∝ cosine − the k-th cosine + 0.001, together
    ``dense_seed_weight``). Passages are ranked by min-max PPR score plus
    ``bridge_weight`` × bonus × min-max cosine, where the bonus goes to passages
    titled by an entity of one of the ``bridge_top`` best passages.
    """

    damping: float = Field(default=0.5, gt=0.0, lt=1.0)
    epsilon: float = Field(
        default=1e-5,
        gt=0.0,
        le=1.0,
        description="forward-push residual bound: a node's score is at most epsilon × its weighted degree "
        "below exact PPR (smaller: closer to exact, more nodes touched; see cef.graph.push)",
    )
    entity_seed_weight: float = Field(default=1.0, ge=0.0)
    dense_seeds: int = Field(default=5, ge=0, le=1000)
    dense_seed_weight: float = Field(default=0.5, ge=0.0)
    bridge_weight: float = Field(default=0.4, ge=0.0)
    bridge_top: int = Field(default=3, ge=0, le=1000)
    path_depth: int = Field(
        default=3, ge=0, le=8, description="edges of the explaining path from a seed entity to a passage"
    )
    explain_entities: int = Field(default=10, ge=0, le=1000, description="entity names per result")
    related_entities: int = Field(default=10, ge=0, le=1000, description="related entities in metadata")
    linking: EntityLinkingSettings = Field(default_factory=EntityLinkingSettings)

    @model_validator(mode="after")
    def _some_seed(self) -> PPRSettings:
        if self.entity_seed_weight <= 0 and (self.dense_seed_weight <= 0 or self.dense_seeds == 0):
            raise ValueError("PPR needs seeds: give entity_seed_weight > 0 or dense seeds with a weight > 0")
        return self


class HybridSettings(_Settings):
    """The ``hybrid`` strategy: chunks linked to the nodes the anchored traversal reached, each scored
    ``text_weight × text similarity + (1 − text_weight) × graph score``, where the graph score is the
    anchor's score × the path's confidence × ``hop_decay`` per hop."""

    text_weight: float = Field(
        default=0.6, ge=0.0, le=1.0, description="the text similarity's share (vector, or BM25 without one)"
    )
    hop_decay: float = Field(default=0.7, gt=0.0, le=1.0, description="the graph score's factor per hop")


class AutoSettings(_Settings):
    """The ``auto`` route (see :mod:`cef.retrieve.route`): each source's weight in the reciprocal-rank
    fusion ``Σ weight / (fuse_k + rank)``, and how deep each source's list is read (``fuse_depth``).

    ``fuse_paths_confident`` replaces ``fuse_paths`` when the path answer is confident: question
    words name at least ``confident_named`` of the hops of the best relation path, from an anchor
    linked with at least ``confident_anchor`` confidence (a curated graph that answers the
    question outright leads the fusion); ``fuse_paths_unnamed`` when they name none.
    """

    fuse_paths: float = Field(default=1.0, ge=0.0)
    fuse_paths_confident: float = Field(default=3.0, ge=0.0)
    confident_named: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="share of the best path's hops the question must name to lead",
    )
    confident_anchor: float = Field(
        default=0.8, ge=0.0, le=1.0, description="how surely the best path's anchor must be linked to lead"
    )
    fuse_paths_unnamed: float = Field(
        default=0.25,
        ge=0.0,
        description="paths' weight when no question word names a relation of the best path",
    )
    fuse_hybrid: float = Field(default=1.0, ge=0.0)
    fuse_ppr: float = Field(default=1.0, ge=0.0)
    fuse_ppr_dense: float = Field(
        default=0.5, ge=0.0, description="PPR's weight when no question entity seeded it (dense seeds only)"
    )
    fuse_vector: float = Field(default=0.5, ge=0.0)
    fuse_bm25: float = Field(default=0.25, ge=0.0)
    fuse_k: float = Field(default=10.0, gt=0.0)
    fuse_depth: int = Field(default=30, ge=1, le=1000)


class RelevanceSettings(_Settings):
    """How relevance (:mod:`cef.retrieve.relevance`) weighs the evidence, and where "nothing matched"
    starts. The rule's weights were chosen on seen dev sets with ``bench/bench_relevance.py``: the
    off-topic questions of ``bench/offtopic/questions.yaml`` and the shipped questions of
    ``examples/clinical`` and ``examples/services``, the notes vault's own questions
    (``tests/unit/retrieve/notes_questions.yaml``) and the answerable LoCoMo questions of two
    conversations (none must say "nothing matched"); the calibration was fitted on twelve domains
    (``bench/bench_relevance_pool.py``, ``bench/fit_relevance.py``) and is reported leave-one-domain-out.
    No value was chosen on a set scored as unseen."""

    threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="below this relevance (best chunk and best answer node) the result says 'nothing "
        "matched' and has no answer nodes; answer nodes below it are dropped. 0.5: even odds that the "
        "result answers the question (the relevance is calibrated, see calibration); without a "
        "calibration, a result tied to a thing the question names must hold about 30 % of what is "
        "asked (0.3 + 0.7 x 0.29)",
    )
    floor: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="what a result tied to a thing the question names is worth when nothing of what is "
        "asked about it is held (the thing is there, what is asked is not); also the weight of the "
        "coverage of a result tied to nothing the question names (kept from the first version)",
    )
    unheld_properties: bool = Field(
        default=True,
        description="a word of what is asked that only a property key of the knowledge base holds "
        "('the brand name of amiodarone') counts as held nowhere when the named things' kind carries "
        "that property and none of them has it, or their kind never carries it and no answer node was "
        "found (the knowledge base lacks the fact asked), unless the result's own text shows the word; "
        "chosen by hand on the dev off-topic sets (bench/offtopic, issue 27 wave 9), not fitted",
    )
    unheld_relations: bool = Field(
        default=False,
        description="a word of what is asked that names a relation type (the path scorer's relation words) "
        "counts as held nowhere when no named thing has an edge of it while other nodes of their kind do "
        "(cef/retrieve/relevance_relations.py; 'which database does the pricing service store its data in' "
        "when only other services store data), unless an answer's path whose every hop the question names "
        "walks it or passes a node that has it ('which actors starred in the films directed by the director "
        "of X'). Off by default: on the dev pool (clinical, services, notes) it catches 2 more off-topic "
        "questions of 660 (75.5 -> 75.8 %) and moves no on-topic verdict, but on MetaQA (first 300 per hop "
        "file) it says 'nothing matched' to 12 of 900 questions, 9 of them wrong answers and 3 right ones "
        "(a film the triples give no director, reached through its writer): Hits@1 2 hops 94.3 -> 93.7, "
        "3 hops 93.3 -> 92.7; issue 27 waves 10 and 12",
    )
    elsewhere: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="credit of a question word the result does not hold but the knowledge base holds "
        "somewhere else, or of an absent word that names no thing (the question's phrasing): half, "
        "neither evidence for nor against (kept from the first version)",
    )
    df_cap: int = Field(
        default=20,
        ge=1,
        le=10_000,
        description="text hits counted (in chunks, and in nodes) to estimate a word's document "
        "frequency; its weight is ln(1 + N / (1 + df)), N the chunks and nodes. Words in 20 or more "
        "records are common alike; a cap bounds the cost of each word's look-up on a large store",
    )
    synonym: float = Field(
        default=0.65,
        ge=0.0,
        le=1.01,
        description="an absent word whose embedding reaches this cosine with a label or a relation "
        "(name or description) means it and is held ('skipper' / captains 0.68, 'agreements' / "
        "contract 0.71); 0.65 is above every off-topic word of the dev sets (at most 0.61: "
        "'customer' / service, 'hospital' / doctor); above 1: no synonyms",
    )
    vouch: float = Field(
        default=1.01,
        ge=0.0,
        le=1.01,
        description="when no result reaches the threshold, a question word no record holds (not an "
        "instance's name) is held by a result whose own things (the names of its node, its path's nodes "
        "and an answer node, not the things the question names; the relations on its path) reach this "
        "cosine with the word or the word and its neighbour ('Zestril' / Lisinopril 0.59, 'painkiller' / "
        "Ibuprofen 0.53; cef.retrieve.vouch). Off by default (above 1): at 0.5 on the pooled dev sets "
        "(clinical, services, notes: bench/bench_relevance_pool.py, questions.yaml to questions-6) it "
        "answered 5 more on-topic questions (6.7 -> 5.4 % wrongly 'nothing matched') and 13 more written "
        "off-topic ones (83.1 -> 79.4 % caught): with MiniLM the off-topic words are as close to some "
        "tied thing ('methotrexate' / Metformin 0.66, 'research vessel' 0.73) as the paraphrases",
    )
    calibration: tuple[float, float] | None = Field(
        default=(-4.747, 9.677),
        description="(intercept, rule): each result's relevance is the logistic 1 / (1 + exp(-(intercept "
        "+ rule x its rule relevance))), the probability that it answers the question, so the threshold "
        "0.5 is even odds (a rule relevance of 0.49). Fitted by bench/fit_relevance.py (--cost 3 --own 2 "
        "--lexical --features rule) on bench/bench_relevance_pool.py's verdicts: twelve knowledge bases "
        "(the three shipped examples, the seven curated graphs, MetaQA's first 100 questions per hop "
        "file, LoCoMo's conversations conv-26 and conv-30), each asked its own questions, the off-topic "
        "ones written for it and the other domains' questions (4,267 in all); per knowledge base its "
        "on-topic questions weigh 3 (a wrong 'nothing matched' hides answers), the off-topic ones "
        "written for it 2, the other domains' 1. Leave-one-domain-out: 2.1 % of on-topic questions "
        "wrongly 'nothing matched', 87.5 % of the written off-topic and 94.8 % of the cross-domain ones. "
        "Fitted beside it, the named thing's link confidence, the share of what is asked that the "
        "knowledge base holds nowhere and the best chunk's cosine did not do better on a domain left "
        "out. None: the rule relevance itself",
    )
    evidence: tuple[float, float, float, float] | None = Field(
        default=None,
        description="coefficients the calibration's logistic adds for the question's own evidence "
        "(metadata.relevance.features): (named, absent, unnamed_absent, named x absent), named being the "
        "best link confidence of a thing the question names, absent the weighted share of what it asks "
        "held nowhere, unnamed_absent (1 - named) x absent; the same for every result of one question, "
        "so results keep their order. None (the default): the rule relevance alone (see calibration). "
        "Fitted by bench/fit_relevance.py --features rule,named,absent,unnamed_absent,named*absent on 20 "
        "dev knowledge bases; held out (one question set or one knowledge base left out) it did not beat "
        "the rule calibration on both sides (on-topic wrongly 3.9 -> 4.8 / 4.2 %, written off-topic caught "
        "79.1 -> 76.2 / 78.9 %), so it is off",
    )
    support: bool = Field(
        default=False,
        description="measure semantic support (cef.retrieve.support: the best cosine of the question's "
        "remainder, the words its named things leave, with the results' chunks, answer nodes and path "
        "relations) and report it in the verdict's features. Off by default: it changes no verdict and "
        "costs one embedding per question. Fitted beside the rule on the pooled dev sets (16 knowledge "
        "bases, bench/fit_relevance.py --features rule,support, leave-one-domain-out) it moved on-topic "
        "wrongly 'nothing matched' 3.2 -> 2.9 % but the written off-topic caught 77.0 -> 75.2 %: with "
        "MiniLM a short remainder ('appear in', 'runs') is as far from the relation that answers it as "
        "an asked-for relation the knowledge base lacks ('blood type')",
    )
    credit_speakers: bool = Field(
        default=True,
        description="when the question names one speaker of a conversation, another speaker's turn that "
        "neither names nor addresses them ('you') is worth floor x its relevance: what Caroline said of "
        "herself does not answer a question about Melanie (cef.retrieve.credit)",
    )
    phrase_words: int = Field(
        default=3,
        ge=0,
        le=20,
        description="content words after a determiner, possessive or preposition read as the noun "
        "phrase it opens (it ends earlier at a label word of the knowledge base or a verb); 3 holds "
        "'the monthly hosting cost' and 'the loyalty points service'",
    )

    @model_validator(mode="after")
    def _calibration_keeps_order(self) -> RelevanceSettings:
        if self.calibration is not None and self.calibration[1] <= 0:
            raise ValueError(
                "calibration: the rule relevance's coefficient must be > 0 (relevance keeps its order)"
            )
        return self


class GraphFirstSettings(_Settings):
    """The graph-first pipeline (seed 001): entities → traversal → chunks → vector/BM25 → combine.

    ``depth``: hops from the question's entities (None: the query's
    ``traversal.depth``; 0–3 usual, up to 10 on request). Edges below
    ``min_confidence`` and paths whose confidence product falls below
    ``min_path_confidence`` are not followed (the query's traversal hint may
    raise both). ``relation_types``: relations to traverse (empty: the query's,
    else every relation except MENTIONS and CO_OCCURS_WITH, which have their own
    steps). ``cooccurrence``: add the ``max_cooccurring`` entities most often
    mentioned with each query entity. Chunks score ``vector_weight`` × cosine +
    ``graph_weight`` × graph relevance + ``bm25_weight`` × BM25 (normalized), or
    reciprocal-rank fusion with ``fusion="rrf"``.
    """

    depth: int | None = Field(default=None, ge=0, le=10)
    min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    min_path_confidence: float = Field(default=0.1, ge=0.0, le=1.0)
    relation_types: list[str] = Field(default_factory=list)
    cooccurrence: bool = True
    max_cooccurring: int = Field(default=10, ge=0, le=10_000)
    hop_decay: float = Field(default=0.7, gt=0.0, le=1.0)
    vector_weight: float = Field(default=0.6, ge=0.0)
    graph_weight: float = Field(default=0.4, ge=0.0)
    bm25_weight: float = Field(default=0.0, ge=0.0)
    fusion: Literal["weighted", "rrf"] = "weighted"
    rrf_k: float = Field(default=60.0, gt=0.0)
    expand_query: bool = True
    expansion_terms: int = Field(default=5, ge=0, le=100)
    candidates: int = Field(default=100, ge=1, le=100_000, description="vector and BM25 hits considered")
    max_graph_nodes: int = Field(default=500, ge=1, le=1_000_000)
    linking: EntityLinkingSettings = Field(default_factory=EntityLinkingSettings)

    @model_validator(mode="after")
    def _weights(self) -> GraphFirstSettings:
        if self.vector_weight + self.graph_weight + self.bm25_weight <= 0:
            raise ValueError("at least one of vector_weight, graph_weight and bm25_weight must be > 0")
        return self


class WalkSettings(_Settings):
    """The best-first walk's constants. They are the memory walk's, set by hand when it was written
    and kept since: the memory tests (``tests/unit/memory``), the five domain cases and
    ``bench/bench_memory.py`` are scored with them; none was fitted on a benchmark's questions. The
    route's anchored traversal uses the same ones (query option ``walk``), and ``order`` chooses it."""

    hop_decay: float = Field(
        default=0.7, gt=0.0, le=1.0, description="priority kept per hop away from a seed"
    )
    unnamed_relation: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="a relation the question does not name keeps this share of the priority (named: up to 1)",
    )
    unnamed_type: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="a node of a type the question does not name keeps this share (named, or none named: 1)",
    )
    sim_base: float = Field(
        default=0.4,
        ge=0.0,
        le=1.0,
        description="neighbour priority × clip(sim_base + sim_slope × likeness, sim_base, 1)",
    )
    sim_slope: float = Field(default=1.2, ge=0.0, description="see sim_base")
    fanout: int = Field(
        default=48, ge=1, le=100_000, description="most neighbours of one node offered to the queue"
    )
    batch: int = Field(
        default=8, ge=1, le=10_000, description="nodes taken from the queue and expanded together"
    )
    order: Literal["breadth", "best"] = Field(
        default="best",
        description="the route's anchored traversal (query option walk.order): 'best' this walk, 'breadth' "
        "every node within the depth in hop order. 'best' by measurement: the hybrid strategy on musique-100 "
        "/ 2wiki-dev R@5 58.7 / 72.9 (breadth) against 58.6 / 73.4, R@10 70.0 / 79.5 against 70.4 / 81.0, "
        "p95 1060 / 297 ms against 728 / 140 ms (bench/README.md); the memory's retrieve_context walks "
        "best first too",
    )


class RetrievalPreset(_Settings):
    """A named retrieval setup: the strategy to run, its fallback chain, and each strategy's settings."""

    name: str = Field(min_length=1, pattern=r"^[a-z][a-z0-9_]*$")
    strategy: SearchStrategy
    chain: list[SearchStrategy] = Field(min_length=1)
    graph_first: GraphFirstSettings = Field(default_factory=GraphFirstSettings)
    ppr: PPRSettings = Field(default_factory=PPRSettings)
    paths: PathSettings = Field(default_factory=PathSettings)
    hybrid: HybridSettings = Field(default_factory=HybridSettings)
    auto: AutoSettings = Field(default_factory=AutoSettings)
    dialogue: DialogueSettings = Field(default_factory=DialogueSettings)
    walk: WalkSettings = Field(default_factory=WalkSettings)
    relevance: RelevanceSettings = Field(default_factory=RelevanceSettings)
    anchors: AnchorSettings = Field(default_factory=AnchorSettings)
    description: str = ""

    @model_validator(mode="after")
    def _chain(self) -> RetrievalPreset:
        if SearchStrategy.AUTO in self.chain:
            raise ValueError("a chain lists concrete strategies, not auto")
        if self.strategy is not SearchStrategy.AUTO and self.chain[0] is not self.strategy:
            raise ValueError(f"the chain of a {self.strategy.value} preset starts with {self.strategy.value}")
        if len(set(self.chain)) != len(self.chain):
            raise ValueError("a strategy appears twice in the chain")
        return self

    def query(self, text: str, **fields: Any) -> GraphQuery:
        """A :class:`GraphQuery` that runs this preset (its strategy and settings)."""
        options = dict(fields.pop("options", {}) or {})
        options.setdefault("preset", self.name)
        return GraphQuery(query=text, strategy=self.strategy, options=options, **fields)


HYBRID_DEFAULT = RetrievalPreset(
    name="hybrid_default",
    strategy=SearchStrategy.HYBRID,
    chain=[SearchStrategy.HYBRID, SearchStrategy.VECTOR, SearchStrategy.BM25],
    description="anchors from the question, graph traversal, vector ranking within the reached nodes' chunks",
)
GRAPH_FIRST = RetrievalPreset(
    name="graph_first",
    strategy=SearchStrategy.GRAPH,
    chain=[SearchStrategy.GRAPH, SearchStrategy.VECTOR, SearchStrategy.BM25],
    description="seed 001: query entities, traversal and co-occurrence, then vector + graph relevance",
)
PPR_DEFAULT = RetrievalPreset(
    name="ppr_default",
    strategy=SearchStrategy.PPR,
    chain=[SearchStrategy.PPR, SearchStrategy.VECTOR, SearchStrategy.BM25],
    description="personalized PageRank over the entity–passage graph from query entities and dense hits",
)
VECTOR_ONLY = RetrievalPreset(
    name="vector_only",
    strategy=SearchStrategy.VECTOR,
    chain=[SearchStrategy.VECTOR, SearchStrategy.BM25],
    description="cosine similarity of chunk embeddings (BM25 when there are no vectors)",
)
BM25_ONLY = RetrievalPreset(
    name="bm25_only",
    strategy=SearchStrategy.BM25,
    chain=[SearchStrategy.BM25],
    description="full-text BM25 over chunk text",
)

PRESETS: dict[str, RetrievalPreset] = {
    p.name: p for p in (HYBRID_DEFAULT, GRAPH_FIRST, PPR_DEFAULT, VECTOR_ONLY, BM25_ONLY)
}

#: what ``strategy=auto`` runs: the fused route of :mod:`cef.retrieve.route` (typed relation paths,
#: anchored traversal when the query has hints, PPR over the text graph, vector and BM25, each where
#: it applies, by weighted reciprocal rank); it needs no fallback of its own
DEFAULT_CHAIN: list[SearchStrategy] = [SearchStrategy.AUTO]

S = TypeVar("S", bound=_Settings)

#: option keys under which each settings model may be given as a nested object
_KEYS: dict[type[_Settings], tuple[str, str]] = {
    PPRSettings: ("ppr", "ppr"),
    GraphFirstSettings: ("graph_first", "graph"),
    PathSettings: ("paths", "paths"),
    HybridSettings: ("hybrid", "hybrid"),
    AutoSettings: ("auto", "auto"),
    DialogueSettings: ("dialogue", "dialogue"),
    WalkSettings: ("walk", "walk"),
    RelevanceSettings: ("relevance", "relevance"),
    AnchorSettings: ("anchors", "anchors"),
}
_ATTR = {
    PPRSettings: "ppr",
    GraphFirstSettings: "graph_first",
    PathSettings: "paths",
    HybridSettings: "hybrid",
    AutoSettings: "auto",
    DialogueSettings: "dialogue",
    WalkSettings: "walk",
    RelevanceSettings: "relevance",
    AnchorSettings: "anchors",
}


def settings_for(model: type[S], query: GraphQuery) -> S:
    """The settings of a strategy for one query: the preset's (``options["preset"]``, default
    the strategy's own), overridden by flat option keys that name a field, then by the nested
    object under the strategy's key. Raises :class:`~cef.errors.ValidationError` on bad values."""
    options = query.options or {}
    preset_name = options.get("preset")
    attr = _ATTR.get(model)
    if attr is None:
        raise TypeError(f"no settings key for {model.__name__}")
    if preset_name is not None:
        preset = PRESETS.get(str(preset_name))
        if preset is None:
            raise ValidationError(
                f"unknown preset {preset_name!r}; known presets: {', '.join(sorted(PRESETS))}"
            )
        base: dict[str, Any] = getattr(preset, attr).model_dump()
    else:
        base = model().model_dump()
    flat = {k: v for k, v in options.items() if k in model.model_fields}
    linking_flat = {k: v for k, v in options.items() if k in EntityLinkingSettings.model_fields}
    nested: dict[str, Any] = {}
    for key in _KEYS[model]:
        value = options.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise ValidationError(f"options[{key!r}] must be an object of {model.__name__} fields")
        nested.update(value)
    merged = {**base, **flat, **nested}
    if linking_flat:
        merged["linking"] = {**dict(merged.get("linking") or {}), **linking_flat}
    try:
        return model.model_validate(merged)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or model.__name__
        raise ValidationError(f"options: {where}: {str(err['msg']).removeprefix('Value error, ')}") from None
