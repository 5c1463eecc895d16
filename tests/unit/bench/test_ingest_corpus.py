"""The ingest benchmark's corpus: the requested size, unique ids and texts, real passages first."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_ingest.py"


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_ingest", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_corpus_reaches_the_size_with_unique_ids_and_texts(tmp_path: Path) -> None:
    mod = _module()
    bench = tmp_path / "bench"
    rows = [
        {"id": f"p{i}", "title": f"T{i}", "text": f"First sentence {i}. Second one {i}! Third {i}?"}
        for i in range(7)
    ]
    for name in mod.DATASETS:
        (bench / name).mkdir(parents=True)
        with gzip.open(bench / name / "corpus.jsonl.gz", "wt") as f:
            f.writelines(
                json.dumps({**r, "id": f"{name}-{r['id']}", "text": f"{name}: {r['text']}"}) + "\n"
                for r in rows
            )
    out = tmp_path / "corpus.jsonl"
    original = mod.build_corpus(bench, 30, out)
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert original == 14 and len(got) == 30
    assert len({r["id"] for r in got}) == 30
    assert len({r["text"] for r in got}) == 28  # the third round repeats the second's reversed sentences
    assert got[0]["text"] == f"{mod.DATASETS[0]}: {rows[0]['text']}" and got[14]["text"].startswith(
        "Third 0?"
    )
