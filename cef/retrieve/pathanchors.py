"""Where relation paths start: the nodes a question names (or the query targets) that have typed edges.

Each anchor keeps the span of its mention in the question, grown over a word beside it that names
the node's type ("the checkout 4.12.0 *release*"): path scoring masks that span, so that the words
left are the ones that name relations (:mod:`cef.retrieve.pathscore`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from cef.graph.filter import EdgeFilter
from cef.retrieve.anchors import resolve_anchors
from cef.retrieve.context import QueryContext
from cef.retrieve.entities import entity_index, link_query_entities
from cef.retrieve.entityparts import is_text_container
from cef.retrieve.pathwords import relation_words
from cef.retrieve.presets import PathSettings, settings_for

__all__ = ["PathAnchor", "path_anchors"]


@dataclass(frozen=True)
class PathAnchor:
    """A node a relation path starts from, and where the question names it (None: an explicit target)."""

    pos: int
    node_id: str
    name: str
    confidence: float
    span: tuple[int, int] | None
    how: str


def path_anchors(qc: QueryContext, flt: EdgeFilter) -> list[PathAnchor]:
    """Explicit targets, else the nodes the question names that have typed edges, best first."""
    st = qc.state
    g = st.graph
    out: dict[int, PathAnchor] = {}

    def has_typed_edges(pos: int) -> bool:
        e, _, _, _ = g.step(np.asarray([pos], dtype=np.int64), flt)
        return len(e) > 0

    if qc.query.targets:
        anchors = qc.anchors or resolve_anchors(qc)
        for a in anchors:
            if a.pos not in out and has_typed_edges(a.pos):
                out[a.pos] = PathAnchor(a.pos, a.node_id, a.target or a.node_id, float(a.score), None, a.how)
        return list(out.values())
    settings = settings_for(PathSettings, qc.query)
    index = entity_index(st)
    text = qc.query.query
    exact = index.written_names()
    for e in link_query_entities(index, st, text, settings.linking, qc.linked, scope=qc.query.scope):
        span = _find_span(text, e.mention)
        written = text[span[0] : span[1]] if span else e.mention
        if span is not None:  # "the checkout 4.12.0 *release*": the node's type word is part of the mention
            span = _with_type_word(text, span, g.labels.names[int(g.node_label[e.pos])])
        # several nodes may share a normalized name ("Christina Ricci" the actor, "christina ricci" a tag):
        # the one written exactly as in the question wins
        same = [p for p in exact.get(written, ()) if p != e.pos]
        for pos, conf, how in [*((p, 1.0, "exact") for p in same), (e.pos, e.confidence, e.how)]:
            if is_text_container(g, pos) or not has_typed_edges(pos):
                continue
            if same and pos == e.pos and index.names.get(pos) != written:
                conf = min(conf, 0.95)
            cur = out.get(pos)
            if cur is None or conf > cur.confidence:
                out[pos] = PathAnchor(pos, g.node_ids[pos], index.names.get(pos, e.name), conf, span, how)
    ranked = sorted(out.values(), key=lambda a: _anchor_key(text, a), reverse=True)
    # a mention inside a longer one ("Miller" inside "John Miller") is not an anchor of its own
    kept: list[PathAnchor] = []
    for pa in ranked:
        if pa.span is not None and any(
            k.span is not None and k.span != pa.span and k.span[0] <= pa.span[0] and pa.span[1] <= k.span[1]
            for k in kept
        ):
            continue
        kept.append(pa)
    return kept[: settings.max_anchors]


def _find_span(text: str, mention: str) -> tuple[int, int] | None:
    i = text.find(mention)
    if i < 0:
        i = text.lower().find(mention.lower())
    return (i, i + len(mention)) if i >= 0 else None


_WORD_BEFORE = re.compile(r"([^\W\d_]+)\s+$")
_WORD_AFTER = re.compile(r"^\s+([^\W\d_]+)")


def _with_type_word(text: str, span: tuple[int, int], label: str) -> tuple[int, int]:
    """``span`` grown over a word right before or after it that names the node's label ("the X
    *release*", "*team* X"), so that the word is not read as naming a relation (``RELEASE_OF``)."""
    words = {w.lower() for w in relation_words(label)}

    def names_label(word: str) -> bool:
        w = word.lower()
        return w in words or (w.endswith("s") and w[:-1] in words)

    start, end = span
    after = _WORD_AFTER.match(text[end:])
    if after and names_label(after.group(1)):
        end += after.end()
    before = _WORD_BEFORE.search(text[:start])
    if before and names_label(before.group(1)):
        start = before.start()
    return start, end


def _anchor_key(text: str, a: PathAnchor) -> tuple[float, ...]:
    """Link confidence first; then a span written like a proper name, then a longer one."""
    span = text[a.span[0] : a.span[1]] if a.span else a.name
    proper = any(c.isupper() or c.isdigit() for c in span)
    return (round(a.confidence, 2), float(proper), float(len(span)))
