"""What a scoped query may see, and the last check every result passes before it leaves the engine.

A record with a ``scope`` belongs to that tenant; a record without one is shared.
A query of scope ``S`` sees ``S``'s records and shared ones. The stages filter as
they go (anchors, entity links, expansion, PPR seeds and propagation, chunk
collection), so another tenant's records never steer a ranking; then
:func:`guard_result` checks what a result names — chunks, answer nodes, paths,
anchors, query entities, the reasoning context — and drops whatever the query's
scope may not see. That guard runs at the one exit of ``retrieve`` (every
strategy, every front door), so a stage that forgets to filter cannot leak an id.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from cef.graph.index import GraphIndex
from cef.model import GraphPath, ReasoningContext, SearchResult, in_scope
from cef.retrieve.ports import EngineView

__all__ = ["guard_result", "hidden_nodes", "node_seen", "path_seen", "sees"]

_masks: weakref.WeakKeyDictionary[GraphIndex, dict[tuple[int, str], np.ndarray]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def hidden_nodes(g: GraphIndex, scope: str | None) -> np.ndarray | None:
    """A mask over node positions, True where a node is out of ``scope`` or deleted (None: nothing
    is hidden).

    Cached per graph state and scope (one pass over the node scopes per write, not per query)."""
    if scope is None:
        return None
    key = (g.generation, scope)
    with _lock:
        per_graph = _masks.setdefault(g, {})
        got = per_graph.get(key)
    if got is not None and len(got) >= len(g.node_ids):
        return got
    mask = ~g.visible_nodes([scope])  # hidden: out of scope, or deleted
    with _lock:
        per_graph = _masks.setdefault(g, {})
        for k in [k for k in per_graph if k[0] != g.generation]:
            del per_graph[k]
        per_graph[key] = mask
    return mask


def sees(g: GraphIndex, scope: str | None) -> Callable[[int], bool]:
    """``pos -> bool``: whether a query of ``scope`` may see node ``pos``."""
    mask = hidden_nodes(g, scope)
    if mask is None:
        return lambda pos: True
    return lambda pos: pos < len(mask) and not bool(mask[pos])


def node_seen(g: GraphIndex, node_id: str, scope: str | None) -> bool:
    """Whether node ``node_id`` is in the graph and visible to a query of ``scope``."""
    return g.sees(node_id, scope)


def _edge_seen(g: GraphIndex, edge_id: str, scope: str | None) -> bool:
    if scope is None:
        return True
    pos = g.edge_pos(edge_id)
    if pos is None:
        return True  # a path's synthetic step (not a stored edge): its nodes decide
    code = int(g.e_scope[pos])
    return code == -1 or g.scopes.names[code] == scope


def path_seen(g: GraphIndex, path: GraphPath | None, scope: str | None) -> bool:
    """Whether every node and edge of ``path`` is visible to a query of ``scope``."""
    if path is None or scope is None:
        return True
    return all(node_seen(g, n, scope) for n in path.node_ids) and all(
        _edge_seen(g, e, scope) for e in path.edge_ids
    )


def _context(g: GraphIndex, ctx: ReasoningContext, scope: str) -> ReasoningContext:
    def ok(node_id: str) -> bool:
        return node_seen(g, node_id, scope)

    return ctx.model_copy(
        update={
            "root_nodes": [n for n in ctx.root_nodes if in_scope(n.scope, scope)],
            "related_nodes": [n for n in ctx.related_nodes if in_scope(n.scope, scope)],
            "paths": [p for p in ctx.paths if path_seen(g, p, scope)],
            "matched_paths": [p for p in ctx.matched_paths if path_seen(g, p, scope)],
            "semantic_groups": {
                k: kept for k, ids in ctx.semantic_groups.items() if (kept := [i for i in ids if ok(i)])
            },
        }
    )


def _metadata(g: GraphIndex, meta: dict[str, Any], scope: str) -> dict[str, Any]:
    """Result metadata without entries naming an out-of-scope node (anchors, query entities, seeds)."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            value = [v for v in value if "node_id" not in v or node_seen(g, str(v["node_id"]), scope)]
        out[key] = value
    return out


def guard_result(state: EngineView, result: SearchResult, scope: str | None) -> SearchResult:
    """``result`` without anything a query of ``scope`` may not see (unchanged when ``scope`` is None).

    Chunks out of scope are dropped; a chunk whose explaining path crosses a hidden
    node or edge keeps its place but loses that path; answer nodes out of scope (or
    reached only through hidden records) are dropped, as are such anchors, query
    entities and reasoning-context nodes and paths.
    """
    if scope is None:
        return result
    g = state.graph
    results = []
    for r in result.results:
        if not in_scope(r.chunk.scope, scope):
            continue
        if (
            r.chunk.node_id is not None
            and g.has_node(r.chunk.node_id)
            and not node_seen(g, r.chunk.node_id, scope)
        ):
            continue  # a chunk of this scope on another tenant's node (written before scopes were checked)
        e = r.explanation
        anchors = [a for a in e.anchors if node_seen(g, a, scope)]
        if path_seen(g, e.path, scope) and anchors == e.anchors:
            results.append(r)
            continue
        keep_path = e.path if path_seen(g, e.path, scope) else None
        expl = e.model_copy(update={"path": keep_path, "anchors": anchors})
        results.append(r.model_copy(update={"explanation": expl}))
    nodes = [n for n in result.nodes if in_scope(n.node.scope, scope) and path_seen(g, n.path, scope)]
    listed = [c for n in nodes for c in n.chunk_ids]
    if listed:  # a shared node's chunks include other tenants' chunks on it
        ok = {c.id for c in state.store.get_chunks(listed) if in_scope(c.scope, scope)}
        nodes = [
            n
            if all(c in ok for c in n.chunk_ids)
            else n.model_copy(update={"chunk_ids": [c for c in n.chunk_ids if c in ok]})
            for n in nodes
        ]
    ctx = result.reasoning_context
    return result.model_copy(
        update={
            "results": results,
            "nodes": nodes,
            "reasoning_context": _context(g, ctx, scope) if ctx is not None else None,
            "metadata": _metadata(g, result.metadata, scope),
        }
    )
