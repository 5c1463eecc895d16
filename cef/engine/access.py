"""Tenants: a knowledge base as one caller's data scopes let it see and change it.

A record with a ``scope`` belongs to that tenant; a record without one is shared
(everyone reads it; only an unscoped caller changes it). :class:`Access` says which
scopes a caller holds (``None``: every scope, no tenancy) and :class:`TenantView`
is the knowledge base through those eyes. Every front door (REST, MCP) reads and
writes through a view, and the view enforces the promise in one place:

* **invisible** — every read answers only with the caller's scopes and shared
  records: lookups by id, lists, neighbourhoods, edges between nodes, chunks of a
  node, retrieval (its query is bound to the caller's scope, and the engine's
  retrieval filters its stages and guards its one exit, :mod:`cef.retrieve.visibility`);
* **untouchable** — a write may only change records of the caller's scopes, and
  may only refer to nodes it can read; deleting a node never deletes another
  scope's records;
* **undetectable** — a record the caller cannot read answers exactly as a missing
  one (404 by id; ``missing_node`` as an edge end or a chunk's node), and ids a
  scoped caller creates live in its own namespace (``<scope>:...``), so no id it
  tries can collide with, and so reveal, another tenant's record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cef.errors import ConflictError, ForbiddenError, MissingNodeError, NotFoundError, ValidationError
from cef.model import Batch, Chunk, Edge, GraphQuery, Node, ReasoningContext, SearchResult
from cef.model.graph import new_id

if TYPE_CHECKING:
    from cef.engine.indexer import IndexResult
    from cef.engine.kb import KnowledgeBase
    from cef.patterns.executor import PatternResult

__all__ = ["EVERYTHING", "Access", "TenantView", "namespaced"]

#: the separator between a scope and the rest of an id a scoped caller creates
NAMESPACE_SEP = ":"


def namespaced(scope: str, ident: str) -> bool:
    """Whether ``ident`` lies in ``scope``'s id namespace (``<scope>:...``)."""
    return ident.startswith(scope + NAMESPACE_SEP) and len(ident) > len(scope) + len(NAMESPACE_SEP)


@dataclass(frozen=True)
class Access:
    """The data scopes a caller holds: ``scopes`` None means every scope (no tenancy)."""

    scopes: tuple[str, ...] | None = None

    @property
    def tenant(self) -> bool:
        return self.scopes is not None

    def sees(self, scope: str | None) -> bool:
        """Whether a record of ``scope`` is visible (its own scopes and shared records)."""
        return self.scopes is None or scope is None or scope in self.scopes

    def read_scope(self, requested: str | None) -> str | None:
        """The scope a read runs in: the requested one if held; a single-scope caller's own."""
        if self.scopes is None:
            return requested
        if requested is None:
            if len(self.scopes) == 1:
                return self.scopes[0]
            raise ForbiddenError(
                f"this API key reads only scopes {', '.join(self.scopes)}: name one in 'scope'"
            )
        if requested not in self.scopes:
            raise ForbiddenError(f"this API key may not read scope {requested!r}")
        return requested

    def write_scope(self, requested: str | None, what: str) -> str | None:
        """The scope a new record gets: its own if held; a single-scope caller's own."""
        if self.scopes is None:
            return requested
        if requested is None and len(self.scopes) == 1:
            return self.scopes[0]
        if requested is None or requested not in self.scopes:
            raise ForbiddenError(f"this API key writes only {what}s of scopes {', '.join(self.scopes)}")
        return requested

    def bind(self, query: GraphQuery) -> GraphQuery:
        """``query`` run in the caller's read scope, its graph patterns too (a pattern naming a scope
        the caller does not hold is refused)."""
        from cef.model.patterns import QueryCombinator

        scope = self.read_scope(query.scope)
        if self.scopes is None or not query.patterns:
            return query.model_copy(update={"scope": scope})
        patterns: list[Any] = []
        for item in query.patterns:
            inner = item.patterns if isinstance(item, QueryCombinator) else [item]
            for p in inner:
                if p.scope is not None and p.scope not in self.scopes:
                    raise ForbiddenError(
                        f"pattern {p.pattern_id!r}: this API key may not read scope {p.scope!r}"
                    )
            bound = [p if p.scope is not None else p.model_copy(update={"scope": scope}) for p in inner]
            patterns.append(
                item.model_copy(update={"patterns": bound}) if isinstance(item, QueryCombinator) else bound[0]
            )
        return query.model_copy(update={"scope": scope, "patterns": patterns})

    def owned(self, record: Any, kind: str, ident: str) -> Any:
        """``record`` if the caller may change it: NotFoundError when it cannot see it (or it does
        not exist), ForbiddenError for shared (unscoped) data and a scoped caller."""
        if record is None or not self.sees(record.scope):
            raise NotFoundError(f"{kind} {ident!r} does not exist")
        if self.scopes is not None and record.scope is None:
            raise ForbiddenError(f"{kind} {ident!r} is shared (unscoped): this API key cannot change it")
        return record


#: the access of a caller without tenancy (no keys, or an unscoped key)
EVERYTHING = Access()


def _scoped_ids(items: Sequence[Any], kind: str, scope_of: Any) -> list[Any]:
    """``items`` whose ids lie in their scope's namespace: a generated id is moved there; an id the
    caller chose outside it is refused (so it cannot collide with another tenant's record)."""
    out = []
    for i, item in enumerate(items):
        scope = scope_of(item)
        if namespaced(scope, item.id):
            out.append(item)
        elif "id" not in item.model_fields_set:
            out.append(item.model_copy(update={"id": f"{scope}{NAMESPACE_SEP}{new_id()}"}))
        else:
            raise ValidationError(
                f"{kind}s[{i}]: id {item.id!r} is outside this API key's namespace: ids created in scope "
                f"{scope!r} start with '{scope}{NAMESPACE_SEP}' (e.g. '{scope}{NAMESPACE_SEP}{item.id}'), "
                "so that no tenant's id can collide with another's"
            )
    return out


class TenantView:
    """A :class:`~cef.engine.kb.KnowledgeBase` as ``access`` sees it (reads filtered, writes checked).

    It offers the reads the graph views and front doors use (same names and
    signatures as the knowledge base's), so code written against a knowledge base
    works on a view unchanged.
    """

    def __init__(self, kb: KnowledgeBase, access: Access = EVERYTHING) -> None:
        self.kb = kb
        self.access = access

    # ------------------------------------------------------------------ reads
    def _seen(self, record: Any) -> Any:
        return record if record is not None and self.access.sees(record.scope) else None

    def find_node(self, node_id: str) -> Node | None:
        return self._seen(self.kb.find_node(node_id))

    def get_nodes(self, node_ids: Sequence[str]) -> list[Node]:
        return [n for n in self.kb.get_nodes(node_ids) if self.access.sees(n.scope)]

    def get_edge(self, edge_id: str) -> Edge | None:
        edge = self._seen(self.kb.get_edge(edge_id))
        if edge is None or not self.access.tenant:
            return edge
        return (
            edge
            if len(self.get_nodes([edge.source, edge.target])) == len({edge.source, edge.target})
            else None
        )

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        return self._seen(self.kb.get_chunk(chunk_id))

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [c for c in self.kb.get_chunks(chunk_ids) if self.access.sees(c.scope)]

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        seen = [n.id for n in self.get_nodes(node_ids)]
        found = self.kb.chunk_ids_for_nodes(seen)
        if not self.access.tenant:
            return found
        ok = {c.id for c in self.get_chunks([c for ids in found.values() for c in ids])}
        return {n: kept for n, ids in found.items() if (kept := [c for c in ids if c in ok])}

    def chunks_of(self, node_id: str, limit: int) -> list[Chunk]:
        """The chunks linked to a node the caller sees (NotFoundError otherwise), the first ``limit``."""
        self.require_node(node_id)
        ids = self.chunk_ids_for_nodes([node_id]).get(node_id, [])
        return self.get_chunks(ids[:limit])

    def require_node(self, node_id: str) -> Node:
        node = self.find_node(node_id)
        if node is None:
            raise NotFoundError(f"node {node_id!r} does not exist")
        return node

    def find_nodes_by_label(self, label: str, limit: int = 1000) -> list[Node]:
        if not self.access.tenant:
            return self.kb.find_nodes_by_label(label, limit)
        return self._fill(lambda n: self.kb.find_nodes_by_label(label, n), limit)

    def find_nodes_by_property(
        self, key: str, value: Any, label: str | None = None, limit: int = 100
    ) -> list[Node]:
        if not self.access.tenant:
            return self.kb.find_nodes_by_property(key, value, label, limit)
        return self._fill(lambda n: self.kb.find_nodes_by_property(key, value, label, n), limit)

    def _fill(self, fetch: Any, limit: int) -> list[Node]:
        """Up to ``limit`` visible nodes from ``fetch(n)``, asking for more while others' fill the page."""
        n = limit
        while True:
            got = fetch(n)
            seen = [x for x in got if self.access.sees(x.scope)]
            if len(seen) >= limit or len(got) < n or n >= 1_000_000:
                return seen[:limit]
            n *= 4

    def edges_among(self, node_ids: Sequence[str], *, limit: int = 1000) -> list[Edge]:
        seen = [n.id for n in self.get_nodes(node_ids)]
        return [e for e in self.kb.edges_among(seen, limit=limit) if self.access.sees(e.scope)]

    def extract_context(
        self,
        node_id: str | Sequence[str],
        depth: int = 2,
        semantics: Sequence[Any] | None = None,
        **kw: Any,
    ) -> ReasoningContext:
        """Related nodes within ``depth`` hops, walking only records the caller sees."""
        ids = [node_id] if isinstance(node_id, str) else list(node_id)
        for i in ids:
            self.require_node(i)
        scope = self._one_scope()
        return self.kb.extract_context(ids, depth, semantics, scope=scope, **kw)

    def _one_scope(self) -> str | None:
        """The scope a graph walk runs in: a caller's one scope (a caller holding several is refused:
        a walk sees one scope and shared records)."""
        scopes = self.access.scopes
        if scopes is None:
            return None
        if len(scopes) == 1:
            return scopes[0]
        raise ForbiddenError(f"this API key reads scopes {', '.join(scopes)}: walks need a key of one scope")

    def scoped_query(self, query: GraphQuery) -> GraphQuery:
        """``query`` bound to the caller's read scope (see :meth:`Access.bind`)."""
        return self.access.bind(query)

    def retrieve(self, query: GraphQuery) -> SearchResult:
        return self.kb.retrieve(self.scoped_query(query))

    def match_patterns(self, pattern: Any, query_text: str | None = None, **kw: Any) -> PatternResult:
        from cef.model.patterns import QueryCombinator

        scope = self._one_scope()
        if scope is not None:
            inner = pattern.patterns if isinstance(pattern, QueryCombinator) else [pattern]
            bound = [p if p.scope is not None else p.model_copy(update={"scope": scope}) for p in inner]
            if any(p.scope != scope and p.scope is not None for p in bound):
                raise ForbiddenError(f"this API key may not read scope {bound[0].scope!r}")
            pattern = (
                pattern.model_copy(update={"patterns": bound})
                if isinstance(pattern, QueryCombinator)
                else bound[0]
            )
        return self.kb.match_patterns(pattern, query_text, **kw)

    # ------------------------------------------------------------------ writes
    def scoped_batch(self, batch: Batch) -> Batch:
        """``batch`` with every record in a scope the caller holds and, for a tenant, every id in
        its scope's namespace (ForbiddenError / ValidationError otherwise)."""
        a = self.access
        nodes = [n.model_copy(update={"scope": a.write_scope(n.scope, "node")}) for n in batch.nodes]
        edges = [e.model_copy(update={"scope": a.write_scope(e.scope, "edge")}) for e in batch.edges]
        chunks = [c.model_copy(update={"scope": a.write_scope(c.scope, "chunk")}) for c in batch.chunks]
        if a.tenant:
            nodes = _scoped_ids(nodes, "node", lambda x: x.scope)
            edges = _scoped_ids(edges, "edge", lambda x: x.scope)
            chunks = _scoped_ids(chunks, "chunk", lambda x: x.scope)
            for r in batch.relation_types:  # the shared vocabulary: a tenant may name it, not change it
                known = self.kb.schema.relation_type(r.name)
                if known is None:
                    raise ForbiddenError(
                        f"relation type {r.name!r} is not registered: relation types are shared by every "
                        "tenant, so only a key without scopes registers them"
                    )
                if known != r:
                    raise ForbiddenError(
                        f"relation type {r.name!r} is registered with other attributes: relation types are "
                        "shared by every tenant, so only a key without scopes changes them"
                    )
        return Batch(relation_types=list(batch.relation_types), nodes=nodes, edges=edges, chunks=chunks)

    def index_batch(self, batch: Batch) -> IndexResult:
        """Write ``batch`` (one transaction) in the caller's scopes, referring only to nodes it sees."""
        return self.kb.indexer.index_batch(self.scoped_batch(batch), scopes=self.access.scopes)

    def index_edge(self, edge: Edge) -> Edge:
        batch = self.scoped_batch(Batch(edges=[edge]))
        self.kb.indexer.index_batch(batch, scopes=self.access.scopes)
        return batch.edges[0]

    def index_node(self, node: Node) -> Node:
        batch = self.scoped_batch(Batch(nodes=[node]))
        self.kb.indexer.index_batch(batch, scopes=self.access.scopes)
        return batch.nodes[0]

    def index_chunk(self, chunk: Chunk) -> Chunk:
        batch = self.scoped_batch(Batch(chunks=[chunk]))
        self.kb.indexer.index_batch(batch, scopes=self.access.scopes)
        return batch.chunks[0]

    def update_node(self, node_id: str, properties: dict[str, Any] | None = None, **kw: Any) -> Node:
        self.access.owned(self.kb.find_node(node_id), "node", node_id)
        return self.kb.update_node(node_id, properties, **kw)

    def update_edge(self, edge: Edge) -> Edge:
        old = self.access.owned(self.kb.get_edge(edge.id), "edge", edge.id)
        return self.kb.update_edge(edge.model_copy(update={"scope": old.scope}))

    def update_chunk(self, chunk_id: str, *, node_id: str | None = None, **kw: Any) -> Chunk:
        self.access.owned(self.kb.get_chunk(chunk_id), "chunk", chunk_id)
        if node_id is not None and self.find_node(node_id) is None:
            # a node the body names, not the resource the request is about: 409 like any write
            # that refers to a missing node (404 would read as "this chunk is gone")
            raise MissingNodeError(node_id, f"chunk {chunk_id!r}")
        return self.kb.update_chunk(chunk_id, node_id=node_id, **kw)

    def delete_node(self, node_id: str, cascade: bool = True) -> IndexResult:
        """Delete a node the caller owns; the cascade may take only records of the caller's scopes."""
        self.access.owned(self.kb.find_node(node_id), "node", node_id)
        if self.access.tenant and cascade:
            self._check_cascade(node_id)
        return self.kb.delete_node(node_id, cascade)

    def _check_cascade(self, node_id: str) -> None:
        store = self.kb.store
        edges = store.get_edges(store.edges_for_nodes([node_id]))
        chunks = self.kb.get_chunks(store.chunks_for_nodes([node_id]).get(node_id, []))
        scopes: list[str | None] = [e.scope for e in edges] + [c.scope for c in chunks]
        foreign = sum(1 for sc in scopes if sc is None or not self.access.sees(sc))
        if foreign:
            raise ConflictError(
                f"node {node_id!r} has {foreign} edge(s) or chunk(s) that this API key does not own "
                "(shared, or of another scope): a key without scopes must delete it"
            )

    def delete_edge(self, edge_id: str) -> None:
        self.access.owned(self.kb.get_edge(edge_id), "edge", edge_id)
        self.kb.delete_edge(edge_id)

    def delete_chunk(self, chunk_id: str) -> None:
        self.access.owned(self.kb.get_chunk(chunk_id), "chunk", chunk_id)
        self.kb.delete_chunk(chunk_id)
