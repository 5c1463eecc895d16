"""Parser fuzzing: malformed YAML, JSON, CSV, Markdown, JSON Lines, PDF and text through the ingest pipeline.

Invariants, for any bytes: a parser either returns a document or raises the
project's own error (:class:`~cef.errors.CefError`, normally ``ParseError``
naming the file); it never hangs (5 s per input); and a file the pipeline
rejects leaves nothing behind (no node, edge, chunk or manifest entry).
Inputs are random bytes and mutations of a valid sample of each format.

CI runs a bounded sample (``CEF_FUZZ_EXAMPLES``, default 40 per format and
invariant); a nightly-size run sets it to thousands.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.errors import CefError
from cef.ingest.parsers.base import ParseContext, ParseOptions
from cef.ingest.parsers.registry import default_registry
from cef.ingest.pipeline import ingest_sources

from .pdfgen import make_pdf

EXAMPLES = int(os.environ.get("CEF_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)

SAMPLES: dict[str, bytes] = {
    ".yaml": (
        b"relation_types:\n  - {name: TREATS, semantics: causal}\n"
        b"nodes:\n  - {id: a, label: Drug, properties: {name: A}}\n  - {id: b, label: Condition}\n"
        b"edges:\n  - {relation_type: TREATS, source: a, target: b}\n"
        b"chunks:\n  - {id: c1, content: A treats B., node_id: a}\n"
    ),
    ".json": json.dumps(
        {
            "relation_types": [{"name": "TREATS"}],
            "nodes": [{"id": "a", "label": "Drug"}, {"id": "b", "label": "Condition"}],
            "edges": [{"relation_type": "TREATS", "source": "a", "target": "b"}],
        }
    ).encode(),
    ".csv": b"id,label,name\na,Drug,Aspirin\nb,Drug,Warfarin\n",
    ".md": b"# Warfarin\n\nWarfarin thins the blood.\n\n## Interactions\n\n- aspirin\n",
    ".txt": b"Warfarin thins the blood. Aspirin too.\n",
    ".jsonl": b'{"id": "d1", "title": "Aspirin", "text": "Aspirin is an analgesic."}\n{"id": "d2", "text": "x"}\n',
    ".pdf": make_pdf([["Warfarin thins the blood."]]),
}


@st.composite
def malformed(draw: st.DrawFn, ext: str) -> bytes:
    """Random bytes, or the valid sample cut, spliced, flipped or padded."""
    sample = SAMPLES[ext]
    kind = draw(st.sampled_from(["random", "truncate", "splice", "flip", "repeat"]))
    if kind == "random":
        return draw(st.binary(max_size=2048))
    if kind == "truncate":
        return sample[: draw(st.integers(0, len(sample)))]
    if kind == "splice":
        at = draw(st.integers(0, len(sample)))
        return sample[:at] + draw(st.binary(max_size=64)) + sample[at:]
    if kind == "flip":
        data = bytearray(sample)
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] = draw(st.integers(0, 255))
        return bytes(data)
    return sample * draw(st.integers(2, 50))


def parse(ext: str, data: bytes) -> None:
    registry = default_registry()
    ctx = ParseContext(path=f"fuzzed{ext}", options=ParseOptions())
    with contextlib.suppress(CefError):  # the project's own error is fine; anything else fails
        registry.parse(data, ctx)


@pytest.mark.parametrize("ext", list(SAMPLES))
def test_parsers_raise_only_project_errors(ext: str) -> None:
    @FUZZ
    @given(data=malformed(ext))
    def run(data: bytes) -> None:
        parse(ext, data)

    run()


@pytest.mark.parametrize("ext", [".yaml", ".json", ".csv", ".jsonl", ".md"])
def test_a_rejected_file_writes_nothing(ext: str, tmp_path: Path) -> None:
    counter = iter(range(10**9))

    @FUZZ
    @given(data=malformed(ext))
    def run(data: bytes) -> None:
        n = next(counter)
        folder = tmp_path / f"in{n}"
        folder.mkdir()
        (folder / f"doc{ext}").write_bytes(data)
        with cef.open(tmp_path / f"kb{n}.db", embedder=None) as kb:
            report = ingest_sources(kb, [str(folder)], extract=False)
            if report.failures:
                info = kb.stats()
                assert (info["nodes"], info["edges"], info["chunks"]) == (0, 0, 0), report.failures
                assert not list(kb.store.meta_items("ingest:")), report.failures
                assert str(folder / f"doc{ext}") in report.failures[0] or f"doc{ext}" in report.failures[0]

    run()
