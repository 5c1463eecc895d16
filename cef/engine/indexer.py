"""KnowledgeIndexer: every write validated first, then one transaction, then the in-memory indexes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cef.embed.base import Embedder
from cef.engine.state import EngineState, ProgressFn
from cef.errors import (
    ConflictError,
    DuplicateIdError,
    InvalidPropertyError,
    MissingNodeError,
    NotFoundError,
    ValidationError,
)
from cef.model import Batch, Chunk, Edge, Node, RelationType, utcnow
from cef.store.base import WriteSet


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    what: str,
    progress: ProgressFn | None = None,
    *,
    step: int = 2048,
) -> np.ndarray:
    """Vectors of ``texts`` (in their order), each distinct text embedded once, in order of length.

    Texts of like length go to the embedder together, so its batches carry
    little padding; ``step`` texts at a time between two progress reports
    (``what``, texts done, total)."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    unique = list(dict.fromkeys(texts))
    order = sorted(range(len(unique)), key=lambda i: len(unique[i]))
    vectors = np.empty((len(unique), embedder.dim), dtype=np.float32)
    for start in range(0, len(order), step):
        part = order[start : start + step]
        vectors[part] = embedder.embed([unique[i] for i in part])
        if progress is not None:
            progress(what, min(start + step, len(order)), len(order))
    if len(unique) == len(texts):  # no repeats: ``unique`` is ``texts``
        return vectors
    where = {t: i for i, t in enumerate(unique)}
    return vectors[[where[t] for t in texts]]


@dataclass
class IndexResult:
    """What a write did."""

    relation_types: int = 0
    nodes: int = 0
    edges: int = 0
    chunks: int = 0
    embedded: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


class KnowledgeIndexer:
    """Adds, updates and deletes knowledge. Every call is all-or-nothing, and every write is checked
    against the knowledge base's schema registry (``state.schema``) first."""

    EMBED_BATCH = 256

    def __init__(self, state: EngineState, *, embed_nodes: str = "all") -> None:
        if embed_nodes not in ("all", "content", "none"):
            raise ValueError("embed_nodes must be 'all', 'content' or 'none'")
        self.state = state
        self.embed_nodes = embed_nodes

    # ------------------------------------------------------------ public API
    def initialize(self, root_nodes: Sequence[Node], relation_types: Sequence[RelationType]) -> IndexResult:
        """Register the relation types and root nodes of a new knowledge base (one transaction)."""
        return self.index_batch(Batch(relation_types=list(relation_types), nodes=list(root_nodes)))

    def register_relation_types(self, relation_types: Sequence[RelationType]) -> IndexResult:
        return self.index_batch(Batch(relation_types=list(relation_types)))

    def index_node(self, node: Node) -> Node:
        self.index_batch(Batch(nodes=[node]))
        return node

    def index_edge(self, edge: Edge) -> Edge:
        batch = Batch(edges=[edge])
        self.index_batch(batch)
        return batch.edges[0]

    def index_chunk(self, chunk: Chunk) -> Chunk:
        self.index_batch(Batch(chunks=[chunk]))
        return chunk

    def index_batch(
        self, batch: Batch, *, progress: ProgressFn | None = None, scopes: Collection[str] | None = None
    ) -> IndexResult:
        """Validate everything, embed, then write all of it in one transaction.

        ``scopes``: the write may refer only to nodes of these scopes and shared ones (a tenant's
        write): an edge or chunk naming another tenant's node fails exactly as if it did not exist."""
        import time

        t0 = time.perf_counter()
        st = self.state
        with st.lock:
            st.sync()
            registrations = self._validate(batch, scopes=scopes)
            writes = WriteSet(
                relation_types=list(batch.relation_types),
                nodes=list(batch.nodes),
                edges=list(batch.edges),
                chunks=list(batch.chunks),
                meta=registrations,
            )
            embedded = self._embed(writes, progress)
            if writes.relation_types or writes.nodes:
                self._record_embedder(writes)
            st.commit(writes)
        return IndexResult(
            relation_types=len(batch.relation_types),
            nodes=len(batch.nodes),
            edges=len(batch.edges),
            chunks=len(batch.chunks),
            embedded=embedded,
            seconds=time.perf_counter() - t0,
        )

    def update_node(
        self,
        node_id: str,
        properties: dict[str, Any] | None = None,
        *,
        content: str | None = None,
        label: str | None = None,
        merge: bool = True,
    ) -> Node:
        """Change a node's properties (merged by default), content or label; re-embed if its text changed."""
        st = self.state
        with st.lock:
            st.sync()
            found = st.store.get_nodes([node_id])
            if not found:
                raise NotFoundError(f"node {node_id!r} does not exist")
            old = found[0]
            props = dict(old.properties) if merge else {}
            if properties:
                props.update(properties)
            try:
                new = Node(
                    id=old.id,
                    label=label or old.label,
                    properties=props,
                    content=content if content is not None else old.content,
                    scope=old.scope,
                    created=old.created,
                    updated=utcnow(),
                    version=old.version + 1,
                )
            except ValueError as exc:
                raise InvalidPropertyError(f"node {node_id!r}: {exc}") from exc
            registrations = st.schema.check_write(Batch(nodes=[new]), self._label_of())
            writes = WriteSet(updated_nodes=[new], meta=registrations)
            if new.embedding_text() != old.embedding_text():
                self._embed_nodes(writes, [new])
            st.commit(writes)
            return new

    def update_edge(self, edge: Edge) -> Edge:
        """Replace an edge's attributes (same id, same endpoints and relation type)."""
        st = self.state
        with st.lock:
            st.sync()
            found = st.store.get_edges([edge.id])
            if not found:
                raise NotFoundError(f"edge {edge.id!r} does not exist")
            old = found[0]
            if (old.source, old.target, old.relation_type) != (edge.source, edge.target, edge.relation_type):
                raise ValidationError(
                    f"edge {edge.id!r}: source, target and relation type cannot change; delete and re-create it"
                )
            st.schema.check_write(Batch(edges=[edge]), self._label_of())
            st.commit(WriteSet(updated_edges=[edge]))
            return edge

    def delete_node(self, node_id: str, cascade: bool = True) -> IndexResult:
        """Delete a node; with ``cascade`` also its edges and linked chunks, else refuse if it has any."""
        st = self.state
        with st.lock:
            st.sync()
            if not st.graph.has_node(node_id):
                raise NotFoundError(f"node {node_id!r} does not exist")
            edge_ids = st.store.edges_for_nodes([node_id])
            chunk_ids = st.store.chunks_for_nodes([node_id]).get(node_id, [])
            if not cascade and (edge_ids or chunk_ids):
                raise ConflictError(
                    f"node {node_id!r} has {len(edge_ids)} edge(s) and {len(chunk_ids)} linked chunk(s): "
                    "delete them first or pass cascade=True"
                )
            st.commit(WriteSet(delete_nodes=[node_id], delete_edges=edge_ids, delete_chunks=chunk_ids))
            return IndexResult(nodes=1, edges=len(edge_ids), chunks=len(chunk_ids))

    def update_chunk(
        self,
        chunk_id: str,
        *,
        content: str | None = None,
        metadata: dict[str, Any] | None = None,
        node_id: str | None = None,
        unlink: bool = False,
        merge: bool = True,
    ) -> Chunk:
        """Change a chunk's text, metadata (merged by default) or linked node; re-embed if its text changed.

        The chunk is rewritten (delete + insert in one transaction) so its vector and full-text rows stay in step.
        """
        st = self.state
        with st.lock:
            st.sync()
            found = st.store.get_chunks([chunk_id])
            if not found:
                raise NotFoundError(f"chunk {chunk_id!r} does not exist")
            old = found[0]
            link = None if unlink else (node_id if node_id is not None else old.node_id)
            try:
                new = Chunk(
                    id=old.id,
                    content=content if content is not None else old.content,
                    node_id=link,
                    metadata={**old.metadata, **(metadata or {})} if merge else dict(metadata or {}),
                    scope=old.scope,
                    created=old.created,
                )
            except ValueError as exc:
                raise InvalidPropertyError(f"chunk {chunk_id!r}: {exc}") from exc
            if link is not None and not st.graph.has_node(link):
                raise MissingNodeError(link, f"chunk {chunk_id!r}")
            writes = WriteSet(delete_chunks=[chunk_id], chunks=[new])
            if new.content != old.content:
                self._embed_chunks(writes, [new])
            else:
                writes.chunk_vectors.update(st.store.get_vectors("chunk", [chunk_id]))
            st.commit(writes)
            return new

    def delete_edge(self, edge_id: str) -> None:
        st = self.state
        with st.lock:
            st.sync()
            if not st.store.existing_ids("edge", [edge_id]):
                raise NotFoundError(f"edge {edge_id!r} does not exist")
            st.commit(WriteSet(delete_edges=[edge_id]))

    def delete_chunk(self, chunk_id: str) -> None:
        st = self.state
        with st.lock:
            st.sync()
            if not st.store.existing_ids("chunk", [chunk_id]):
                raise NotFoundError(f"chunk {chunk_id!r} does not exist")
            st.commit(WriteSet(delete_chunks=[chunk_id]))

    def delete_many(
        self, *, nodes: Iterable[str] = (), edges: Iterable[str] = (), chunks: Iterable[str] = ()
    ) -> IndexResult:
        """Delete records in one transaction; nodes cascade to their edges and chunks. Missing ids are ignored."""
        st = self.state
        with st.lock:
            st.sync()
            node_ids = list(dict.fromkeys(nodes))
            edge_ids = list(dict.fromkeys([*edges, *st.store.edges_for_nodes(node_ids)]))
            linked = st.store.chunks_for_nodes(node_ids)
            chunk_ids = list(dict.fromkeys([*chunks, *(c for ids in linked.values() for c in ids)]))
            st.commit(WriteSet(delete_nodes=node_ids, delete_edges=edge_ids, delete_chunks=chunk_ids))
            return IndexResult(nodes=len(node_ids), edges=len(edge_ids), chunks=len(chunk_ids))

    def upsert_batch(
        self,
        batch: Batch,
        *,
        remove_nodes: Sequence[str] = (),
        remove_edges: Sequence[str] = (),
        remove_chunks: Sequence[str] = (),
        meta: dict[str, Any] | None = None,
        progress: ProgressFn | None = None,
    ) -> IndexResult:
        """Write a batch where ids may already exist (they are updated), and remove others, in one transaction.

        This is how a changed document replaces its previous version: records
        with the same id are updated in place (re-embedded only if their text
        changed), records no longer produced are removed (nodes with their edges
        and linked chunks), new ones are inserted. ``meta`` entries are written
        in the same transaction (ingest manifests).
        """
        import time

        t0 = time.perf_counter()
        st = self.state
        with st.lock:
            st.sync()
            store = st.store
            # every record is checked, new or updated (edges under an inverse name come back reversed)
            batch = batch.model_copy(update={"edges": list(batch.edges)})
            registrations = self._validate(batch)
            remove_node_set = set(remove_nodes)
            existing_nodes = store.existing_ids("node", [n.id for n in batch.nodes]) - remove_node_set
            existing_edges = store.existing_ids("edge", [e.id for e in batch.edges]) - set(remove_edges)
            existing_chunks = store.existing_ids("chunk", [c.id for c in batch.chunks])
            fresh = Batch(
                nodes=[n for n in batch.nodes if n.id not in existing_nodes],
                edges=[e for e in batch.edges if e.id not in existing_edges],
            )
            old_nodes = {n.id: n for n in store.get_nodes(sorted(existing_nodes))}
            updated_nodes = []
            for n in batch.nodes:
                if n.id in old_nodes:
                    old = old_nodes[n.id]
                    updated_nodes.append(
                        n.model_copy(
                            update={"created": old.created, "version": old.version + 1, "updated": utcnow()}
                        )
                    )
            old_edges = {e.id: e for e in store.get_edges(sorted(existing_edges))}
            updated_edges, replaced_edges = [], []
            for e in batch.edges:
                old_e = old_edges.get(e.id)
                if old_e is None:
                    continue
                if (old_e.source, old_e.target, old_e.relation_type) == (e.source, e.target, e.relation_type):
                    updated_edges.append(e)
                else:
                    replaced_edges.append(e)
            cascade_edges = store.edges_for_nodes(sorted(remove_node_set)) if remove_node_set else []
            cascade_chunks = (
                [c for ids in store.chunks_for_nodes(sorted(remove_node_set)).values() for c in ids]
                if remove_node_set
                else []
            )
            writes = WriteSet(
                relation_types=list(batch.relation_types),
                nodes=fresh.nodes,
                edges=[*fresh.edges, *replaced_edges],
                chunks=list(batch.chunks),
                updated_nodes=updated_nodes,
                updated_edges=updated_edges,
                delete_nodes=sorted(remove_node_set),
                delete_edges=list(
                    dict.fromkeys([*remove_edges, *cascade_edges, *(e.id for e in replaced_edges)])
                ),
                delete_chunks=list(dict.fromkeys([*remove_chunks, *cascade_chunks, *existing_chunks])),
                meta={**(meta or {}), **registrations},
            )
            embedded = self._embed_nodes(writes, writes.nodes, progress)
            changed = [n for n in updated_nodes if n.embedding_text() != old_nodes[n.id].embedding_text()]
            embedded += self._embed_nodes(writes, changed, progress)
            embedded += self._embed_chunks(writes, writes.chunks, progress)
            self._record_embedder(writes)
            st.commit(writes)
        return IndexResult(
            relation_types=len(batch.relation_types),
            nodes=len(batch.nodes),
            edges=len(batch.edges),
            chunks=len(batch.chunks),
            embedded=embedded,
            seconds=time.perf_counter() - t0,
        )

    def full_reindex(self, *, reembed: bool = False, progress: ProgressFn | None = None) -> IndexResult:
        """Rebuild the in-memory indexes from the store; with ``reembed`` recompute every embedding."""
        import time

        t0 = time.perf_counter()
        st = self.state
        with st.lock:
            embedded = 0
            if reembed and st.embedder is not None:
                nodes = list(st.store.iter_nodes())
                chunks = list(st.store.iter_chunks())
                writes = WriteSet(updated_nodes=nodes)
                embedded += self._embed_nodes(writes, nodes, progress)
                # chunks are rewritten (delete + insert) so their vectors and FTS rows are fresh
                writes.delete_chunks = [c.id for c in chunks]
                writes.chunks = chunks
                embedded += self._embed_chunks(writes, chunks, progress)
                self._record_embedder(writes, force=True)
                st.store.apply(writes)
            st.reload(progress, use_snapshot=False)  # from the record store itself, never a cache
            counts = st.store.counts()
        return IndexResult(
            relation_types=counts["relation_types"],
            nodes=counts["nodes"],
            edges=counts["edges"],
            chunks=counts["chunks"],
            embedded=embedded,
            seconds=time.perf_counter() - t0,
        )

    # ------------------------------------------------------------ validation
    def _label_of(self, scopes: Collection[str] | None = None) -> Callable[[str], str | None]:
        """The label of a stored node as a writer of ``scopes`` sees it (None: absent or not visible)."""
        g = self.state.graph

        def label_of(node_id: str) -> str | None:
            pos = g.pos(node_id)
            if pos is None or (scopes is not None and not any(g.sees(node_id, s) for s in scopes)):
                return None
            return g.label_of(pos)

        return label_of

    def _validate(self, batch: Batch, scopes: Collection[str] | None = None) -> dict[str, Any]:
        """Check a batch: unique ids, the schema registry's check, every node an edge or chunk names
        present (in the batch, or stored and visible to ``scopes``). Returns the registrations of
        labels written for the first time (meta entries to commit with the batch)."""
        for kind, items in (("node", batch.nodes), ("edge", batch.edges), ("chunk", batch.chunks)):
            ids = [x.id for x in items]
            dup = [i for i, n in Counter(ids).items() if n > 1]
            if dup:
                pos = ids.index(dup[0])
                raise DuplicateIdError(kind, dup[0], f"{kind}s[{pos}] and another item of the same batch")
            # ids already in the store are refused by the store's unique constraint (one rollback, named id)
        registrations = self.state.schema.check_write(batch, self._label_of(scopes))
        g = self.state.graph
        new_nodes = {n.id for n in batch.nodes}

        def present(node_id: str) -> bool:
            if node_id in new_nodes:
                return True
            return g.has_node(node_id) if scopes is None else any(g.sees(node_id, s) for s in scopes)

        for i, e in enumerate(batch.edges):
            for end in (e.source, e.target):
                if not present(end):
                    raise MissingNodeError(end, f"edge {e.id!r} (edges[{i}])")
        for i, c in enumerate(batch.chunks):
            if c.node_id is not None and not present(c.node_id):
                raise MissingNodeError(c.node_id, f"chunk {c.id!r} (chunks[{i}])")
        return registrations

    # ------------------------------------------------------------- embedding
    def _embed(self, writes: WriteSet, progress: ProgressFn | None) -> int:
        return self._embed_nodes(writes, writes.nodes, progress) + self._embed_chunks(
            writes, writes.chunks, progress
        )

    def _embed_nodes(
        self, writes: WriteSet, nodes: Sequence[Node], progress: ProgressFn | None = None
    ) -> int:
        if self.state.embedder is None or self.embed_nodes == "none":
            return 0
        todo = [n for n in nodes if self.embed_nodes == "all" or n.content]
        vecs = self._embed_texts([n.embedding_text() for n in todo], "embedding nodes", progress)
        writes.node_vectors.update({n.id: v for n, v in zip(todo, vecs, strict=True)})
        return len(todo)

    def _embed_chunks(
        self, writes: WriteSet, chunks: Sequence[Chunk], progress: ProgressFn | None = None
    ) -> int:
        if self.state.embedder is None:
            return 0
        given = [c for c in chunks if c.embedding is not None]
        for c in given:
            vec = np.asarray(c.embedding, dtype=np.float32)
            if vec.shape != (self.state.embedder.dim,):  # well formed, but not this store's vectors: 409
                raise ConflictError(
                    f"chunk {c.id!r}: embedding has {vec.shape[0]} dimensions, this knowledge base's model "
                    f"({self.state.embedder.name}) has {self.state.embedder.dim}: send vectors of that model "
                    "or leave 'embedding' out to have the text embedded"
                )
            writes.chunk_vectors[c.id] = vec / max(float(np.linalg.norm(vec)), 1e-12)
        todo = [c for c in chunks if c.embedding is None]
        vecs = self._embed_texts([c.content for c in todo], "embedding chunks", progress)
        writes.chunk_vectors.update({c.id: v for c, v in zip(todo, vecs, strict=True)})
        return len(todo)

    def _embed_texts(self, texts: list[str], what: str, progress: ProgressFn | None) -> np.ndarray:
        emb = self.state.embedder
        assert emb is not None
        return embed_texts(emb, texts, what, progress, step=self.EMBED_BATCH)

    def _record_embedder(self, writes: WriteSet, force: bool = False) -> None:
        emb = self.state.embedder
        if emb is None:
            return
        if force or self.state.store.get_meta("embedding.model") is None:
            writes.meta["embedding.model"] = emb.name
            writes.meta["embedding.dim"] = emb.dim
