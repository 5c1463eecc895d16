"""pgvector search over the PostgreSQL store's own vector columns (native: no mirror to feed).

Vectors are written by :meth:`PostgresStore.apply` in the same transaction as
their records. Each index gets an HNSW index (cosine) on the column cast to
its dimension, created on first use. Unfiltered top-k uses HNSW (approximate,
``hnsw.ef_search`` raised to cover ``k``); a search restricted to ``allowed``
ids and :meth:`similarities` compute exact cosines over just those rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from cef.errors import EmbeddingError
from cef.store.postgres import migrations
from cef.store.postgres._driver import Connections

_TABLES = {"node": "cef_nodes", "chunk": "cef_chunks"}


class PgVectorStore:
    """A :class:`cef.store.base.VectorStore` whose indexes live in the record store's tables."""

    mirror = None  # the record store writes the vectors itself

    def __init__(self, store: Connections) -> None:
        self.store = store
        self._indexes: dict[tuple[str, int], PgVectorIndex] = {}

    def index(self, kind: str, dim: int) -> PgVectorIndex:
        key = (kind, dim)
        if key not in self._indexes:
            self._indexes[key] = PgVectorIndex(self.store, kind, dim)
        return self._indexes[key]

    def close(self) -> None:
        """Nothing to close: the indexes use the record store's pool."""


class PgVectorIndex:
    """A :class:`cef.store.base.VectorIndex` over ``cef_nodes.embedding`` or ``cef_chunks.embedding``."""

    def __init__(self, store: Connections, kind: str, dim: int) -> None:
        from psycopg import sql

        if kind not in _TABLES:
            raise ValueError(f"kind must be 'node' or 'chunk', not {kind!r}")
        if not 1 <= int(dim) <= 16000:
            raise EmbeddingError(f"pgvector supports 1..16000 dimensions, not {dim}")
        self.store = store
        self.kind = kind
        self.dim = int(dim)
        table = sql.Identifier(_TABLES[kind])
        typed = sql.SQL("embedding::vector({})").format(sql.Literal(self.dim))
        self._knn = sql.SQL(
            "SELECT id, 1 - ({typed} <=> %(q)s::vector({d})) FROM {t} WHERE embedding IS NOT NULL "
            "ORDER BY {typed} <=> %(q)s::vector({d}) LIMIT %(k)s"
        ).format(typed=typed, d=sql.Literal(self.dim), t=table)
        self._exact = sql.SQL(
            "SELECT id, 1 - (embedding <=> %(q)s::vector) AS s FROM {t} "
            "WHERE embedding IS NOT NULL AND id = ANY(%(ids)s) ORDER BY s DESC, rid LIMIT %(k)s"
        ).format(t=table)
        self._sims = sql.SQL(
            "SELECT id, 1 - (embedding <=> %(q)s::vector) FROM {t} WHERE embedding IS NOT NULL AND id = ANY(%(ids)s)"
        ).format(t=table)
        self._count = sql.SQL("SELECT COUNT(*) FROM {t} WHERE embedding IS NOT NULL").format(t=table)
        self._set = sql.SQL("UPDATE {t} SET embedding = %s WHERE id = %s").format(t=table)
        self._unset = sql.SQL("UPDATE {t} SET embedding = NULL WHERE id = ANY(%s)").format(t=table)
        self._len: tuple[int, int] = (-1, 0)
        self._ensure_hnsw(table, typed)

    def _ensure_hnsw(self, table: object, typed: object) -> None:
        from psycopg import sql

        name = sql.Identifier(f"{_TABLES[self.kind]}_hnsw_{self.dim}")
        with self.store.connection("creating the HNSW index") as conn, conn.transaction():
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)", (migrations.LOCK_NAMESPACE, migrations.LOCK_DDL)
            )
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw (({}) vector_cosine_ops) WITH (m = 16, ef_construction = 32)"
                ).format(name, table, typed)
            )

    def _query(self, q: np.ndarray) -> np.ndarray:
        v = np.asarray(q, dtype=np.float32).reshape(-1)
        if v.shape != (self.dim,):
            raise EmbeddingError(f"query vector has shape {v.shape}, the index holds dimension {self.dim}")
        return v

    def search(
        self, vector: np.ndarray, k: int, allowed: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        q = self._query(vector)
        if k <= 0:
            return []
        if allowed is not None:
            ids = list(dict.fromkeys(allowed))
            if not ids:
                return []
            with self.store.connection("searching vectors") as conn:
                rows = conn.execute(self._exact, {"q": q, "ids": ids, "k": k}).fetchall()
            return [(i, float(s)) for i, s in rows]
        with self.store.connection("searching vectors") as conn, conn.transaction():
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(min(1000, max(40, 2 * k))),))
            rows = conn.execute(self._knn, {"q": q, "k": k}).fetchall()
        return [(i, float(s)) for i, s in rows]

    def similarities(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        q = self._query(vector)
        out = np.zeros(len(ids), dtype=np.float32)
        if not ids:
            return out
        with self.store.connection("reading vectors") as conn:
            found = dict(conn.execute(self._sims, {"q": q, "ids": list(dict.fromkeys(ids))}).fetchall())
        for n, i in enumerate(ids):
            if i in found:
                out[n] = found[i]
        return out

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Set the vectors of existing records (the engine never needs this: apply() writes them)."""
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[1] != self.dim or len(vecs) != len(ids):
            raise EmbeddingError(
                f"expected {len(ids)} vectors of dimension {self.dim}, got shape {vecs.shape}"
            )
        with self.store.connection("writing vectors") as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(self._set, [(v, i) for i, v in zip(ids, vecs, strict=True)])

    def remove(self, ids: Sequence[str]) -> None:
        with self.store.connection("removing vectors") as conn:
            conn.execute(self._unset, (list(ids),))

    def __len__(self) -> int:
        seq = self.store.current_seq()
        if self._len[0] != seq:
            with self.store.connection("counting vectors") as conn:
                self._len = (seq, int(conn.execute(self._count).fetchone()[0]))
        return self._len[1]
