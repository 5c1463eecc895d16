"""The path stage's settings (:class:`PathSettings`), kept apart from :mod:`cef.retrieve.presets`
(which re-exports it) because it holds every weight of the path score, each with where its value came from."""

from __future__ import annotations

from pydantic import Field

from cef.retrieve.settingsbase import EntityLinkingSettings
from cef.retrieve.settingsbase import Settings as _Settings

__all__ = ["PathSettings"]


class PathSettings(_Settings):
    """Typed relation-path reasoning (the PATHS strategy, see :mod:`cef.retrieve.relpaths`).

    Every weight of the path score (:mod:`cef.retrieve.pathscore`) and of the answers and chunks
    built from it is a field here; each description says what it weighs and where its value came
    from. "Dev sets" are the seen sets the values were chosen on: MetaQA (the WikiMovies triples,
    first 300 questions per hop file, then the full files), ``examples/services`` and
    ``examples/clinical``; none was chosen on a set that is scored as unseen.
    """

    # -------------------------------------------------------------- candidates
    max_hops: int = Field(default=4, ge=1, le=6, description="longest candidate path (hops)")
    deep_limit: int = Field(
        default=300,
        ge=0,
        description="a 4th hop is explored only while fewer candidate paths than this exist (a small curated "
        "graph goes deep, a big one stays at 3); 300 kept MetaQA's 3-hop p95 under 50 ms (session 21)",
    )
    max_anchors: int = Field(default=3, ge=1, le=50, description="best-linked anchors paths start from")
    # -------------------------------------------------------------- path score
    anchor_weight: float = Field(
        default=0.5,
        ge=0.0,
        description="× the anchor's link confidence, added to each of its paths (first value of the PATHS "
        "strategy, session 20; unchanged since: an exact name link (1.0) then beats a fuzzy one (0.9) by 0.05)",
    )
    cue: float = Field(
        default=0.8,
        ge=0.0,
        description="per hop a question word explains (name word 1, description word soft_cue); chosen with "
        "cue_cost on MetaQA 2/3-hop so that a named hop outweighs the largest cosine gap between paths (~0.3)",
    )
    cue_cost: float = Field(
        default=0.6,
        ge=0.0,
        description="hops a path must have explained to break even: cue × (explained − cue_cost × hops); an "
        "unexplained hop costs cue × cue_cost = 0.48 (MetaQA dev, session 20)",
    )
    soft_cue: float = Field(
        default=0.75,
        gt=0.0,
        lt=1.0,
        description="share of a hop a description word explains (a name word: 1); was 0.5, raised so that "
        "'works' (MEMBER_OF's description) names HAS_MEMBER over a name-word-less rival (clinical dev)",
    )
    phrase_hop: float = Field(
        default=0.4,
        ge=0.0,
        description="per unexplained hop a relational phrase of the question no relation's words name "
        "accounts for ('who *runs* X', 'whom does the curator *answer to*': a synonym), up to the number of "
        "such phrases: the hop a phrase asks for costs less than one nothing asks for (cue × cue_cost = "
        "0.48), so a phrase alone never makes a longer path win, it lets the asked or mentioned types and "
        "the embedding decide; 0.4 chosen on the issue-23 dev sets (bench/curated_all.py: pooled Hits@1 "
        "86.9 -> 88.1 with it alone; 0.3 lost a museum question), MetaQA Hits@1 and examples unchanged",
    )
    length: float = Field(
        default=0.035,
        ge=0.0,
        description="per hop beyond the first: among equally explained paths the shorter wins (MetaQA dev: "
        "the smallest value that broke 1-hop/3-hop ties the right way)",
    )
    order: float = Field(
        default=0.3,
        ge=0.0,
        description="when two relations named on one side of the anchor are walked outward in the order "
        "they are named (+) or against it (−); MetaQA 3-hop dev (session 20)",
    )
    distinct: float = Field(
        default=0.25,
        ge=0.0,
        description="× cosine of the question and the path's distinct relations' words (the full path's "
        "words count 1); MetaQA dev",
    )
    answer: float = Field(
        default=0.3,
        ge=0.0,
        description="× cosine of the question and the example answers of the last hop; MetaQA dev",
    )
    answer_type: float = Field(
        default=0.6,
        ge=0.0,
        description="bonus of a path whose end fits the kind of thing the question asks for ('who', 'which "
        "vendors', 'what bike models': the asked words against each last hop's type card by the embedder), "
        "× exp(−gap to the best fitting end / type_temperature); 0.6 from the lexical version it replaces "
        "(services/clinical dev: it must outweigh one unexplained hop, cue × cue_cost = 0.48)",
    )
    answer_type_named: float = Field(
        default=1.56,
        ge=0.0,
        description="answer_type when a noun of the question names an end type by its words, not only by a "
        "cosine (the head word of the type's name, its members' names or its description: 'which "
        "*suppliers*': Supplier): a path that stops before that type answers something else, so reaching it "
        "outweighs two unexplained hops, answer_type + 2 × cue × cue_cost = 0.6 + 0.96 (a 3-hop chain "
        "against a 1-hop stop; set by that rule, not fitted; issue 23 wave 9, the 3-hop misses of the "
        "19 dev sets: 8 of 16 stopped short of a type the asked noun names)",
    )
    answer_type_generic: float = Field(
        default=0.3,
        ge=0.0,
        description="answer_type when only a question word says what is asked ('who', 'where'): weaker than "
        "a noun, below one unexplained hop (0.48), so it orders paths but pays for no hop (issue-23 dev sets)",
    )
    generic_type_temperature: float = Field(
        default=0.15,
        gt=0.0,
        description="type_temperature for a question word alone: a broad kind several types fit alike (MiniLM "
        "'person': Coach 0.37, Player 0.62); 0.15 keeps a gap of 0.1 at half the bonus (issue-23 dev sets)",
    )
    member_share: float = Field(
        default=0.25,
        gt=0.0,
        le=1.0,
        description="a type fits the asked noun when ≥ 2 and this share of its sampled nodes call themselves "
        "by it ('which units': 'Majors Unit'); one stray name is no kind (issue-23 dev sets, clinical)",
    )
    clipping_cosine: float = Field(
        default=0.75,
        gt=0.0,
        le=1.0,
        description="an asked noun that begins a type's head word names the type (a clipping: 'vets', "
        "'labs', 'admins') when MiniLM's cosine of the two reaches this: clippings 0.75-0.84 (vet, lab, "
        "admin, ref, prof, tech, stat), derivations and chance prefixes below (art/artist, ship/shipment "
        "0.73, doc/doctor 0.68, cat/category 0.53); issue-23 wave 10, 25 word pairs",
    )
    type_temperature: float = Field(
        default=0.05,
        gt=0.0,
        description="how fast the answer_type bonus falls with an end's cosine gap to the best fitting end: "
        "0.05 gives a gap of 0.1 (MiniLM: 'vendors' vs Supplier against Product) 14% of the bonus; chosen "
        "on the services/clinical dev sets and generated graphs",
    )
    category_sharing: float = Field(
        default=2.0,
        ge=1.0,
        description="a classifier noun ('what kind of film') names the relation whose values are each "
        "shared by the most things, where node types tell nothing, when it shares this many times more than "
        "any other relation (MetaQA: has_genre 678 edges a value, release_year 149; a clear factor, not tuned)",
    )
    mentioned_type: float = Field(
        default=0.3,
        ge=0.0,
        description="bonus of a path through nodes of the types the question mentions besides the one it "
        "asks for ('who is on call for the services X relies on': a path through services), by the share "
        "of those types it visits; services dev (session 20)",
    )
    agent_noun: float = Field(
        default=0.8,
        ge=0.0,
        description="bonus of a path whose last hop walks a relation the asked agent noun names by its verb or "
        "its description ('which *actors*': PLAYED_BY, 'a character is portrayed by an actor'; 'director': "
        "DIRECTED_BY), when no name word of the question already counts for it: one explained hop (= cue), "
        "so the path to the doer beats a shorter one to another person; set equal to cue, not tuned (issue 23 "
        "wave 6, film dev misses)",
    )
    voice: float = Field(
        default=0.3,
        ge=0.0,
        description="bonus of a path whose first hop walks a relation the anchor has both ways in the "
        "direction the question's wording gives it ('which services does X depend on': forward); services dev; "
        "also paid to a first hop along a sequence relation walked the way an order word says ('the concert "
        "after X', pathorder.py; the same value, not tuned: issue 23 p23f, orchestra dev)",
    )
    # -------------------------------------------------------------- answers
    walk_paths: int = Field(default=3, ge=1, le=100, description="paths walked for answers at most")
    score_margin: float = Field(
        default=0.3,
        ge=0.0,
        description="paths within this of the best one also give answers (after the best one's): recall for "
        "questions two readings fit; MetaQA dev F1",
    )
    estimate_slack: float = Field(
        default=0.25,
        ge=0.0,
        description="a path whose texts are not embedded is composed when a lookup-only guess puts it within "
        "score_margin + this of the best embedded path (session 21: the same MetaQA answers as embedding all)",
    )
    max_answers: int = Field(default=50, ge=1, le=10_000)
    count_bonus: float = Field(
        default=0.01,
        ge=0.0,
        description="answer score × (1 + this × log(1 + walks reaching it)): among the best path's ends, one "
        "reached more often ranks first; small so it only breaks ties (session 20)",
    )
    embed_limit: int = Field(
        default=0,
        ge=0,
        le=100_000,
        description="candidate paths whose texts warm-up did not embed (deeper than 3 hops, or beyond "
        "the schema's limit) are scored from vectors composed of their hops' texts; this many of the "
        "best of them are embedded and scored exactly on each question",
    )
    report_paths: int = Field(default=5, ge=0, le=100)
    # -------------------------------------------------------------- chunks
    primary_share: float = Field(
        default=0.99,
        gt=0.0,
        le=1.0,
        description="answers scoring at least this share of the best one are the best paths' answers "
        "(their chunks rank by answer); below it an answer is a weaker path's (count_bonus alone moves a "
        "score by < 1%)",
    )
    weak_chunk_factor: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="chunk score factor of a weaker path's answer's further chunks (its first chunk ranks "
        "with the answers'); below path_chunk_factor and anchor_chunk_factor (session 20)",
    )
    chain_nodes: int = Field(
        default=5,
        ge=0,
        le=100,
        description="nodes in the middle of the best answers' paths whose chunk (one each, the one most "
        "like the question) follows the answers' own chunks, nearest an answer first, before any "
        "second chunk (as far as top_k allows): the facts that lead to the answers. 5: the chunks a "
        "reader sees first (the dev curated sets' writers list these nodes' chunks as gold on 2-3 hop "
        "questions; issue 23, wave 10)",
    )
    path_node_answers: int = Field(
        default=3, ge=0, le=100, description="answers whose path nodes' chunks are context"
    )
    path_chunk_factor: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="chunk score factor of a node on an answer's path (an answer's chunk: 1); services dev",
    )
    anchor_chunk_factor: float = Field(
        default=0.25,
        ge=0.0,
        le=1.0,
        description="chunk score factor of an anchor's chunks (the text sources find them by the question's "
        "words too); services dev",
    )
    linking: EntityLinkingSettings = Field(default_factory=EntityLinkingSettings)
