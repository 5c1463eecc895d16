"""Stage 2: walk the graph from the anchors and describe what was found (ReasoningContext).

The walk is the best-first walk (:func:`cef.retrieve.bestfirst.walk_stage`, the default) or, when
the query's :class:`~cef.retrieve.presets.WalkSettings` say ``order: breadth``, breadth-first
(:meth:`~cef.graph.index.GraphIndex.expand`); the records that follow are the same."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from cef.graph.filter import EdgeFilter, Expansion
from cef.graph.index import GraphIndex
from cef.model import GraphPath, Node, ReasoningContext
from cef.retrieve.bestfirst import as_expansion, walk_stage
from cef.retrieve.context import QueryContext
from cef.retrieve.presets import WalkSettings, settings_for
from cef.retrieve.stagestate import Traversal
from cef.text import STOP_WORDS


def path_for(graph: GraphIndex, exp: Expansion, pos: int, names: dict[str, str] | None = None) -> GraphPath:
    nodes, edges, fwd = exp.path_to(pos)
    node_ids = [graph.node_ids[n] for n in nodes]
    conf = 1.0
    weight = 0.0
    for e in edges:
        conf *= float(graph.e_conf[e])
        weight += float(graph.e_weight[e])
    return GraphPath(
        node_ids=node_ids,
        relation_types=[graph.relation_name(e, f) for e, f in zip(edges, fwd, strict=True)],
        edge_ids=[graph.edge_ids[e] for e in edges],
        node_names=[names.get(i, i) for i in node_ids] if names else [],
        weight=weight,
        confidence=conf,
    )


def expansion_paths(
    graph: GraphIndex, exp: Expansion, names: dict[str, str] | None = None
) -> list[tuple[int, GraphPath, int, bool]]:
    """The path to every non-seed node of ``exp``: ``(node position, path, last edge, walked forward)``.

    One pass in discovery order (a node's parent is discovered before it), each path
    extending its parent's, instead of walking every path back to its seed.
    """
    nodes = exp.nodes.tolist()
    parents = exp.parent.tolist()
    parent_edges = exp.parent_edge.tolist()
    forward = exp.forward.tolist()
    confidence = exp.confidence.tolist()
    used = [e for e in parent_edges if e >= 0]
    weight_of = dict(zip(used, graph.e_weight.view[used].tolist(), strict=True)) if used else {}
    rel_codes = dict(zip(used, graph.e_rel.view[used].tolist(), strict=True)) if used else {}
    rel_names: dict[tuple[int, bool], str] = {}
    node_ids = graph.node_ids
    index: dict[int, int] = {}
    # per discovered node: (node ids, relation names, edge ids, names, weight)
    chains: list[tuple[list[str], list[str], list[str], list[str], float]] = []
    out: list[tuple[int, GraphPath, int, bool]] = []
    for i, node in enumerate(nodes):
        index[node] = i
        nid = node_ids[node]
        edge = parent_edges[i]
        at = index.get(parents[i], -1) if edge >= 0 else -1
        if edge < 0 or at < 0:
            if edge >= 0:  # parent not discovered first (never for breadth-first expansion): walk back
                path = path_for(graph, exp, node, names)
                out.append((node, path, edge, bool(forward[i])))
                chains.append(
                    (path.node_ids, path.relation_types, path.edge_ids, path.node_names, path.weight)
                )
                continue
            chains.append(([nid], [], [], [names.get(nid, nid)] if names else [], 0.0))
            continue
        fwd = bool(forward[i])
        key = (rel_codes[edge], fwd)
        rel = rel_names.get(key)
        if rel is None:
            rel = rel_names[key] = graph.relation_name(edge, fwd)
        p_nodes, p_rels, p_edges, p_names, p_weight = chains[at]
        chain = (
            [*p_nodes, nid],
            [*p_rels, rel],
            [*p_edges, graph.edge_ids[edge]],
            [*p_names, names.get(nid, nid)] if names else [],
            p_weight + weight_of[edge],
        )
        chains.append(chain)
        path = GraphPath.model_construct(
            node_ids=chain[0],
            relation_types=chain[1],
            edge_ids=chain[2],
            node_names=chain[3],
            weight=chain[4],
            confidence=confidence[i],
            reversed=[],  # every field given: a default factory costs an inspect.signature call here
        )
        out.append((node, path, edge, fwd))
    return out


def build_reasoning_context(
    graph: GraphIndex,
    get_nodes: Callable[[Sequence[str]], list[Node]],
    seeds: Sequence[int],
    depth: int,
    flt: EdgeFilter,
    *,
    max_nodes: int = 500,
    min_path_confidence: float = 0.0,
    max_keywords: int = 20,
    on_hop: Callable[[], None] | None = None,
    walked: Expansion | None = None,
) -> tuple[ReasoningContext, Expansion]:
    """Expand from ``seeds`` (or take the expansion ``walked`` already made) and package nodes,
    paths, keywords and semantic groups."""
    exp = walked
    if exp is None:
        exp = graph.expand(
            seeds, depth, flt, max_nodes=max_nodes, min_path_confidence=min_path_confidence, on_hop=on_hop
        )
    ids = [graph.node_ids[p] for p in exp.nodes.tolist()]
    depths = exp.depth.tolist()
    nodes = {n.id: n for n in get_nodes(ids)}
    names = {i: n.name for i, n in nodes.items()}
    roots = [nodes[i] for i, d in zip(ids, depths, strict=True) if d == 0 and i in nodes]
    related = [nodes[i] for i, d in zip(ids, depths, strict=True) if d > 0 and i in nodes]
    found = expansion_paths(graph, exp, names)
    paths = [path for _, path, _, _ in found]
    groups: dict[str, list[str]] = {}
    for pos, path, edge, fwd in found:
        group = _semantic_group(graph, edge, fwd, len(path.edge_ids))
        groups.setdefault(group, []).append(graph.node_ids[pos])
    ctx = ReasoningContext(
        root_nodes=roots,
        related_nodes=related,
        paths=paths,
        context_keywords=context_keywords([*roots, *related], max_keywords),
        semantic_groups=groups,
        depth=depth,
        metadata={
            "nodes_visited": len(ids),
            "truncated": exp.truncated,
            "max_depth_reached": max(depths, default=0),
        },
    )
    return ctx, exp


def _semantic_group(graph: GraphIndex, edge: int, forward: bool, depth: int) -> str:
    """parents / children / neighbors by the semantics of the last edge walked."""
    name = graph.relations.names[int(graph.e_rel[edge])]
    rt = graph.rel_types.get(name)
    if rt is None or rt.parent_end is None:
        return "neighbors" if depth == 1 else "related"
    # walking forward reaches the target; the target is the parent when parent_end == "target"
    reached_parent = (rt.parent_end == "target") == forward
    if rt.semantics.value == "CLASSIFICATION" and reached_parent:
        return "classes"
    return "parents" if reached_parent else "children"


def context_keywords(nodes: Sequence[Node], limit: int = 20) -> list[str]:
    """Distinctive words from node names and labels, in order of first appearance."""
    counts: Counter[str] = Counter()
    order: dict[str, None] = {}
    for n in nodes:
        for word in re.findall(r"[\w-]+", n.name):
            w = word.lower()
            if len(w) > 2 and w not in STOP_WORDS and not w.isdigit():
                counts[w] += 1
                order.setdefault(w, None)
    return list(order)[:limit]


def expand_anchors(qc: QueryContext) -> ReasoningContext | None:
    """Traverse from the query's anchors (if any) and record what was reached."""
    if not qc.anchors:
        return None
    t = qc.query.traversal
    settings = settings_for(WalkSettings, qc.query)
    walked = None
    if settings.order == "best":
        walked = as_expansion(
            qc.state.graph, walk_stage(qc, settings), qc.query.max_graph_nodes, t.min_path_confidence
        )
    ctx, exp = build_reasoning_context(
        qc.state.graph,
        qc.state.get_nodes,
        [a.pos for a in qc.anchors],
        t.depth,
        qc.edge_filter,
        max_nodes=qc.query.max_graph_nodes,
        min_path_confidence=t.min_path_confidence,
        on_hop=(lambda: qc.check_deadline("expansion")) if qc.watched else None,
        walked=walked,
    )
    anchor_score = {a.pos: a.score for a in qc.anchors}
    for p, d, c in zip(exp.nodes.tolist(), exp.depth.tolist(), exp.confidence.tolist(), strict=True):
        qc.reached[p] = (d, c)
    qc.stages.traversal = Traversal(exp, anchor_score)
    qc.reasoning = ctx
    return ctx
