"""The parts of an entity index made from the graph: MENTIONS arrays and node names.

Shared by a build of the index (:func:`cef.retrieve.entities.entity_index`) and by
following graph writes in it (:mod:`cef.retrieve.entityfollow`).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from cef.extract.normalize import alias_keys, normalize_name
from cef.extract.spacy_ner import Gazetteer
from cef.graph.arrays import Ragged, RaggedStrings, SortedIndex
from cef.graph.index import GraphIndex
from cef.graph.push import PushGraph
from cef.model import Node
from cef.retrieve.entityindex import EntityIndex
from cef.schema.textgraph import (
    CONTAINER_LABELS,
    CONTAINER_RELATIONS,
    ENTITY_LABEL,
    MENTIONED_IN,
    MENTIONS,
    TEXT_GRAPH_RELATIONS,
)

if TYPE_CHECKING:
    from cef.retrieve.ports import EngineView

__all__ = [
    "add_names",
    "entity_key",
    "fill_mention_arrays",
    "is_extracted",
    "is_text_container",
    "mention_edges",
    "text_containers",
    "title_passages",
    "types_of",
    "unique_sorted",
]


#: relations that tie text to text: they do not make a node of a container label a thing
_TEXT_RELATIONS = TEXT_GRAPH_RELATIONS | CONTAINER_RELATIONS | {MENTIONED_IN}


def is_text_container(g: GraphIndex, pos: int) -> bool:
    """Whether node ``pos`` stands for a piece of text (a passage, a document, a note's section):
    its label is a container label (:data:`~cef.schema.textgraph.CONTAINER_LABELS`) and no live edge
    of another relation than text's own touches it. A domain node that shares the word ("Cellos", a
    ``Section`` of an orchestra, ``MEMBER_OF``'s target) is a thing: it is named, anchored and answered."""
    if g.label_of(pos) not in CONTAINER_LABELS:
        return False
    names = g.relations.names
    return all(names[int(g.e_rel[e])] in _TEXT_RELATIONS for e in g.incident_edges(pos))


def text_containers(g: GraphIndex) -> np.ndarray:
    """:func:`is_text_container` for every node position at once (a boolean mask), one pass over the edges."""
    n = len(g.node_ids)
    codes = [c for c in (g.labels.get(lb) for lb in CONTAINER_LABELS) if c is not None]
    mask = np.isin(g.node_label.view[:n], codes) if codes else np.zeros(n, dtype=np.bool_)
    if not mask.any():
        return mask
    m = len(g.edge_ids)
    domain = [c for c, name in enumerate(g.relations.names) if name not in _TEXT_RELATIONS]
    held = g.e_alive.view[:m] & np.isin(g.e_rel.view[:m], domain)
    mask[g.e_src.view[:m][held]] = False
    mask[g.e_dst.view[:m][held]] = False
    return mask


def unique_sorted(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an integer array, by sorting: numpy 2.4's ``np.unique`` hashes
    first and is about 100x slower on the position arrays here (3 s against 0.035 s for 750K int64)."""
    if not len(values):
        return values.copy()
    s = np.sort(values)
    keep = np.empty(len(s), dtype=np.bool_)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def mention_edges(g: GraphIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The live MENTIONS edges between live nodes: positions, sources, targets, weights."""
    alive = g.e_alive.view[: len(g.edge_ids)]
    code = g.relations.get(MENTIONS)
    edges = np.zeros(0, dtype=np.int64)
    if code is not None:
        edges = np.flatnonzero(alive & (g.e_rel.view[: len(alive)] == code)).astype(np.int64)
    src = g.e_src.view[edges].astype(np.int64)
    dst = g.e_dst.view[edges].astype(np.int64)
    w = g.e_weight.view[edges].astype(np.float64)
    keep = g.node_alive.view[src] & g.node_alive.view[dst] if len(edges) else np.zeros(0, dtype=bool)
    return edges[keep], src[keep], dst[keep], w[keep]


def title_passages(
    state: EngineView,
    g: GraphIndex,
    edges: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    passages: np.ndarray,
) -> dict[int, list[int]]:
    """Entity position -> the passages (indexes into ``passages``) whose MENTIONS edge to it is a title
    edge, in edge order (one property read, no edge records made)."""
    title_of: dict[int, list[int]] = {}
    if not len(edges):
        return title_of
    ids = [g.edge_ids[e] for e in edges.tolist()]
    flags = state.store.edge_property(ids, "title")
    pidx = np.searchsorted(passages, src)
    for k in [k for k, eid in enumerate(ids) if flags.get(eid) is True]:
        title_of.setdefault(int(dst[k]), []).append(int(pidx[k]))
    return title_of


def fill_mention_arrays(
    index: EntityIndex,
    n: int,
    edges: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    w: np.ndarray,
    passages: np.ndarray,
    title_of: Mapping[int, list[int]],
    chunk_ids: list[str],
    chunk_counts: np.ndarray,
) -> None:
    """The MENTIONS graph's arrays of ``index`` (see :class:`EntityIndex`), from the edges and the
    passages' sorted chunk ids (``chunk_counts`` of them for each passage, in passage order)."""
    from scipy import sparse

    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    index.matrix = sparse.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(n, n))
    index.push = PushGraph.from_matrix(index.matrix)
    index.passages = passages
    index.passage_index = SortedIndex(passages)
    # distinct (passage, entity) pairs, by passage then entity: each passage's entity list, and df
    pair = unique_sorted(src * np.int64(n) + dst)
    p_of, e_of = pair // n, pair % n
    ptr = np.zeros(len(passages) + 1, dtype=np.int64)
    ptr[:-1] = np.searchsorted(p_of, passages, side="left")
    ptr[-1] = len(pair)
    index.passage_entities = Ragged(e_of, ptr)
    index.df = np.bincount(e_of, minlength=n).astype(np.float64)
    order = np.lexsort((src, dst))  # by entity, then passage (a passage list is sorted: searchsorted works)
    index.ent_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=index.ent_ptr[1:])
    index.ent_passage = np.searchsorted(passages, src[order]).astype(np.int64)
    index.ent_weight = w[order]
    index.ent_edge = edges[order]
    index.title_owners = title_of
    index.chunk_ids = chunk_ids
    cptr = np.zeros(len(chunk_counts) + 1, dtype=np.int64)
    np.cumsum(chunk_counts, out=cptr[1:])
    index.passage_chunks = RaggedStrings(index.chunk_ids, cptr)
    index.chunk_passage = np.repeat(np.arange(len(passages), dtype=np.int64), chunk_counts)


def add_names(
    gaz: Gazetteer, key_index: MutableMapping[str, int], node: Node, pos: int, names: Sequence[str]
) -> None:
    """A curated node's ``names`` (name, aliases, the naming property values that tell it apart:
    :meth:`~cef.retrieve.names.NameFinder.names_of`), with their variants, in the gazetteer and the
    key index."""
    for name in names:
        gaz.add(name, node.label, node.id)
        for key in alias_keys(name):
            key_index.setdefault(key, pos)


def is_extracted(node: Node) -> bool:
    return node.label == ENTITY_LABEL and node.id.startswith("entity:")


def entity_key(node: Node) -> str:
    if node.id.startswith("entity:") and node.label == ENTITY_LABEL:
        return node.id[len("entity:") :]
    return normalize_name(node.name)


def types_of(node: Node) -> list[str]:
    raw = node.properties.get("types")
    extra = [t for t in raw if isinstance(t, str)] if isinstance(raw, list) else []
    return list(dict.fromkeys([node.label, *extra]))
