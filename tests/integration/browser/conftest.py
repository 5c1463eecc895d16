"""Real headless Chromium (Debian's ``chromium``) driven by Playwright, and a real cef server to point it at.

Playwright drives the system browser (``executable_path``); it never downloads
one. When Chromium is missing the tests fail and say how to install it.
Each test saves a screenshot under ``artifacts/screenshots/`` (or
``$CEF_ARTIFACTS/screenshots``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import cef
from cef.server.http import create_app
from cef.server.settings import ServerSettings
from tests.integration.test_http_api import LiveServer

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = os.environ.get("CEF_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: the browser tests need it. Install it with "
            "`apt-get install -y chromium` (Debian; .ci/run does), or point CEF_CHROMIUM at a Chromium binary.",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser page (1400x900); its screenshot is saved when the test ends, pass or fail."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.console_errors = []  # type: ignore[attr-defined]
    pg.on("console", lambda m: m.type == "error" and pg.console_errors.append(m.text))  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))  # type: ignore[attr-defined]
    yield pg
    folder = Path(os.environ.get("CEF_ARTIFACTS", ROOT / "artifacts")) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(folder / f"{request.node.name}.png"), full_page=True)
    context.close()


Serve = Callable[..., str]


@pytest.fixture
def serve(clinical_kb: cef.KnowledgeBase) -> Iterator[Serve]:
    """serve(**settings) -> the URL of a real cef REST server (uvicorn) over the clinical example."""
    servers: list[LiveServer] = []

    def start(**settings: Any) -> str:
        import time

        import httpx

        server = LiveServer(create_app(clinical_kb, ServerSettings(**settings)))
        servers.append(server)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # /health says "starting" until the models are loaded
            if httpx.get(f"{server.url}/health", timeout=10).status_code == 200:
                break
            time.sleep(0.2)
        return server.url

    yield start
    for s in servers:
        s.close()
