"""Relevance: how well each result answers the question, in [0, 1], comparable across questions.

A result's ``score`` says where the fusion ranked it; it says nothing about
whether anything answers at all (rank 1 of an off-topic question still scores
``1/(k+1)``). This stage, run once after retrieval, reads the sources' own
evidence instead and gives every chunk and answer node a ``relevance``:

* **the things the question names** — the nodes entity linking and the path
  stage anchored on by name (exact, alias, fuzzy, partial: not the ones a
  vector search guessed), each with its link confidence. A result is *tied* to
  such a node when its path starts there, it was found from it, it hangs on
  it, or its text names it;
* **what the question asks about them** — the question's other content words
  (stems of their lemmas; question and function words left out). Each counts 1 when the
  result's evidence holds it (its text and headings, the relation names and
  descriptions and node names along its path, an answer node's label and
  properties), ½ when the knowledge base holds it somewhere else (text, node
  names, labels, relation types), and 0 when nothing in the knowledge base
  does: a question about a dentist, asked of a graph that knows none, is not
  answered by the nephrologist. A result the relation-path stage found counts
  at least as much as that stage's own measure of how much of the question the
  path's relation names explain (``metadata["paths"]["named"]``: "which
  screenwriter wrote" names ``written_by``; an answer node, its own path's,
  ``metadata["paths"]["answer_named"]``).

With named things: ``relevance = tie confidence × (FLOOR + (1 − FLOOR) × asked)``;
without: the coverage of all the question's content words, counted the same way.
A query's own hints count as naming: its ``targets`` name things, its
``traversal.relation_types`` say what it asks.

When no chunk and no answer node reaches :data:`NOTHING_MATCHED_BELOW`, the
result says so: ``metadata["relevance"]["nothing_matched"]`` is true, a note
says ``nothing matched``, and there are no answer nodes. Answer nodes below it
are dropped whatever the chunks say. Chunks are kept (ranked as before), each
with its relevance, for a caller who wants to look anyway.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cef.extract.lemmas import default_lemmatizer
from cef.model import GraphPath, RankedChunk, RankedNode
from cef.retrieve.context import QueryContext
from cef.retrieve.stagestate import Verdict
from cef.retrieve.visibility import hidden_nodes
from cef.text import STOP_WORDS, stem

__all__ = ["FLOOR", "NOTHING_MATCHED_BELOW", "assess_relevance"]

#: below this relevance (best chunk and best answer node), the result says "nothing matched"
NOTHING_MATCHED_BELOW = 0.35
#: what a result tied to a named thing is worth when none of the question's other words is in the
#: knowledge base (the thing is there; what is asked about it is not)
FLOOR = 0.3
#: how anchors found by name are marked (vector anchors are guesses, not things the question names)
_GUESSED = frozenset({"vector", "dense"})
_POSSESSIVE = re.compile(r"['’]s\b|['’](?=\s|$)")


def _words(text: str) -> list[tuple[str, str]]:
    """(word, match key) of the content words of ``text``: the key is the stem of the word's lemma
    ("wrote" and "written" are one key), question and function words left out."""
    out = []
    for token, lemma in default_lemmatizer()(_POSSESSIVE.sub("", text)):
        if token not in STOP_WORDS:
            out.append((token, stem(lemma)))
    return out


def _stems(text: str) -> set[str]:
    """The match keys of ``text``: of each word's lemma and of the word itself."""
    out: set[str] = set()
    for token, key in _words(text):
        out.add(key)
        out.add(stem(token))
    return out


def _relation_words(name: str) -> str:
    return name.replace("_", " ").lower()


@dataclass
class _Named:
    """A node the question names: its link confidence and the stems of its names."""

    node_id: str
    confidence: float
    stems: set[str]


@dataclass
class _Question:
    stems: list[str]  # the question's content stems, in order
    forms: dict[str, str]  # stem -> a word of the question with that stem
    named: list[_Named] = field(default_factory=list)
    known: dict[str, bool] = field(default_factory=dict)  # stem -> the knowledge base holds it
    asked_given: bool = False  # the query names the relations to follow: what it asks is given

    @property
    def asked(self) -> list[str]:
        """The stems the named things do not account for: what the question asks about them."""
        covered: set[str] = set()
        for n in self.named:
            covered |= n.stems
        return [s for s in self.stems if s not in covered]


def _question(qc: QueryContext) -> _Question:
    forms: dict[str, str] = {}
    for token, key in _words(qc.query.query):
        forms.setdefault(key, token)
    q = _Question(list(forms), forms, asked_given=bool(qc.query.traversal.relation_types))
    hinted = {target.description for target in qc.query.targets}
    best: dict[str, float] = {}
    mention: dict[str, str] = {}
    for a in qc.anchors:
        if a.how in _GUESSED:
            continue
        if a.score > best.get(a.node_id, -1.0):
            best[a.node_id] = float(a.score)
            mention[a.node_id] = a.target or ""
    nodes = {n.id: n for n in qc.state.get_nodes(list(best))} if best else {}
    for node_id, conf in best.items():
        node = nodes.get(node_id)
        names = [mention[node_id]] + ([node.name, *node.aliases] if node is not None else [])
        stems = set().union(*(_stems(n) for n in names if n))
        if stems & set(q.stems) or mention[node_id] in hinted:  # named by the question or its targets
            q.named.append(_Named(node_id, min(max(conf, 0.0), 1.0), stems))
    return q


def _known(qc: QueryContext, q: _Question, stems: Iterable[str]) -> None:
    """Whether the knowledge base holds each stem anywhere: chunk text, node names, labels, relations."""
    todo = [s for s in stems if s not in q.known]
    if not todo:
        return
    g = qc.state.graph
    scope = qc.query.scope
    hidden = hidden_nodes(g, scope)  # a scoped query knows only its scope's and shared vocabulary
    labels = list(g.labels.names)
    if hidden is not None:
        labels = [g.labels.names[int(c)] for c in np.unique(g.node_label.view[: len(hidden)][~hidden])]
    schema: set[str] = set()
    for label in labels:
        schema |= _stems(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", label))
    for rt in g.rel_types.values():
        schema |= _stems(
            " ".join([_relation_words(rt.name), _relation_words(rt.inverse or ""), rt.description or ""])
        )
    store = qc.state.store
    for s in todo:
        word = q.forms.get(s, s)
        q.known[s] = (
            s in schema
            or bool(store.search_text("chunk", word, 1, scope=scope))
            or bool(store.search_text("node", word, 1, scope=scope))
        )


def _path_text(qc: QueryContext, path: GraphPath | None) -> str:
    if path is None:
        return ""
    g = qc.state.graph
    parts = list(path.node_names)
    for name in path.relation_types:
        parts.append(_relation_words(name))
        rt = g.rel_types.get(name)
        if rt is None:
            rt = next((r for r in g.rel_types.values() if r.inverse == name), None)
        if rt is not None and rt.description:
            parts.append(rt.description)
    return " ".join(parts)


def _coverage(q: _Question, wanted: Sequence[str], evidence: set[str]) -> float:
    """Each wanted stem: 1 in the evidence, ½ elsewhere in the knowledge base, 0 nowhere."""
    if not wanted:
        return 1.0
    got = sum(1.0 if s in evidence else (0.5 if q.known.get(s) else 0.0) for s in wanted)
    return got / len(wanted)


def _relevance(q: _Question, evidence: set[str], ties: set[str], named: float = 0.0) -> float:
    """``named``: how much of the question the relation path behind the result explains (the path
    stage's own measure, 0 for results it did not find)."""
    if q.asked_given:
        named = 1.0
    if not q.stems and not q.named:
        return 0.0
    if not q.named:
        return round(max(_coverage(q, q.stems, evidence), named), 4)
    tie = max(
        (n.confidence for n in q.named if n.node_id in ties or (n.stems and n.stems <= evidence)), default=0.0
    )
    asked = max(_coverage(q, q.asked, evidence), named)
    tied = tie * (FLOOR + (1.0 - FLOOR) * asked)
    # a result tied to nothing the question names may still hold all of its words
    loose = FLOOR * _coverage(q, q.stems, evidence)
    return round(min(1.0, max(tied, loose)), 4)


def _chunk_relevance(qc: QueryContext, q: _Question, rc: RankedChunk) -> float:
    chunk, e = rc.chunk, rc.explanation
    headings = chunk.metadata.get("headings")
    title = chunk.metadata.get("title")
    text = " ".join(
        [
            chunk.content,
            title if isinstance(title, str) else "",
            " ".join(h for h in headings if isinstance(h, str)) if isinstance(headings, list) else "",
            _path_text(qc, e.path),
            " ".join(e.entities),
        ]
    )
    ties = set(e.anchors)
    if e.path is not None and e.path.node_ids:
        ties.add(e.path.node_ids[0])
    if chunk.node_id is not None:
        ties.add(chunk.node_id)
    from_paths = e.strategy.value == "paths" or bool({"paths", "path_context"} & set(e.shares))
    return _relevance(q, _stems(text), ties, _path_named(qc) if from_paths else 0.0)


def _path_named(qc: QueryContext) -> float:
    """How much of the question the best relation path's names explain (the path stage's measure)."""
    info = qc.stages.paths
    return info.named if info is not None else 0.0


def _answer_named(qc: QueryContext, node_id: str) -> float:
    """How much of the question the relation path behind one answer node explains (a weaker path's
    answer does not borrow the best path's measure); the best path's when the stage gave none."""
    info = qc.stages.paths
    named = info.answer_named.get(node_id) if info is not None else None
    return named if named is not None else _path_named(qc)


def _node_relevance(qc: QueryContext, q: _Question, rn: RankedNode) -> float:
    node = rn.node
    text = " ".join([node.name, node.label, " ".join(node.aliases), rn.text, _path_text(qc, rn.path)])
    ties = {node.id}
    if rn.path is not None and rn.path.node_ids:
        ties.add(rn.path.node_ids[0])
    return _relevance(q, _stems(text), ties, _answer_named(qc, node.id))


def assess_relevance(qc: QueryContext, results: list[RankedChunk]) -> list[RankedChunk]:
    """``results`` with their relevance; answer nodes below the threshold dropped from ``qc``; the
    verdict in ``qc.stages.relevance`` (and a note when nothing matched)."""
    q = _question(qc)
    _known(qc, q, q.asked if q.named else q.stems)
    out = [rc.model_copy(update={"relevance": _chunk_relevance(qc, q, rc)}) for rc in results]
    nodes = [rn.model_copy(update={"relevance": _node_relevance(qc, q, rn)}) for rn in qc.answer_nodes]
    kept = [rn for rn in nodes if (rn.relevance or 0.0) >= NOTHING_MATCHED_BELOW]
    best = max([0.0, *(r.relevance or 0.0 for r in out), *(n.relevance or 0.0 for n in nodes)])
    nothing = best < NOTHING_MATCHED_BELOW
    qc.answer_nodes = [] if nothing else kept
    qc.stages.relevance = Verdict(
        best=best,
        threshold=NOTHING_MATCHED_BELOW,
        nothing_matched=nothing,
        named=[n.node_id for n in q.named],
        asked=[q.forms.get(s, s) for s in (q.asked if q.named else q.stems)],
        unknown=[q.forms.get(s, s) for s, k in q.known.items() if not k],
    )
    if nothing:
        missing = [q.forms.get(s, s) for s, k in q.known.items() if not k]
        why = f" (the knowledge base has no {', '.join(repr(m) for m in missing)})" if missing else ""
        qc.notes.append(
            f"nothing matched: the best result's relevance {best:.2f} is below {NOTHING_MATCHED_BELOW}{why}"
        )
    elif len(kept) < len(nodes):
        qc.notes.append(
            f"relevance: {len(nodes) - len(kept)} answer node(s) below {NOTHING_MATCHED_BELOW} left out"
        )
    return out
