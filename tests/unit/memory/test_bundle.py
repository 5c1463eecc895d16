"""ContextBundle: token budgets hold in every format; sections, structure and parsing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import cef
from cef.context.tokens import make_token_counter
from cef.memory import SemanticMemory

from .conftest import Clock, load_example

QUERY = (
    "What medications is patient 12345 currently taking, and are there any interactions I should be aware of?"
)
FORMATS = ["markdown", "yaml", "json", "plain"]


@pytest.fixture(scope="module")
def pharma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SemanticMemory, str]]:
    kb = cef.open(tmp_path_factory.mktemp("bundle") / "m.db", embedder=None)
    memory = SemanticMemory(kb, clock=Clock(), extractor=None, owns_kb=True)
    scope = load_example(memory, "pharma")
    yield memory, scope
    memory.close()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2500), st.sampled_from(FORMATS), st.sampled_from(["cl100k", "wordpiece", "estimate"]))
def test_every_format_fits_the_budget(
    pharma: tuple[SemanticMemory, str], budget: int, fmt: str, counter: str
) -> None:
    memory, scope = pharma
    memory.token_counter = make_token_counter(counter)
    bundle = memory.retrieve_context(QUERY, scope=scope, max_tokens=budget, format=fmt)
    tok = make_token_counter(counter)
    for f in FORMATS:  # the bundle's own format and every other one
        text = bundle.to_text(f)
        assert tok.count(text) <= budget
        assert bundle.tokens(f) == tok.count(text)
    assert bundle.estimated_tokens == tok.count(bundle.to_text())


def test_more_budget_never_holds_less(pharma: tuple[SemanticMemory, str]) -> None:
    memory, scope = pharma
    memory.token_counter = make_token_counter("cl100k")
    sizes = []
    for budget in (120, 300, 600, 1200, 5000):
        b = memory.retrieve_context(QUERY, scope=scope, max_tokens=budget)
        sizes.append(len(b.facts()) + len(b.beliefs) + len(b.temporal.changes if b.temporal else []))
        assert b.truncated == (budget < 5000)
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    # the anchor is the first thing in: critical information survives a small budget
    small = memory.retrieve_context(QUERY, scope=scope, max_tokens=120)
    assert small.core_facts[0].node_id == "patient-12345"


def test_structured_and_parsable_forms(pharma: tuple[SemanticMemory, str]) -> None:
    memory, scope = pharma
    memory.token_counter = make_token_counter("cl100k")
    b = memory.retrieve_context(QUERY, scope=scope, max_tokens=20_000)  # everything fits every format
    assert not b.truncated
    data = b.to_structured()
    assert set(data) >= {"core_facts", "supporting", "beliefs", "temporal", "conflicts", "estimated_tokens"}
    assert data["core_facts"][0]["node_id"] == "patient-12345"
    as_json = json.loads(b.to_text("json"))
    assert as_json["meta"]["query"] == [QUERY]
    assert [f["node_id"] for f in as_json["core_facts"]] == [f.node_id for f in b.core_facts]
    as_yaml = yaml.safe_load(b.to_text("yaml"))
    assert [x["statement"] for x in as_yaml["beliefs"]] == [x.statement for x in b.beliefs]
    md = b.to_text("markdown")
    assert md.startswith("# Context\n") and "## Core facts" in md and "## Beliefs" in md
    plain = b.to_text("plain")
    assert "CORE FACTS" in plain and "**" not in plain


def test_tiny_budget_gives_empty_text(pharma: tuple[SemanticMemory, str]) -> None:
    memory, scope = pharma
    b = memory.retrieve_context(QUERY, scope=scope, max_tokens=3)
    assert b.to_text() == "" and b.estimated_tokens == 0 and b.truncated


def test_bad_constraints_are_refused(pharma: tuple[SemanticMemory, str]) -> None:
    memory, _ = pharma
    from cef.errors import ValidationError

    with pytest.raises(ValidationError, match="max_tokens"):
        memory.retrieve_context(QUERY, max_tokens=0)
    with pytest.raises(ValidationError, match="format"):
        memory.retrieve_context(QUERY, format="html")
    with pytest.raises(ValidationError, match="question"):
        memory.retrieve_context(["  "])
    with pytest.raises(ValidationError, match="scope"):
        memory.retrieve_context(QUERY, scope={"user": 1})
