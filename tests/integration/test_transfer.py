"""Export → import → export between backends gives identical bytes (real PostgreSQL, the CLI)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cef
from cef import Batch, Edge, Node
from cef.config import CefConfig
from cef.errors import ConfigurationError, ParseError
from cef.store.base import WriteSet
from cef.transfer import export_kb, import_kb
from cef.wiring import open_from_config, open_store
from tests.conformance import data
from tests.conformance.embedder import HashEmbedder
from tests.support.pg import PgServer, pg_dsn, pg_server  # noqa: F401  (fixtures)

from ..conftest import clinical_batch


def _source(path: Path) -> Path:
    """A SQLite knowledge base with every kind of record, vectors and meta entries."""
    with cef.open(path, embedder=HashEmbedder()) as kb:
        kb.index_batch(data.batch())
        kb.index_batch(clinical_batch())
        kb.indexer.upsert_batch(
            Batch(), meta={"ingest.docs/a.md": {"sha": "abc", "n": [1, 2.5]}, "note": "ü"}
        )
        kb.update_node("c", {"name": "Acetylsalicylic acid"})
        kb.delete_node("h")
        kb.index_batch(
            Batch(
                nodes=[Node(id="late", label="X")],
                edges=[Edge(relation_type="LINKS", source="late", target="a")],
            )
        )
    return path


def test_sqlite_to_postgres_and_back_is_byte_identical(tmp_path: Path, pg_dsn: str) -> None:  # noqa: F811
    src = open_store(_source(tmp_path / "src.db"))
    first = io.StringIO()
    stats = export_kb(src, first)
    counts = src.counts()
    src.close()
    assert (stats.nodes, stats.edges, stats.chunks) == (counts["nodes"], counts["edges"], counts["chunks"])
    assert stats.nodes == 8 + 28 - 1 + 1 and stats.relation_types == counts["relation_types"]
    assert stats.vectors == stats.nodes + stats.chunks and stats.meta >= 4

    pg = open_store(pg_dsn)
    imported = import_kb(pg, io.StringIO(first.getvalue()), batch_size=7)
    assert (imported.nodes, imported.edges, imported.chunks) == (stats.nodes, stats.edges, stats.chunks)
    second = io.StringIO()
    export_kb(pg, second)
    pg.close()
    assert second.getvalue() == first.getvalue()

    back = open_store(tmp_path / "back.db")
    import_kb(back, io.StringIO(second.getvalue()))
    third = io.StringIO()
    export_kb(back, third)
    back.close()
    assert third.getvalue() == first.getvalue()


def test_imported_knowledge_base_answers_like_the_original(tmp_path: Path, pg_dsn: str) -> None:  # noqa: F811
    path = _source(tmp_path / "src.db")
    buf = io.StringIO()
    with _Closing(open_store(path)) as store:
        export_kb(store, buf)  # type: ignore[arg-type]
    pg = open_store(pg_dsn)
    import_kb(pg, io.StringIO(buf.getvalue()))
    pg.close()
    emb = HashEmbedder()
    query = cef.GraphQuery(query="warfarin bleeding risk", top_k=5)
    with cef.open(path, embedder=emb) as a, cef.open(pg_dsn, embedder=emb) as b:
        ra, rb = a.retrieve(query), b.retrieve(query)
        assert [r.chunk.id for r in ra.results] == [r.chunk.id for r in rb.results]
        assert a.stats()["nodes"] == b.stats()["nodes"]
        assert a.find_path("f", "c") == b.find_path("f", "c")


class _Closing:
    def __init__(self, store: object) -> None:
        self.store = store

    def __enter__(self) -> object:
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()  # type: ignore[attr-defined]


def test_cli_export_import_and_mirrors(tmp_path: Path, pg_server: PgServer) -> None:  # noqa: F811
    from cef.cli import app

    src = _source(tmp_path / "src.db")
    out1, out2 = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    runner = CliRunner()
    res = runner.invoke(app, ["export", "--db", str(src), "--out", str(out1), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "exported" in res.output
    dsn = pg_server.dsn("cli_transfer")
    try:
        res = runner.invoke(app, ["import", str(out1), "--db", dsn, "--no-progress"])
        assert res.exit_code == 0, res.output
        res = runner.invoke(app, ["export", "--db", dsn, "--out", str(out2), "--no-progress"])
        assert res.exit_code == 0, res.output
        assert out2.read_bytes() == out1.read_bytes()
        res = runner.invoke(app, ["import", str(out1), "--db", dsn, "--no-progress"])
        assert res.exit_code == 2 and "empty" in res.output  # an input error (exit codes table)
    finally:
        pg_server.drop_schema("cli_transfer")
    # a SQLite target with a Qdrant mirror configured in cef.toml: the mirror is filled by the import
    toml = tmp_path / "cef.toml"
    toml.write_text(
        f'[cef.store]\nurl = "{tmp_path / "target.db"}"\n[cef.vectors]\nbackend = "qdrant"\nurl = "{tmp_path / "q"}"\n'
    )
    res = runner.invoke(app, ["import", str(out1), "--config", str(toml), "--no-progress"])
    assert res.exit_code == 0, res.output
    cfg = CefConfig(
        store={"url": str(tmp_path / "target.db")}, vectors={"backend": "qdrant", "url": str(tmp_path / "q")}
    )
    kb = open_from_config(cfg, embedder=HashEmbedder())
    try:
        assert len(kb.state.chunk_vectors) == kb.stats()["chunks"]
        hit = kb.state.chunk_vectors.search(HashEmbedder().embed_query(data.TEXTS["ch-d"]), 1)
        assert hit[0][0] == "ch-d"
    finally:
        kb.close()


def test_import_refuses_bad_input(tmp_path: Path) -> None:
    store = open_store(tmp_path / "t.db")
    try:
        with pytest.raises(ParseError, match="header"):
            import_kb(store, io.StringIO('{"node": {}}\n'))
        with pytest.raises(ParseError, match=r":3: invalid node"):
            import_kb(
                store, io.StringIO('{"cef_export": 1}\n{"meta": "k", "value": 1}\n{"node": {"id": "x"}}\n')
            )
        with pytest.raises(ParseError, match="order"):
            import_kb(
                store,
                io.StringIO(
                    '{"cef_export": 1}\n{"node": {"id": "x", "label": "L"}, "vector": null}\n{"meta": "k", "value": 1}\n'
                ),
            )
        assert store.counts()["relation_types"] == 0
        store.apply(WriteSet(nodes=[Node(id="x", label="L")]))
        with pytest.raises(ConfigurationError, match="empty"):
            import_kb(store, io.StringIO('{"cef_export": 1}\n'))
    finally:
        store.close()
