"""The words a relation's description puts before a type's head word say what its nodes are
(issue 23, second wave): "*an animal* patient belongs to an owner" makes ``Patient``'s nodes
animals, so "which animals" names that type (:meth:`PathTypes._described_modifiers`), and the
type's card reads "animal patient", not "patient" (a person's word to the embedder).

Generated graphs with made-up labels, relations and names (see ``test_path_properties``); each
property checks that it fails with the rule off.
"""

from __future__ import annotations

import pytest
from hypothesis import given

import cef.retrieve.pathtypes as pathtypes
from cef.retrieve.pathasked import described_modifiers
from tests.unit.retrieve.test_path_properties import PROPERTY, best, distinct, graph, proper


@PROPERTY
@given(names=distinct(5))
def test_a_descriptions_words_before_a_head_are_read_wherever_the_head_is(names: list[str]) -> None:
    kind, head, verb, other, more = names
    is_head = lambda w: w == head  # noqa: E731
    # a verb after the phrase does not hide it, as it hides a subject from described_ends
    assert described_modifiers(f"an {kind} {head} {verb}s to a {other}", is_head) == [(kind,)]
    assert described_modifiers(f"a {other} {verb}s a {kind} {more} {head}", is_head) == [(kind, more)]
    # the bare head has none; a phrase ended by a function word before the head is another's
    assert described_modifiers(f"a {head} {verb}s to a {other}", is_head) == [()]
    assert described_modifiers(f"a {kind} of the {head}", is_head) == []


@PROPERTY
@given(names=distinct(10))
def test_a_noun_a_description_puts_before_a_types_head_names_that_type(names: list[str]) -> None:
    # anchor -r1-> b nodes -r2-> c nodes, c -r3-> d nodes; r3's description calls c's nodes
    # "a <kind> <lc>"; the question asks for <kind>s, which no label, name or other word names
    la, lb, lc, ld, kind, r1, r2, r3, x1, x2 = names
    anchor = proper(x1, x2)
    b_nodes = [f"{x2.capitalize()} {i}" for i in range(2)]
    c_nodes = [f"{x1.capitalize()} {i}" for i in range(2)]
    d_nodes = [f"{x1.capitalize()} {i}{i}" for i in range(2)]
    nodes = [
        (anchor, la.capitalize()),
        *((n, lb.capitalize()) for n in b_nodes),
        *((n, lc.capitalize()) for n in c_nodes),
        *((n, ld.capitalize()) for n in d_nodes),
    ]
    edges = [(anchor, r1, b) for b in b_nodes]
    edges += [(b, r2, c) for b, c in zip(b_nodes, c_nodes, strict=True)]
    edges += [(c, r3, d) for c, d in zip(c_nodes, d_nodes, strict=True)]
    descriptions = {r3: f"a {kind} {lc} is found with a {ld}"}
    question = f"Which {kind}s are tied to {anchor}?"
    with graph([r1, r2, r3], nodes, edges, descriptions=descriptions) as kb:
        path, answers = best(kb, question)
        assert path == [r1, r2] and set(answers[:2]) == set(c_nodes)
    # mutation: without the description's modifiers nothing names the c nodes' type
    with (
        pytest.MonkeyPatch.context() as mp,
        graph([r1, r2, r3], nodes, edges, descriptions=descriptions) as kb,
    ):
        mp.setattr(pathtypes, "described_modifiers", lambda description, is_head: [])
        assert best(kb, question)[0] != [r1, r2]
