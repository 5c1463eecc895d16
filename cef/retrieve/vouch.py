"""Vouching: the embedder reads a question word that no record holds as a thing a result is tied to.

The word-level relevance (:mod:`cef.retrieve.relevance`) counts a question word that names a thing
and that the knowledge base holds nowhere as evidence against every result ("Lucas Brandt's
*dentist*": the knowledge base knows no dentist). A user's paraphrase looks the same to it: "the
*blood thinner* John is on" where the data says anticoagulant, "his *diabetes tablets*" where it says
metformin, "*Zestril*" for lisinopril. Vouching lets the embedder's similarity speak for such a word,
against one result's own things only:

* **the word's phrases** — the word alone and with the content word next to it on either side in the
  question ("blood *thinner*", "*heartbeat*", "irregular *heartbeat*"), embedded in one batch;
* **the result's things** — its chunk's node, the nodes on the path that found it, the anchors it was
  found from, an answer node and its path's nodes (their stored vectors: the embedded name, type and
  properties of each node, so no text is embedded for them), and the relations on its path (name and
  description, embedded once per engine);
* **vouched** — a phrase's cosine with one of them reaches
  :attr:`~cef.retrieve.presets.RelevanceSettings.vouch`: for that result the word is held (it
  counts 1, not 0, and no longer scales the result down as a thing the knowledge base lacks).

A word is vouched per result, never for the whole knowledge base; the things the question names do
not vouch (John Miller's record is close to "dentist", what is asked about him is not him), nor does a
word that names an instance of a label ("the *wishlist* service": a name, not a paraphrase).
Relevance asks for vouching only when no result reached the threshold without it (it never lowers a
relevance, and a question already answered costs nothing more). Off by default
(:attr:`~cef.retrieve.presets.RelevanceSettings.vouch` above 1): with MiniLM an off-topic word is as
often that close to some tied thing ("*methotrexate*" / Metformin 0.66) as a paraphrase is to what it
means ("*Zestril*" / Lisinopril 0.59), so on the dev sets it answered as many off-topic questions more
as on-topic ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from cef.model import GraphPath, RankedChunk, RankedNode
from cef.retrieve.context import QueryContext
from cef.retrieve.support import phrase_vectors, unit
from cef.text import STOP_WORDS

__all__ = ["phrases_of", "vouched_words"]

_WORD = re.compile(r"[A-Za-z][\w'’-]*|\d[\w-]*")


def phrases_of(question: str, forms: Sequence[str]) -> dict[str, list[str]]:
    """Each form's phrases in ``question``: the word, and the word with the content word just before
    or after it ("blood thinner", "irregular heartbeat"); a form the question does not say: itself."""
    tokens = _WORD.findall(question)
    lower = [t.lower() for t in tokens]
    out: dict[str, list[str]] = {}
    for form in forms:
        got = [form]
        if form in lower:
            i = lower.index(form)
            if i > 0 and lower[i - 1] not in STOP_WORDS:
                got.append(f"{tokens[i - 1]} {tokens[i]}")
            if i + 1 < len(tokens) and lower[i + 1] not in STOP_WORDS:
                got.append(f"{tokens[i]} {tokens[i + 1]}")
        out[form] = got
    return out


def _things(rc: RankedChunk | None, rn: RankedNode | None) -> tuple[list[str], list[str]]:
    """The node ids and relation types a result is tied to (its own, its path's, its anchors)."""
    nodes: list[str] = []
    relations: list[str] = []
    path: GraphPath | None = None
    if rc is not None:
        nodes += list(rc.explanation.anchors)
        if rc.chunk.node_id is not None:
            nodes.append(rc.chunk.node_id)
        path = rc.explanation.path
    if rn is not None:
        nodes.append(rn.node.id)
        path = rn.path
    if path is not None:
        nodes += list(path.node_ids)
        relations += list(path.relation_types)
    return list(dict.fromkeys(nodes)), list(dict.fromkeys(relations))


#: the unit vectors of node names, per embedder (names repeat across questions: embedded once)
_NAME_VECTORS: dict[int, dict[str, np.ndarray]] = {}


def _name_vectors(qc: QueryContext, names: list[str]) -> tuple[list[str], np.ndarray] | None:
    """The names and their unit vectors (the names not seen before embedded in one batch)."""
    kept = _NAME_VECTORS.setdefault(id(qc.state.embedder), {})
    new = [n for n in names if n not in kept]
    if new:
        vectors = qc.embed_many(new)
        if vectors is None:
            return None
        if len(kept) + len(new) > 50_000:
            kept.clear()
        kept.update(zip(new, unit(vectors), strict=True))
    return names, np.stack([kept[n] for n in names])


def _relation_text(qc: QueryContext, name: str) -> str:
    g = qc.state.graph
    rt = g.rel_types.get(name) or next((r for r in g.rel_types.values() if r.inverse == name), None)
    words = name.replace("_", " ").lower()
    return f"{words}: {rt.description}" if rt is not None and rt.description else words


def vouched_words(
    qc: QueryContext,
    forms: Sequence[str],
    results: Sequence[RankedChunk],
    nodes: Sequence[RankedNode],
    threshold: float,
    named: frozenset[str] = frozenset(),
) -> tuple[list[set[str]], list[set[str]], float]:
    """For each chunk result and each answer node, the ``forms`` (question words no record holds) its
    own things vouch for (a phrase's cosine with one of them reaches ``threshold``), and the best
    cosine seen (0: none measured). The nodes the question ``named`` vouch for nothing: what is asked
    about a thing is not the thing ("John Miller's *dentist*" is not John Miller)."""
    empty: tuple[list[set[str]], list[set[str]], float] = (
        [set() for _ in results],
        [set() for _ in nodes],
        0.0,
    )
    if not forms or qc.state.embedder is None or threshold > 1.0:
        return empty
    phrases = phrases_of(qc.query.query, forms)
    flat = [(form, p) for form, ps in phrases.items() for p in ps]
    vectors = qc.embed_many([p for _, p in flat])
    if vectors is None:
        return empty
    q = unit(vectors)
    tied = [_things(rc, None) for rc in results] + [_things(None, rn) for rn in nodes]
    tied = [([n for n in ids if n not in named], rels) for ids, rels in tied]
    node_ids = list(dict.fromkeys(n for ids, _ in tied for n in ids))
    relations = tuple(dict.fromkeys(r for _, rels in tied for r in rels))
    node_sim: dict[str, np.ndarray] = {}
    names = {n.id: n.name for n in qc.state.get_nodes(node_ids) if n.name} if node_ids else {}
    if names:
        known = _name_vectors(qc, list(dict.fromkeys(names.values())))
        if known is not None:
            per_name = q @ known[1].T
            col = {name: j for j, name in enumerate(known[0])}
            node_sim = {n: per_name[:, col[name]] for n, name in names.items()}
    rel_sim: dict[str, np.ndarray] = {}
    if relations:
        rel_known = phrase_vectors(qc, tuple(_relation_text(qc, r) for r in relations))
        if rel_known is not None and len(rel_known):
            rel = q @ rel_known.T
            rel_sim = {r: rel[:, j] for j, r in enumerate(relations)}
    out: list[set[str]] = []
    top = 0.0
    for ids, rels in tied:
        sims = [node_sim[n] for n in ids if n in node_sim] + [rel_sim[r] for r in rels if r in rel_sim]
        if not sims:
            out.append(set())
            continue
        best = np.max(np.stack(sims), axis=0)
        top = max(top, float(best.max()))
        out.append({form for (form, _), cos in zip(flat, best, strict=True) if float(cos) >= threshold})
    return out[: len(results)], out[len(results) :], round(top, 4)
