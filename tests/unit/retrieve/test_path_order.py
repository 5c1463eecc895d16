"""Order words name a sequence relation and its direction (issue 23, p23f), on generated names:
the direction is read from the relation's name (a verb of order and its voice, an adjective of
order), else its inverse name turned around, else a SEQUENCE relation's description; an order word
names the first hop only next to the anchor."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cef.retrieve.pathorder import forward_later, order_namings
from cef.retrieve.pathwords import Hop

#: made-up stems, upper case like a relation name's words
_STEMS = st.text(alphabet="BDFGKLMNPRTVZ", min_size=4, max_size=8).map(lambda s: s + "A")

#: relation-name forms and whether walking them forward reaches the later thing
_FORMS = [
    ("FOLLOWED_BY", True),
    ("FOLLOWS", False),
    ("PRECEDED_BY", False),
    ("PRECEDES", True),
    ("SUPERSEDES", False),
    ("SUPERSEDED_BY", True),
    ("REPLACED_BY", True),
    ("SUCCEEDS", False),
    ("NEXT_{}", True),
    ("PREVIOUS_{}", False),
    ("{}_PREDECESSOR", False),
]


@settings(max_examples=60, deadline=None)
@given(stem=_STEMS, form=st.sampled_from(_FORMS), other=_STEMS)
def test_direction_from_the_name_or_the_inverse(stem: str, form: tuple[str, bool], other: str) -> None:
    name, later = form[0].format(stem), form[1]
    assert forward_later(name, None, "", False) is later
    # the name says nothing, its inverse does: turned around
    assert forward_later(f"{other}_{stem}", name, "", False) is (not later)
    # the name wins over a description of the other direction
    assert forward_later(name, None, f"the previous {stem.lower()}", True) is later


@settings(max_examples=40, deadline=None)
@given(stem=_STEMS, other=_STEMS, adjective=st.sampled_from(["next", "subsequent", "previous", "prior"]))
def test_a_sequence_description_gives_the_direction(stem: str, other: str, adjective: str) -> None:
    name = f"{other}_{stem}"
    description = f"a {stem.lower()} leads on to the {adjective} {stem.lower()} in the plan"
    assert forward_later(name, None, description, True) is (adjective in ("next", "subsequent"))
    # not a SEQUENCE relation: its description's words are not read as an order
    assert forward_later(name, None, description, False) is None


@settings(max_examples=60, deadline=None)
@given(
    noun=_STEMS,
    word=st.sampled_from(["after", "before", "next", "previous", "following", "preceding"]),
    forward=st.booleans(),
    gap=st.integers(min_value=0, max_value=6),
)
def test_an_order_word_next_to_the_anchor_names_the_first_hop(
    noun: str, word: str, forward: bool, gap: int
) -> None:
    # "who is at the <noun> <word> [right ...] X": the hop from X walks toward the later thing after "after"
    n = noun.lower()
    tokens = [("who", "who"), ("is", "be"), ("at", "at"), ("the", "the"), (n, n), (word, word)]
    tokens += [("right", "right")] * gap + [("x", "x")]
    at = len(tokens) - 1
    paths = [(Hop("SEQ", True), Hop("HAS", True)), (Hop("SEQ", False), Hop("HAS", True)), (Hop("HAS", True),)]
    got = order_namings(lambda r: forward if r == "SEQ" else None, tokens, at, paths)
    if gap + 1 > 3:  # farther off it relates something else
        assert got == {}
        return
    later = word in ("after", "next", "following")
    assert got == {"SEQ": (5, forward == later)}
