"""The one packer on every item kind: the providers' document and the memory's bundle.

Whatever the items, caps, format and counter: the rendered text never exceeds
the budget; it is exactly the rendering of the packed document (the text and
the structured result agree); each section lists its items in priority order;
an item goes in whole, or cut and marked (texts), or as one of its kind's
shorter forms (facts); requirements hold; the truncated flag tells whether
anything was left out or shortened.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cef.context.budget import BudgetTooSmallError, Candidate, pack
from cef.context.cuts import TRUNCATION_MARKER
from cef.context.facts import BeliefInfo, Conflict, Fact, ObservationRef, Relation, TemporalChange
from cef.context.formats import (
    ContextAxiom,
    ContextChunk,
    ContextClaim,
    ContextDocument,
    ContextEntity,
    ContextFormat,
    ContextPath,
    ContextRelationship,
    render,
)
from cef.context.tokens import TokenCounter, make_token_counter
from cef.errors import ValidationError
from cef.memory.bundle import QUOTAS, ContextBundle, TemporalContext

COUNTERS = {name: make_token_counter(name) for name in ("cl100k", "estimate")}
FORMATS = list(ContextFormat)
WORDS = [
    "warfarin",
    "dose",
    "kidney",
    "eGFR.",
    "Dr.",
    "Chen",
    "said",
    "so.",
    "The",
    "INR",
    "is",
    "2.0-3.0!",
    "é",
    "_x_",
]
prop = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
prose = st.lists(st.sampled_from(WORDS), min_size=1, max_size=90).map(" ".join)
dates = st.one_of(st.none(), st.datetimes(datetime(2000, 1, 1), datetime(2030, 1, 1), timezones=st.just(UTC)))
confidence = st.sampled_from([1.0, 0.5, 0.83])
props = st.dictionaries(st.sampled_from(["dose", "class", "since"]), words, max_size=2)


def document_candidates(draw: st.DrawFn) -> list[Candidate]:
    """A shuffled mix of every kind of the providers' document, with requirements and groups."""
    out: list[Candidate] = []
    entities = [f"entity:e{i}" for i in range(draw(st.integers(0, 4)))]
    for i, key in enumerate(entities):
        item = ContextEntity(id=f"e{i}", type="Drug", name=draw(words), properties=draw(props))
        out.append(
            Candidate(
                section="entities", item=item, key=key, group=draw(st.sampled_from([None, "reasoning"]))
            )
        )
    for i in range(draw(st.integers(0, 3))):
        item = ContextRelationship(
            id=f"r{i}", source="e0", source_name=draw(words), relation="TREATS", target="e1",
            target_name=draw(words), confidence=draw(confidence), valid_from=draw(dates),
        )  # fmt: skip
        needs = frozenset(draw(st.lists(st.sampled_from(entities), max_size=2))) if entities else frozenset()
        out.append(Candidate(section="relationships", item=item, key=f"rel:{i}", requires_all=needs))
    for i in range(draw(st.integers(0, 2))):
        item = ContextAxiom(id=f"a{i}", name=draw(words), rule=draw(prose), applies_to=["Drug"])
        out.append(
            Candidate(section="axioms", item=item, key=f"axiom:{i}", requires_any=frozenset(entities[:2]))
        )
    for i in range(draw(st.integers(0, 3))):
        item = ContextClaim(
            id=f"cl{i}", statement=draw(prose), about=[draw(words)], confidence=draw(confidence)
        )
        out.append(Candidate(section="claims", item=item, key=f"claim:{i}", text_field="statement"))
    for i in range(draw(st.integers(0, 2))):
        item = ContextPath(text=draw(words), node_ids=["e0"], confidence=draw(confidence))
        out.append(Candidate(section="paths", item=item, key=f"path:{i}", group="reasoning"))
    if draw(st.booleans()):
        out.append(
            Candidate(section="keywords", item=draw(st.lists(words, min_size=1, max_size=4)), key="kw")
        )
    for i in range(draw(st.integers(0, 5))):
        item = ContextChunk(id=f"c{i}", content=draw(prose), score=0.5, queries=[1])
        out.append(Candidate(section="chunks", item=item, key=f"chunk:{i}", text_field="content"))
    return draw(st.permutations(out))


@st.composite
def document_cases(draw: st.DrawFn) -> tuple[list[Candidate], int, dict[str, int] | None, bool]:
    candidates = document_candidates(draw)
    budget = draw(st.integers(30, 900))
    caps = draw(
        st.one_of(
            st.none(),
            st.fixed_dictionaries({"reasoning": st.integers(0, budget)}),
            st.fixed_dictionaries({"entities": st.integers(0, budget), "chunks": st.integers(0, budget)}),
        )
    )
    return candidates, budget, caps, draw(st.booleans())


def _section_items(doc: ContextDocument, section: str) -> list[Any]:
    return [doc.keywords] if section == "keywords" and doc.keywords else list(getattr(doc, section))


@pytest.mark.parametrize("counter_name", list(COUNTERS))
@prop
@given(case=document_cases(), fmt=st.sampled_from(FORMATS))
def test_every_document_kind_fits_and_reads_as_packed(
    counter_name: str, case: tuple[list[Candidate], int, dict[str, int] | None, bool], fmt: ContextFormat
) -> None:
    candidates, budget, caps, allow_cut = case
    counter = COUNTERS[counter_name]
    try:
        packed = pack(
            ContextDocument(queries=["q"]),
            candidates,
            counter=counter,
            fmt=fmt,
            budget=budget,
            caps=caps,
            allow_cut=allow_cut,
        )
    except BudgetTooSmallError as exc:
        assert exc.needed > budget
        return
    doc = packed.document
    assert counter.count(packed.text) == packed.total_tokens <= budget
    if doc.total_tokens is not None:  # the header states the count of the text it is in
        assert doc.total_tokens == packed.total_tokens
        assert render(doc, fmt) == packed.text  # the text is the packed document, fragment for fragment
    order = {c.key: n for n, c in enumerate(candidates)}
    by_key = {c.key: c for c in candidates}
    placed = {c.key: c for c in packed.selected}
    for section in ContextDocument.SECTIONS:
        keys = [
            c.key
            for c in sorted((c for c in packed.selected if c.section == section), key=lambda c: order[c.key])
        ]
        assert [placed[k].item for k in keys] == _section_items(doc, section)  # priority order
    for key, c in placed.items():
        assert c.requires_all <= placed.keys()
        assert not c.requires_any or c.requires_any & placed.keys()
        original = by_key[key]
        if key not in packed.cut:
            assert c.item == original.item
            continue
        assert allow_cut and original.text_field is not None
        text = getattr(c.item, original.text_field)
        assert text.endswith(TRUNCATION_MARKER) and c.item.truncated
        assert getattr(original.item, original.text_field).startswith(text[: -len(TRUNCATION_MARKER)])
    assert packed.truncated == (bool(packed.dropped) or bool(packed.cut))
    assert {c.key for c in packed.dropped} == by_key.keys() - placed.keys()


# ------------------------------------------------------------------ the memory's kinds
def relation(draw: st.DrawFn) -> Relation:
    return Relation(
        source_id="a", source_name=draw(words), relation="TAKES", target_id="b", target_name=draw(words),
        properties=draw(props), confidence=draw(confidence), valid_from=draw(dates), valid_to=draw(dates),
    )  # fmt: skip


def observation(draw: st.DrawFn) -> ObservationRef:
    return ObservationRef(id="o", text=draw(words), source_type="observed", credibility=0.7)


@st.composite
def memory_cases(draw: st.DrawFn) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for i in range(draw(st.integers(0, 8))):
        fact = Fact(
            node_id=f"n{i}",
            name=draw(words),
            type="medication",
            properties=draw(props),
            relations=[relation(draw) for _ in range(draw(st.integers(0, 6)))],
            path=draw(st.none() | words),
            excerpt=draw(st.none() | prose),
        )
        out.append((draw(st.sampled_from(["core_facts", "supporting"])), fact))
    for i in range(draw(st.integers(0, 3))):
        belief = BeliefInfo(
            belief_id=f"b{i}", statement=draw(prose), subject_name=draw(st.none() | words),
            confidence=0.8, sources=["observed"], verified=draw(st.booleans()),
        )  # fmt: skip
        out.append(("beliefs", belief))
    for i in range(draw(st.integers(0, 2))):
        conflict = Conflict(
            belief_id=f"x{i}", statement=draw(words), confidence=0.6,
            supporting=[observation(draw)], contradicting=[observation(draw) for _ in range(draw(st.integers(0, 2)))],
        )  # fmt: skip
        out.append(("conflicts", conflict))
    for _ in range(draw(st.integers(0, 4))):
        change = TemporalChange(
            kind=draw(st.sampled_from(["added", "ended"])), at=datetime(2025, 6, 1, tzinfo=UTC),
            source_name=draw(words), relation="TAKES", target_name=draw(words), valid_to=draw(dates),
        )  # fmt: skip
        out.append(("temporal", change))
    return out


def _bundle_items(bundle: ContextBundle, section: str) -> list[Any]:
    return bundle.items(section)


@pytest.mark.parametrize("counter_name", list(COUNTERS))
@prop
@given(cands=memory_cases(), budget=st.integers(1, 1500), fmt=st.sampled_from(FORMATS))
def test_every_memory_kind_fits_and_reads_as_packed(
    counter_name: str, cands: list[tuple[str, Any]], budget: int, fmt: ContextFormat
) -> None:
    counter: TokenCounter = COUNTERS[counter_name]
    temporal = TemporalContext(
        reference_time=datetime(2025, 6, 20, tzinfo=UTC), since=datetime(2025, 5, 1, tzinfo=UTC)
    )
    bundle = ContextBundle.assemble(
        query=["what is she taking?"],
        candidates=cands,
        temporal=temporal,
        max_tokens=budget,
        counter=counter,
        fmt=fmt,
    )
    text = bundle.to_text()
    assert counter.count(text) == bundle.estimated_tokens <= budget
    for other in FORMATS:  # every other format packs again within the budget
        assert counter.count(bundle.to_text(other)) == bundle.tokens(other) <= budget
    if text == "":  # not even the frame fits
        assert bundle.truncated == bool(cands) and bundle.facts() == []
        return
    assert render(bundle, fmt) == text  # the bundle's lists are exactly what the text shows
    placed = 0
    for section in ContextBundle.SECTIONS:
        originals = [item for s, item in cands if s == section]
        shown = _bundle_items(bundle, section)
        placed += len(shown)
        # in priority order: each shown item is (a shorter form of) a later original than the one before
        at = 0
        for item in shown:
            while at < len(originals) and not (
                item == originals[at] or (isinstance(item, Fact) and item in originals[at].shortenings())
            ):
                at += 1
            assert at < len(originals), f"{section}: {item!r} is not in priority order"
            at += 1
    whole = sum(1 for s, item in cands if item in _bundle_items(bundle, s))
    assert bundle.truncated == (whole < len(cands))
    if placed < len(cands):
        assert bundle.truncated


def test_quota_lets_the_first_fact_of_a_section_in_shortened() -> None:
    """Under its share of the budget, the first fact of a section goes in shorter rather than not at all."""
    counter = COUNTERS["cl100k"]
    long_excerpt = "Warfarin thins the blood and needs regular INR checks. " * 20
    fact = Fact(node_id="n1", name="Warfarin", type="medication", excerpt=long_excerpt)
    other = Fact(node_id="n2", name="Aspirin", type="medication", excerpt=long_excerpt)
    temporal = None
    bundle = ContextBundle.assemble(
        query=["q"],
        candidates=[("core_facts", fact), ("core_facts", other)],
        temporal=temporal,
        max_tokens=200,
        counter=counter,
    )
    assert int(QUOTAS["core_facts"] * 200) < counter.count(fact.markdown(1))
    assert [f.node_id for f in bundle.core_facts][:1] == ["n1"]
    assert bundle.core_facts[0].excerpt is None and bundle.truncated


def test_a_candidate_in_a_section_the_frame_lacks_is_refused() -> None:
    fact = Fact(node_id="n1", name="Warfarin", type="medication")
    with pytest.raises(ValidationError, match=r"section 'core_facts', which a ContextDocument does not have"):
        pack(
            ContextDocument(),
            [Candidate(section="core_facts", item=fact, key="f")],
            counter=COUNTERS["estimate"],
            fmt="plain",
            budget=100,
        )


def test_a_run_of_misses_in_one_group_does_not_stop_the_others() -> None:
    """Many core facts too big for any room do not keep a small supporting fact out."""
    counter = COUNTERS["cl100k"]
    big = {"notes": "kidney dose review " * 150}
    cands: list[tuple[Any, Any]] = [
        ("core_facts", Fact(node_id=f"n{i}", name=f"Drug {i}", type="medication", properties=big))
        for i in range(60)
    ]
    cands.append(("supporting", Fact(node_id="s", name="Aspirin", type="medication")))
    bundle = ContextBundle.assemble(
        query=["q"], candidates=cands, temporal=None, max_tokens=300, counter=counter
    )
    assert [f.node_id for f in bundle.supporting] == ["s"]
    assert bundle.core_facts == [] and bundle.truncated
