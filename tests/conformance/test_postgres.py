"""PostgreSQL specifics: versioned migrations, concurrent writers through the pool, schemas, URLs."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

import cef
from cef import Batch, Node, RelationType
from cef.errors import StoreError
from cef.store.postgres import PostgresStore
from cef.store.postgres.migrations import LATEST
from cef.store.postgres.store import split_dsn
from tests.support.pg import PgServer, pg_dsn, pg_server  # noqa: F401  (fixtures)


def _rows(dsn: str, sql: str) -> list[tuple]:  # type: ignore[type-arg]
    url, schema = split_dsn(dsn)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("SET search_path TO {}, public").format(psycopg.sql.Identifier(schema)))
        return conn.execute(sql).fetchall()  # type: ignore[arg-type]


def test_migrations_are_applied_once_and_recorded(pg_dsn: str) -> None:  # noqa: F811
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(PostgresStore(pg_dsn))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]  # racing to create the schema
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(stores) == 4
    for st in stores:
        st.close()
    assert [r[0] for r in _rows(pg_dsn, "SELECT version FROM cef_schema_migrations")] == list(
        range(1, LATEST + 1)
    )
    PostgresStore(pg_dsn).close()
    assert len(_rows(pg_dsn, "SELECT version FROM cef_schema_migrations")) == LATEST
    _rows(
        pg_dsn, "INSERT INTO cef_schema_migrations(version, name) VALUES (999, 'from the future') RETURNING 1"
    )
    with pytest.raises(StoreError, match="newer than this cef"):
        PostgresStore(pg_dsn)


def test_concurrent_writers_get_contiguous_sequences(pg_dsn: str) -> None:  # noqa: F811
    store = PostgresStore(pg_dsn, pool_size=4)
    ranges: list[tuple[int, int]] = []
    lock = threading.Lock()

    def write(n: int) -> None:
        from cef.store.base import WriteSet

        for i in range(10):
            before, after = store.apply(
                WriteSet(nodes=[Node(id=f"t{n}-{i}-{j}", label="T") for j in range(5)])
            )
            with lock:
                ranges.append((before, after))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        ranges.sort()
        assert [b for b, _ in ranges] == [a for _, a in [(0, 0), *ranges[:-1]]]  # each starts where one ended
        _, changes = store.changes_since(0)
        ids = [i for c in changes for i in store.ids_in_range("node", c.rid_from or 0, c.rid_to or 0)]
        assert len(ids) == len(set(ids)) == 300 == store.counts()["nodes"]
    finally:
        store.close()


def test_schemas_keep_knowledge_bases_apart(pg_server: PgServer) -> None:  # noqa: F811
    a, b = pg_server.dsn("kb_one"), pg_server.dsn("kb_two")
    try:
        with cef.open(a, embedder=None) as one, cef.open(b, embedder=None) as two:
            one.index_batch(Batch(relation_types=[RelationType(name="R")], nodes=[Node(id="x", label="L")]))
            assert two.stats()["nodes"] == 0 and one.stats()["nodes"] == 1
            assert one.state.graph_store is one.store  # a PostgreSQL URL brings traversal pushdown
            assert type(one.state.chunk_vectors).__name__ == "PgVectorIndex"  # and pgvector
    finally:
        pg_server.drop_schema("kb_one")
        pg_server.drop_schema("kb_two")


def test_urls_and_errors(pg_server: PgServer, tmp_path: Path) -> None:  # noqa: F811
    url, schema = split_dsn("postgresql://u:secret@h:5/db?host=/s&schema=kb&sslmode=disable")
    assert schema == "kb" and "schema" not in url and "sslmode=disable" in url
    assert split_dsn("host=/s dbname=x") == ("host=/s dbname=x", "public")
    with pytest.raises(StoreError, match="invalid PostgreSQL schema"):
        PostgresStore(pg_server.dsn("bad-name;"))
    dead = f"postgresql://cef:secret@/postgres?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError) as info:
        PostgresStore(dead)
    assert "secret" not in str(info.value)
    # a URL given as a path (as typed CLI options are) is repaired
    with cef.open(Path(pg_server.dsn("kb_path")), embedder=None) as kb:
        assert kb.stats()["nodes"] == 0
    pg_server.drop_schema("kb_path")
