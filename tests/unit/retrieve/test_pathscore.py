"""Relation-path scoring: how question words name hops, in which order, and the saved path vectors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cef
from cef.extract.lemmas import dictionary_lemmas
from cef.model import Batch, Edge, GraphQuery, Node, RelationType
from cef.retrieve.pathcues import explained_hops, explained_many, voiced_direction
from cef.retrieve.pathscore import AskedFor, asked_for, path_scorer
from cef.retrieve.pathwords import Hop, stem_match
from cef.retrieve.pathwords import hop_order as _hop_order

TRIPLES = [
    ("Alpha Movie", "directed_by", "Dana Director"),
    ("Beta Movie", "directed_by", "Dana Director"),
    ("Gamma Movie", "directed_by", "Dirk Director"),
    ("Alpha Movie", "starred_actors", "Ann Actor"),
    ("Beta Movie", "starred_actors", "Bob Actor"),
    ("Gamma Movie", "starred_actors", "Ann Actor"),
    ("Delta Movie", "starred_actors", "Bob Actor"),
    ("Delta Movie", "directed_by", "Dirk Director"),
    ("Alpha Movie", "has_genre", "Drama"),
    ("Beta Movie", "has_genre", "Comedy"),
    ("Gamma Movie", "has_genre", "Horror"),
    ("Delta Movie", "has_genre", "Western"),
    ("Alpha Movie", "release_year", "1999"),
    ("Beta Movie", "release_year", "2005"),
    ("Gamma Movie", "release_year", "1999"),
    ("Delta Movie", "release_year", "2010"),
    ("Alpha Movie", "written_by", "Wendy Writer"),
    ("Beta Movie", "written_by", "Wendy Writer"),
    ("Beta Movie", "written_by", "Will Writer"),
    # genres are categories: each is shared by many films (what "what kind of film" asks for)
    *((f"Film {i}", "has_genre", ("Drama", "Comedy", "Horror", "Western")[i % 4]) for i in range(12)),
]


def open_graph(
    path: Path, relations: list[RelationType], nodes: list[Node], triples: list[tuple[str, str, str]]
) -> cef.KnowledgeBase:
    """A knowledge base without embeddings holding ``nodes`` and one edge per (source, relation, target)."""
    kb = cef.open(path, embedder=None)
    edges = [Edge(id=f"e{i}", relation_type=r, source=s, target=t) for i, (s, r, t) in enumerate(triples)]
    kb.index_batch(Batch(relation_types=relations, nodes=nodes, edges=edges))
    return kb


@pytest.fixture
def movies(tmp_path: Path) -> Iterator[cef.KnowledgeBase]:
    names = dict.fromkeys(x for h, _, t in TRIPLES for x in (h, t))
    relations = [RelationType(name=r) for r in dict.fromkeys(r for _, r, _ in TRIPLES)]
    nodes = [Node(id=n, label="Thing", properties={"name": n}) for n in names]
    with open_graph(tmp_path / "movies.db", relations, nodes, TRIPLES) as kb:
        yield kb


def best_path(kb: cef.KnowledgeBase, question: str) -> tuple[list[str], list[str]]:
    found = kb.retrieve(GraphQuery(query=question))
    assert found.nodes, f"no answer for {question!r}"
    best = found.nodes[0].path
    assert best is not None
    return best.relation_types, list(dict.fromkeys(a.node.name for a in found.nodes))


D, S = "directed_by", "starred_actors"


def test_hops_named_outward_from_the_anchor_read_in_walking_order() -> None:
    # "who starred films for the director of X": director nearest X, starred farthest (both before it)
    named = {D: [-2], S: [-6]}
    assert _hop_order((Hop(D, True), Hop(D, False), Hop(S, True)), named) == 1.0
    # walking starred first contradicts the question's order
    assert _hop_order((Hop(S, True), Hop(S, False), Hop(D, True)), named) == -1.0
    # a hop of a relation the question does not name neither helps nor hurts
    assert _hop_order((Hop(D, True), Hop("has_genre", True)), named) == 0.0
    # the same relation named twice is used once per naming, nearest first
    assert _hop_order((Hop(S, True), Hop(D, True), Hop(S, True)), {S: [-1, -3], D: [-8]}) == -1.0
    assert _hop_order((Hop(S, True), Hop(S, False), Hop(D, True)), {S: [-1, -3], D: [-8]}) == 1.0
    # namings on both sides of the anchor tell no order between the sides
    # ("the films that share directors with X were released when")
    both = {D: [-3], "release_year": [2]}
    assert _hop_order((Hop(D, True), Hop(D, False), Hop("release_year", True)), both) == 0.0
    assert _hop_order((Hop("release_year", True), Hop(D, True)), both) == 0.0
    assert (
        _hop_order((Hop(D, True), Hop(D, False), Hop("release_year", True)), {**both, D: [-3], S: [-1]})
        == 0.0
    )
    # "the movies written by the screenwriter of X were directed by who": W(-5), W(-2), D(+2)
    w = "written_by"
    told = {w: [-5, -2], D: [2]}
    # in order, but one relation per side tells no order (0); walked out of order it is -1
    assert _hop_order((Hop(w, True), Hop(w, False), Hop(D, True)), told) == 0.0
    # the same relation named twice on one side tells no order either ("the director that directed X")
    assert _hop_order((Hop(D, True), Hop(D, False)), {D: [-3, -1]}) == 0.0
    # "when did the films directed by the X director release": the best of the possible readings
    r = "release_year"
    when = {D: [-2, 1], r: [2]}
    assert _hop_order((Hop(D, True), Hop(D, False), Hop(r, True)), when) == 1.0
    assert _hop_order((Hop(r, True), Hop(r, False), Hop(D, True), Hop(D, False)), when) == 0.0
    # the right-side naming walked between the two left-side ones: the chains interleave
    assert _hop_order((Hop(w, True), Hop(D, False), Hop(w, True)), told) == -1.0


def test_a_preposition_between_relation_words_makes_two_namings(movies: cef.KnowledgeBase) -> None:
    # "movies starred by actors in X": actors of X, then the movies they starred in — two hops
    path, answers = best_path(movies, "which movies were starred by actors in Alpha Movie")
    assert path == [S, S]
    assert answers[:1] == ["Gamma Movie"]
    # "X starred which actors": one naming, one hop
    path, answers = best_path(movies, "Alpha Movie starred which actors")
    assert path == [S] and answers[:1] == ["Ann Actor"]
    # a relative word joins two words of one relation about one thing: one hop
    path, answers = best_path(movies, "who is the director that directed Alpha Movie")
    assert path == [D] and answers[:1] == ["Dana Director"]
    # a preposition before a wh-word keeps the naming whole: "released in which years"
    path, answers = best_path(movies, "the movies directed by Dirk Director were released in which years")
    assert path == [D, "release_year"] and set(answers[:2]) == {"1999", "2010"}


def test_words_of_one_relation_around_the_anchor_are_one_naming(movies: cef.KnowledgeBase) -> None:
    # "year ... released" name release_year once, split by the anchor: one hop, not there and back
    path, answers = best_path(movies, "what year was Alpha Movie released")
    assert path == ["release_year"] and answers[:1] == ["1999"]
    path, answers = best_path(movies, "what year were the movies directed by Dirk Director released")
    assert path == [D, "release_year"] and set(answers[:2]) == {"1999", "2010"}
    # ... but a preposition before the anchor ties those words to it: "starred by X actors" is two
    path, answers = best_path(movies, "when were the movies starred by Alpha Movie actors released")
    assert path == [S, S, "release_year"] and answers[:1] == ["1999"]  # Ann Actor's other film, Gamma
    # two words of one relation side by side: one naming ("which screenwriter wrote")
    path, answers = best_path(movies, "which screenwriter wrote Alpha Movie")
    assert path == ["written_by"] and answers[:1] == ["Wendy Writer"]


def test_category_nouns_and_co_words_name_relations(movies: cef.KnowledgeBase) -> None:
    # "what kind of", "what types": a relation named with a category noun (genre, type, class ...)
    path, answers = best_path(movies, "what kind of movie is Gamma Movie")
    assert path == ["has_genre"] and answers[:1] == ["Horror"]
    path, answers = best_path(movies, "what types are the films directed by Dirk Director")
    assert path == [D, "has_genre"] and set(answers[:2]) == {"Horror", "Western"}
    # "co-wrote" names written_by (and its sharing prefix asks for the return hop)
    path, answers = best_path(movies, "who co-wrote films with Will Writer")
    assert path == ["written_by", "written_by"] and answers[:1] == ["Wendy Writer"]


def test_a_hop_back_along_a_relation_named_once_counts_half() -> None:
    cues = {D: (1.0, 2), S: (1.0, 6)}
    there_and_back = (Hop(D, True), Hop(D, False), Hop(S, True))
    elsewhere = (Hop("has_genre", True), Hop(D, False), Hop(S, True))
    assert explained_hops(there_and_back, cues, False)[0] == 2.5
    assert explained_hops(elsewhere, cues, False)[0] == 2.0
    # a walk that ends coming back ("what films did X act in" read as co-stars) gets nothing
    assert explained_hops((Hop(S, False), Hop(S, True)), {S: (1.0, 2)}, False)[0] == 1.0
    # a sharing word makes the return a full naming
    assert explained_hops(there_and_back, cues, True)[0] == 3.0
    # "who appeared in the same movie with X": no word names the relation, the sharing word the return
    assert explained_hops((Hop(S, False), Hop(S, True)), {}, True)[0] == 1.0
    assert explained_hops((Hop(S, False), Hop(D, True)), {}, True)[0] == 0.0


def test_the_hop_named_farthest_from_the_anchor_is_walked_last(movies: cef.KnowledgeBase) -> None:
    path, answers = best_path(movies, "who starred films for the director of Alpha Movie")
    assert path == [D, D, S]
    assert answers[:1] == ["Bob Actor"]  # Dana's other film Beta starred Bob (Alpha itself is not revisited)
    path, answers = best_path(movies, "who directed the films starred by the actors of Delta Movie")
    assert path == [S, S, D]
    assert answers[:1] == ["Dana Director"]


def test_path_vectors_are_saved_beside_the_store_and_read_back(tmp_path: Path) -> None:
    from cef.engine.state import EngineState

    class Words:
        """A tiny deterministic embedder: counts of letters (enough to tell texts apart)."""

        name, dim = "letters", 26

        def embed(self, texts: list[str], *, progress: object = None) -> np.ndarray:
            out = np.zeros((len(texts), 26), dtype=np.float32)
            for i, t in enumerate(texts):
                for ch in t.lower():
                    if "a" <= ch <= "z":
                        out[i, ord(ch) - 97] += 1
            return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

        def embed_query(self, text: str) -> np.ndarray:
            return self.embed([text])[0]

    names = dict.fromkeys(x for h, _, t in TRIPLES for x in (h, t))
    batch = Batch(
        relation_types=[RelationType(name=r) for r in dict.fromkeys(r for _, r, _ in TRIPLES)],
        nodes=[Node(id=n, label="Thing", properties={"name": n}) for n in names],
        edges=[Edge(id=f"e{i}", relation_type=r, source=h, target=t) for i, (h, r, t) in enumerate(TRIPLES)],
    )
    db = tmp_path / "m.db"
    with cef.open(db, embedder=Words()) as kb:  # type: ignore[arg-type]
        kb.index_batch(batch)
        kb.warm()
        state: EngineState = kb.retriever.state
        saved = state.vectors_path("path-text")
        assert saved is not None and saved.exists()
        first = dict(path_scorer(state).vectors)
    assert len(first) > 10

    with cef.open(db, embedder=Words()) as kb:  # type: ignore[arg-type]
        scorer = path_scorer(kb.retriever.state)
        assert scorer.load_vectors(saved, "letters") == len(first)
        assert all(np.allclose(scorer.vectors[t], v) for t, v in first.items())
        scorer.vectors.clear()
        assert scorer.load_vectors(saved, "another-model") == 0  # another embedding space: not used
        assert not scorer.vectors

    saved.write_bytes(b"not a numpy file")
    with cef.open(db, embedder=Words()) as kb:  # type: ignore[arg-type]
        assert path_scorer(kb.retriever.state).load_vectors(saved, "letters") == 0
        kb.warm()  # a damaged file is replaced, never fatal
    with cef.open(db, embedder=Words()) as kb:  # type: ignore[arg-type]
        assert path_scorer(kb.retriever.state).load_vectors(saved, "letters") == len(first)


SERVICE_RELATIONS = [
    RelationType(
        name="OWNED_BY", inverse="OWNS", description="a service is owned by a team, accountable for it"
    ),
    RelationType(name="LED_BY", inverse="LEADS", description="a team is led by a person"),
    RelationType(name="MEMBER_OF", inverse="HAS_MEMBER", description="a person works in a team"),
    RelationType(name="DEPENDS_ON", inverse="DEPENDED_ON_BY", description="a service calls another service"),
    RelationType(
        name="USES_PROVIDER", inverse="PROVIDER_FOR", description="a service uses an external vendor"
    ),
]


@pytest.fixture
def services(tmp_path: Path) -> Iterator[cef.KnowledgeBase]:
    nodes = [
        Node(id="svc-search", label="Service", properties={"name": "Search service"}),
        Node(id="svc-pay", label="Service", properties={"name": "Payments service"}),
        Node(id="team-disc", label="Team", properties={"name": "Discovery team"}),
        Node(id="per-carla", label="Person", properties={"name": "Carla Reyes"}),
        Node(id="per-dan", label="Person", properties={"name": "Dan Okoro"}),
        Node(id="ext-mail", label="Vendor", properties={"name": "Mailwave"}),
        Node(id="svc-front", label="Service", properties={"name": "Storefront"}),
    ]
    edges = [
        ("svc-search", "OWNED_BY", "team-disc"),
        ("team-disc", "LED_BY", "per-carla"),
        ("per-carla", "MEMBER_OF", "team-disc"),
        ("per-dan", "MEMBER_OF", "team-disc"),
        ("svc-search", "DEPENDS_ON", "svc-pay"),
        ("svc-pay", "USES_PROVIDER", "ext-mail"),
        ("svc-front", "DEPENDS_ON", "svc-search"),
    ]
    with open_graph(tmp_path / "services.db", SERVICE_RELATIONS, nodes, edges) as kb:
        yield kb


def test_a_question_word_explains_one_hop_of_one_relation() -> None:
    # "services" is a description word of DEPENDS_ON and of USES_PROVIDER: one word, half a hop in all
    namings = {"DEPENDS_ON": [(0.5, frozenset({1}))], "USES_PROVIDER": [(0.5, frozenset({1}))]}
    cues = {r: (0.5, 1) for r in namings}
    both = (Hop("DEPENDS_ON", True), Hop("USES_PROVIDER", True))
    assert explained_hops(both, cues, False, namings=namings)[0] == 0.5
    # two words, two hops
    namings["USES_PROVIDER"] = [(1.0, frozenset({4}))]
    assert explained_hops(both, {**cues, "USES_PROVIDER": (1.0, 4)}, False, namings=namings)[0] == 1.5


def test_description_words_that_name_node_types_are_no_cues(services: cef.KnowledgeBase) -> None:
    scorer = path_scorer(services.retriever.state)
    soft = {w for w, _ in scorer.words_of("MEMBER_OF").soft}
    assert "works" in soft and not soft & {"person", "team"}  # Person and Team are node labels
    # "team" names no hop: the team's leader, not its members' teams' leaders
    path, answers = best_path(services, "Who leads the team that owns the search service?")
    assert path == ["OWNED_BY", "LED_BY"] and answers[:1] == ["Carla Reyes"]


def test_a_description_word_alone_names_a_hop(services: cef.KnowledgeBase) -> None:
    # MEMBER_OF's name has no word of the question; its description has "works"
    path, answers = best_path(services, "Who works in the team that owns the search service?")
    assert path == ["OWNED_BY", "HAS_MEMBER"] and set(answers[:2]) == {"Carla Reyes", "Dan Okoro"}


def test_the_type_a_question_asks_for_picks_the_path_that_ends_there(services: cef.KnowledgeBase) -> None:
    scorer = path_scorer(services.retriever.state)

    def asked(question: str) -> AskedFor | None:
        tokens = scorer.lemmatize(question)
        return asked_for(
            tokens, next((i for i, (t, _) in enumerate(tokens) if t == "x"), None), scorer._lemma
        )

    got = asked("Which third-party vendors do the services behind X use?")
    assert got is not None and "vendors" in got.lemmas and got.text == "vendors"
    assert asked("Who leads the team that owns X?") == AskedFor("person", frozenset({"person"}), None)
    got = asked("Who is the plant manager of X?")  # the head of the noun: a manager, not a plant
    assert got is not None and got.text == "person manager"
    got = asked("Which cluster runs the services X calls?")  # the verb after the noun is not its head
    assert got is not None and got.text == "cluster"
    assert asked("What did X write?") is None
    # requests, "which of", "how many", a contracted copula, an -ed / -ing verb after the noun
    for question, text in [
        ("List all services that depend on X", "services"),
        ("Name the team owning X", "team"),
        ("Which of the plants builds X?", "plants"),
        ("How many suppliers deliver to X?", "suppliers"),
        ("Who's the lead of X?", "person lead"),
        ("Which team looked after the X in January?", "team"),
    ]:
        got = asked(question)
        assert got is not None and got.text == text, question
    assert asked("Describe X") is None
    # a preposition or verb particle ends the noun: the word before it is the verb
    for question in ("Which doctor looks after X?", "Which engineer signs off X?"):
        got = asked(question)
        assert got is not None and got.text == question.split()[1], question
    # another named thing ends the noun like the anchor does ("Gull Island" is not what is asked)
    tokens = scorer.lemmatize("Which notes mention Gull Island and X?")
    got = asked_for(tokens, 6, scorer._lemma, others=frozenset({3, 4}))
    assert got is not None and got.text == "notes"
    # no word names a relation: the answer's type does ("team": OWNED_BY ends at a Team)
    path, answers = best_path(services, "Which team is the search service under?")
    assert path == ["OWNED_BY"] and answers[:1] == ["Discovery team"]


def test_a_type_word_beside_the_anchor_belongs_to_its_mention() -> None:
    from cef.retrieve.pathanchors import _with_type_word

    text = "Who fixed the outage caused by the checkout 4.12.0 release?"
    start = text.index("checkout")
    span = (start, start + len("checkout 4.12.0"))
    assert text[slice(*_with_type_word(text, span, "Release"))] == "checkout 4.12.0 release"
    assert _with_type_word(text, span, "Service") == span  # "release" does not name a Service
    text = "Which services does team Discovery own?"
    start = text.index("Discovery")
    assert text[slice(*_with_type_word(text, (start, start + 9), "Team"))] == "team Discovery"


def test_the_wording_gives_the_direction_of_a_relation_the_anchor_has_both_ways(
    services: cef.KnowledgeBase,
) -> None:
    # the search service depends on payments and the storefront depends on it: "depend" names both
    path, answers = best_path(services, "Which services does the search service depend on?")
    assert path == ["DEPENDS_ON"] and answers[:1] == ["Payments service"]
    path, answers = best_path(services, "Which services depend on the search service?")
    assert path == ["DEPENDED_ON_BY"] and answers[:1] == ["Storefront"]
    scorer = path_scorer(services.retriever.state)
    owned = scorer.words_of("OWNED_BY")

    def direction(question: str, word: str) -> bool | None:
        tokens = scorer.lemmatize(question)
        at = next(i for i, (t, _) in enumerate(tokens) if t == "x")
        return voiced_direction(owned, tokens, at, [next(i for i, (t, _) in enumerate(tokens) if t == word)])

    assert direction("Which team is X owned by?", "owned") is True  # X is owned: X -OWNED_BY-> team
    assert direction("Which services are owned by X?", "owned") is False
    assert direction("Who owns X?", "owns") is True  # the inverse name, X after it
    assert direction("Which services does X own?", "own") is False


@pytest.mark.parametrize(
    ("word", "relation_word", "names"),
    [
        ("acted", "actors", True),
        ("written", "writer", True),
        ("starred", "stars", True),
        ("specialty", "specializes", True),
        ("produced", "producer", True),
        ("relies", "release", False),  # a shared "rel" followed by no ending
        ("runs", "runbook", False),  # "book" is a word, not an ending
        ("planned", "plant", False),  # a lone consonant is no suffix
        ("screenwriter", "written", True),  # the head of a compound
        ("co-wrote", "written", True),
        ("directors", "directed", True),
    ],
)
def test_a_shared_stem_names_a_relation_word_only_before_an_ending(
    word: str, relation_word: str, names: bool
) -> None:
    lemma = dict(dictionary_lemmas(f"{word} {relation_word}"))
    assert stem_match(word, relation_word, lemma[word], lemma[relation_word]) is names


def test_types_are_named_by_the_head_word_of_a_label(tmp_path: Path) -> None:
    relations = [RelationType(name="IS_A"), RelationType(name="TREATS", inverse="TREATED_BY")]
    nodes = [
        Node(id="m", label="Medication", properties={"name": "Warfarin"}),
        Node(id="c", label="DrugClass", properties={"name": "Anticoagulant"}),
        Node(id="d", label="Condition", properties={"name": "Atrial fibrillation"}),
        Node(id="p", label="Person", properties={"name": "Ann"}),
    ]
    with open_graph(tmp_path / "t.db", relations, nodes, [("m", "IS_A", "c"), ("m", "TREATS", "d")]) as kb:
        scorer = path_scorer(kb.retriever.state)
        assert scorer._end_types(Hop("IS_A", True)) == {"class"}  # a DrugClass is a class, not a drug
        tokens = scorer.lemmatize("What is the class of the medication used for the condition X?")
        assert scorer._mentioned_types(tokens, None) == {"class", "medication", "condition"}


def test_a_relation_without_a_description_gets_a_card_from_the_graph(movies: cef.KnowledgeBase) -> None:
    scorer = path_scorer(movies.retriever.state)
    card = scorer.relation_card("directed_by")
    assert card.startswith("directed by: from Thing to Thing, e.g. ") and " → Dana Director" in card
    # its cue words are the card's words without the examples (names are values, not relation words)
    words = scorer.words_of("directed_by")
    assert "dana" not in words.description and not any(w == "dana" for w, _ in words.soft)
    assert scorer.relation_card("no_such_relation") == "no such relation"  # unknown: its name's words


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from("ABCDEF"), st.booleans()), min_size=1, max_size=4), max_size=30
    ),
    st.dictionaries(st.sampled_from("ABC"), st.tuples(st.sampled_from([0.75, 1.0, 2.0]), st.integers(0, 5))),
    st.dictionaries(st.sampled_from("ABD"), st.lists(st.integers(-4, 4).filter(bool), max_size=3)),
    st.booleans(),
    st.sampled_from([None, "A", "E"]),
)
def test_explaining_paths_by_shape_equals_explaining_each(
    raw: list[list[tuple[str, bool]]],
    cues: dict[str, tuple[float, int]],
    dists: dict[str, list[int]],
    sharing: bool,
    shared: str | None,
) -> None:
    """explained_many (once per path shape, unnamed relations as placeholders) gives what
    explained_hops gives path by path, for any cues, namings and sharing word."""
    paths = [tuple(Hop(r, f) for r, f in p) for p in raw]
    namings = {
        r: [(c, frozenset({i % 3, n})) for i, n in enumerate(range(int(c) + 1))] for r, (c, _) in cues.items()
    }
    for nm in (None, namings):
        want = [explained_hops(p, cues, sharing, shared, dists, nm) for p in paths]
        assert explained_many(paths, cues, sharing, shared, dists, nm) == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("ABCD"), st.booleans()), min_size=1, max_size=4),
    st.sets(st.sampled_from("ABCD"), min_size=1),
    st.integers(-5, 5).filter(bool),
)
def test_one_word_naming_several_relations_tells_no_order(
    raw: list[tuple[str, bool]], named: set[str], at: int
) -> None:
    """One word names one hop: when every naming is the same word ("chairing" for both
    CHAIRS_DEPARTMENT and CHAIRS_COMMITTEE), no walking order is told (an order needs two words)."""
    path = tuple(Hop(r, f) for r, f in raw)
    assert _hop_order(path, {r: [at] for r in named}) == 0.0
