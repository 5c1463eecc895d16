"""The dialogue stage's settings (:mod:`cef.retrieve.dialogue`): how turns of a conversation are
searched, fused and weighed. Re-exported by :mod:`cef.retrieve.presets` with every other settings model."""

from __future__ import annotations

from pydantic import Field

from cef.retrieve.settingsbase import Settings as _Settings

__all__ = ["DialogueSettings"]


class DialogueSettings(_Settings):
    """Conversation turns in the ``auto`` route (see :mod:`cef.retrieve.dialogue`): the weights of
    the vector and BM25 lists in ``Σ weight / (fuse_k + rank)`` (each read ``depth`` deep), of the
    session prior (``session`` × the session's score from its best ``session_turns`` turns among
    the ``session_depth`` best BM25 hits, relative to the best session's) and of the speaker the
    question names (``1 + speaker`` times), and the share of the neighbouring turns' fused score a
    turn gains (``neighbours``). Fitted leave-one-conversation-out on LoCoMo's five shared
    conversations (``bench/fit_locomo.py``, grid session {0.5, 1} × session_turns {3, 5} ×
    neighbours {0.25, 0.5} × speaker {0.5, 1}, criterion Recall@5 on the other four): three folds
    chose session 0.5, session_turns 3, neighbours 0.25, speaker 1, the point chosen on all five and
    the defaults here; held out, R@5 / R@10 / session Hit@1 73.7 / 80.9 / 76.8. The weights of
    questions about several occasions (``several_*``) were fitted after, the others fixed, on
    Recall@10 (``--grid several``); held out 74.3 / 81.5 / 76.7. Each field says where its value
    comes from (``bench/README.md``, Conversations, has the passes)."""

    vector: float = Field(
        default=1.0,
        ge=0.0,
        description="weight of the vector list (0.7 / 1 / 1.5 checked on all five, in sample: 1)",
    )
    bm25: float = Field(default=1.0, ge=0.0, description="weight of the BM25 list (the reference weight)")
    fuse_k: float = Field(
        default=5.0,
        gt=0.0,
        description="k of the reciprocal rank fusion (5 / 10 checked on all five, in sample: 5)",
    )
    depth: int = Field(
        default=30, ge=1, le=1000, description="each list read this deep (30 against 50: same recall, faster)"
    )
    session: float = Field(
        default=0.5,
        ge=0.0,
        description="weight of the session prior (LOCO grid 0.5 / 1: every fold of the second and third "
        "passes but one chose 0.5)",
    )
    session_turns: int = Field(
        default=3,
        ge=1,
        le=1000,
        description="a session scores by its best this many BM25 hits (LOCO grid 3 / 5, third pass: 3)",
    )
    session_depth: int = Field(
        default=100,
        ge=1,
        le=10_000,
        description="BM25 hits read for the session prior (100 against 200: same recall, faster)",
    )
    speaker: float = Field(
        default=1.0,
        ge=0.0,
        description="the speaker the question names counts 1 + speaker times (LOCO grid 0.5 / 1, third "
        "pass: 1)",
    )
    date: float = Field(
        default=1.0,
        ge=0.0,
        description="turns said on (or naming) a date the question names count 1 + date times (LOCO grid "
        "0 / 1, first pass: 1)",
    )
    when_other: float = Field(
        default=0.0,
        ge=0.0,
        description="for such a question, turns that name only dates on the other side of the day they were "
        "said (a plan, for a question about what happened; what happened, for one about a plan) count 1 + "
        "when_other times. LOCO grid 0 / 0.25 / 0.5 × when 0.5 / 1, criterion session Hit@1 (bench/"
        "fit_locomo.py --grid when_other), seventh pass: every fold chose 0 and 0.5",
    )
    when: float = Field(
        default=0.5,
        ge=0.0,
        description="for a question that asks when (dialoguequestion.asks_when), turns that name a date (a resolved "
        "relative or calendar date in what was said) count 1 + when times. LOCO grid 0 / 0.1 / 0.25 / 0.5 / 1, "
        "criterion session Hit@1 (bench/fit_locomo.py --grid when), seventh pass: every fold chose 0.5",
    )
    several_session: float = Field(
        default=0.25,
        ge=0.0,
        description="weight of the session prior for a question about several occasions (dialogue."
        "asks_several: its evidence is spread over sessions). LOCO grid 0 / 0.25 / 0.5 × several_diversity, "
        "criterion Recall@10 (bench/fit_locomo.py --grid several --criterion recall@10): three folds and the "
        "point chosen on all five: 0.25",
    )
    several_speaker: float = Field(
        default=2.0,
        ge=0.0,
        description="for a question about several occasions naming one speaker, that speaker's turns below "
        "its best turn count 1 + this times more (dialogue._speaker_below_best; the best turn stays first). "
        "LOCO grid 0 / 1 / 2 / 4 / 8, criterion Recall@10 (bench/fit_locomo.py --grid several_speaker), "
        "eighth pass: four folds chose 2, one 1; held out R@5 / R@10 / Hit@1 74.8 / 82.6 / 80.1 (0: 74.9 / "
        "82.4 / 80.1)",
    )
    several_diversity: float = Field(
        default=0.7,
        gt=0.0,
        le=1.0,
        description="for such a question, a turn's score × this per turn of its session ranked before it "
        "(1: no diversity). Same grid (0.7 / 1): two folds and the point chosen on all five: 0.7",
    )
    phrase: float = Field(
        default=0.5,
        ge=0.0,
        description="BM25 also scores each two content words the question says in order close together "
        "(at most one between), said so in a turn ('support group'), × this (LOCO grid 0.25 / 0.5 / 1, "
        "criterion session Hit@1, fifth pass: every fold: 0.5)",
    )
    several_feedback: float = Field(
        default=0.25,
        ge=0.0,
        description="for a question about several occasions, weight of the second round's BM25 list (the "
        "first round's best turns' heaviest stems; dialogue._second_round). LOCO grid 0 / 0.25 × feedback 0 / "
        "0.1, criterion session Hit@1 (bench/fit_locomo.py --grid feedback), sixth pass: every fold chose 0.25",
    )
    feedback: float = Field(
        default=0.0,
        ge=0.0,
        description="the same for every other question, the first round's best turn kept first (0.1: "
        "Recall@10 +0.5, Recall@5 -0.2 on all five; chosen by no fold on session Hit@1: 0)",
    )
    feedback_turns: int = Field(
        default=3,
        ge=1,
        le=100,
        description="the first round's best turns the second round reads (not fitted)",
    )
    feedback_terms: int = Field(
        default=5,
        ge=1,
        le=100,
        description="the heaviest stems of those turns it searches for (not fitted)",
    )
    neighbours: float = Field(
        default=0.25,
        ge=0.0,
        description="a turn gains this share of the better fused score of the turns before and after it "
        "(LOCO grid 0.25 / 0.5, second and third passes: 0.25)",
    )
