"""docs/langchain.md and docs/llamaindex.md stay true: their code runs, every option and metadata key is documented."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cef.adapters.base import CEF_METADATA_KEYS, CefRetrieverOptions
from tests.conftest import ROOT

DOCS = {"langchain": ROOT / "docs" / "langchain.md", "llamaindex": ROOT / "docs" / "llamaindex.md"}
TOP_K = {"langchain": "k", "llamaindex": "similarity_top_k"}


def python_blocks(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)


@pytest.mark.parametrize("framework", sorted(DOCS))
def test_every_option_and_metadata_key_is_documented(framework: str) -> None:
    text = DOCS[framework].read_text()
    options = [*CefRetrieverOptions.model_fields, TOP_K[framework]]
    options.remove("knowledge_base")  # the first argument, described in "Construct"
    for name in options:
        assert f"`{name}`" in text, f"{framework}: option {name} is not documented"
    for key in CEF_METADATA_KEYS:
        assert f"`{key}`" in text, f"{framework}: metadata key {key} is not documented"
    assert f"pip install 'cef-context[all,{framework}]'" in text


@pytest.mark.slow
@pytest.mark.parametrize("framework", sorted(DOCS))
def test_the_code_in_the_docs_runs(
    framework: str,
    clinical_db_embedded: Path,
    embedder: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shutil.copy(clinical_db_embedded, tmp_path / "demo.db")  # what `cef ingest ... --db demo.db` builds
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(DOCS[framework])
    assert len(blocks) >= 2
    namespace: dict[str, object] = {}
    for block in blocks:
        code = compile(block, f"{DOCS[framework].name}", "exec")
        if "http://" in block:
            continue  # REST mode: tests/integration/adapters/test_rest.py runs it against a live server
        exec(code, namespace)
    out = capsys.readouterr().out
    assert "John Miller -[PRESCRIBED]-> Warfarin -[INTERACTS_WITH]-> Amiodarone" in out
