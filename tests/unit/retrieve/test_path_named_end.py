"""A noun that names an end type by its words outweighs the hops on the way to it (issue 23, wave 9).

Generated graphs with made-up labels, relations and names (see ``test_path_properties``): the
question names the asked type by the head word of its label and no relation on the way, so only
``answer_type_named`` carries the path to that type. Each property also checks that it fails with
the weight set back to ``answer_type`` (the rule off).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.unit.retrieve.test_path_properties import PROPERTY, best, distinct, graph, proper


def _chain(
    names: list[str], hops: int
) -> tuple[str, list[str], list[tuple[str, str]], list[tuple[str, str, str]]]:
    """anchor -r1-> two nodes of type 1 -r2-> ... -> two nodes of type ``hops``: (anchor, relations,
    nodes, edges); each hop's pair of nodes is linked one to one."""
    labels, rels = names[: hops + 1], names[hops + 1 : 2 * hops + 1]
    x1, x2, x3 = names[2 * hops + 1 : 2 * hops + 4]
    anchor = proper(x1, x2)
    nodes = [(anchor, labels[0].capitalize())]
    edges: list[tuple[str, str, str]] = []
    prev = [anchor, anchor]
    for h in range(hops):
        layer = [f"{x3.capitalize()} {h}{i}" for i in range(2)]
        nodes += [(n, labels[h + 1].capitalize()) for n in layer]
        edges += [(a, rels[h], b) for a, b in zip(prev, layer, strict=True)]
        prev = layer
    return anchor, rels, nodes, edges


@PROPERTY
@given(names=distinct(10), hops=st.integers(min_value=2, max_value=3))
def test_a_named_end_type_two_unexplained_hops_away_beats_the_first_hop(names: list[str], hops: int) -> None:
    anchor, rels, nodes, edges = _chain(names, hops)
    end, last = names[hops], [n for n, _ in nodes[-2:]]
    with graph(rels, nodes, edges) as kb:
        path, answers = best(kb, f"Which {end}s are tied to {anchor}?")
        assert path == rels and set(answers[:2]) == set(last)
        # the first type, named, still ends at the first hop
        path, _ = best(kb, f"Which {names[1]} is tied to {anchor}?")
        assert path == rels[:1]
        # mutation: a named type weighs what a cosine's best fit does, and the walk stops short
        if hops == 3:
            path, _ = best(kb, f"Which {end}s are tied to {anchor}?", answer_type_named=0.6)
            assert path != rels


@PROPERTY
@given(names=distinct(9))
def test_a_verb_after_the_asked_noun_naming_a_relation_decides_over_the_nouns_type(names: list[str]) -> None:
    # anchor -rv-> a node of type lv; anchor -ro-> a node of type "<x>Lc": the asked noun "lc" names
    # the second type by its head word, the verb after it names rv
    la, lv, lc, x, rv, ro, x1, x2, x3 = names
    anchor = proper(x1, x2)
    v_node, o_node = f"{x3.capitalize()} 1", f"{x3.capitalize()} 2"
    nodes = [(anchor, la.capitalize()), (v_node, lv.capitalize()), (o_node, x.capitalize() + lc.capitalize())]
    edges = [(anchor, rv, v_node), (anchor, ro, o_node)]
    with graph([rv, ro], nodes, edges) as kb:
        path, answers = best(kb, f"Which {lc} was {rv}ing {anchor}?")
        assert path == [rv] and answers[0] == v_node
        # the noun alone still names its type
        path, answers = best(kb, f"Which {lc} is tied to {anchor}?")
        assert path == [ro] and answers[0] == o_node
        # mutation: with the named type's weight for a verb too, the noun's type wins
        path, _ = best(kb, f"Which {lc} was {rv}ing {anchor}?", answer_type=1.56)
        assert path == [ro]


@PROPERTY
@given(names=distinct(4))
def test_a_possessive_in_a_descriptions_phrase_names_its_thing(names: list[str]) -> None:
    # "a <owner>'s <adj> <thing> was made by a <doer>": the subject's nodes are owners, not things
    from cef.retrieve.pathasked import described_ends

    owner, adj, thing, doer = names
    got = described_ends(f"a {owner}'s {adj} {thing} was made by a {doer}")
    assert got == ([owner], [doer])
    # without the possessive the phrase's head is its last word
    assert described_ends(f"a {owner} {adj} {thing} was made by a {doer}") == ([thing], [doer])
