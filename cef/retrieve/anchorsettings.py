"""The anchor stage's settings (:class:`AnchorSettings`), kept apart from :mod:`cef.retrieve.presets`
(which re-exports it) because it holds every weight and count of :mod:`cef.retrieve.anchors`, each with
where its value came from."""

from __future__ import annotations

from pydantic import Field

from cef.retrieve.settingsbase import Settings as _Settings

__all__ = ["AnchorSettings"]


class AnchorSettings(_Settings):
    """How the nodes a search starts from are found (:mod:`cef.retrieve.anchors`): the route's target
    resolution (:func:`~cef.retrieve.anchors.resolve_target`) and the stage a caller that reads the
    question hands what it read (:func:`~cef.retrieve.anchors.anchor_stage`, the memory's anchors).

    Each description says what the value does and where it came from. Most were set by hand when the
    code was first written and have never been fitted: the history (``git log -S``) shows no commit or
    bench/README.md measurement that chose them; they are kept because the memory's facts digest
    (``bench/bench_memory.py --nodes 20000``) and the dev sets were measured with them.
    """

    # -------------------------------------------------------------- target resolution (the route)
    min_vector_score: float = Field(
        default=0.35,
        ge=-1.0,
        le=1.0,
        description="a target's vector match below this cosine is not trusted as an anchor; set by hand in "
        "c9987f8 (the core engine, MIN_VECTOR_SCORE), not fitted",
    )
    min_fuzzy: float = Field(
        default=85,
        ge=0,
        le=100,
        description="a fuzzy name match (rapidfuzz ratio, 0..100) below this is ignored; set by hand in "
        "c9987f8 (the core engine, MIN_FUZZY), not fitted",
    )
    allowed_share: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="a scope keeping more than this share of the live nodes searches every vector and drops "
        "the others, a smaller one searches its own nodes only (a speed switch, not a ranking weight); set by "
        "hand in a8b5fbc (the memory's faster retrieval, ALLOWED_SHARE), not fitted",
    )
    # -------------------------------------------------------------- a caller's reading (anchor_stage)
    question_min_vector: float = Field(
        default=0.3,
        ge=-1.0,
        le=1.0,
        description="a question-vector or passage match below this cosine is not an anchor (a mention's: "
        "this + 0.1); set by hand in 94a794f (the memory, issue 6, as MIN_VECTOR in cef/memory), moved to "
        "cef/retrieve/anchors.py in 6d197c5 (digest unchanged), not fitted",
    )
    vector_share: float = Field(
        default=0.9,
        ge=0.0,
        description="share of its cosine the question's nearest node keeps as an anchor score (also a named "
        "type's nearest, plus type_bonus); set by hand in 94a794f (cef/memory), moved in 6d197c5, not fitted",
    )
    mention_share: float = Field(
        default=0.8,
        ge=0.0,
        description="share of its cosine a mention's nearest node keeps (a name an extractor found that "
        "matches no node); set by hand in 94a794f (cef/memory), moved in 6d197c5, not fitted",
    )
    chunk_vector_share: float = Field(
        default=0.6,
        ge=0.0,
        description="share of a chunk's cosine to the question its node keeps as an anchor; set by hand in "
        "94a794f (cef/memory), moved in 6d197c5, not fitted",
    )
    chunk_text_share: float = Field(
        default=0.5,
        ge=0.0,
        description="share of a chunk's BM25 score (over the best chunk's) its node keeps as an anchor; set "
        "by hand in 94a794f (cef/memory), moved in 6d197c5, not fitted",
    )
    type_bonus: float = Field(
        default=0.05,
        ge=0.0,
        description="added to the score of a nearest node of a type the question names; set by hand in "
        "94a794f (cef/memory), moved in 6d197c5, not fitted",
    )
    question_k: int = Field(
        default=8,
        ge=0,
        description="nearest nodes asked for the whole question; set by hand in 94a794f (cef/memory), moved "
        "in 6d197c5, not fitted",
    )
    type_k: int = Field(
        default=6,
        ge=0,
        description="nearest nodes asked per named type; set by hand in 94a794f (cef/memory), moved in "
        "6d197c5, not fitted",
    )
    mention_k: int = Field(
        default=3,
        ge=0,
        description="nearest nodes asked per mention; set by hand in 94a794f (cef/memory), moved in 6d197c5, "
        "not fitted",
    )
    chunk_k: int = Field(
        default=8,
        ge=0,
        description="chunks asked by vector and by BM25 (each) whose nodes become anchors; set by hand in "
        "94a794f (cef/memory), moved in 6d197c5, not fitted",
    )
