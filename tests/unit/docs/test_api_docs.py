"""The facade documents itself: docs/api.md is generated from the code and current, every public method of
KnowledgeBase and SemanticMemory says what it does with each parameter, and takes explicit keywords."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import cef
from cef.memory import RetrievalConstraints, SemanticMemory

ROOT = Path(__file__).resolve().parents[3]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_api_docs", ROOT / "scripts" / "gen_api_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
FACADES = [cef.KnowledgeBase, SemanticMemory]
MEMBERS = [(cls.__name__, name, member) for cls in FACADES for name, member in GEN.public_members(cls)]


def test_docs_api_md_is_current() -> None:
    written = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert written == GEN.render(), "docs/api.md is not current: run python scripts/gen_api_docs.py"


def test_the_generator_is_deterministic_and_catches_a_change() -> None:
    assert GEN.render() == GEN.render()

    def documented(x: int, *, y: str = "a") -> int:
        """Twice ``x``."""
        return 2 * x

    assert GEN.signature(documented, bound=False) == "(x: int, *, y: str = 'a') -> int"
    with pytest.raises(ValueError, match="no stable text"):
        GEN.signature(lambda x=object(): x, bound=False)  # a default shown with its address


def test_the_readme_links_the_reference() -> None:
    assert "docs/api.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def _parameters(member: Any) -> list[inspect.Parameter]:
    if isinstance(member, property):
        return []
    return list(inspect.signature(member).parameters.values())[1:]  # the first is the facade itself


@pytest.mark.parametrize(("cls", "name", "member"), MEMBERS, ids=[f"{c}.{n}" for c, n, _ in MEMBERS])
def test_every_public_method_documents_each_parameter(cls: str, name: str, member: Any) -> None:
    doc = inspect.getdoc(member) or ""
    assert doc.strip(), f"{cls}.{name} has no docstring"
    missing = [p.name for p in _parameters(member) if f"``{p.name}``" not in doc and f"{p.name}:" not in doc]
    assert not missing, f"{cls}.{name}: the docstring does not say what {missing} are"


@pytest.mark.parametrize(("cls", "name", "member"), MEMBERS, ids=[f"{c}.{n}" for c, n, _ in MEMBERS])
def test_no_pass_through_keywords(cls: str, name: str, member: Any) -> None:
    kinds = {p.kind for p in _parameters(member)}
    assert inspect.Parameter.VAR_KEYWORD not in kinds, f"{cls}.{name} takes **kwargs: name its keywords"


def test_every_method_is_declared_once() -> None:
    """A method the facade passes on to a component is the component's method, not a copy of its signature."""
    kb_delegates = {
        name: member
        for name, member in GEN.public_members(cef.KnowledgeBase)
        if not isinstance(member, property)
    }
    assert kb_delegates["index_batch"] is cef.KnowledgeBase.index_batch
    assert kb_delegates["index_batch"].__qualname__ == "KnowledgeIndexer.index_batch"
    assert kb_delegates["retrieve"].__qualname__ == "KnowledgeRetriever.retrieve"
    assert kb_delegates["answer"].__name__ == "answer_question"
    assert SemanticMemory.ingest_many.__name__ == "ingest_documents"


def test_retrieve_context_keywords_are_constraint_fields() -> None:
    keywords = [
        p.name
        for p in inspect.signature(SemanticMemory.retrieve_context).parameters.values()
        if p.kind is p.KEYWORD_ONLY
    ]
    assert keywords and set(keywords) <= set(RetrievalConstraints.model_fields)
