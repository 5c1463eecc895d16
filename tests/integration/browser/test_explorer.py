"""The explorer page in real headless Chromium, against a real cef server over the clinical example."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.browser.conftest import Serve

pytestmark = pytest.mark.slow

QUESTION = "Which drugs interact with the medication John Miller takes?"
READ_KEY = "reader-key-0123"
WRITE_KEY = "writer-key-0123"


def graph_size(page: Any) -> tuple[int, int]:
    return page.evaluate("() => [window.cefExplorer.cy.nodes().length, window.cefExplorer.cy.edges().length]")


def ask(page: Any, question: str = QUESTION, strategy: str = "auto") -> None:
    page.fill("#q", question)
    page.select_option("#strategy", strategy)
    page.click("#search")
    page.wait_for_function("() => window.cefExplorer.cy && window.cefExplorer.cy.nodes().length > 0")


def click_node(page: Any, node_id: str) -> None:
    """A real mouse click on the node where Cytoscape drew it."""
    box = page.locator("#graph").bounding_box()
    x, y = page.evaluate(
        "(id) => { const p = window.cefExplorer.cy.getElementById(id).renderedPosition(); return [p.x, p.y]; }",
        node_id,
    )
    page.mouse.click(box["x"] + x, box["y"] + y)


def test_page_loads_with_the_schema_and_nothing_from_the_internet(page: Any, serve: Serve) -> None:
    url = serve()
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(url + "/")
    assert page.title() == "cef explorer"
    page.wait_for_selector("#schema-body table")
    schema = page.inner_text("#schema-body")
    assert "Patient" in schema and "Medication" in schema
    assert "INTERACTS_WITH" in schema and "ASSOCIATION" in schema  # relation types with their semantics
    assert "open (no API keys)" in page.inner_text("#server-info")
    assert page.evaluate("() => typeof cytoscape") == "function"
    assert requested and all(u.startswith(url) for u in requested), requested
    assert page.console_errors == []


def test_a_query_draws_nodes_edges_and_the_ranked_chunks(page: Any, serve: Serve) -> None:
    url = serve()
    page.goto(url + "/")
    page.wait_for_selector("#schema-body table")
    ask(page)
    nodes, edges = graph_size(page)
    assert nodes >= 4 and edges >= 3, (nodes, edges)
    drawn = page.evaluate("() => window.cefExplorer.cy.nodes().map(n => n.id())")
    assert "pat-john" in drawn  # the anchor
    assert "med-warfarin" in drawn  # the medication he takes, on a typed path
    # the ranked chunks with their explanations
    hits = page.locator("#results li")
    assert hits.count() >= 1
    assert "score" in hits.first.inner_text()
    assert "strategy" in page.inner_text("#result-meta")
    assert page.locator("#results .path").count() >= 1  # at least one chunk explained by a typed path
    assert f"{nodes} nodes, {edges} edges" == page.inner_text("#graph-summary")
    assert page.console_errors == []


def test_the_query_options_reach_the_server(page: Any, serve: Serve) -> None:
    url = serve()
    page.goto(url + "/")
    page.fill("#depth", "1")
    page.fill("#top-k", "3")
    page.fill("#as-of", "2024-06-01T12:00:00")
    page.fill("#budget", "120")
    with page.expect_request(lambda r: r.url.endswith("/api/v1/explore")) as sent:
        ask(page, "warfarin bleeding risk", strategy="bm25")
    body = sent.value.post_data_json
    assert body["strategy"] == "bm25" and body["top_k"] == 3 and body["traversal"] == {"depth": 1}
    assert body["max_token_budget"] == 120
    assert body["as_of"].startswith("2024-06-01T")
    assert "strategy bm25" in page.inner_text("#result-meta")
    assert 1 <= page.locator("#results li").count() <= 3
    assert page.console_errors == []


def test_clicking_a_node_shows_its_properties_chunks_and_neighbours(page: Any, serve: Serve) -> None:
    url = serve()
    page.goto(url + "/")
    ask(page)
    click_node(page, "pat-john")
    page.wait_for_selector("#node-properties table")
    assert page.inner_text("#node-title") == "John Miller"
    props = page.inner_text("#node-properties")
    assert "Patient" in props and "age" in props and "67" in props
    page.wait_for_selector("#node-neighbours .neighbour")
    neighbours = page.inner_text("#node-neighbours")
    assert "PRESCRIBED" in neighbours and "Warfarin" in neighbours
    page.wait_for_selector("#node-chunks .chunk-text")
    assert "John" in page.inner_text("#node-chunks")
    assert page.console_errors == []


def test_expanding_a_node_draws_its_neighbours(page: Any, serve: Serve) -> None:
    url = serve()
    page.goto(url + "/")
    ask(page)
    drawn = set(page.evaluate("() => window.cefExplorer.cy.nodes('[role != \\'chunk\\']').map(n => n.id())"))
    # a drawn node with neighbours that are not drawn yet (the API says which)
    candidates = []
    for node_id in sorted(drawn):
        view = httpx.get(f"{url}/api/v1/nodes/{node_id}/neighbors", params={"limit": 50}).json()
        missing = {n["id"] for n in view["nodes"]} - drawn
        if missing:
            candidates.append((node_id, missing))
    assert candidates, "every neighbour of every drawn node is drawn already"
    node_id, missing = candidates[0]
    click_node(page, node_id)
    page.wait_for_selector("#node-neighbours .neighbour")
    before = graph_size(page)[0]
    page.click("#expand")
    page.wait_for_function(f"() => window.cefExplorer.cy.nodes().length > {before}")
    now = set(page.evaluate("() => window.cefExplorer.cy.nodes().map(n => n.id())"))
    assert missing <= now
    assert graph_size(page)[0] == before + len(missing)
    assert page.console_errors == []


def test_the_paths_strategy_shows_answer_nodes_with_their_paths(page: Any, serve: Serve) -> None:
    url = serve()
    page.goto(url + "/")
    ask(page, strategy="paths")
    answers = page.inner_text("#answers")
    assert "Ibuprofen" in answers and "Amiodarone" in answers
    assert page.locator("#answers .path").count() >= 2
    assert "John Miller" in page.locator("#answers .path").first.inner_text()
    roles = page.evaluate(
        "() => window.cefExplorer.cy.nodes('[role = \\'answer\\']').map(n => n.id()).sort()"
    )
    assert {"med-amiodarone", "med-ibuprofen"} <= set(roles)  # the best path's; weaker paths' follow
    assert "med-warfarin" not in roles
    assert page.console_errors == []


def test_a_wrong_key_gets_a_clear_message(page: Any, serve: Serve) -> None:
    url = serve(api_keys={READ_KEY: "read", WRITE_KEY: "write"})
    page.goto(url + "/")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('API key')")
    assert "needs an API key with read scope" in page.inner_text("#status")

    page.fill("#api-key", "not-a-real-key-42")
    page.click("#key-apply")
    page.wait_for_selector("#status.error")
    message = page.inner_text("#status")
    assert "refused the API key" in message and "unknown API key" in message
    assert page.get_attribute("#status", "role") == "alert"
    assert page.inner_text("#schema-body") == "not loaded"  # nothing was shown to a wrong key


def test_a_read_key_reads_and_the_page_never_writes(page: Any, serve: Serve) -> None:
    url = serve(api_keys={READ_KEY: "read", WRITE_KEY: "write"})
    methods: list[tuple[str, str]] = []
    page.on("request", lambda r: methods.append((r.method, r.url[len(url) :])))
    page.goto(url + "/")
    page.fill("#api-key", READ_KEY)
    page.click("#key-apply")
    page.wait_for_selector("#schema-body table")
    assert "accepted" in page.inner_text("#status")
    ask(page)
    click_node(page, "pat-john")
    page.wait_for_selector("#node-properties table")
    # the page only ever read: GETs, and the explore query (a read)
    writes = [
        (m, p) for m, p in methods if m not in ("GET", "POST") or (m == "POST" and p != "/api/v1/explore")
    ]
    assert writes == []
    assert ("POST", "/api/v1/explore") in methods
    assert ("GET", "/api/v1/nodes/pat-john/neighbors?depth=1&limit=50") in methods
    assert page.console_errors == []
