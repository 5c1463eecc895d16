""" "What is the *name* of X" asks a result to show a name: one right by the asked noun ("my puppy
*Qorvo*", "*Qorvo*, my puppy"), one a naming verb gives ("named *Qorvo*", "this is *Qorvo*") or a quoted
title; a text that mentions the puppy and no name does not answer. Names are generated (made up)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import cef
from cef.retrieve.askedkinds import NAMED, asked_terms, named_nouns
from cef.retrieve.english import name_shown

_NAMES = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from("BDFGKLMNPRSTVZ"),
    st.text(alphabet="aeiou", min_size=1, max_size=1).flatmap(
        lambda v: st.text(alphabet="rnvxqzkl", min_size=1, max_size=2).map(lambda c: v + c + "o")
    ),
)


def test_the_asked_nouns_are_read_from_the_question() -> None:
    assert named_nouns("What is the name of John's wife?") == ["wife"]
    assert named_nouns("What was the title of the inspiring book John was reading?") == ["inspiring", "book"]
    assert named_nouns("What is Melanie's husband's name?") == ["husband"]
    assert named_nouns("What is the name of the tech company where John works?") == ["tech", "company"]
    assert NAMED in asked_terms("What are the names of Nate's turtles?", set(), 3)[1]
    assert NAMED in asked_terms("What is John's wife's name?", set(), 3)[1]  # two possessives
    assert NAMED not in asked_terms("Which team owns the payments service?", set(), 3)[1]


@given(name=_NAMES, other=_NAMES)
def test_a_name_is_shown_by_the_asked_noun_or_a_naming_verb(name: str, other: str) -> None:
    assume(name != other)
    shown = name_shown([f"What is the name of {other}'s puppy?", other], ["puppy"])
    for text in (
        f"We got a puppy, {name}, last week.",
        f"Yes I do - {name}, my puppy. He is great.",
        f"we got a puppy and named him {name} after my grandpa",
        f"Here is my new puppy, this is {name}!",
    ):
        assert shown.search(text), text
    for text in (
        "We got a puppy last week. It is great.",
        f"Thanks, {other}! My puppy loves the park.",  # the question's own name is no answer
        "My puppy and I went out in March.",  # a month is no name
        f"{name} went to the park. My puppy stayed home.",  # a sentence's first word
        # another line's naming verb names another thing (a reply quoted under the turn)
        f'My puppy is asleep.\n(in reply to: I am reading a novel called "{name} Rising".)',
    ):
        assert not shown.search(text), text


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_NAMES)
def test_a_text_without_the_name_does_not_answer(tmp_path_factory: object, name: str) -> None:
    root: Path = tmp_path_factory.mktemp("names")  # type: ignore[attr-defined]
    question = "What is the name of the puppy Hanna adopted?"
    for named, expect in ((False, True), (True, False)):
        text = (
            f"Hanna adopted a puppy {name} from the shelter last week."
            if named
            else "Hanna adopted a puppy from the shelter last week; it sleeps all day."
        )
        with cef.open(root / f"kb-{named}.db", embedder=None) as kb:
            kb.index_batch(cef.Batch.model_validate({"chunks": [{"id": "t1", "content": text}]}))
            verdict = kb.retrieve(question).metadata["relevance"]
            assert isinstance(verdict, dict)
            assert verdict["nothing_matched"] is expect, text


@given(name=_NAMES)
def test_a_name_in_markdown_emphasis_is_shown(name: str) -> None:
    shown = name_shown(["What is the survey boat called?"], ["boat"])
    assert shown.search(f"Rafael skippers the survey boat *{name}* for the group.")
    assert shown.search(f"The boat _{name}_ is moored at the pier.")
    assert not shown.search("The boat *is* moored at the pier.")  # emphasis on no name
