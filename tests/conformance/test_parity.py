"""The record stores rank full text the same way: PostgreSQL's BM25 equals SQLite FTS5's."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cef import Chunk
from cef.store.base import WriteSet
from cef.wiring import open_store
from tests.support.pg import pg_dsn, pg_server  # noqa: F401  (fixtures)

WORDS = [f"w{i}" for i in range(400)] + ["Naïve", "café", "x_y", "e-mail", "3.5", "Über"]


def _corpus(n: int = 400) -> list[Chunk]:
    rng = random.Random(5)
    weights = [1.0 / (i + 1) for i in range(len(WORDS))]
    return [
        Chunk(
            id=f"c{i}",
            content=" ".join(rng.choices(WORDS, weights, k=rng.randrange(5, 80))),
            scope=rng.choice([None, "s"]),
        )
        for i in range(n)
    ]


def test_bm25_rankings_match(tmp_path: Path, pg_dsn: str) -> None:  # noqa: F811
    chunks = _corpus()
    stores = [open_store(tmp_path / "a.db"), open_store(pg_dsn)]
    try:
        for st in stores:
            st.apply(WriteSet(chunks=chunks))
        rng = random.Random(9)
        queries = [" ".join(rng.sample(WORDS, rng.randrange(1, 5))) for _ in range(40)] + [
            "naive CAFE",
            "uber x y",
        ]
        compared = 0
        for q in queries:
            for scope in (None, "s"):
                sqlite_hits, pg_hits = (st.search_text("chunk", q, 10, scope=scope) for st in stores)
                assert [h.id for h in pg_hits] == [h.id for h in sqlite_hits], q
                assert [h.score for h in pg_hits] == pytest.approx(
                    [h.score for h in sqlite_hits], rel=1e-6
                ), q
                compared += len(pg_hits)
        assert compared > 300
    finally:
        for st in stores:
            st.close()
