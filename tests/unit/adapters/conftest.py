"""Fixtures for the framework retrievers: the clinical example on disk, without embeddings (graph + BM25)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import cef
from tests.conftest import clinical_batch

JOHN_DRUGS = "Which drugs interact with the medication John Miller takes?"


@pytest.fixture
def clinical_file(tmp_path: Path) -> Path:
    """A closed clinical knowledge base file, for retrievers that open it themselves."""
    path = tmp_path / "clinical.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
    return path


@pytest.fixture
def scoped_kb(clinical_kb: cef.KnowledgeBase) -> Iterator[cef.KnowledgeBase]:
    """The clinical example plus two warfarin notes of two tenants (scopes)."""
    clinical_kb.index_batch(
        cef.Batch(
            chunks=[
                cef.Chunk(
                    id="note-a",
                    content="Warfarin dosing note for tenant A.",
                    node_id="med-warfarin",
                    scope="a",
                ),
                cef.Chunk(
                    id="note-b",
                    content="Warfarin dosing note for tenant B.",
                    node_id="med-warfarin",
                    scope="b",
                ),
            ]
        )
    )
    yield clinical_kb
