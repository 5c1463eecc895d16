"""A drawable subgraph: the nodes, typed edges and chunks behind an answer or around a node.

:class:`GraphView` is what the explorer page (``cef serve http``, at ``/``)
and ``cef graph`` draw: built from a :class:`~cef.model.SearchResult` (its
anchors, typed paths, answer nodes and ranked chunks, :func:`result_view`) or
from a node's neighbourhood (:func:`neighbourhood_view`). It only reshapes
what the engine returned; it does no retrieval of its own.

Each node carries its *roles* (``anchor``, ``answer``, ``path``, ``context``,
``center``, ``chunk``); each edge its relation type and kind: ``edge`` on a
drawn path, ``link`` between drawn nodes off every path, ``chunk``
(``HAS_CHUNK``) from a node to a ranked chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cef.model import GraphPath, Node, SearchResult

if TYPE_CHECKING:
    from cef.engine.access import TenantView
    from cef.engine.kb import KnowledgeBase

    #: what the views read: a knowledge base, or one as a tenant's scopes see it
    GraphSource = KnowledgeBase | TenantView

__all__ = [
    "CHUNK_RELATION",
    "GraphView",
    "ViewEdge",
    "ViewNode",
    "neighbourhood_view",
    "result_view",
]

Role = Literal["center", "anchor", "answer", "path", "context", "chunk"]
#: the relation drawn from a node to a ranked chunk linked to it
CHUNK_RELATION = "HAS_CHUNK"
#: how many characters of a chunk's text a chunk node is named by
CHUNK_NAME_CHARS = 60


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ViewNode(_Model):
    id: str
    label: str = Field(description="node type, or 'Chunk' for a ranked chunk")
    name: str
    roles: list[Role] = Field(default_factory=list)
    score: float | None = Field(default=None, description="rank score (answer nodes and chunks)")
    rank: int | None = Field(default=None, ge=1, description="1-based rank (answer nodes and chunks)")
    chunks: int = Field(default=0, ge=0, description="chunks linked to this node")
    properties: dict[str, Any] = Field(default_factory=dict)
    text: str | None = Field(default=None, description="a chunk's text or an answer's explanation")


class ViewEdge(_Model):
    id: str
    source: str
    target: str
    relation: str
    kind: Literal["edge", "link", "chunk"] = Field(
        default="edge", description="edge: on a drawn path; link: between drawn nodes; chunk: node to chunk"
    )
    confidence: float | None = None


class GraphView(_Model):
    """Nodes and edges to draw; ``truncated`` when a limit cut the subgraph short."""

    title: str = ""
    nodes: list[ViewNode] = Field(default_factory=list)
    edges: list[ViewEdge] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list, description="the typed paths drawn, in words")
    truncated: bool = False

    def node(self, node_id: str) -> ViewNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)


class _Builder:
    """Collects nodes (merging roles) and edges (one per id) in the order they are met."""

    def __init__(self, kb: GraphSource) -> None:
        self.kb = kb
        self.nodes: dict[str, ViewNode] = {}
        self.edges: dict[str, ViewEdge] = {}
        self.paths: list[str] = []
        self.known: dict[str, Node] = {}

    def remember(self, nodes: Iterable[Node]) -> None:
        for n in nodes:
            self.known.setdefault(n.id, n)

    def fetch(self, ids: Iterable[str]) -> None:
        missing = [i for i in dict.fromkeys(ids) if i not in self.known]
        if missing:
            self.remember(self.kb.get_nodes(missing))

    def add_node(self, node_id: str, role: Role | None = None, **fields: Any) -> ViewNode | None:
        view = self.nodes.get(node_id)
        if view is None:
            found = self.known.get(node_id)
            if found is None:
                return None
            view = ViewNode(id=found.id, label=found.label, name=found.name, properties=found.properties)
            self.nodes[node_id] = view
        if role is not None and role not in view.roles:
            view.roles.append(role)
        for key, value in fields.items():
            if value is not None and getattr(view, key) is None:
                setattr(view, key, value)
        return view

    def add_path(self, path: GraphPath, role: Role | None = "path") -> None:
        if not path.node_ids:
            return
        self.fetch(path.node_ids)
        for node_id in path.node_ids:
            self.add_node(node_id, role)
        for i, rel in enumerate(path.relation_types):
            if i + 1 >= len(path.node_ids):
                break
            a, b = path.node_ids[i], path.node_ids[i + 1]
            if i < len(path.reversed) and path.reversed[i]:
                a, b = b, a
            edge_id = path.edge_ids[i] if i < len(path.edge_ids) else f"{a}-{rel}-{b}"
            if edge_id not in self.edges and a in self.nodes and b in self.nodes:
                self.edges[edge_id] = ViewEdge(
                    id=edge_id, source=a, target=b, relation=rel, confidence=path.confidence
                )
        if path.length:
            described = path.describe()
            if described not in self.paths:
                self.paths.append(described)

    def connect(self, limit: int = 500) -> None:
        """Draw the edges between drawn nodes that no path walked (kind ``link``)."""
        graph_ids = [i for i, n in self.nodes.items() if "chunk" not in n.roles]
        for e in self.kb.edges_among(graph_ids, limit=limit):
            if e.id not in self.edges:
                self.edges[e.id] = ViewEdge(
                    id=e.id,
                    source=e.source,
                    target=e.target,
                    relation=e.relation_type,
                    kind="link",
                    confidence=e.confidence,
                )

    def count_chunks(self) -> None:
        graph_ids = [i for i, n in self.nodes.items() if "chunk" not in n.roles]
        for node_id, chunk_ids in self.kb.chunk_ids_for_nodes(graph_ids).items():
            self.nodes[node_id].chunks = len(chunk_ids)

    def view(self, title: str, *, truncated: bool = False) -> GraphView:
        return GraphView(
            title=title,
            nodes=list(self.nodes.values()),
            edges=[e for e in self.edges.values() if e.source in self.nodes and e.target in self.nodes],
            paths=self.paths,
            truncated=truncated,
        )


def _chunk_name(text: str) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= CHUNK_NAME_CHARS else flat[: CHUNK_NAME_CHARS - 1].rstrip() + "…"


def result_view(kb: GraphSource, result: SearchResult, *, max_context: int = 40) -> GraphView:
    """The subgraph behind ``result``: anchors, typed paths, answer nodes and the ranked chunks.

    Nodes of the reasoning context that lie on no drawn path are added (role
    ``context``) up to ``max_context``, with the paths to them.
    """
    b = _Builder(kb)
    ctx = result.reasoning_context
    if ctx is not None:
        b.remember([*ctx.root_nodes, *ctx.related_nodes])
    b.remember(r.node for r in result.nodes)
    anchors = [
        str(a["node_id"])
        for a in result.metadata.get("anchors", [])
        if isinstance(a, dict) and "node_id" in a
    ]
    if ctx is not None:
        anchors += [n.id for n in ctx.root_nodes]
    anchors += [a for r in result.results for a in r.explanation.anchors]
    anchors = list(dict.fromkeys(anchors))
    b.fetch(anchors)
    for node_id in anchors:
        b.add_node(node_id, "anchor")
    for rank, answer in enumerate(result.nodes, 1):
        if answer.path is not None:
            b.add_path(answer.path)
        b.add_node(answer.node.id, "answer", score=answer.score, rank=rank, text=answer.text or None)
    for r in result.results:
        path = r.explanation.path
        if path is not None:
            b.add_path(path)
    if ctx is not None:
        for path in ctx.matched_paths:
            b.add_path(path)
        extra = 0
        for path in ctx.paths:
            if extra >= max_context:
                break
            if path.node_ids and path.node_ids[-1] not in b.nodes:
                b.add_path(path, "context")
                extra += 1
    b.fetch(r.chunk.node_id for r in result.results if r.chunk.node_id)
    for rank, r in enumerate(result.results, 1):
        chunk = r.chunk
        b.nodes[chunk.id] = ViewNode(
            id=chunk.id,
            label="Chunk",
            name=_chunk_name(chunk.content),
            roles=["chunk"],
            score=r.score,
            rank=rank,
            text=chunk.content,
            properties=dict(chunk.metadata),
        )
        if chunk.node_id and b.add_node(chunk.node_id) is not None:
            edge_id = f"{chunk.node_id}>{chunk.id}"
            b.edges[edge_id] = ViewEdge(
                id=edge_id, source=chunk.node_id, target=chunk.id, relation=CHUNK_RELATION, kind="chunk"
            )
    b.connect()
    b.count_chunks()
    return b.view(result.query)


def neighbourhood_view(
    kb: GraphSource,
    node_ids: str | Sequence[str],
    *,
    depth: int = 1,
    max_nodes: int = 100,
    relation_types: Sequence[str] | None = None,
) -> GraphView:
    """The nodes within ``depth`` hops of ``node_ids`` and the paths to them (at most ``max_nodes``).

    Raises :class:`~cef.errors.NotFoundError` for an unknown node.
    """
    ids = [node_ids] if isinstance(node_ids, str) else list(node_ids)
    ctx = kb.extract_context(ids, depth, relation_types=relation_types, max_nodes=max_nodes)
    b = _Builder(kb)
    b.remember([*ctx.root_nodes, *ctx.related_nodes])
    b.fetch(ids)
    for node_id in ids:
        b.add_node(node_id, "center")
    for path in ctx.paths:
        b.add_path(path, None)
    for n in ctx.related_nodes:
        b.add_node(n.id)
    for view in b.nodes.values():
        if not view.roles:
            view.roles.append("context")
    b.connect()
    b.count_chunks()
    truncated = len(ctx.related_nodes) + len(ctx.root_nodes) >= max_nodes
    title = ", ".join(b.nodes[i].name for i in ids if i in b.nodes)
    return b.view(f"{title} (depth {depth})", truncated=truncated)
