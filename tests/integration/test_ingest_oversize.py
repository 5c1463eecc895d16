"""One record never ends an ingest: a record longer than the extractor takes (spaCy refuses a
million characters, E088) used to stop the whole ingest with exit 1, no summary, the files after it
unread. Such a text is now read in windows; here spaCy's limit and the window are made small so that
the real pipeline meets the same situation on a text a test can afford (without windows: E088)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cef
import cef.ingest.enrich as enrich
from cef.ingest.pipeline import ingest_sources


def test_a_record_longer_than_the_extractor_takes_is_ingested_and_the_rest_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cef.extract.spacy_ner import load_spacy

    nlp = load_spacy()  # the pipeline ingest uses: it refuses texts over max_length (E088), as at 1,000,000
    monkeypatch.setattr(nlp, "max_length", 500)
    monkeypatch.setattr(enrich, "MAX_EXTRACT_CHARS", 400)
    folder = tmp_path / "corpus"
    folder.mkdir()
    filler = "The committee met again and talked for a long while about the weather. " * 12
    huge = f"{filler}Ada Lovelace visited Paris in the spring. {filler}Charles Babbage stayed in London."
    assert len(huge) > 3 * enrich.MAX_EXTRACT_CHARS
    lines = [{"id": "small-1", "text": "Grace Hopper worked in Arlington."}, {"id": "huge", "text": huge},
             {"id": "small-2", "text": "Alan Turing lived in Manchester."}]  # fmt: skip
    (folder / "a.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    (folder / "b.md").write_text("# After\n\nKatherine Johnson computed trajectories at Langley.\n")
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(folder)])
        assert [o.status for o in report.outcomes] == ["ingested", "ingested"], report.failures
        assert kb.get_chunk("huge") is not None and kb.get_chunk("small-2") is not None
        names = {n.name for n in kb.find_nodes_by_label("Entity", 100)}
        assert {"Ada Lovelace", "Charles Babbage", "London", "Katherine Johnson"} <= names
        # the offsets of a mention found in a later window point at the mention in the whole text
        edges = kb.store.get_edges(kb.store.edges_for_nodes(["passage:huge"]))
        for e in edges:
            for start, end in e.properties.get("offsets", []):
                assert huge[start:end] == e.properties["mention"], (e.properties, huge[start:end])
        assert any(e.properties.get("mention") == "Charles Babbage" for e in edges)
