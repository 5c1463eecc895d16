"""Safe defaults: `cef serve http` is read-only unless --writable (like `cef serve mcp`); an answer
without an LLM says why and what to configure; the offline mock LLM answers sensibly."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import cef
from cef.engine.answer import NO_LLM_NOTE
from cef.llm import MockLLMClient
from cef.server.http import READ_ONLY_MESSAGE, create_app
from cef.server.settings import ServerSettings

CEF = str(Path(sys.executable).parent / "cef")
NODE = {"id": "drug-new", "label": "Medication", "properties": {"name": "Newdrug"}}
SEARCH = {"query": "warfarin", "limit": 3}


def test_the_default_settings_are_read_only() -> None:
    assert ServerSettings().writable is False


@pytest.mark.parametrize("keys", [{}, {"writer-key-0001": "write"}])
def test_a_read_only_app_refuses_every_write_and_serves_reads(
    clinical_kb: cef.KnowledgeBase, keys: dict[str, str]
) -> None:
    settings = ServerSettings(api_keys=keys, graph_timeout_ms=0)
    headers = {"X-API-Key": "writer-key-0001"} if keys else {}
    with TestClient(create_app(clinical_kb, settings, read_only=not settings.writable)) as api:
        for method, url, body in [
            ("POST", "/api/v1/nodes", NODE),
            ("PATCH", "/api/v1/nodes/pat-john", {"properties": {"x": 1}}),
            ("DELETE", "/api/v1/nodes/pat-john", None),
            ("POST", "/api/v1/edges", {"relation_type": "PRESCRIBED", "source": "pat-john", "target": "x"}),
            ("POST", "/api/v1/chunks", {"content": "x", "node_id": "pat-john"}),
        ]:
            r = api.request(method, url, json=body, headers=headers)
            assert r.status_code == 403, (method, url, r.text)
            assert "--writable" in r.text
        assert api.post("/api/v1/search", json=SEARCH, headers=headers).status_code == 200
        assert api.get("/api/v1/nodes/pat-john", headers=headers).status_code == 200
    assert clinical_kb.find_node("drug-new") is None and clinical_kb.find_node("pat-john") is not None


def test_a_writable_app_accepts_writes(clinical_kb: cef.KnowledgeBase) -> None:
    settings = ServerSettings(writable=True, graph_timeout_ms=0)
    with TestClient(create_app(clinical_kb, settings, read_only=not settings.writable)) as api:
        assert api.post("/api/v1/nodes", json=NODE).status_code == 201


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _serve(db: Path, *flags: str) -> Iterator[tuple[httpx.Client, Path]]:
    port = _free_port()
    log = db.with_suffix(".log")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEF_")}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [CEF, "serve", "http", "--db", str(db), "--embedder", "none", "--port", str(port), *flags],
            env=env,
            stdout=out,
            stderr=out,
        )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as api:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if api.get("/health").json().get("status") == "ready":
                        break
                except httpx.HTTPError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            yield api, log
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.mark.slow
def test_cef_serve_http_is_read_only_unless_writable(clinical_kb: cef.KnowledgeBase) -> None:
    db = Path(clinical_kb.store.path)  # type: ignore[attr-defined]
    with _serve(db) as (api, log):
        r = api.post("/api/v1/nodes", json=NODE)
        assert r.status_code == 403 and READ_ONLY_MESSAGE in r.text
        assert api.post("/api/v1/search", json=SEARCH).status_code == 200
        text = " ".join(log.read_text().split())
        assert "read-only" in text and "including its write endpoints" not in text
    with _serve(db, "--writable") as (api, log):
        assert api.post("/api/v1/nodes", json=NODE).status_code == 201
        assert "including its write endpoints" in " ".join(log.read_text().split())


def test_an_answer_without_an_llm_says_why_and_what_to_configure(clinical_kb: cef.KnowledgeBase) -> None:
    got = clinical_kb.answer("Which medications interact with warfarin?")
    assert got.answer is None and got.sources
    assert NO_LLM_NOTE in got.notes
    assert "CEF_LLM" in NO_LLM_NOTE and "--llm" in NO_LLM_NOTE


def test_the_mock_llm_quotes_the_passage_that_answers_and_cites_it(clinical_kb: cef.KnowledgeBase) -> None:
    got = clinical_kb.answer("Which drugs interact with the medication John Miller takes?", MockLLMClient())
    assert got.understood and not any("JSON" in n for n in got.notes)  # the mock's query is valid JSON
    assert got.answer is not None and got.answer.startswith("[mock] ")
    (cited,) = got.citations
    content = {s.id: s.content for s in got.sources}[cited]
    quoted = got.answer.removeprefix("[mock] ").rsplit(" [", 1)[0]
    assert quoted.rstrip("…") in " ".join(content.split())
    assert "interact" in quoted.lower()


def test_the_mock_llm_says_when_the_passages_do_not_answer() -> None:
    llm = MockLLMClient()
    prompt = (
        "Context:\n\n[c1]\nThe lighthouse keeper rows to Oslo.\n\nQuestion: What is quantum chromodynamics?"
    )
    assert llm.generate(prompt) == "[mock] The passages do not answer the question."
    assert llm.generate("hi").startswith('[mock] Question: "hi"')  # any other prompt is described
