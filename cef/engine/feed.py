"""The store's change feed and vectors as the in-memory indexes take them.

:func:`writes_from_changes` turns change-feed entries (another process's
commits, or the commits since a saved index file) into the WriteSet they add
up to; :func:`vectors_from_store` and :func:`upsert_vectors` fill a vector
index from the store.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cef.errors import ConfigurationError
from cef.store.base import Change, RecordStore, VectorIndex, WriteSet
from cef.vectors.ann import AnnVectorIndex

__all__ = ["upsert_vectors", "vectors_from_store", "writes_from_changes"]


def writes_from_changes(store: RecordStore, changes: Sequence[Change]) -> WriteSet:
    """The net effect of change-feed entries as a WriteSet read back from the store (upserts + deletes)."""
    last: dict[tuple[str, str], str] = {}
    for ch in changes:
        if ch.op == "insert_range" and ch.rid_from is not None and ch.rid_to is not None:
            for ident in store.ids_in_range(ch.kind, ch.rid_from, ch.rid_to):
                last[(ch.kind, ident)] = "upsert"
        else:
            last[(ch.kind, ch.id)] = ch.op

    def ids(kind: str, op: str) -> list[str]:
        return [i for (k, i), o in last.items() if k == kind and o == op]

    node_ids, edge_ids, chunk_ids = ids("node", "upsert"), ids("edge", "upsert"), ids("chunk", "upsert")
    return WriteSet(
        relation_types=store.relation_types() if ids("relation_type", "upsert") else [],
        updated_nodes=store.get_nodes(node_ids),
        node_vectors=store.get_vectors("node", node_ids),
        updated_edges=store.get_edges(edge_ids),
        chunks=store.get_chunks(chunk_ids),
        chunk_vectors=store.get_vectors("chunk", chunk_ids),
        delete_nodes=ids("node", "delete"),
        delete_edges=ids("edge", "delete"),
        delete_chunks=ids("chunk", "delete"),
    )


def vectors_from_store(store: RecordStore, kind: str, dim: int) -> AnnVectorIndex:
    """Every ``kind`` vector of the store in a new index (an HNSW graph is built when it is big)."""
    ids: list[str] = []
    vecs: list[np.ndarray] = []
    for ident, vec in store.iter_vectors(kind):
        if len(vec) != dim:
            raise ConfigurationError(
                f"stored {kind} vector {ident!r} has {len(vec)} dimensions, the embedder has {dim}"
            )
        ids.append(ident)
        vecs.append(vec)
    index = AnnVectorIndex(dim, capacity=max(1024, len(ids)))
    if ids:
        index.upsert(ids, np.stack(vecs))
    return index


def upsert_vectors(index: VectorIndex, found: dict[str, np.ndarray]) -> None:
    """Put ``found`` (id -> vector) into ``index``."""
    if found:
        ids = list(found)
        index.upsert(ids, np.stack([found[i] for i in ids]))
