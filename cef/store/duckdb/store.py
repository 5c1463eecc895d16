"""DuckDB as the engine's vector store (needs the ``duckdb`` extra).

One table per kind (``{prefix}_node_vectors``, ``{prefix}_chunk_vectors``:
``id VARCHAR PRIMARY KEY, v FLOAT[dim]``) and ``{prefix}_sync`` for the
mirror marker. Search is exact (``array_cosine_similarity``) unless
``ann=True`` and the VSS extension loads — from the PyPI package
``duckdb-extension-vss`` when installed (offline), else DuckDB's own
extension repository — in which case an HNSW index (cosine) serves unfiltered
top-k. Table names come from a validated prefix; every value is a parameter.
A DuckDB file is opened by one process at a time.
"""

from __future__ import annotations

import glob
import logging
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from cef.errors import CefError, EmbeddingError, MissingExtraError, RetryableStoreError, StoreError
from cef.store.base import VectorIndex, VectorMirror

log = logging.getLogger(__name__)


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError as exc:
        raise MissingExtraError("the DuckDB vector store", "duckdb", "duckdb") from exc
    return duckdb


def load_vss(con: Any) -> bool:
    """Load the VSS extension (offline from ``duckdb-extension-vss`` if present); False if it cannot."""
    paths: list[str] = []
    try:
        import duckdb_extension_vss

        base = os.path.dirname(duckdb_extension_vss.__file__)
        paths = glob.glob(os.path.join(base, "extensions", "**", "vss.duckdb_extension"), recursive=True)
    except ImportError:
        pass
    for path in paths:
        try:
            con.execute("LOAD " + _quote_literal(path))
            return True
        except Exception as exc:  # a build for another DuckDB version
            log.debug("cannot load %s: %s", path, exc)
    try:
        con.execute("LOAD vss")
        return True
    except Exception as exc:
        log.info("DuckDB VSS extension unavailable (%s); using exact search", exc)
        return False


def _quote_literal(text: str) -> str:
    # LOAD takes no parameters; the path comes from an installed package, never from user input
    return "'" + text.replace("'", "''") + "'"


_SEP = "\x1f"


def _id_list(ids: Sequence[str]) -> tuple[str, Any]:
    """(SQL for a list of ids, its parameter): one joined string split in SQL, far faster than a list parameter."""
    if any(_SEP in i for i in ids):
        return "?::VARCHAR[]", list(ids)
    return "string_split(?, chr(31))", _SEP.join(ids)


def _vec_literal(v: np.ndarray) -> str:
    """A float vector as DuckDB list text (parsed by the cast; far faster than a Python list parameter)."""
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


class _Db:
    """One DuckDB connection shared by a store's indexes, used under a lock (connections are not thread-safe)."""

    def __init__(self, con: Any) -> None:
        self.con = con
        self.lock = threading.RLock()

    @contextmanager
    def use(self, doing: str) -> Iterator[Any]:
        duckdb = _duckdb()
        with self.lock:
            try:
                yield self.con
            except CefError:
                raise
            except duckdb.Error as exc:
                msg = str(exc).strip().splitlines()[0]
                if "lock" in msg.lower() or "conflict" in msg.lower():
                    raise RetryableStoreError(f"DuckDB busy while {doing}: {msg}; retry") from exc
                raise StoreError(f"DuckDB error while {doing}: {msg}") from exc


class DuckDBVectorIndex:
    """A :class:`cef.store.base.VectorIndex` on one DuckDB table."""

    BATCH = 5000

    def __init__(self, db: _Db, table: str, dim: int, *, hnsw: bool) -> None:
        self.db = db
        self.table = table
        self.dim = int(dim)
        self.hnsw = hnsw
        t, d = f'"{table}"', self.dim
        self._exact = (
            f"SELECT id, array_cosine_similarity(v, ?::FLOAT[{d}]) AS s FROM {t} ORDER BY s DESC, id LIMIT ?"
        )
        self._ann = (
            f"SELECT id, 1 - array_cosine_distance(v, ?::FLOAT[{d}]) FROM {t} "
            f"ORDER BY array_cosine_distance(v, ?::FLOAT[{d}]) LIMIT ?"
        )
        self._allowed = (
            f"SELECT id, array_cosine_similarity(v, ?::FLOAT[{d}]) AS s FROM {t} "
            "WHERE id IN (SELECT unnest({ids})) ORDER BY s DESC, id LIMIT ?"
        )
        self._sims = f"SELECT id, array_cosine_similarity(v, ?::FLOAT[{d}]) FROM {t} WHERE id IN (SELECT unnest({{ids}}))"
        self._insert = (
            f"INSERT OR REPLACE INTO {t} SELECT i.id, list(f.x ORDER BY f.p)::FLOAT[{d}] "
            "FROM cef_batch_ids i JOIN cef_batch_values f USING (k) GROUP BY i.id"
        )
        self._delete = f"DELETE FROM {t} WHERE id IN (SELECT unnest({{ids}}))"
        self._count = f"SELECT COUNT(*) FROM {t}"

    def _q(self, vector: np.ndarray) -> str:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if v.shape != (self.dim,):
            raise EmbeddingError(f"query vector has shape {v.shape}, the index holds dimension {self.dim}")
        return _vec_literal(v)

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[1] != self.dim or len(vecs) != len(ids):
            raise EmbeddingError(
                f"expected {len(ids)} vectors of dimension {self.dim}, got shape {vecs.shape}"
            )
        if not len(ids):
            return
        with self.db.use("writing vectors") as con:
            for s in range(0, len(ids), self.BATCH):
                part = np.asarray(list(ids[s : s + self.BATCH]), dtype=object)
                k = np.arange(len(part), dtype=np.int64)
                # numpy columns scanned in place: the fast way in without pandas/pyarrow
                con.register("cef_batch_ids", {"id": part, "k": k})
                con.register(
                    "cef_batch_values",
                    {
                        "k": np.repeat(k, self.dim),
                        "p": np.tile(np.arange(self.dim, dtype=np.int32), len(part)),
                        "x": np.ascontiguousarray(vecs[s : s + self.BATCH]).reshape(-1),
                    },
                )
                try:
                    con.execute(self._insert)
                finally:
                    con.unregister("cef_batch_ids")
                    con.unregister("cef_batch_values")

    def remove(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        sql, param = _id_list(ids)
        with self.db.use("removing vectors") as con:
            con.execute(self._delete.format(ids=sql), [param])

    def search(
        self, vector: np.ndarray, k: int, allowed: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        q = self._q(vector)
        if k <= 0:
            return []
        with self.db.use("searching vectors") as con:
            if allowed is not None:
                ids = list(dict.fromkeys(allowed))
                if not ids:
                    return []
                sql, param = _id_list(ids)
                rows = con.execute(self._allowed.format(ids=sql), [q, param, k]).fetchall()
            elif self.hnsw:
                rows = con.execute(self._ann, [q, q, k]).fetchall()
            else:
                rows = con.execute(self._exact, [q, k]).fetchall()
        return [(i, float(s)) for i, s in rows]

    def similarities(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        q = self._q(vector)
        out = np.zeros(len(ids), dtype=np.float32)
        if not ids:
            return out
        with self.db.use("reading vectors") as con:
            sql, param = _id_list(list(dict.fromkeys(ids)))
            found = dict(con.execute(self._sims.format(ids=sql), [q, param]).fetchall())
        for pos, i in enumerate(ids):
            if found.get(i) is not None:
                out[pos] = found[i]
        return out

    def __len__(self) -> int:
        with self.db.use("counting vectors") as con:
            return int(con.execute(self._count).fetchone()[0])


class _DuckDBMirror(VectorMirror):
    def __init__(self, store: DuckDBVectorStore) -> None:
        super().__init__(store.indexes)
        self.store = store

    def __repr__(self) -> str:
        return f"DuckDBMirror({self.store.path!r}, prefix={self.store.prefix!r})"

    def _read_marker(self) -> int | None:
        with self.store.db.use("reading the sync marker") as con:
            row = con.execute(f'SELECT seq FROM "{self.store.sync_table}" WHERE key = ?', ["sync"]).fetchone()
        return int(row[0]) if row else None

    def _write_marker(self, seq: int) -> None:
        with self.store.db.use("writing the sync marker") as con:
            con.execute(f'INSERT OR REPLACE INTO "{self.store.sync_table}" VALUES (?, ?)', ["sync", seq])

    def reset(self) -> None:
        self.store.drop()


class DuckDBVectorStore:
    """A :class:`cef.store.base.VectorStore` in a DuckDB file (or ``:memory:``), fed as a mirror."""

    def __init__(
        self, path: str = ":memory:", *, prefix: str = "cef", ann: bool = False, connection: Any = None
    ) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", prefix):
            raise StoreError(f"invalid DuckDB table prefix {prefix!r}")
        duckdb = _duckdb()
        self.path = path
        self.prefix = prefix
        self.sync_table = f"{prefix}_sync"
        self._owns = connection is None
        try:
            con = connection if connection is not None else duckdb.connect(path)
        except duckdb.Error as exc:
            msg = str(exc).strip().splitlines()[0]
            raise StoreError(f"cannot open DuckDB database {path!r}: {msg}") from exc
        self.db = _Db(con)
        self.ann = bool(ann) and load_vss(con)
        with self.db.use("creating the schema") as c:
            if self.ann and path != ":memory:":
                c.execute("SET hnsw_enable_experimental_persistence = true")
            c.execute(f'CREATE TABLE IF NOT EXISTS "{self.sync_table}"(key VARCHAR PRIMARY KEY, seq BIGINT)')
        self.indexes: dict[str, VectorIndex] = {}
        self.mirror = _DuckDBMirror(self)

    def __repr__(self) -> str:
        return f"DuckDBVectorStore({self.path!r}, prefix={self.prefix!r}, ann={self.ann})"

    def _create(self, con: Any, table: str, dim: int) -> None:
        con.execute(f'CREATE TABLE IF NOT EXISTS "{table}"(id VARCHAR PRIMARY KEY, v FLOAT[{int(dim)}])')
        if self.ann:
            con.execute(
                f'CREATE INDEX IF NOT EXISTS "{table}_hnsw" ON "{table}" USING HNSW (v) WITH (metric = \'cosine\')'
            )

    def index(self, kind: str, dim: int) -> DuckDBVectorIndex:
        table = f"{self.prefix}_{kind}_vectors"
        with self.db.use(f"opening {table}") as con:
            row = con.execute(
                "SELECT data_type FROM information_schema.columns WHERE table_name = ? AND column_name = 'v'",
                [table],
            ).fetchone()
            if row is not None and row[0] != f"FLOAT[{int(dim)}]":
                raise EmbeddingError(
                    f"DuckDB table {table!r} holds {row[0]} vectors, the embedder has {dim} dimensions"
                )
            self._create(con, table, dim)
        index = DuckDBVectorIndex(self.db, table, dim, hnsw=self.ann)
        self.indexes[kind] = index
        return index

    def drop(self) -> None:
        """Delete every vector and the marker."""
        with self.db.use("resetting") as con:
            con.execute(f'DELETE FROM "{self.sync_table}"')
            for index in self.indexes.values():
                assert isinstance(index, DuckDBVectorIndex)
                con.execute(f'DROP TABLE IF EXISTS "{index.table}"')
                self._create(con, index.table, index.dim)

    def close(self) -> None:
        if self._owns:
            with self.db.lock:
                self.db.con.close()
