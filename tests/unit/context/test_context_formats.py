"""The four formats: complete, valid for their format, YAML and JSON parse back to the same content."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from cef.context.formats import (
    ContextAxiom,
    ContextChunk,
    ContextClaim,
    ContextDocument,
    ContextEntity,
    ContextFormat,
    ContextPath,
    ContextRelationship,
    md_code,
    md_inline,
    parse,
    render,
)

# ----------------------------------------------------------------- documents
texts = st.text(max_size=80)
names = st.text(min_size=1, max_size=40)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=8,
)
props = st.dictionaries(st.text(min_size=1, max_size=12), json_values, max_size=4)
scores = st.one_of(
    st.none(), st.floats(min_value=-10, max_value=10, allow_nan=False).map(lambda x: round(x, 4))
)
dates = st.one_of(
    st.none(),
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
)

entities = st.builds(
    ContextEntity,
    id=names,
    type=names,
    name=names,
    properties=props,
    score=scores,
    matched_terms=st.lists(names, max_size=3),
)
relationships = st.builds(
    ContextRelationship,
    id=names,
    source=names,
    source_name=names,
    relation=names,
    target=names,
    target_name=names,
    properties=props,
    confidence=st.floats(min_value=0, max_value=1),
    valid_from=dates,
    valid_to=dates,
)
axioms = st.builds(
    ContextAxiom,
    id=names,
    name=names,
    rule=texts,
    applies_to=st.lists(names, max_size=3),
    severity=st.none() | names,
)
claims = st.builds(
    ContextClaim,
    id=names,
    statement=texts,
    about=st.lists(names, max_size=3),
    source=st.none() | names,
    confidence=st.floats(min_value=0, max_value=1),
    truncated=st.booleans(),
)
paths = st.builds(
    ContextPath,
    text=texts,
    node_ids=st.lists(names, max_size=4),
    confidence=st.floats(min_value=0, max_value=1),
)
chunks = st.builds(
    ContextChunk,
    id=names,
    content=st.text(min_size=1, max_size=200),
    score=scores,
    node_id=st.none() | names,
    queries=st.lists(st.integers(min_value=1, max_value=9), max_size=3),
    why=st.none() | texts,
    truncated=st.booleans(),
)
documents = st.builds(
    ContextDocument,
    title=names,
    queries=st.lists(texts, max_size=3),
    token_budget=st.none() | st.integers(min_value=1, max_value=100_000),
    total_tokens=st.none() | st.integers(min_value=0, max_value=100_000),
    truncated=st.booleans(),
    entities=st.lists(entities, max_size=3),
    relationships=st.lists(relationships, max_size=3),
    axioms=st.lists(axioms, max_size=2),
    claims=st.lists(claims, max_size=2),
    paths=st.lists(paths, max_size=2),
    keywords=st.lists(names, max_size=5),
    chunks=st.lists(chunks, max_size=3),
)
prop = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@prop
@given(doc=documents)
def test_json_parses_back_to_the_same_content(doc: ContextDocument) -> None:
    text = render(doc, ContextFormat.JSON)
    assert json.loads(text) == doc.to_data() == parse(text, "json")


@prop
@given(doc=documents)
def test_yaml_parses_back_to_the_same_content(doc: ContextDocument) -> None:
    text = render(doc, ContextFormat.YAML)
    assert yaml.safe_load(text) == doc.to_data() == parse(text, "yaml")


@prop
@given(doc=documents)
def test_markdown_keeps_its_structure_whatever_the_text(doc: ContextDocument) -> None:
    """Names and chunk text can hold any characters; the headings and block quotes stay what they are."""
    tokens = MarkdownIt("commonmark").parse(render(doc, ContextFormat.MARKDOWN))
    headings = [
        (t.tag, "".join(c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline")))
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.level == 0
    ]
    expected_h2 = [
        title
        for title, items in (
            ("Entities", doc.entities),
            ("Relationships", doc.relationships),
            ("Domain rules", doc.axioms),
            ("Claims", doc.claims),
            ("Graph paths", doc.paths),
            ("Key concepts", doc.keywords),
            ("Retrieved information", doc.chunks),
        )
        if items
    ]
    assert [h for tag, h in headings if tag == "h2"] == expected_h2
    # (CommonMark reads NUL as U+FFFD)
    assert [h for tag, h in headings if tag == "h1"] == [" ".join(doc.title.split()).replace("\0", "\ufffd")]
    assert sum(1 for tag, _ in headings if tag == "h3") == len(doc.chunks)
    quotes = sum(1 for t in tokens if t.type == "blockquote_open" and t.level == 0)
    assert quotes == len(doc.chunks)
    # one top-level list item per entity, relationship, rule, claim and path
    items = sum(1 for t in tokens if t.type == "list_item_open" and t.level == 1)
    assert items == sum(len(x) for x in (doc.entities, doc.relationships, doc.axioms, doc.claims, doc.paths))


def sample() -> ContextDocument:
    return ContextDocument(
        title="Context",
        queries=["Which medications interact with warfarin?"],
        token_budget=500,
        total_tokens=321,
        truncated=True,
        entities=[
            ContextEntity(
                id="med-warfarin",
                type="Medication",
                name="Warfarin",
                properties={"brand": "Coumadin", "aliases": ["Jantoven"]},
                score=0.91,
                matched_terms=["warfarin"],
            )
        ],
        relationships=[
            ContextRelationship(
                id="e1",
                source="med-warfarin",
                source_name="Warfarin",
                relation="INTERACTS_WITH",
                target="med-ibuprofen",
                target_name="Ibuprofen",
                properties={"severity": "major"},
                valid_from=datetime(2021, 3, 5, tzinfo=UTC),
            )
        ],
        axioms=[
            ContextAxiom(
                id="ax1",
                name="Bleeding risk",
                rule="Never combine with NSAIDs.",
                applies_to=["Anticoagulant"],
            )
        ],
        claims=[
            ContextClaim(
                id="cl1", statement="DOACs are preferred.", about=["Warfarin"], source="AF guideline"
            )
        ],
        paths=[
            ContextPath(
                text="Warfarin -[TREATS]-> Atrial fibrillation", node_ids=["med-warfarin", "cond-afib"]
            )
        ],
        keywords=["warfarin", "bleeding"],
        chunks=[
            ContextChunk(
                id="drug-warfarin",
                content="# Not a heading\n[1]: http://example.com\nWarfarin needs INR checks.",
                score=0.8,
                queries=[1, 2],
                why="hybrid: Warfarin -[TREATS]-> Atrial fibrillation",
                truncated=True,
            )
        ],
    )


def test_every_format_is_complete() -> None:
    doc = sample()
    must = [
        "Warfarin",
        "Coumadin",
        "INTERACTS_WITH",
        "Ibuprofen",
        "major",
        "2021-03-05",
        "Never combine with NSAIDs.",
        "Anticoagulant",
        "DOACs are preferred.",
        "AF guideline",
        "Atrial fibrillation",
        "bleeding",
        "Warfarin needs INR checks.",
        "drug-warfarin",
    ]
    for fmt in ContextFormat:
        text = render(doc, fmt)
        for piece in must:
            assert piece in text, (fmt, piece)
        assert "500" in text and "321" in text  # budget and tokens used
        assert "truncated" in text.lower()


def test_markdown_layout() -> None:
    text = render(sample(), "markdown")
    assert text.startswith("# Context\nQuery: Which medications interact with warfarin?\nTokens: 321 of 500")
    assert (
        "## Entities\n- **Medication: Warfarin** (id: med-warfarin) — brand: Coumadin; aliases: Jantoven"
        in text
    )
    assert "- Warfarin → `INTERACTS_WITH` → Ibuprofen (severity: major; since 2021-03-05)" in text
    assert "- **Bleeding risk** (applies to Anticoagulant): Never combine with NSAIDs." in text
    assert "- `Warfarin -[TREATS]-> Atrial fibrillation` (confidence 1.00)" in text
    assert "### (1) drug-warfarin · score 0.800 · queries 1, 2 · truncated" in text
    assert "> # Not a heading\n> [1]: http://example.com\n> Warfarin needs INR checks." in text
    tokens = MarkdownIt("commonmark").parse(text)
    links = [t for t in tokens if t.type == "inline" for c in (t.children or []) if c.type == "link_open"]
    assert links == []  # a link definition inside a chunk turns nothing into a link


def test_markdown_escaping() -> None:
    assert md_inline("snake_case and a*b") == "snake_case and a\\*b"
    assert md_inline("# title") == "\\# title"
    assert md_inline("_lead") == "\\_lead"
    assert md_inline("1. item") == "1\\. item"
    assert md_inline("two\nlines") == "two lines"
    assert md_code("a `tick` b") == "``a `tick` b``"
    assert md_code("`edge`") == "`` `edge` ``"


def test_plain_has_no_markup() -> None:
    doc = sample()
    doc.chunks[0].content = "Warfarin needs INR checks."
    text = render(doc, "plain")
    assert text.startswith("CONTEXT\nQuery: Which medications interact with warfarin?\nTokens: 321 of 500")
    assert "**" not in text and "`" not in text
    assert not any(line.startswith(("#", ">")) for line in text.splitlines())
    assert "ENTITIES\n- Medication: Warfarin [med-warfarin] brand=Coumadin; aliases=Jantoven" in text
    assert "[1] drug-warfarin (score 0.800; queries 1, 2; via hybrid" in text


def test_structured_forms_leave_defaults_out_and_keep_dates_as_text() -> None:
    data = parse(render(sample(), "yaml"), "yaml")
    (rel,) = data["relationships"]
    assert "id" not in rel and "confidence" not in rel  # edge id and default confidence are noise
    assert rel["valid_from"] == "2021-03-05T00:00:00Z"
    assert data["meta"] == {
        "title": "Context",
        "queries": ["Which medications interact with warfarin?"],
        "token_budget": 500,
        "total_tokens": 321,
        "truncated": True,
    }
    empty = parse(render(ContextDocument(), "json"), "json")
    assert all(empty[k] == [] for k in ("entities", "relationships", "axioms", "claims", "paths", "chunks"))
