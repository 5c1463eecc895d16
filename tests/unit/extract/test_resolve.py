"""NameResolver: exact and alias names, fuzzy and partial names of curated nodes, type hints."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cef.extract.resolve import NameResolver


def resolver() -> NameResolver:
    r = NameResolver()
    r.add("med-warfarin", "Medication", ["Warfarin", "Coumadin"])
    r.add("cond-afib", "Condition", ["Atrial fibrillation", "AFib"])
    r.add("doc-chen", "Doctor", ["Dr. Maria Chen"])
    r.add("pat-john", "Patient", ["John Miller"])
    r.add("pat-jane", "Patient", ["Jane Miller"])
    r.add("entity:paris", "Entity", ["Paris"], curated=False)
    r.add("entity:marseille", "Entity", ["Marseille"], curated=False)
    return r


def test_exact_and_alias_names() -> None:
    r = resolver()
    got = r.resolve("warfarin")
    assert got is not None and (got.node_id, got.how, got.score) == ("med-warfarin", "exact", 1.0)
    assert r.resolve("Coumadin").node_id == "med-warfarin"  # type: ignore[union-attr]
    assert r.resolve("AFIB").node_id == "cond-afib"  # type: ignore[union-attr]
    assert r.resolve("Paris").node_id == "entity:paris"  # type: ignore[union-attr]
    alias = r.resolve("Warfarin (drug)")  # a parenthesised disambiguation is an alias key
    assert alias is not None and alias.node_id == "med-warfarin" and alias.how == "alias"


def test_misspellings_resolve_fuzzily_to_curated_nodes_only() -> None:
    r = resolver()
    got = r.resolve("warfarine")
    assert got is not None and got.node_id == "med-warfarin" and got.how == "fuzzy" and got.score >= 0.88
    assert r.resolve("atrial fibrilation").node_id == "cond-afib"  # type: ignore[union-attr]
    # extracted entities are never guessed at: thousands of text names would merge different things
    assert r.resolve("Marseile") is None
    assert r.resolve("warfarine", fuzzy=False, partial=False) is None


def test_partial_names_need_exactly_one_candidate() -> None:
    r = resolver()
    got = r.resolve("Dr. Chen")
    assert got is not None and (got.node_id, got.how) == ("doc-chen", "partial")
    assert r.resolve("Maria").node_id == "doc-chen"  # type: ignore[union-attr]
    assert r.resolve("Miller") is None  # two Millers: ambiguous, not a match
    assert r.resolve("Dr.") is None  # an honorific alone says nothing
    assert r.resolve("Chen", partial=False) is None


def test_type_hint_breaks_ties_but_never_rejects() -> None:
    r = resolver()
    r.add("doc-miller", "Doctor", ["Paul Miller"])
    assert r.resolve("Miller") is None
    r2 = NameResolver()
    r2.add("pat-john", "Patient", ["John Miller"])
    r2.add("doc-paul", "Doctor", ["Paul Miller"])
    hinted = r2.resolve("Miller", hint="Doctor")
    assert hinted is not None and hinted.node_id == "doc-paul"
    # spaCy may call a drug a PERSON: the hint does not stop the exact name
    assert resolver().resolve("Warfarin", hint="PERSON").node_id == "med-warfarin"  # type: ignore[union-attr]


def test_a_curated_node_wins_a_shared_key() -> None:
    r = NameResolver()
    r.add("entity:warfarin", "Entity", ["warfarin"], curated=False)
    r.add("med-warfarin", "Medication", ["Warfarin"])
    assert r.resolve("Warfarin").node_id == "med-warfarin"  # type: ignore[union-attr]
    assert r.key_of("warfarin") == "med-warfarin"


@given(st.text(max_size=40))
def test_resolution_never_crashes_and_names_a_known_node(name: str) -> None:
    r = resolver()
    got = r.resolve(name)
    assert got is None or got.node_id in r
    assert got is None or 0.0 < got.score <= 1.0
