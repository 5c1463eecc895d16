"""The entity index saved beside the store: read back by the next open, rebuilt when the graph moved on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cef
from cef import Batch, Chunk, Edge, GraphQuery, Node, SearchStrategy
from cef.retrieve import entities, entityfile
from cef.retrieve.entities import entity_index, entity_index_path, link_query_entities
from cef.retrieve.entityindex import EntityIndex
from cef.retrieve.presets import EntityLinkingSettings
from cef.schema.textgraph import MENTIONS, PASSAGE_LABEL, entity_id, passage_id
from tests.unit.retrieve.corpus import QUESTION


def same_index(a: EntityIndex, b: EntityIndex) -> None:
    """Every part the graph strategies read is equal."""
    assert a.names == b.names
    assert a.types == b.types
    assert a.key_index == b.key_index
    assert a.title_owners == b.title_owners
    assert a.gazetteer._entries == b.gazetteer._entries
    assert a.gazetteer._max_words == b.gazetteer._max_words
    assert a.resolver._keys == b.resolver._keys
    assert a.resolver._entries == b.resolver._entries
    assert a.resolver._words == b.resolver._words
    assert list(a.resolver._curated_keys) == list(b.resolver._curated_keys)
    assert a.passage_index == b.passage_index
    assert a.chunk_ids == b.chunk_ids and list(a.passage_chunks) == list(b.passage_chunks)
    for name in ("passages", "df", "ent_ptr", "ent_passage", "ent_weight", "ent_edge", "chunk_passage"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert len(a.passage_entities) == len(b.passage_entities)
    assert all(np.array_equal(x, y) for x, y in zip(a.passage_entities, b.passage_entities, strict=True))
    assert (a.matrix is None) == (b.matrix is None)
    if a.matrix is not None and b.matrix is not None:
        assert (a.matrix != b.matrix).nnz == 0
        assert a.push is not None and b.push is not None
        assert np.array_equal(a.push.degree, b.push.degree)


def fresh_build(kb: cef.KnowledgeBase) -> EntityIndex:
    """The index built from the store now, ignoring any file."""
    g = kb.state.graph
    return entities._build(kb.state, g, (id(g), g.generation))


def ranked(kb: cef.KnowledgeBase) -> list[tuple[str, float]]:
    res = kb.retrieve(GraphQuery(query=QUESTION, strategy=SearchStrategy.PPR, top_k=5))
    return [(r.chunk.id, round(r.score, 9)) for r in res.results]


@pytest.fixture
def saving(monkeypatch: pytest.MonkeyPatch) -> None:
    """Save the index of any graph (the corpus is far below the size that is saved by default)."""
    monkeypatch.setattr(entities, "SAVE_MIN_ITEMS", 0)


@pytest.mark.usefixtures("saving")
def test_the_next_open_reads_the_saved_index(text_kb: cef.KnowledgeBase, embedder) -> None:  # type: ignore[no-untyped-def]
    built = entity_index(text_kb.state)
    assert not built.from_file
    path = entity_index_path(text_kb.state)
    assert path is not None and path.exists()
    before = ranked(text_kb)
    db = Path(str(path).removesuffix("-entities"))
    text_kb.close()
    with cef.open(db, embedder=embedder) as kb:
        loaded = entity_index(kb.state)
        assert loaded.from_file
        same_index(loaded, built)
        assert ranked(kb) == before
        plain = EntityLinkingSettings()
        for q in ("Who wrote Symphony of Tides?", "Where was Elena Vargaa born?", QUESTION):
            assert link_query_entities(loaded, kb.state, q, plain) == link_query_entities(
                built, kb.state, q, plain
            )


@pytest.mark.usefixtures("saving")
def test_writes_make_the_saved_index_stale_and_the_rebuild_is_saved(
    text_kb: cef.KnowledgeBase,
    embedder,  # type: ignore[no-untyped-def]
) -> None:
    entity_index(text_kb.state)
    path = entity_index_path(text_kb.state)
    assert path is not None
    db = Path(str(path).removesuffix("-entities"))
    # another process adds a passage naming a new entity and deletes one passage
    with cef.open(db, embedder=embedder) as other:
        holder = passage_id("extra")
        new = entity_id("orla brightwater")
        other.index_batch(
            Batch(
                nodes=[
                    Node(id=holder, label=PASSAGE_LABEL, properties={"name": "Orla Brightwater"}),
                    Node(id=new, label="Entity", properties={"name": "Orla Brightwater"}),
                ],
                chunks=[Chunk(id="extra", content="Orla Brightwater painted harbours.", node_id=holder)],
                edges=[
                    Edge(
                        id="extra-m",
                        relation_type=MENTIONS,
                        source=holder,
                        target=new,
                        weight=4.0,
                        properties={"title": True, "chunk_id": "extra"},
                    )
                ],
            )
        )
        other.delete_chunk("varga")
        other.delete_node(passage_id("varga"), cascade=True)
    text_kb.state.sync()
    index = entity_index(text_kb.state)
    assert not index.from_file  # the file describes the graph before the writes
    same_index(index, fresh_build(text_kb))
    g = text_kb.state.graph
    new_pos = g.pos(entity_id("orla brightwater"))
    assert new_pos is not None and index.names[new_pos] == "Orla Brightwater"
    assert index.title_owners[new_pos] == [index.passage_index[g.pos(passage_id("extra"))]]
    assert "varga" not in index.chunk_ids
    linked = link_query_entities(index, text_kb.state, "Who is Orla Brightwater?", EntityLinkingSettings())
    assert [e.node_id for e in linked] == [entity_id("orla brightwater")]
    text_kb.close()
    # positions are those of the graph a process loads: a fresh load saves its own index once
    with cef.open(db, embedder=embedder) as kb:
        entity_index(kb.state)
    # and the next open reads it: it holds the writes
    with cef.open(db, embedder=embedder) as kb:
        loaded = entity_index(kb.state)
        assert loaded.from_file
        same_index(loaded, fresh_build(kb))
        assert "extra" in loaded.chunk_ids and "varga" not in loaded.chunk_ids


@pytest.mark.usefixtures("saving")
def test_an_unusable_file_is_rebuilt(
    text_kb: cef.KnowledgeBase,
    embedder,  # type: ignore[no-untyped-def]
    caplog: pytest.LogCaptureFixture,
) -> None:
    built = entity_index(text_kb.state)
    path = entity_index_path(text_kb.state)
    assert path is not None
    db = Path(str(path).removesuffix("-entities"))
    text_kb.close()
    path.write_bytes(path.read_bytes()[:200])  # cut short
    with caplog.at_level(logging.WARNING, logger="cef.retrieve.ppr"), cef.open(db, embedder=embedder) as kb:
        index = entity_index(kb.state)
        assert not index.from_file
        same_index(index, built)
    assert any("ignoring the saved entity index" in r.getMessage() for r in caplog.records)


def test_small_graphs_are_not_saved(text_kb: cef.KnowledgeBase) -> None:
    entity_index(text_kb.state)
    path = entity_index_path(text_kb.state)
    assert path is not None and not path.exists()


@given(st.lists(st.text(), max_size=8))
def test_strings_pack_and_unpack(items: list[str]) -> None:
    if any("\x00" in s for s in items):
        with pytest.raises(entityfile._Unsavable):
            entityfile._pack(items)
        return
    assert entityfile._unpack(entityfile._pack(items), len(items)) == items


@pytest.mark.usefixtures("saving")
def test_a_read_gazetteer_matches_like_the_built_one_and_still_takes_names(
    text_kb: cef.KnowledgeBase,
    embedder,  # type: ignore[no-untyped-def]
) -> None:
    built = entity_index(text_kb.state)
    path = entity_index_path(text_kb.state)
    assert path is not None
    loaded, _ = entityfile.load_entity_index(path, built.stamp)
    for text in ("Who wrote Symphony of Tides?", QUESTION, "elena varga and symphony of tides"):
        for cs in (True, False):
            assert loaded.gazetteer.match(text, case_sensitive=cs) == built.gazetteer.match(
                text, case_sensitive=cs
            )
    assert loaded.gazetteer.lookup("Elena Vargaa") == built.gazetteer.lookup("Elena Vargaa")
    loaded.gazetteer.add("Zoltan Kodaly", "PERSON")  # a read-only mapping until the first add
    assert [m.text for m in loaded.gazetteer.match("Did Zoltan Kodaly meet Elena Varga?")] == [
        "Zoltan Kodaly",
        "Elena Varga",
    ]
    assert len(loaded.gazetteer) == len(built.gazetteer) + 1


@pytest.mark.usefixtures("saving")
def test_ingest_leaves_the_entity_index_for_the_next_query(tmp_path: Path) -> None:
    """`cef ingest` builds a big graph's entity index and saves it: the next process's first query
    reads the file instead of rebuilding the index from the store (a minute at a million passages)."""
    from cef.ingest.pipeline import ingest_sources

    corpus = Path(__file__).resolve().parents[3] / "examples" / "ingest" / "corpus.jsonl"
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=None) as kb:
        ingest_sources(kb, [str(corpus)])
        built = fresh_build(kb)
    path = db.with_name("kb.db-entities")
    assert path.exists()
    with cef.open(db, embedder=None) as kb:
        loaded = entity_index(kb.state)
        assert loaded.from_file
        same_index(loaded, built)


@pytest.mark.usefixtures("saving")
def test_cef_ingest_can_leave_the_entity_index_to_the_first_query(tmp_path: Path) -> None:
    """`cef ingest --no-index-entities` (ingests run back to back) writes no entity index; the default does."""
    from typer.testing import CliRunner

    from cef.cli import app

    corpus = Path(__file__).resolve().parents[3] / "examples" / "ingest" / "corpus.jsonl"
    for flag, kept in (("--no-index-entities", False), ("--index-entities", True)):
        db = tmp_path / f"{kept}.db"
        got = CliRunner().invoke(
            app, ["ingest", str(corpus), "--db", str(db), "--embedder", "none", "--no-progress", flag]
        )
        assert got.exit_code == 0, got.output
        assert db.with_name(f"{db.name}-entities").exists() is kept


def test_queries_arriving_together_after_a_write_build_the_index_once(
    text_kb: cef.KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    entity_index(text_kb.state)
    text_kb.index_batch(Batch(nodes=[Node(id="late", label="Person", properties={"name": "Late Arrival"})]))
    calls: list[int] = []

    def slow(real: Callable[..., EntityIndex | None]) -> Callable[..., EntityIndex | None]:
        def run(*args: Any, **kwargs: Any) -> EntityIndex | None:
            calls.append(1)
            time.sleep(0.3)  # long enough that every thread asks while the first one builds
            return real(*args, **kwargs)

        return run

    # the index follows the write (follow_changes) or, when it cannot, is built: once either way
    monkeypatch.setattr(entities, "_build", slow(entities._build))
    monkeypatch.setattr(entities, "follow_changes", slow(entities.follow_changes))
    got: list[EntityIndex] = []

    def ask() -> None:
        with text_kb.state.reading():
            got.append(entity_index(text_kb.state))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(got) == 4 and all(ix is got[0] for ix in got)
    assert any(name == "Late Arrival" for name in got[0].names.values())
