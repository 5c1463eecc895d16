"""`cef graph --format html` output opens in real headless Chromium, offline, and draws the nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import cef
from cef.cli import app
from tests.conftest import clinical_batch

pytestmark = pytest.mark.slow

QUESTION = "Which drugs interact with the medication John Miller takes?"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("graph-html") / "clinical.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    return path


def draw(*args: str) -> None:
    r = CliRunner().invoke(app, ["graph", *args])
    assert r.exit_code == 0, r.output


def test_a_neighbourhood_page_opens_offline_and_draws_its_nodes(page: Any, db: Path, tmp_path: Path) -> None:
    out = tmp_path / "john.html"
    draw("pat-john", "--depth", "2", "--db", str(db), "--out", str(out))
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(out.as_uri())
    page.wait_for_function("() => window.cefGraph && window.cefGraph.cy.nodes().length > 0")
    nodes, edges = page.evaluate(
        "() => [window.cefGraph.cy.nodes().length, window.cefGraph.cy.edges().length]"
    )
    assert nodes >= 10 and edges >= nodes - 1
    assert f"{nodes} nodes, {edges} edges" in page.inner_text("aside")
    assert all(u.startswith("file://") for u in requested), requested  # nothing from the network
    # the nodes are really drawn: on screen, inside the canvas
    box = page.locator("#graph").bounding_box()
    x, y = page.evaluate(
        "() => { const p = window.cefGraph.cy.getElementById('pat-john').renderedPosition(); return [p.x, p.y]; }"
    )
    assert 0 < x < box["width"] and 0 < y < box["height"]
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.wait_for_selector("#node-title")
    assert page.inner_text("#node-title") == "John Miller"
    assert "67" in page.inner_text("#node")
    assert page.console_errors == []


def test_a_query_page_draws_the_answers(page: Any, db: Path, tmp_path: Path) -> None:
    out = tmp_path / "query.html"
    draw("--query", QUESTION, "--strategy", "paths", "--db", str(db), "--embedder", "none", "--out", str(out))
    page.goto(out.as_uri())
    page.wait_for_function("() => window.cefGraph && window.cefGraph.cy.nodes().length > 0")
    answers = page.evaluate(
        "() => window.cefGraph.cy.nodes('[role = \"answer\"]').map(n => n.data('name')).sort()"
    )
    assert {"Amiodarone", "Ibuprofen"} <= set(answers) and "Warfarin" not in answers
    assert "INTERACTS_WITH" in page.inner_text("aside")  # the typed paths, in words
    assert page.console_errors == []
