"""Qdrant as the engine's vector store (needs the ``qdrant`` extra: ``qdrant-client``).

One collection per kind (``{prefix}_node``, ``{prefix}_chunk``, cosine
distance) plus ``{prefix}_sync`` holding the mirror marker. Qdrant point ids
must be integers or UUIDs, so a record id maps to ``uuid5(id)`` and the id
itself travels in the payload. ``location`` is a server URL
(``http://host:6333``), a local directory (the client's embedded mode: one
process at a time) or ``:memory:``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from cef.errors import CefError, EmbeddingError, MissingExtraError, RetryableStoreError, StoreError
from cef.store.base import VectorIndex, VectorMirror

_NS = uuid.UUID("5d1c7a3e-6c1f-4c55-9b8e-0d6b1f1d9c2e")
_MARKER_ID = 1


def _client_module() -> Any:
    try:
        import qdrant_client
    except ImportError as exc:
        raise MissingExtraError("the Qdrant vector store", "qdrant", "qdrant-client") from exc
    return qdrant_client


def _translate(exc: BaseException, doing: str) -> StoreError:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    transient = ("ConnectError", "ConnectTimeout", "ReadTimeout", "ResponseHandlingException", "RpcError")
    if type(exc).__name__ in transient or isinstance(exc, ConnectionError | TimeoutError):
        return RetryableStoreError(f"Qdrant unavailable while {doing}: {msg}; retry")
    return StoreError(f"Qdrant error while {doing}: {msg}")


class _Guard:
    def __init__(self, doing: str) -> None:
        self.doing = doing

    def __enter__(self) -> None:
        return None

    def __exit__(self, tp: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is not None and not isinstance(exc, CefError) and isinstance(exc, Exception):
            raise _translate(exc, self.doing) from exc


def point_id(ident: str) -> str:
    """The Qdrant point id of a record id."""
    return str(uuid.uuid5(_NS, ident))


class QdrantVectorIndex:
    """A :class:`cef.store.base.VectorIndex` on one Qdrant collection."""

    BATCH = 512

    def __init__(self, client: Any, collection: str, dim: int) -> None:
        self.client = client
        self.collection = collection
        self.dim = int(dim)

    def _q(self, vector: np.ndarray) -> list[float]:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if v.shape != (self.dim,):
            raise EmbeddingError(f"query vector has shape {v.shape}, the index holds dimension {self.dim}")
        out: list[float] = v.tolist()
        return out

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        from qdrant_client import models

        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[1] != self.dim or len(vecs) != len(ids):
            raise EmbeddingError(
                f"expected {len(ids)} vectors of dimension {self.dim}, got shape {vecs.shape}"
            )
        with _Guard("writing vectors"):
            for s in range(0, len(ids), self.BATCH):
                part = list(ids[s : s + self.BATCH])
                self.client.upsert(
                    self.collection,
                    models.Batch(
                        ids=[point_id(i) for i in part],
                        vectors=vecs[s : s + self.BATCH].tolist(),
                        payloads=[{"id": i} for i in part],
                    ),
                    wait=True,
                )

    def remove(self, ids: Sequence[str]) -> None:
        from qdrant_client import models

        if not ids:
            return
        with _Guard("removing vectors"):
            self.client.delete(
                self.collection, models.PointIdsList(points=[point_id(i) for i in ids]), wait=True
            )

    def search(
        self, vector: np.ndarray, k: int, allowed: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        from qdrant_client import models

        q = self._q(vector)
        if k <= 0:
            return []
        flt = None
        if allowed is not None:
            ids = [point_id(i) for i in dict.fromkeys(allowed)]
            if not ids:
                return []
            flt = models.Filter(must=[models.HasIdCondition(has_id=ids)])  # type: ignore[arg-type]
        with _Guard("searching vectors"):
            res = self.client.query_points(
                self.collection, query=q, limit=k, query_filter=flt, with_payload=True
            )
        return [(p.payload["id"], float(p.score)) for p in res.points if p.payload]

    def similarities(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        q = np.asarray(self._q(vector), dtype=np.float32)
        n = float(np.linalg.norm(q))
        q = q / n if n > 0 else q
        out = np.zeros(len(ids), dtype=np.float32)
        if not ids:
            return out
        with _Guard("reading vectors"):
            recs = self.client.retrieve(
                self.collection,
                ids=[point_id(i) for i in dict.fromkeys(ids)],
                with_payload=True,
                with_vectors=True,
            )
        found: dict[str, np.ndarray] = {}
        for r in recs:
            if r.payload and r.vector is not None:
                v = np.asarray(r.vector, dtype=np.float32)
                nv = float(np.linalg.norm(v))
                found[r.payload["id"]] = v / nv if nv > 0 else v
        for pos, i in enumerate(ids):
            if i in found:
                out[pos] = float(found[i] @ q)
        return out

    def __len__(self) -> int:
        with _Guard("counting vectors"):
            return int(self.client.count(self.collection, exact=True).count)


class _QdrantMirror(VectorMirror):
    def __init__(self, store: QdrantVectorStore) -> None:
        super().__init__(store.indexes)
        self.store = store

    def __repr__(self) -> str:
        return f"QdrantMirror({self.store.location!r}, prefix={self.store.prefix!r})"

    def _read_marker(self) -> int | None:
        c, name = self.store.client, self.store.sync_collection
        with _Guard("reading the sync marker"):
            if not c.collection_exists(name):
                return None
            recs = c.retrieve(name, ids=[_MARKER_ID], with_payload=True)
        return int(recs[0].payload["seq"]) if recs and recs[0].payload else None

    def _write_marker(self, seq: int) -> None:
        from qdrant_client import models

        c, name = self.store.client, self.store.sync_collection
        with _Guard("writing the sync marker"):
            if not c.collection_exists(name):
                c.create_collection(
                    name, vectors_config=models.VectorParams(size=1, distance=models.Distance.DOT)
                )
            c.upsert(name, [models.PointStruct(id=_MARKER_ID, vector=[1.0], payload={"seq": seq})], wait=True)

    def reset(self) -> None:
        self.store.drop()


class QdrantVectorStore:
    """A :class:`cef.store.base.VectorStore` on Qdrant (a mirror the engine feeds)."""

    def __init__(
        self,
        location: str = ":memory:",
        *,
        prefix: str = "cef",
        api_key: str | None = None,
        client: Any = None,
        timeout: int = 30,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", prefix):
            raise StoreError(f"invalid Qdrant collection prefix {prefix!r}")
        self.location = location
        self.prefix = prefix
        self.sync_collection = f"{prefix}_sync"
        self._owns_client = client is None
        if client is None:
            qc = _client_module()
            with _Guard(f"opening {location!r}"):
                if re.match(r"^https?://", location):
                    client = qc.QdrantClient(
                        url=location, api_key=api_key, timeout=timeout, check_compatibility=False
                    )
                elif location == ":memory:":
                    client = qc.QdrantClient(location=":memory:")
                else:
                    client = qc.QdrantClient(path=location)
        self.client = client
        self.indexes: dict[str, VectorIndex] = {}
        self.mirror = _QdrantMirror(self)

    def __repr__(self) -> str:
        return f"QdrantVectorStore({self.location!r}, prefix={self.prefix!r})"

    def index(self, kind: str, dim: int) -> QdrantVectorIndex:
        from qdrant_client import models

        name = f"{self.prefix}_{kind}"
        with _Guard(f"opening collection {name!r}"):
            if self.client.collection_exists(name):
                info = self.client.get_collection(name)
                size = getattr(info.config.params.vectors, "size", None)
                if size is not None and int(size) != int(dim):
                    raise EmbeddingError(
                        f"Qdrant collection {name!r} holds {size}-dimensional vectors, the embedder has {dim}"
                    )
            else:
                self.client.create_collection(
                    name, vectors_config=models.VectorParams(size=int(dim), distance=models.Distance.COSINE)
                )
        index = QdrantVectorIndex(self.client, name, dim)
        self.indexes[kind] = index
        return index

    def drop(self) -> None:
        """Delete every vector and the marker (the collections are recreated empty)."""
        from qdrant_client import models

        with _Guard("resetting collections"):
            if self.client.collection_exists(self.sync_collection):
                self.client.delete_collection(self.sync_collection)
            for kind, index in list(self.indexes.items()):
                assert isinstance(index, QdrantVectorIndex)
                self.client.delete_collection(index.collection)
                self.client.create_collection(
                    index.collection,
                    vectors_config=models.VectorParams(size=index.dim, distance=models.Distance.COSINE),
                )
                self.indexes[kind] = index

    def close(self) -> None:
        if self._owns_client:
            self.client.close()
