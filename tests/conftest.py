"""Shared fixtures: temporary knowledge bases, the clinical example, the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import settings

import cef
from cef import Batch

ROOT = Path(__file__).resolve().parent.parent
CLINICAL = ROOT / "examples" / "clinical" / "graph.yaml"

# Property tests assert behaviour, never time: hypothesis's default 200 ms deadline per example turns a
# busy machine into a failure (a 0.6 ms example took 410 ms under load). Timings live in bench/.
settings.register_profile("cef", deadline=None)
settings.load_profile("cef")


def nothing_matched(kb: cef.KnowledgeBase, question: str | cef.GraphQuery) -> bool:
    """Whether ``kb`` answers ``question`` (a string, or a query with its scope and top_k) with
    "nothing matched" (its relevance verdict)."""
    verdict = kb.retrieve(question).metadata["relevance"]
    assert isinstance(verdict, dict)
    return bool(verdict["nothing_matched"])


def clinical_batch() -> Batch:
    return Batch.model_validate(yaml.safe_load(CLINICAL.read_text()))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Setup with its own time budget, before any test runs (never inside a test's timeout): build
    the FalkorDB server when FalkorDB tests are selected and it is not built yet."""
    if not any("falkor" in item.nodeid.lower() for item in items):
        return
    from tests.support import falkor

    if falkor.built_python() is not None:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(
            "setup: building FalkorDB for the tests (.ci/setup-falkordb.sh, about 2.5 minutes, once)"
        )
    problem = falkor.build()
    if problem and reporter is not None:
        reporter.write_line(f"setup: {problem}; the FalkorDB tests will fail with the command to run")


#: the only reasons a test may be skipped: what no package of this machine's registries can provide.
#: Any other skip (a missing extra, a missing model) fails the session, so CI cannot pass by hiding tests.
ALLOWED_SKIPS = (
    "Neo4j runs only when CEF_TEST_NEO4J_URL is set",  # no Neo4j server installs from PyPI or Debian here
)


def _skips(terminalreporter: pytest.TerminalReporter) -> list[tuple[str, str]]:
    """(test id, reason) of every skipped test of the session."""
    out = []
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        out.append((report.nodeid, str(reason).removeprefix("Skipped: ")))
    return out


def unlisted_skips(skips: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(test, reason) for test, reason in skips if not any(a in reason for a in ALLOWED_SKIPS)]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which servers the session started (none: the tests that need one did not run), and every
    skipped test with its reason."""
    from tests.support import STARTED

    terminalreporter.write_line("servers started: " + ("; ".join(STARTED) if STARTED else "none"))
    skips = _skips(terminalreporter)
    if skips:
        terminalreporter.write_line(f"skipped ({len(skips)}):")
        for test, reason in skips:
            terminalreporter.write_line(f"  {test}: {reason}")
    bad = unlisted_skips(skips)
    if bad:
        terminalreporter.write_line(
            f"FAILED: {len(bad)} test(s) skipped for a reason not in tests/conftest.py ALLOWED_SKIPS "
            "(install what they need: pip install -e '.[dev]')"
        )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A session with a skip for an unlisted reason fails (exit 1), whatever else passed."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus not in (0, 5):
        return
    if unlisted_skips(_skips(reporter)):
        session.exitstatus = 1


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[cef.KnowledgeBase]:
    """An empty knowledge base without embeddings (graph + BM25)."""
    with cef.open(tmp_path / "kb.db", embedder=None) as k:
        yield k


@pytest.fixture
def clinical_kb(tmp_path: Path) -> Iterator[cef.KnowledgeBase]:
    """The clinical example, without embeddings."""
    with cef.open(tmp_path / "clinical.db", embedder=None) as k:
        k.index_batch(clinical_batch())
        yield k


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    """The real offline all-MiniLM-L6-v2 model, loaded once per test session."""
    from cef.embed import get_default_embedder

    return get_default_embedder()


@pytest.fixture(scope="session")
def clinical_db_embedded(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:  # type: ignore[no-untyped-def]
    """A clinical knowledge base file with real embeddings (built once per session)."""
    path = tmp_path_factory.mktemp("clinical") / "clinical.db"
    with cef.open(path, embedder=embedder) as k:
        k.index_batch(clinical_batch())
    return path


@pytest.fixture
def clinical_embedded(clinical_db_embedded: Path, embedder, tmp_path: Path) -> Iterator[cef.KnowledgeBase]:  # type: ignore[no-untyped-def]
    """A private copy of the embedded clinical knowledge base (tests may write to it)."""
    import shutil

    dst = tmp_path / "clinical-embedded.db"
    shutil.copy(clinical_db_embedded, dst)
    with cef.open(dst, embedder=embedder) as k:
        yield k
