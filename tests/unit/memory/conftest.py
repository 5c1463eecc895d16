"""Fixtures of the memory unit tests: a memory on a fresh SQLite file, no embeddings, a fixed clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import cef
from cef.memory import SemanticMemory
from cef.memory.dataset import load_dataset
from tests.support.examples import example_extension

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "memory"
NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)


class Clock:
    """A settable clock for the memory."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now = self.now + timedelta(**kw)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Iterator[SemanticMemory]:
    """An empty memory without embeddings or entity extractor."""
    kb = cef.open(tmp_path / "memory.db", embedder=None)
    m = SemanticMemory(kb, clock=clock, extractor=None, owns_kb=True)
    yield m
    m.close()


@pytest.fixture
def open_memory_at(tmp_path: Path, clock: Clock) -> Callable[..., SemanticMemory]:
    """Open (or reopen) a memory on the test's file; the test closes it."""

    def opener(**kw: object) -> SemanticMemory:
        kb = cef.open(tmp_path / "memory.db", embedder=None)
        return SemanticMemory(kb, clock=clock, extractor=None, owns_kb=True, **kw)  # type: ignore[arg-type]

    return opener


def load_example(memory: SemanticMemory, domain: str) -> str:
    """Register a domain's extension, load its dataset; returns the dataset's scope."""
    import yaml

    memory.register_extension(example_extension(domain))
    path = EXAMPLES / f"{domain}.yaml"
    load_dataset(memory, path)
    scope: str = yaml.safe_load(path.read_text())["scope"]
    return scope
