"""The relation paths a graph's shape allows, by node labels (what warm-up embeds the texts of)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cef.retrieve.pathwords import Hop, RelationPath

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex

__all__ = ["schema_paths"]


def schema_paths(
    graph: GraphIndex, max_hops: int, *, limit: int = 20_000, exclude: frozenset[str] | None = None
) -> list[RelationPath]:
    """The relation paths the graph's shape allows, by node labels: a hop may follow another when
    some node the first reaches (by its label) has the second leaving it. Levels of 1, 2, ...
    ``max_hops`` hops are added while the total stays within ``limit``. Relations in ``exclude``
    (default: the text-graph relations) are left out."""
    from cef.schema.textgraph import TEXT_GRAPH_RELATIONS

    skip = TEXT_GRAPH_RELATIONS if exclude is None else exclude
    n_edges = len(graph.edge_ids)
    if not n_edges:
        return []
    alive = graph.e_alive.view[:n_edges]
    rel = graph.e_rel.view[:n_edges][alive].astype(np.int64)
    labels = graph.node_label.view
    src_l = labels[graph.e_src.view[:n_edges][alive].astype(np.int64)].astype(np.int64)
    dst_l = labels[graph.e_dst.view[:n_edges][alive].astype(np.int64)].astype(np.int64)
    triples = np.unique(np.stack([rel, src_l, dst_l], axis=1), axis=0)
    leaving: dict[int, list[tuple[Hop, int]]] = {}  # label -> (hop, label reached)
    for r, a, b in triples.tolist():
        name = graph.relations.names[r]
        if name in skip:
            continue
        rt = graph.rel_types.get(name)
        leaving.setdefault(a, []).append((Hop(name, True), b))
        if rt is None or not rt.bidirectional:
            leaving.setdefault(b, []).append((Hop(name, False), a))
    out: list[RelationPath] = []
    level: list[tuple[RelationPath, int]] = list(
        dict.fromkeys(((hop,), end) for start in leaving for hop, end in leaving[start])
    )
    for _ in range(max_hops):
        paths = list(dict.fromkeys(p for p, _ in level))
        if not paths or len(out) + len(paths) > limit:
            break
        out.extend(paths)
        if len(out) + sum(len(leaving.get(end, ())) for _, end in level) > 4 * limit:
            break  # the next level alone would be far too many
        level = list(dict.fromkeys(((*p, hop), nxt) for p, end in level for hop, nxt in leaving.get(end, ())))
    return out
