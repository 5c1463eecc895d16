"""The engine's shared state: the record store plus the in-memory indexes built from it.

``EngineState`` loads the graph index and the vector indexes on open, applies
this process's writes to them right after each commit, and replays other
processes' commits from the store's change feed before every read
(:meth:`EngineState.sync`), so every process sees every committed write.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cef.engine.feed import upsert_vectors, vectors_from_store, writes_from_changes
from cef.engine.rwlock import RWLock
from cef.errors import ConfigurationError
from cef.graph.index import GraphIndex
from cef.model import Edge, Node
from cef.schema.registry import LEGACY_PREFIX, META_PREFIX, SchemaRegistry
from cef.store.base import Change, GraphStore, Mirror, RecordStore, VectorIndex, VectorStore, WriteSet
from cef.vectors.ann import AnnVectorIndex

if TYPE_CHECKING:
    from cef.embed.base import Embedder

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]


class EngineState:
    """Store + graph index + vector indexes, kept consistent with each other.

    By default the vector indexes are exact in-memory indexes loaded from the
    store. ``vectors`` puts them in a :class:`VectorStore` instead (the record
    store's own, or an external one fed as a :class:`Mirror`); ``graph`` is an
    optional :class:`GraphStore` for pushed-down traversal, and ``mirrors`` are
    external indexes (e.g. a graph database) the engine writes every commit to
    and catches up from the change feed on open.
    """

    def __init__(
        self,
        store: RecordStore,
        embedder: Embedder | None,
        *,
        vectors: VectorStore | None = None,
        graph: GraphStore | None = None,
        mirrors: Sequence[Mirror] = (),
        snapshot: bool = True,
    ) -> None:
        self.store = store
        self.embedder = embedder
        #: reads share it (``with lock.read()``, see :meth:`reading`); writes hold it alone (``with lock:``)
        self.lock = RWLock()
        self.graph = GraphIndex()
        self.graph_store = graph
        self.vector_store = vectors
        self.mirrors: list[Mirror] = list(mirrors)
        if vectors is not None and vectors.mirror is not None:
            self.mirrors.append(vectors.mirror)
        self._stale_mirrors: list[Mirror] = []
        self._mirror_retry_at = 0.0
        dim = embedder.dim if embedder is not None else int(store.get_meta("embedding.dim") or 384)
        self.node_vectors: VectorIndex = vectors.index("node", dim) if vectors else AnnVectorIndex(dim)
        self.chunk_vectors: VectorIndex = vectors.index("chunk", dim) if vectors else AnnVectorIndex(dim)
        #: per vector kind, the index version last saved beside the store (see cef.vectors.ann)
        self._vectors_saved: dict[str, int] = {}
        #: ``rows_changed`` of each big vector index when it was last saved (see :meth:`_checkpoint`)
        self._vectors_saved_rows: dict[str, int] = {}
        self.seq = 0
        self._data_version = -1
        self.listeners: list[Callable[[WriteSet], None]] = []
        self._node_cache: dict[str, Node] = {}
        #: where the graph index is cached between runs (see cef.graph.snapshot); None: never
        self.snapshot_path: Path | None = getattr(store, "snapshot_path", None) if snapshot else None
        self._snapshot_seq: int | None = None
        #: whether the last (re)load took the graph from its snapshot
        self.loaded_from_snapshot = False
        self._changed = 0  # nodes and edges written or replayed since the snapshot was taken
        #: the vocabulary of this knowledge base: every write is checked against it (``kb.schema``)
        self.schema = SchemaRegistry(self)
        self._check_embedder()
        self.reload()

    # ------------------------------------------------------------- loading
    def _check_embedder(self) -> None:
        if self.embedder is None:
            return
        name, dim = self.store.get_meta("embedding.model"), self.store.get_meta("embedding.dim")
        if name is not None and (name != self.embedder.name or dim != self.embedder.dim):
            raise ConfigurationError(
                f"this knowledge base was embedded with {name!r} ({dim} dims) but the configured embedder is "
                f"{self.embedder.name!r} ({self.embedder.dim} dims): use the same model, or re-embed with "
                "KnowledgeBase.full_reindex(reembed=True)"
            )

    #: graphs with at least this many nodes + edges are snapshotted (smaller ones load fast from the store)
    SNAPSHOT_MIN_ITEMS = 200_000
    #: on close, rewrite the snapshot once this share of the graph changed since it was taken
    SNAPSHOT_REWRITE_SHARE = 0.02
    #: while writing, re-save a big graph snapshot or vector index once this share of it changed since
    #: its last save: a process killed mid-ingest then leaves files the next open reads, replaying at
    #: most this share (not rebuilding a million-vector HNSW graph for a quarter of an hour); growing
    #: from empty, the saves come at geometric steps, so they cost a constant factor of one save
    CHECKPOINT_SHARE = 0.25

    def reload(self, progress: ProgressFn | None = None, *, use_snapshot: bool = True) -> None:
        """Rebuild every in-memory index from the store (from the graph snapshot when it is current)."""
        with self.lock:
            # the freshness token first: a commit landing between the two reads then still triggers a replay
            self._data_version = self.store.data_version()
            self.seq = self.store.current_seq()
            self._node_cache.clear()
            self.loaded_from_snapshot = use_snapshot and self._load_snapshot()
            if not self.loaded_from_snapshot:
                self.graph = self._load_graph()
                self._snapshot_seq = None
                self._changed = self.graph.node_count + self.graph.edge_count
                if self._changed >= self.SNAPSHOT_MIN_ITEMS:
                    self.save_snapshot()
            if self.vector_store is None:
                self.node_vectors = self._open_vectors("node", self.node_vectors.dim)
                self.chunk_vectors = self._open_vectors("chunk", self.chunk_vectors.dim)
            self.schema.load()
            for mirror in self.mirrors:
                self._catch_up(mirror)

    def _load_graph(self) -> GraphIndex:
        graph = GraphIndex()
        graph.set_relation_types(self.store.relation_types())
        node_rows = list(self.store.iter_node_rows())
        if node_rows:
            ids, labels, scopes = zip(*node_rows, strict=True)
            del node_rows
            graph.add_node_arrays(ids, labels, scopes)
            del ids, labels, scopes
        # an edge whose endpoint the node scan did not see was committed after it (and after the seq
        # read above): load_edge_rows skips it and the change feed replays that commit
        graph.load_edge_rows(self.store.iter_edge_rows())
        return graph

    # ------------------------------------------------------------- snapshots
    def _instance(self) -> str | None:
        value = getattr(self.store, "instance_id", None)
        return value if isinstance(value, str) else None

    def _load_snapshot(self) -> bool:
        """Take the graph from its snapshot and replay the commits made since; False: load from the store."""
        path, instance = self.snapshot_path, self._instance()
        if path is None or instance is None or not path.exists():
            return False
        from cef.graph.snapshot import SnapshotError, read_header, read_snapshot

        try:
            head = read_header(path)
            seq = int(head.get("seq", -1))
            if head.get("instance") != instance or not 0 <= seq <= self.seq:
                log.info(
                    "graph snapshot %s is from another database or a later state; loading the store", path
                )
                return False
            if seq < self.seq:
                _, changes = self.store.changes_since(seq)
                if any(c.kind == "reset" for c in changes):
                    return False  # the change feed no longer reaches back to the snapshot
            graph, head = read_snapshot(path)
        except (SnapshotError, OSError, ValueError, KeyError) as exc:
            log.warning("ignoring graph snapshot: %s", exc)
            return False
        graph.set_relation_types(self.store.relation_types())
        self.graph = graph
        self.seq = self._snapshot_seq = seq
        self._changed = 0
        self._replay_until(None)
        counts = self.store.counts()
        if (counts["nodes"], counts["edges"]) != (self.graph.node_count, self.graph.edge_count):
            self._replay_until(None)  # a commit may have landed between the replay and the count
            counts = self.store.counts()
            if (counts["nodes"], counts["edges"]) != (self.graph.node_count, self.graph.edge_count):
                log.warning(
                    "graph snapshot %s does not match the store (%d/%d nodes, %d/%d edges); loading the store",
                    path,
                    self.graph.node_count,
                    counts["nodes"],
                    self.graph.edge_count,
                    counts["edges"],
                )
                return False
        return True

    def save_snapshot(self) -> bool:
        """Write the graph index to its snapshot file now; False when this store has none or it failed."""
        path, instance = self.snapshot_path, self._instance()
        if path is None or instance is None:
            return False
        from cef.graph.snapshot import SnapshotError, write_snapshot

        with self.lock:
            try:
                write_snapshot(self.graph, path, {"instance": instance, "seq": self.seq})
            except (SnapshotError, OSError) as exc:
                log.warning("could not write the graph snapshot %s: %s", path, exc)
                return False
            self._snapshot_seq = self.seq
            self._changed = 0
            return True

    # ------------------------------------------------------------- saved vector indexes
    def vectors_path(self, kind: str) -> Path | None:
        """Where a big vector index of ``kind`` is saved between runs (``<db>-chunk-vectors``); None: never."""
        if self.snapshot_path is None:
            return None
        base = str(self.snapshot_path)
        return Path(base.removesuffix("-graph") + f"-{kind}-vectors")

    def _open_vectors(self, kind: str, dim: int) -> AnnVectorIndex:
        """The saved index with the commits since replayed, else every vector read from the store."""
        index = self._load_saved_vectors(kind, dim)
        if index is None:
            index = vectors_from_store(self.store, kind, dim)
            self._vectors_saved.pop(kind, None)
            if index.approximate:  # built now: saved, so the next open does not build it again
                self._save_vectors(kind, index)
        return index

    def _load_saved_vectors(self, kind: str, dim: int) -> AnnVectorIndex | None:
        path, instance = self.vectors_path(kind), self._instance()
        if path is None or instance is None or not path.exists():
            return None
        from cef.vectors.ann import load_index, read_header

        try:
            head = read_header(path)
            seq = int(head.get("seq", -1))
            if (
                head.get("instance") != instance
                or not 0 <= seq <= self.seq
                or int(head.get("dim", -1)) != dim
            ):
                log.info(
                    "saved %s vectors %s are from another database or state; reading the store", kind, path
                )
                return None
            changes: list[Change] = []
            if seq < self.seq:
                _, changes = self.store.changes_since(seq)
                changes = [c for c in changes if c.seq <= self.seq]
                if any(c.kind == "reset" for c in changes):
                    return None
            index, _ = load_index(path)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            log.warning("ignoring saved %s vectors: %s", kind, exc)
            return None
        mine = [c for c in changes if c.kind == kind]
        if mine:
            w = writes_from_changes(self.store, mine)
            gone = w.delete_nodes if kind == "node" else w.delete_chunks
            if gone:
                index.remove(gone)
            upsert_vectors(index, w.node_vectors if kind == "node" else w.chunk_vectors)
        self._vectors_saved[kind] = index.version if not mine else -1
        self._vectors_saved_rows[kind] = 0  # the replayed rows count as changed since the file
        return index

    def _save_vectors(self, kind: str, index: VectorIndex) -> bool:
        path, instance = self.vectors_path(kind), self._instance()
        if path is None or instance is None or not isinstance(index, AnnVectorIndex):
            return False
        from cef.vectors.ann import save_index

        try:
            save_index(index, path, {"instance": instance, "seq": self.seq, "kind": kind})
        except (OSError, ConfigurationError) as exc:
            log.warning("could not save the %s vectors to %s: %s", kind, path, exc)
            return False
        self._vectors_saved[kind] = index.version
        self._vectors_saved_rows[kind] = index.rows_changed
        return True

    def save_vectors(self) -> None:
        """Save each big vector index that changed since it was last saved (done on close)."""
        with self.lock:
            for kind, index in self._big_vector_indexes():
                if self._vectors_saved.get(kind) != index.version:
                    self._save_vectors(kind, index)

    def _big_vector_indexes(self) -> list[tuple[str, AnnVectorIndex]]:
        """The vector indexes searched through an HNSW graph (those saved beside the store), by kind."""
        pairs = (("node", self.node_vectors), ("chunk", self.chunk_vectors))
        return [(k, ix) for k, ix in pairs if isinstance(ix, AnnVectorIndex) and ix.approximate]

    def _checkpoint(self) -> None:
        """Re-save the graph snapshot and the big vector indexes that changed by ``CHECKPOINT_SHARE``."""
        if self._snapshot_stale(self.CHECKPOINT_SHARE):
            self.save_snapshot()
        if self.vector_store is not None:
            return
        for kind, index in self._big_vector_indexes():
            changed = index.rows_changed - self._vectors_saved_rows.get(kind, 0)
            if changed >= self.CHECKPOINT_SHARE * len(index):
                self._save_vectors(kind, index)

    def _snapshot_stale(self, share: float | None = None) -> bool:
        """Whether a big graph changed by ``share`` of its size (default ``SNAPSHOT_REWRITE_SHARE``)
        since its snapshot was taken."""
        share = self.SNAPSHOT_REWRITE_SHARE if share is None else share
        items = self.graph.node_count + self.graph.edge_count
        return (
            self.snapshot_path is not None
            and self._snapshot_seq != self.seq
            and items >= self.SNAPSHOT_MIN_ITEMS
            and self._changed >= max(1, share * items)
        )

    NODE_CACHE_SIZE = 100_000

    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        """Node records by id, in order, from a bounded cache in front of the store."""
        cache = self._node_cache
        missing = [i for i in ids if i not in cache]
        if missing:
            if len(cache) + len(missing) > self.NODE_CACHE_SIZE:
                cache.clear()
            for n in self.store.get_nodes(missing):
                cache[n.id] = n
        return [cache[i] for i in ids if i in cache]

    def _forget_nodes(self, ids: Iterable[str]) -> None:
        for i in ids:
            self._node_cache.pop(i, None)

    # ------------------------------------------------------------- writing
    def commit(self, writes: WriteSet) -> None:
        """Write to the store (one transaction), then to the in-memory indexes."""
        with self.lock:
            if writes.is_empty():
                return
            before, after = self.store.apply(writes)
            if before != self.seq:
                self._replay_until(before)
            self._apply_local(writes)
            self.seq = after
            try:
                self._checkpoint()
            except Exception:  # a cache must never break a write that is already committed
                log.exception("saving a checkpoint of the in-memory indexes failed")
            # _data_version is left as it was: reading it now could take in another process's commit
            # that landed after ours, which sync() would then never replay
            self._mirror(writes, before, after)
        for listener in list(self.listeners):
            try:
                listener(writes)
            except Exception:  # a listener must never break a write that is already committed
                log.exception("write listener failed")

    def _apply_local(self, w: WriteSet) -> None:
        g = self.graph
        self._changed += (
            len(w.nodes)
            + len(w.updated_nodes)
            + len(w.delete_nodes)
            + len(w.edges)
            + len(w.updated_edges)
            + len(w.delete_edges)
        )
        self._forget_nodes(w.delete_nodes)
        self._forget_nodes(n.id for n in w.updated_nodes)
        if w.relation_types:
            g.set_relation_types(w.relation_types)
        if w.meta:
            self.schema.absorb(w.meta)
        if w.delete_edges:
            g.remove_edges(w.delete_edges)
        own = self.vector_store is None  # else the vector store already has them (native or mirror)
        if w.delete_chunks and own:
            self.chunk_vectors.remove(w.delete_chunks)
        if w.delete_nodes:
            g.remove_nodes(w.delete_nodes)
            if own:
                self.node_vectors.remove(w.delete_nodes)
        if w.nodes or w.updated_nodes:
            g.add_nodes([*w.nodes, *w.updated_nodes])
        if w.node_vectors and own:
            ids = list(w.node_vectors)
            self.node_vectors.upsert(ids, np.stack([w.node_vectors[i] for i in ids]))
        if w.edges:
            g.add_edges(w.edges)
        if w.updated_edges:
            g.update_edges(w.updated_edges)
        # the entity index lists each passage's chunks: the chunks' nodes changed for it
        if w.delete_chunks:
            g.lose_track()
        elif w.chunks:
            g.touch_nodes(dict.fromkeys(c.node_id for c in w.chunks if c.node_id))
        if w.chunk_vectors and own:
            ids = list(w.chunk_vectors)
            self.chunk_vectors.upsert(ids, np.stack([w.chunk_vectors[i] for i in ids]))

    # ------------------------------------------------------------- syncing
    def sync(self) -> None:
        """Replay commits made by other processes since we last looked."""
        with self.lock:
            if self._stale_mirrors and time.monotonic() >= self._mirror_retry_at:
                self._retry_mirrors()
            dv = self.store.data_version()
            if dv == self._data_version:
                return
            self._data_version = dv
            self._replay_until(None)

    def _replay_until(self, until: int | None) -> None:
        new_seq, changes = self.store.changes_since(self.seq)
        if until is not None:
            changes = [c for c in changes if c.seq <= until]
            new_seq = until
        if not changes:
            self.seq = max(self.seq, new_seq)
            return
        if any(c.kind == "reset" for c in changes):
            self.reload()
            return
        self._replay(changes)
        self.seq = new_seq

    def _replay(self, changes: list[Change]) -> None:
        last: dict[tuple[str, str], str] = {}
        for ch in changes:  # only the last operation per record matters
            if ch.op == "insert_range" and ch.rid_from is not None and ch.rid_to is not None:
                for ident in self.store.ids_in_range(ch.kind, ch.rid_from, ch.rid_to):
                    last[(ch.kind, ident)] = "upsert"
            else:
                last[(ch.kind, ch.id)] = ch.op
        by = {
            (kind, op): [i for (k, i), o in last.items() if k == kind and o == op]
            for kind in ("node", "edge", "chunk", "relation_type", "meta")
            for op in ("upsert", "delete")
        }
        g = self.graph
        own = self.vector_store is None
        self._changed += sum(1 for k, _ in last if k in ("node", "edge"))
        self._forget_nodes(i for (k, i) in last if k == "node")
        if by[("relation_type", "upsert")]:
            g.set_relation_types(self.store.relation_types())
        if any(k == "meta" and i.startswith((META_PREFIX, LEGACY_PREFIX)) for k, i in last):
            self.schema.load()  # another process registered node types, edge types or vocabularies
        if by[("edge", "delete")]:
            g.remove_edges(by[("edge", "delete")])
        if by[("chunk", "delete")] and own:
            self.chunk_vectors.remove(by[("chunk", "delete")])
        if by[("node", "delete")]:
            g.remove_nodes(by[("node", "delete")])
            if own:
                self.node_vectors.remove(by[("node", "delete")])
        node_ids = by[("node", "upsert")]
        if node_ids:
            nodes: list[Node] = self.store.get_nodes(node_ids)
            g.add_nodes(nodes)
            if own:
                upsert_vectors(self.node_vectors, self.store.get_vectors("node", node_ids))
        edge_ids = by[("edge", "upsert")]
        if edge_ids:
            edges: list[Edge] = self.store.get_edges(edge_ids)
            g.add_edges([e for e in edges if g.has_node(e.source) and g.has_node(e.target)])
        chunk_ids = by[("chunk", "upsert")]
        if chunk_ids or by[("chunk", "delete")]:
            g.lose_track()  # which nodes these chunks hang on is in the store only
        if chunk_ids and own:
            upsert_vectors(self.chunk_vectors, self.store.get_vectors("chunk", chunk_ids))

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the engine for a consistent read (after catching up with other processes).

        Reads run concurrently with each other; a write waits for them and they
        wait for it, so a read sees the state before a write or after it, never
        a part of it. Catching up (a write to the in-memory indexes) happens
        first, alone, and only when another process committed since.
        """
        if not self.lock.held_for_reading() and self._needs_sync():
            with self.lock:
                self.sync()
        with self.lock.read():
            yield

    def writer_waits_on_me(self) -> bool:
        """A write waits, and this thread's one read is all it waits for from this thread."""
        return self.lock.writers_waiting > 0 and self.lock.holds_one_read()

    def _needs_sync(self) -> bool:
        if self._stale_mirrors and time.monotonic() >= self._mirror_retry_at:
            return True
        return self.store.data_version() != self._data_version

    # ------------------------------------------------------------- mirrors
    #: a failed mirror is retried (from its marker) on the first read or write after this many seconds
    MIRROR_RETRY_SECONDS = 5.0

    def _mirror(self, writes: WriteSet, before: int, after: int) -> None:
        for mirror in self.mirrors:
            if mirror in self._stale_mirrors:
                continue
            try:
                mirror.apply(writes)
                mirror.advance(before, after)
            except Exception:  # the record store has the write; the mirror catches up later
                log.exception("mirror %r failed; it will catch up from the change feed", mirror)
                self._stale_mirrors.append(mirror)
                self._mirror_retry_at = time.monotonic() + self.MIRROR_RETRY_SECONDS

    def _retry_mirrors(self) -> None:
        stale, self._stale_mirrors = self._stale_mirrors, []
        for mirror in stale:
            try:
                self._catch_up(mirror)
            except Exception:
                log.exception("mirror %r is still failing", mirror)
                self._stale_mirrors.append(mirror)
                self._mirror_retry_at = time.monotonic() + self.MIRROR_RETRY_SECONDS

    def _catch_up(self, mirror: Mirror) -> None:
        """Bring a mirror to the store's current seq: replay the feed from its marker, else rebuild it."""
        current = self.store.current_seq()
        synced = mirror.synced_seq()
        if synced == current:
            return
        if synced is not None and synced < current:
            new_seq, changes = self.store.changes_since(synced)
            if not any(c.kind == "reset" for c in changes):
                mirror.apply(writes_from_changes(self.store, changes))
                mirror.advance(synced, new_seq)
                return
        log.info("rebuilding mirror %r from the record store", mirror)
        mirror.reset()
        mirror.apply(WriteSet(relation_types=self.store.relation_types()))
        for nodes in _batches(self.store.iter_nodes()):
            ids = [n.id for n in nodes]
            mirror.apply(WriteSet(nodes=nodes, node_vectors=self.store.get_vectors("node", ids)))
        for edges in _batches(self.store.iter_edges()):
            mirror.apply(WriteSet(edges=edges))
        for chunks in _batches(self.store.iter_chunks()):
            ids = [c.id for c in chunks]
            mirror.apply(WriteSet(chunks=chunks, chunk_vectors=self.store.get_vectors("chunk", ids)))
        mirror.advance(None, current)

    def close(self) -> None:
        """Close the record store and every other store the engine was given (each once).

        A big graph that changed enough since its snapshot is snapshotted first, so the
        next open is fast.
        """
        try:
            if self._snapshot_stale():
                self.save_snapshot()
        except Exception:  # a cache must never break closing
            log.exception("graph snapshot on close failed")
        try:
            if self.vector_store is None:
                self.save_vectors()
        except Exception:  # a cache must never break closing
            log.exception("saving the vector indexes on close failed")
        done: list[object] = []
        for res in (self.graph_store, *self.mirrors, self.vector_store, self.store):
            close = getattr(res, "close", None)
            if res is None or close is None or any(res is d for d in done):
                continue
            done.append(res)
            close()


def _batches(items: Iterable[Any], size: int = 5000) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
