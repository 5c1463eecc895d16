"""KnowledgeIndexer: every write validated first, then one transaction, then the in-memory indexes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cef.engine.embedding import embed_chunk_vectors, embed_node_vectors, embed_writes, record_embedder
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

    def __init__(self, state: EngineState, *, embed_nodes: str = "all") -> None:
        if embed_nodes not in ("all", "content", "none"):
            raise ValueError("embed_nodes must be 'all', 'content' or 'none'")
        self.state = state
        self.embed_nodes = embed_nodes

    # ------------------------------------------------------------ public API
    def initialize(self, root_nodes: Sequence[Node], relation_types: Sequence[RelationType]) -> IndexResult:
        """Register the relation types and root nodes of a new knowledge base (one transaction).

        Args:
            root_nodes: the nodes everything else hangs from (may be empty).
            relation_types: the relation types edges may use.

        Returns:
            What was written. Raises what :meth:`index_batch` raises.
        """
        return self.index_batch(Batch(relation_types=list(relation_types), nodes=list(root_nodes)))

    def register_relation_types(self, relation_types: Sequence[RelationType]) -> IndexResult:
        """Register relation types (one transaction); registering a name again replaces its type. Returns
        what was written.

        Args:
            relation_types: the types; edges may use their names (or their ``inverse``) from now on.

        Raises:
            DuplicateIdError: a name twice in ``relation_types``.
            ValidationError: an ``inverse`` is already the name of another relation type.
        """
        return self.index_batch(Batch(relation_types=list(relation_types)))

    def index_node(self, node: Node) -> Node:
        """Add one node, validated, embedded (per ``embed_nodes``) and written in one transaction; returns it.

        Args:
            node: the new node; its id must not exist yet (use :meth:`update_node` to change one).

        Raises:
            DuplicateIdError: a node with this id exists.
            ValidationError: the schema registry (``kb.schema``) refused it (its type's properties).
        """
        self.index_batch(Batch(nodes=[node]))
        return node

    def index_edge(self, edge: Edge) -> Edge:
        """Add one edge between two existing nodes (one transaction).

        Args:
            edge: the new edge; written with the ``inverse`` name of a relation type it is stored once,
                under the type's own name, ends swapped.

        Returns:
            The edge as stored (its relation type and ends as written).

        Raises:
            DuplicateIdError: an edge with this id exists.
            MissingNodeError: its source or target does not exist.
            UnknownRelationTypeError: its relation type is not registered.
            ValidationError: its end types are not those its relation type allows.
        """
        batch = Batch(edges=[edge])
        self.index_batch(batch)
        return batch.edges[0]

    def index_chunk(self, chunk: Chunk) -> Chunk:
        """Add one text chunk (linked to a node or not), embedded and indexed for BM25; returns it.

        Args:
            chunk: the new chunk; its ``embedding``, if given, is used instead of embedding the text.

        Raises:
            DuplicateIdError: a chunk with this id exists.
            MissingNodeError: its ``node_id`` does not exist.
            ConflictError: its ``embedding`` has another dimension than the knowledge base's model.
        """
        self.index_batch(Batch(chunks=[chunk]))
        return chunk

    def index_batch(
        self, batch: Batch, *, progress: ProgressFn | None = None, scopes: Collection[str] | None = None
    ) -> IndexResult:
        """Validate everything, embed, then write all of it in one transaction (all or nothing): the fast
        path for many records.

        Args:
            batch: relation types, nodes, edges and chunks; edges and chunks may refer to nodes of the
                same batch.
            progress: called as embedding proceeds (``what, done, total``), e.g. a progress bar.
            scopes: the write may refer only to nodes of these scopes and shared ones (a tenant's
                write): an edge or chunk naming another tenant's node fails exactly as if it did not exist.

        Returns:
            What was written: counts, how many texts were embedded, seconds taken.

        Raises:
            DuplicateIdError: an id already exists (in the store or twice in the batch).
            MissingNodeError: an edge end or a chunk's node exists neither in the store nor in the write.
            UnknownRelationTypeError: an edge names a relation type nobody registered.
            ValidationError: the schema registry (``kb.schema``) refused a record (an edge's end types,
                a type's properties or validation).
            ConflictError: a given chunk embedding has another dimension than the knowledge base's model.
        """
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
            embedded = embed_writes(st, writes, self.embed_nodes, progress)
            if writes.relation_types or writes.nodes:
                record_embedder(st, writes)
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
        """Change a node's properties, content or label; re-embed it if its text changed.

        Args:
            node_id: the node to change.
            properties: properties to set (merged into the old ones by default).
            content: new content (None: unchanged).
            label: new label (None: unchanged).
            merge: merge ``properties`` into the old ones; False replaces them all.

        Returns:
            The node as written (``version`` one higher).

        Raises:
            NotFoundError: no node has this id.
            InvalidPropertyError: a property is not JSON-serializable.
            ValidationError: the schema registry (``kb.schema``) refused the changed node.
        """
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
                embed_node_vectors(st, self.embed_nodes, writes, [new])
            st.commit(writes)
            return new

    def update_edge(self, edge: Edge) -> Edge:
        """Replace an edge's attributes: properties, weight, confidence, validity times.

        Args:
            edge: the edge's new version; same id, source, target and relation type as the stored one.

        Returns:
            ``edge``, as written.

        Raises:
            NotFoundError: no edge has this id.
            ValidationError: its source, target or relation type differ (delete and re-create it instead).
        """
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
        """Delete a node (one transaction).

        Args:
            node_id: the node to delete.
            cascade: also delete its edges and linked chunks; False refuses a node that has any.

        Returns:
            What was deleted (the node, and with ``cascade`` its edges and chunks).

        Raises:
            NotFoundError: no node has this id.
            ConflictError: without ``cascade``, the node still has edges or chunks.
        """
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
        """Change a chunk's text, metadata or linked node; re-embed it if its text changed.

        The chunk is rewritten (delete + insert in one transaction) so its vector and full-text rows stay in step.

        Args:
            chunk_id: the chunk to change.
            content: new text (None: unchanged).
            metadata: metadata to set (merged into the old by default).
            node_id: link it to this node instead (None: unchanged).
            unlink: link it to no node.
            merge: merge ``metadata`` into the old; False replaces it.

        Returns:
            The chunk as written.

        Raises:
            NotFoundError: no chunk has this id.
            MissingNodeError: ``node_id`` does not exist.
            InvalidPropertyError: the metadata is not JSON-serializable.
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
                embed_chunk_vectors(st, writes, [new])
            else:
                writes.chunk_vectors.update(st.store.get_vectors("chunk", [chunk_id]))
            st.commit(writes)
            return new

    def delete_edge(self, edge_id: str) -> None:
        """Delete the edge ``edge_id`` (one transaction); its nodes stay.

        Raises:
            NotFoundError: no edge has this id.
        """
        st = self.state
        with st.lock:
            st.sync()
            if not st.store.existing_ids("edge", [edge_id]):
                raise NotFoundError(f"edge {edge_id!r} does not exist")
            st.commit(WriteSet(delete_edges=[edge_id]))

    def delete_chunk(self, chunk_id: str) -> None:
        """Delete the chunk ``chunk_id`` with its vector and full-text rows (one transaction).

        Raises:
            NotFoundError: no chunk has this id.
        """
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
        in the same transaction (ingest manifests). Every record, new or updated, is
        checked by the schema registry (``kb.schema``) first.
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
            embedded = embed_node_vectors(st, self.embed_nodes, writes, writes.nodes, progress)
            changed = [n for n in updated_nodes if n.embedding_text() != old_nodes[n.id].embedding_text()]
            embedded += embed_node_vectors(st, self.embed_nodes, writes, changed, progress)
            embedded += embed_chunk_vectors(st, writes, writes.chunks, progress)
            record_embedder(st, writes)
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
        """Rebuild the in-memory indexes from the record store (never from a cached snapshot).

        Args:
            reembed: also recompute every node and chunk embedding with the current model (after
                changing the embedding model).
            progress: called as embedding and loading proceed (``what, done, total``).

        Returns:
            The counts of what the knowledge base holds, how many texts were embedded, seconds taken.
        """
        import time

        t0 = time.perf_counter()
        st = self.state
        with st.lock:
            embedded = 0
            if reembed and st.embedder is not None:
                nodes = list(st.store.iter_nodes())
                chunks = list(st.store.iter_chunks())
                writes = WriteSet(updated_nodes=nodes)
                embedded += embed_node_vectors(st, self.embed_nodes, writes, nodes, progress)
                # chunks are rewritten (delete + insert) so their vectors and FTS rows are fresh
                writes.delete_chunks = [c.id for c in chunks]
                writes.chunks = chunks
                embedded += embed_chunk_vectors(st, writes, chunks, progress)
                record_embedder(st, writes, force=True)
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
