"""A thing named with a date is another thing when the question gives another date ("the *September*
2024 meeting" is not the note "2024-03 Council Meeting"), and the object of "have" names a thing
("which patients have *asthma*"). Names and words are generated, so no rule leans on one data set."""

from __future__ import annotations

import calendar
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.extract.lemmas import known_word
from cef.retrieve.english import dates_in, same_date
from cef.retrieve.questionterms import read_terms
from cef.text import QUERY_STOP_WORDS
from tests.conftest import nothing_matched as _nothing

#: made-up lower-case nouns: no dictionary word, no stop word
_NOUNS = (
    st.text(alphabet="bdfgklmnprstvz", min_size=2, max_size=3)
    .flatmap(lambda c: st.just(c[0] + "o" + c[1:] + "ite"))
    .filter(lambda w: not known_word(w) and w not in QUERY_STOP_WORDS)
)
_MONTHS = st.integers(min_value=1, max_value=12)
_YEARS = st.integers(min_value=1990, max_value=2030)


@settings(max_examples=60, deadline=None)
@given(year=_YEARS, month=_MONTHS, other=_MONTHS)
def test_dates_in_names_and_questions(year: int, month: int, other: int) -> None:
    name = f"{year}-{month:02d} Harbour Meeting"
    assert dates_in(name) == [(year, month)]
    asked = dates_in(f"What was decided at the {calendar.month_name[other]} {year} harbour meeting?")
    assert asked == [(year, other)]
    assert same_date(dates_in(name), asked) is (month == other)
    assert same_date(dates_in(name), dates_in(f"What was decided at the harbour meeting in {year}?"))
    assert not same_date(dates_in(name), dates_in(f"What was decided at the {year + 1} harbour meeting?"))
    assert same_date(dates_in(name), dates_in("What was decided at the harbour meeting?"))  # no date: any
    assert dates_in("it may rain") == []  # a month name is capitalized


def _meetings(path: Path) -> cef.KnowledgeBase:
    kb = cef.open(path, embedder=None)
    kb.index_batch(
        cef.Batch.model_validate(
            {
                "relation_types": [{"name": "FOLLOWS", "description": "a meeting follows an earlier one"}],
                "nodes": [
                    {"id": "m1", "label": "Meeting", "properties": {"name": "2024-03 Quayside Meeting"}},
                    {"id": "m2", "label": "Meeting", "properties": {"name": "2023-11 Quayside Meeting"}},
                ],
                "edges": [{"relation_type": "FOLLOWS", "source": "m1", "target": "m2"}],
                "chunks": [
                    {
                        "id": "c1",
                        "node_id": "m1",
                        "content": "2024-03 Quayside Meeting: the members decided to repaint the slipway and "
                        "to move the buoys.",
                    },
                    {
                        "id": "c2",
                        "node_id": "m2",
                        "content": "2023-11 Quayside Meeting: the members decided to sell the old winch.",
                    },
                ],
            }
        )
    )
    return kb


def test_a_meeting_of_another_month_is_not_the_one_asked(tmp_path: Path) -> None:
    with _meetings(tmp_path / "kb.db") as kb:
        assert not _nothing(kb, "What did the 2024-03 Quayside Meeting decide?")
        assert not _nothing(kb, "What was decided at the March 2024 Quayside Meeting?")
        assert _nothing(kb, "What did the 2024-09 Quayside Meeting decide?")
        assert _nothing(kb, "What was decided at the September 2024 Quayside Meeting?")
        # a date elsewhere in the question is a time, not the meeting's name
        assert not _nothing(
            kb, "Looking back from 2026, what did the members decide at the 2024-03 Quayside Meeting?"
        )


@settings(max_examples=40, deadline=None)
@given(noun=_NOUNS, plural=st.sampled_from(["patients", "ferries", "members", "farms"]))
def test_the_object_of_have_names_a_thing(noun: str, plural: str) -> None:
    for question in (f"Which of the {plural} has {noun}?", f"Do any of the {plural} have {noun}?"):
        terms = {t.form: t for t in read_terms(question, set(), 3).values()}
        assert terms[noun].names_thing, question
    # a perfect tense and an auxiliary opening the question are no "have" of an object
    moved = {t.form: t for t in read_terms(f"Which {plural} have moved to the {noun}?", set(), 3).values()}
    assert not moved["moved"].names_thing
    left = {t.form: t for t in read_terms(f"Who has left the {noun}?", set(), 3).values()}
    assert not left["left"].names_thing


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(noun=_NOUNS)
def test_a_condition_no_one_has_is_nothing_matched(tmp_path_factory: object, noun: str) -> None:
    root = tmp_path_factory.mktemp("have")  # type: ignore[attr-defined]
    with cef.open(root / "kb.db", embedder=None) as kb:
        kb.index_batch(
            cef.Batch.model_validate(
                {
                    "relation_types": [{"name": "HAS_CONDITION", "description": "a patient has a condition"}],
                    "nodes": [
                        {"id": "p1", "label": "Patient", "properties": {"name": "Ilse Varkonyi"}},
                        {"id": "d1", "label": "Condition", "properties": {"name": "gout"}},
                    ],
                    "edges": [{"relation_type": "HAS_CONDITION", "source": "p1", "target": "d1"}],
                    "chunks": [
                        {
                            "id": "c1",
                            "node_id": "p1",
                            "content": "Ilse Varkonyi, one of our patients, has gout.",
                        }
                    ],
                }
            )
        )
        assert not _nothing(kb, "Which of the patients has gout?")
        assert _nothing(kb, f"Which of the patients has {noun}?")
