""" "How *much*" asks a result to show an amount (a sum of money when the question speaks of money), and
a measure a named thing holds as a property ("how *old*": its ``age``) is answered by that thing.

The graphs are generated with made-up names, so no rule can lean on a word of one data set."""

from __future__ import annotations

import string
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.retrieve.askedkinds import AMOUNT, asked_terms
from cef.retrieve.english import MONEY, QUANTITY
from tests.conftest import nothing_matched as _nothing

#: made-up capitalized names ("Quorvex"): no dictionary word, no stop word
_NAMES = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from("BCDFGKLMNPRSTVZ"),
    st.text(alphabet="aeiou" + "rnvxqzkl", min_size=5, max_size=8),
).filter(lambda s: any(c in "aeiou" for c in s) and any(c not in "aeiou" for c in s[1:]))


def _kb(path: Path, name: str, text: str, properties: dict[str, object]) -> cef.KnowledgeBase:
    kb = cef.open(path, embedder=None)
    kb.index_batch(
        cef.Batch.model_validate(
            {
                "relation_types": [
                    {"name": "SHIPS_FOR", "description": "a supplier ships goods for another"}
                ],
                "nodes": [
                    {"id": "v1", "label": "Supplier", "properties": {"name": name, **properties}},
                    {"id": "v2", "label": "Supplier", "properties": {"name": "Ostrandel"}},
                ],
                "edges": [{"relation_type": "SHIPS_FOR", "source": "v2", "target": "v1"}],
                "chunks": [
                    {"id": "c1", "node_id": "v1", "content": text},
                    {"id": "c2", "node_id": "v2", "content": "Ostrandel ships crates by rail every week."},
                ],
            }
        )
    )
    return kb


def test_how_much_reads_money_a_quantity_or_nothing() -> None:
    money = asked_terms("How much do we pay the supplier each month?", set(), 3)[1]
    assert money[AMOUNT] is MONEY
    assert asked_terms("How much revenue did the outage lose?", set(), 3)[1][AMOUNT] is MONEY
    assert asked_terms("How much memory does the cache have?", set(), 3)[1][AMOUNT] is QUANTITY
    for question in (
        "How much time did she spend there?",
        "How much longer will it run?",
        "How much does it weigh?",
    ):
        assert AMOUNT not in asked_terms(question, set(), 3)[1], question
    for text in ("$1,200 a month", "€3.5m", "40 euros", "twelve thousand dollars", "USD 900", "£15"):
        assert MONEY.search(text), text
    for text in ("version 4.12.0", "99.95% monthly", "in 2024", "50 requests per second"):
        assert not MONEY.search(text), text


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_NAMES, amount=st.integers(min_value=2, max_value=90_000), sign=st.sampled_from(["$", "€", "£"]))
def test_a_sum_of_money_is_asked_only_where_a_result_shows_one(
    tmp_path_factory: object, name: str, amount: int, sign: str
) -> None:
    """The supplier's note says that we pay it each month, and no sum: "how much do we pay" it is not
    answered, though the note holds every word of the question; the same note with a sum answers it."""
    root = tmp_path_factory.mktemp("amount")  # type: ignore[attr-defined]
    question = f"How much do we pay {name} each month?"
    plain = (
        f"We pay {name} each month by bank transfer. {name} delivers parts on Tuesdays and answers "
        f"tickets within {amount % 48 + 2} hours."
    )
    with _kb(root / "plain.db", name, plain, {}) as kb:
        assert _nothing(kb, question)
        assert any("no result shows a sum of money" in n for n in kb.retrieve(question).metadata["notes"])
    with _kb(root / "paid.db", name, f"{plain} The contract costs {sign}{amount:,} a month.", {}) as kb:
        assert not _nothing(kb, question)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=_NAMES, age=st.integers(min_value=18, max_value=99), key=st.sampled_from(["age", "Age", "age_years"])
)
def test_a_measure_a_named_thing_holds_as_a_property_is_answered(
    tmp_path_factory: object, name: str, age: int, key: str
) -> None:
    """ "How *old* is X?": the note about X shows no age, but X's ``age`` property holds it; a thing
    with no such property is not answered by its note."""
    root = tmp_path_factory.mktemp("age")  # type: ignore[attr-defined]
    text = f"{name} runs the depot by the river and keeps {string.digits[age % 10]} vans."
    with _kb(root / "aged.db", name, text, {key: age}) as kb:
        assert not _nothing(kb, f"How old is {name}?")
    with _kb(root / "ageless.db", name, text, {"colour": "green"}) as kb:
        assert _nothing(kb, f"How old is {name}?")
