"""``walked_on`` (issue 23, tenth wave) on generated relation paths of made-up relation names: a path
is mapped to its one-hop-shorter candidate exactly when that candidate's every hop is named and the
last hop adds no named hop."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cef.retrieve.pathasked import AskedFor
from cef.retrieve.pathwalkon import walked_on
from cef.retrieve.pathwords import Hop

_NAMES = st.text(alphabet="bdfgklmnprstvz", min_size=3, max_size=8).map(str.upper)


@settings(max_examples=60, deadline=None)
@given(
    rels=st.lists(_NAMES, min_size=2, max_size=4, unique=True),
    forward=st.lists(st.booleans(), min_size=4, max_size=4),
    named=st.lists(st.sampled_from([0.0, 0.75, 1.0]), min_size=4, max_size=4),
)
def test_a_path_maps_to_its_prefix_only_past_a_fully_named_one(
    rels: list[str], forward: list[bool], named: list[float]
) -> None:
    path = tuple(Hop(r, f) for r, f in zip(rels, forward, strict=False))
    paths = [path[:k] for k in range(1, len(path) + 1)]
    explained = [sum(named[:k]) for k in range(1, len(path) + 1)]
    got = walked_on(paths, explained, 0.75)
    for k, p in enumerate(paths):
        prefix_named = k > 0 and all(x >= 0.75 for x in named[:k])
        expected = prefix_named and named[k] == 0.0
        assert (p in got) == expected
        if expected:
            assert got[p] == p[:-1]
    # a path whose prefix is no candidate is never mapped
    assert walked_on(paths[-1:], explained[-1:], 0.75) == {}


@settings(max_examples=30, deadline=None)
@given(
    rels=st.lists(_NAMES, min_size=2, max_size=2, unique=True),
    pronoun=st.sampled_from(["that", "which", "where"]),
)
def test_no_walk_on_is_read_past_a_relative_clause(rels: list[str], pronoun: str) -> None:
    # "which kelps hit the ones <pronoun> X <r1>": the named relation describes another noun
    first, second = Hop(rels[0], True), Hop(rels[1], True)
    paths, explained = [(first,), (first, second)], [1.0, 1.0]
    words = ["which", "kelps", "hit", "the", "ones", pronoun, "x", rels[0].lower()]
    tokens = [(w, w) for w in words]
    asked = AskedFor(text="kelps", lemmas=frozenset({"kelps", "kelp"}), at=1)
    assert walked_on(paths, explained, 0.75, tokens, asked) == {}
    # mutation: the same words without the pronoun read the walk on
    plain = [t for t in tokens if t[0] != pronoun]
    assert walked_on(paths, explained, 0.75, plain, asked) == {(first, second): (first,)}
    # a question word alone ("who") or a classifier noun reads no walk-on
    assert (
        walked_on(
            paths, explained, 0.75, plain, AskedFor(text="person", lemmas=frozenset({"person"}), at=None)
        )
        == {}
    )
    assert (
        walked_on(
            paths,
            explained,
            0.75,
            plain,
            AskedFor(text="kind", lemmas=frozenset({"kind"}), at=1, classifier=True),
        )
        == {}
    )
