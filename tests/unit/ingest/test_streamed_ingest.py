"""A large JSON Lines file is streamed and committed in parts: same records as one transaction,
complete only at its end, resumed after an interruption, replaced and deleted cleanly."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.engine.kb import KnowledgeBase
from cef.errors import CefError
from cef.ingest.enrich import CO_OCCURS_WITH, EntityEnricher
from cef.ingest.manifest import MANIFEST_PREFIX, FileManifest, is_part
from cef.ingest.parsers.base import ParseContext, ParsedDocument, ParseOptions
from cef.ingest.parsers.jsonl import JsonLinesParser
from cef.ingest.pipeline import ingest_sources

PEOPLE = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov"]
PLACES = ["London", "Paris", "Boston", "Amsterdam", "Zurich"]


def passage(i: int) -> dict[str, Any]:
    who, where = PEOPLE[i % 5], PLACES[(i * 3) % 5]
    return {
        "id": f"p{i}",
        "title": f"Topic {i % 7}",
        "text": f"{who} travelled to {where} in {1900 + i}. {PEOPLE[(i + 1) % 5]} met {who} there.",
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]], *, blank_every: int = 0) -> Path:
    lines = []
    for n, row in enumerate(rows, 1):
        lines.append(json.dumps(row))
        if blank_every and n % blank_every == 0:
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def records(kb: KnowledgeBase) -> tuple[set[str], set[str], set[str]]:
    return (
        {n.id for n in kb.store.iter_nodes()},
        {e.id for e in kb.store.iter_edges()},
        {c.id for c in kb.store.iter_chunks()},
    )


def manifests(kb: KnowledgeBase) -> dict[str, dict[str, Any]]:
    return dict(kb.store.meta_items(MANIFEST_PREFIX))


def listed(kb: KnowledgeBase) -> tuple[set[str], set[str], set[str]]:
    """Every id some manifest entry (header or part) lists."""
    out: tuple[set[str], set[str], set[str]] = (set(), set(), set())
    for value in manifests(kb).values():
        for kind, ids in zip(("nodes", "edges", "chunks"), out, strict=True):
            ids.update(value.get(kind) or [])
    return out


def header(kb: KnowledgeBase) -> FileManifest:
    heads = [FileManifest.from_meta(k, v) for k, v in manifests(kb).items() if not is_part(k)]
    assert len(heads) == 1
    assert heads[0] is not None
    return heads[0]


class StopAt(CefError):
    pass


class FailingEnricher:
    """Stops the ingest when it meets chunk ``stop`` (a crash between two commits), counting what it saw."""

    def __init__(self, stop: str | None) -> None:
        self.stop = stop
        self.seen: list[str] = []

    def __call__(self, kb: KnowledgeBase, doc: ParsedDocument) -> ParsedDocument:
        ids = [c.id for c in doc.batch.chunks]
        if self.stop in ids:
            raise StopAt(f"stopped at {self.stop}")
        self.seen.extend(ids)
        return doc


def test_parts_write_the_records_of_one_transaction_and_the_file_is_complete_at_its_end(
    tmp_path: Path,
) -> None:
    src = write_jsonl(tmp_path / "corpus.jsonl", [passage(i) for i in range(45)], blank_every=7)
    opts = ParseOptions(title_nodes=True)
    with cef.open(tmp_path / "one.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(src)], extract=False, options=opts, batch_size=1000)
        one = records(kb)
        assert not any(is_part(k) for k in manifests(kb))  # fits one transaction: no parts
    with cef.open(tmp_path / "parts.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(src)], extract=False, options=opts, batch_size=10)
        assert report.succeeded == 1, report.failures
        assert report.outcomes[0].chunks == 45
        assert records(kb) == one
        head = header(kb)
        assert head.complete and head.position == 51 and head.lines == 51  # 45 records + 6 blank lines
        assert sum(is_part(k) for k in manifests(kb)) == 5
        assert listed(kb) == records(kb)
        again = ingest_sources(kb, [str(src)], extract=False, options=opts, batch_size=10)
        assert [o.status for o in again.outcomes] == ["skipped"]


def test_a_bad_line_rejects_a_streamed_file_before_anything_is_written(tmp_path: Path) -> None:
    rows = [passage(i) for i in range(30)]
    src = write_jsonl(tmp_path / "corpus.jsonl", rows)
    src.write_text(src.read_text() + '{"id": "p3", "text": "a duplicate id"}\n')
    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(src)], extract=False, batch_size=10)
        assert (
            report.failures
            and "corpus.jsonl:31:" in report.failures[0]
            and "duplicate id" in report.failures[0]
        )
        assert records(kb) == (set(), set(), set())
        assert manifests(kb) == {}


def test_an_interrupted_file_is_incomplete_then_resumes_after_its_last_part(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "corpus.jsonl", [passage(i) for i in range(50)])
    with cef.open(tmp_path / "clean.db", embedder=None) as kb:
        ingest_sources(kb, [str(src)], enricher=FailingEnricher(None), batch_size=10)
        clean = records(kb)
    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(src)], enricher=FailingEnricher("p33"), batch_size=10)
        assert report.failures and "stopped at p33" in report.failures[0]
        head = header(kb)
        assert not head.complete and head.position == 30  # three parts committed, never marked complete
        assert records(kb)[2] == {f"p{i}" for i in range(30)}
        assert listed(kb) == records(kb)
        resumed = FailingEnricher(None)
        report = ingest_sources(kb, [str(src)], enricher=resumed, batch_size=10)
        assert report.succeeded == 1, report.failures
        assert resumed.seen == [f"p{i}" for i in range(30, 50)]  # the committed parts are not redone
        assert header(kb).complete
        assert records(kb) == clean
        assert listed(kb) == records(kb)


def test_a_changed_file_replaces_the_old_version_and_its_parts(tmp_path: Path) -> None:
    old = [passage(i) for i in range(40)]
    new = [passage(i) for i in range(40) if not 12 <= i < 25] + [passage(i) for i in range(100, 108)]
    src = tmp_path / "corpus.jsonl"
    with cef.open(tmp_path / "fresh.db", embedder=None) as kb:
        ingest_sources(kb, [str(write_jsonl(src, new))], enricher=FailingEnricher(None), batch_size=10)
        fresh = records(kb)
    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        ingest_sources(kb, [str(write_jsonl(src, old))], enricher=FailingEnricher(None), batch_size=10)
        # interrupted while replacing: the old version stays listed beside the new parts
        report = ingest_sources(
            kb, [str(write_jsonl(src, new))], enricher=FailingEnricher("p101"), batch_size=10
        )
        assert report.failures
        assert not header(kb).complete
        assert listed(kb) == records(kb)
        report = ingest_sources(kb, [str(src)], enricher=FailingEnricher(None), batch_size=10)
        assert [o.status for o in report.outcomes] == ["replaced"], report.failures
        assert records(kb) == fresh
        assert listed(kb) == records(kb)
        head = header(kb)
        assert head.complete and head.parts[1] - head.parts[0] == 4
        assert sum(is_part(k) for k in manifests(kb)) == 4  # the old version's parts are gone
        # back to a file small enough for one transaction: the parts go
        ingest_sources(kb, [str(write_jsonl(src, old[:5]))], enricher=FailingEnricher(None), batch_size=10)
        assert records(kb)[2] == {f"p{i}" for i in range(5)}
        assert not any(is_part(k) for k in manifests(kb))
        assert listed(kb) == records(kb)


def test_a_streamed_file_that_leaves_a_folder_is_deleted_with_its_parts(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [passage(i) for i in range(25)])
    (folder / "b.md").write_text("# Note\n\nAda Lovelace wrote notes in London.\n")
    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        assert ingest_sources(kb, [str(folder)], extract=False, batch_size=10).succeeded == 2
        (folder / "a.jsonl").unlink()
        report = ingest_sources(kb, [str(folder)], extract=False, batch_size=10)
        assert sorted(o.status for o in report.outcomes) == ["deleted", "skipped"]
        assert not any(c.startswith("p") for c in records(kb)[2])
        assert all(k.endswith("b.md") for k in manifests(kb))
        assert listed(kb) == records(kb)


def test_co_occurrence_counts_of_parts_add_up_to_one_pass_over_the_file(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "corpus.jsonl", [passage(i) for i in range(36)])

    def cooccurs(db: str, batch_size: int) -> dict[str, tuple[float, int, int, float]]:
        with cef.open(tmp_path / db, embedder=None) as kb:
            report = ingest_sources(kb, [str(src)], enricher=EntityEnricher(), batch_size=batch_size)
            assert report.succeeded == 1, report.failures
            return {
                e.id: (
                    e.weight,
                    e.properties["count"],
                    e.properties["doc_count"],
                    e.properties["avg_proximity"],
                )
                for e in kb.store.iter_edges()
                if e.relation_type == CO_OCCURS_WITH
            }

    whole = cooccurs("whole.db", 1000)
    parts = cooccurs("parts.db", 5)
    assert whole and parts.keys() == whole.keys()
    for key, (weight, count, docs, proximity) in whole.items():
        assert parts[key][:3] == (weight, count, docs)
        assert parts[key][3] == pytest.approx(proximity, abs=2e-3)
    assert max(docs for _, _, docs, _ in whole.values()) > 5  # some pairs span several parts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(0, 40),
    batch=st.integers(1, 15),
    blanks=st.integers(0, 5),
    start=st.integers(0, 50),
    gz=st.booleans(),
)
def test_parse_batches_gives_the_parse_split_at_batch_size(
    n: int, batch: int, blanks: int, start: int, gz: bool
) -> None:
    rows = [{"id": f"r{i}", "text": f"text {i}", "title": f"T{i % 3}"} for i in range(n)]
    lines: list[str] = []
    for i, row in enumerate(rows, 1):
        lines.append(json.dumps(row))
        if blanks and i % blanks == 0:
            lines.append("  ")
    data = ("\n".join(lines) + "\n").encode() if lines else b""
    raw = gzip.compress(data) if gz else data
    parser = JsonLinesParser()
    ctx = ParseContext(path="c.jsonl", options=ParseOptions(title_nodes=True))
    whole = parser.parse(raw, ctx).batch
    parts = list(parser.parse_batches(io.BytesIO(raw), ctx, batch, start=min(start, len(lines))))
    got = [c.id for p in parts for c in p.batch.chunks]
    skip = min(start, len(lines))
    expected = [c.id for c in whole.chunks if int(c.metadata["line"]) > skip]
    assert got == expected
    assert all(len(p.batch.chunks) == batch for p in parts[:-1])
    assert 0 < len(parts[-1].batch.chunks) <= batch or (len(parts) == 1 and not expected)
    positions = [p.position for p in parts]
    assert positions == sorted(positions) and positions[-1] == max(skip, len(lines))
    # every chunk's title node is in its part or an earlier one
    introduced: set[str] = set()
    for p in parts:
        introduced.update(node.id for node in p.batch.nodes)
        assert {c.node_id for c in p.batch.chunks} <= introduced


def test_a_streamed_file_reports_its_lines_with_the_total_also_when_resumed(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "corpus.jsonl", [passage(i) for i in range(35)])
    seen: list[tuple[str, int, int]] = []

    def progress(what: str, done: int, total: int) -> None:
        if what.endswith("(lines)"):
            seen.append((what, done, total))

    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        ingest_sources(kb, [str(src)], enricher=FailingEnricher("p25"), batch_size=10, progress=progress)
        assert seen == [("ingesting corpus.jsonl (lines)", n, 35) for n in (10, 20)]
        seen.clear()
        ingest_sources(kb, [str(src)], enricher=FailingEnricher(None), batch_size=10, progress=progress)
        assert seen == [("ingesting corpus.jsonl (lines)", n, 35) for n in (30, 35)]
