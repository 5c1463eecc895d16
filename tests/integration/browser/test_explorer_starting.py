"""The explorer page opened while the server is still starting: it says "starting…", keeps the query box
disabled, asks /health again with backoff and becomes usable when the warm-up ends, without a reload.

The warm-up is held back by a gate (a test hook: the real :class:`CefService` warm-up, run only once the
test opens the gate), so the page is certain to load while ``/health`` answers 503 "starting".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import cef
from cef.server.http import create_app
from cef.server.service import CefService
from cef.server.settings import ServerSettings
from tests.integration.browser.test_explorer import QUESTION, ask, graph_size
from tests.integration.test_http_api import LiveServer

pytestmark = pytest.mark.slow


class GatedService(CefService):
    """The real service whose one-time loading waits until ``gate`` is set."""

    def __init__(self, kb: cef.KnowledgeBase, settings: ServerSettings) -> None:
        super().__init__(kb, settings)
        self.gate = threading.Event()

    def _load(self) -> dict[str, Any]:
        assert self.gate.wait(300), "the test never opened the warm-up gate"
        return super()._load()


@pytest.fixture
def starting(clinical_kb: cef.KnowledgeBase) -> Iterator[tuple[str, GatedService]]:
    settings = ServerSettings()
    svc = GatedService(clinical_kb, settings)
    server = LiveServer(create_app(clinical_kb, settings, service=svc))
    try:
        yield server.url, svc
    finally:
        svc.gate.set()
        server.close()


def test_the_page_waits_for_a_starting_server_and_becomes_usable_without_a_reload(
    page: Any, starting: tuple[str, GatedService]
) -> None:
    url, svc = starting
    health = httpx.get(f"{url}/health", timeout=30)
    assert health.status_code == 503 and health.json()["status"] == "starting"
    loads: list[str] = []
    page.on("load", lambda _: loads.append("load"))
    page.goto(url + "/")
    page.wait_for_function("() => document.getElementById('status').textContent.startsWith('starting')")
    assert page.is_disabled("#q") and page.is_disabled("#search")
    page.evaluate("() => { window.__sameDocument = true; }")
    page.wait_for_function("() => window.cefExplorer.retries >= 3", timeout=30_000)  # it keeps asking
    assert "starting" in page.inner_text("#status") and page.is_disabled("#search")
    assert page.inner_text("#schema-body") == "not loaded"
    svc.gate.set()  # the warm-up may run now
    page.wait_for_function("() => window.cefExplorer.ready", timeout=120_000)
    assert page.is_enabled("#q") and page.is_enabled("#search")
    page.wait_for_selector("#schema-body table")
    assert "Patient" in page.inner_text("#schema-body")
    assert "starting" not in page.inner_text("#status")
    ask(page, QUESTION)
    nodes, edges = graph_size(page)
    assert nodes >= 4 and edges >= 3, (nodes, edges)
    assert page.evaluate("() => window.__sameDocument === true") and loads == ["load"]  # never reloaded
    assert httpx.get(f"{url}/health", timeout=30).json()["status"] == "ready"
    assert page.console_errors == [] or all("503" in e for e in page.console_errors), page.console_errors
