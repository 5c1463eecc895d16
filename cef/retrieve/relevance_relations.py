"""Facts a named thing lacks: a property (:func:`unheld_properties`) or a relation. Relations: "Which database does the *pricing service* store its data in?"
asked of a graph where other services have a ``STORES_DATA_IN`` edge and the pricing service has none.

A word of what the question asks names a relation type when the path scorer's own matcher reads it
so (:meth:`~cef.retrieve.pathscore.PathScorer.words_of` cue words, :func:`~cef.retrieve.qwords.names`:
the one matcher of relation words). The relation is *lacking* when no thing the question names has
an edge of it (either direction, live edges), while other nodes of a named thing's kind do (the
relation is asked of the named thing, not of an answer: "the brand of the drug John takes"); a
question that names another relation or a kind reaches the relation one hop on ("who manages the
*team* that owns search": the team, a neighbour of a kind the question names, holds it), so a named
thing's neighbours through a relation the question names, or of a kind it names besides the named
things' own, count as the named thing. A relation an answer's path walks is held when the question
names every hop of that path ("the films that share directors with X were released in which years":
the films two hops on have the year X lacks), and so is one a node on such a path has. Such a word is
then held nowhere
(the effect of :func:`unheld_properties`, a property the named things lack): an answer found through another node or
by a text search does not answer the question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from cef.retrieve.context import QueryContext
from cef.retrieve.pathscore import path_scorer
from cef.retrieve.questionterms import Term
from cef.retrieve.qwords import names, names_type
from cef.retrieve.relevance_vocab import key_words, property_stems, property_words, stems

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.model import Node

__all__ = ["lacking_relations", "unheld_properties"]


def _named_relations(scorer_words: Mapping[str, Sequence[tuple[str, str]]], form: str) -> list[str]:
    return [r for r, cue in scorer_words.items() if any(names(form, w) for w, _ in cue)]


def lacking_relations(
    qc: QueryContext,
    terms: Mapping[str, Term],
    asked: Sequence[str],
    named_ids: Sequence[str],
    said: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """The asked stems that name only relations the named things lack, each with the relation's name
    (``{"store": "STORES_DATA_IN"}``); empty when the question names nothing or asks no relation.
    ``said``: the stems of the question's words for the named things (a kind word among them, "the
    pricing *service*", names no kind of neighbour; "the *services* behind checkout" does)."""
    if not named_ids or not asked:
        return {}
    g = qc.state.graph
    positions = [p for i in named_ids if (p := g.pos(i)) is not None]
    if not positions or not g.relations.names:
        return {}
    scorer = path_scorer(qc.state)
    words = {r: scorer.words_of(r).cue for r in g.relations.names}
    own = _name_stems(qc.state.get_nodes(list(named_ids)))  # a word of a name asks no relation
    by_key = {k: _named_relations(words, terms[k].form) for k in asked if k not in own}
    by_key = {k: rs for k, rs in by_key.items() if rs}
    if not by_key:
        return {}
    forms = [terms[k].form for k in terms if k not in said]
    asked_rels = {r for rs in by_key.values() for r in rs}
    kinds = {int(g.node_label[p]) for p in positions}
    holders = set(positions)
    for p in positions:  # one hop on
        for e in g.incident_edges(p):
            other = int(g.e_dst[e]) if int(g.e_src[e]) == p else int(g.e_src[e])
            rel = g.relations.names[int(g.e_rel[e])]
            label = int(g.node_label[other])
            # a neighbour of another kind may be the hop the question words its own way ("who
            # captains Yusuf Demir's *team*": his club has a captain); one of the named things' own
            # kind stands in for them only when the question names the hop or the kind
            if (
                label not in kinds
                or (rel in asked_rels and len(asked_rels) > 1)
                or names_type(forms, g.labels.names[label])
            ):
                holders.add(other)
    walked, reach = _explained_walks(qc, words, [t.form for t in terms.values()])
    holders |= {p for i in reach if (p := g.pos(i)) is not None}
    held = _relations_at(g, sorted(holders), asked_rels) | walked
    every = [t.form for t in terms.values()]  # the kinds the question names, its named things' too
    wanted = {c for c, label in enumerate(g.labels.names) if label and names_type(every, label)}
    out: dict[str, str] = {}
    for key, rels in by_key.items():
        if any(r in held for r in rels):
            continue
        for r in rels:
            ends = _other_ends(g, r, kinds)
            # the kind asked for must be at the relation's other end: "which *services* would be
            # affected if the catalog went down" asks services, which no incident edge leads to
            if ends and (not wanted or wanted & ends):
                out[key] = r
                break
    return out


def _explained_walks(
    qc: QueryContext, words: Mapping[str, Sequence[tuple[str, str]]], forms: Sequence[str]
) -> tuple[set[str], set[str]]:
    """The relations the answers' explained paths walk, and the nodes along those paths: a path each
    of whose hops a question word names (the path scorer's cue words) answers what the question asks
    there ("the films that share directors with X were released in which *years*": X has no
    ``release_year`` edge, the films two hops on do; "who starred films for the *director* of
    Nowhere", read from a tag node). A path with a hop the question does not name (the pricing
    service's dependency that stores data) explains nothing."""
    g = qc.state.graph
    inverse = {rt.inverse: name for name, rt in g.rel_types.items() if rt.inverse}
    walked: set[str] = set()
    reach: set[str] = set()
    for rn in qc.answer_nodes:
        path = rn.path
        if path is None or not path.relation_types:
            continue
        rels = [r if r in words else inverse.get(r, r) for r in path.relation_types]
        if all(any(names(f, w) for f in forms for w, _ in words.get(r, ())) for r in rels):
            walked |= set(rels)
            reach |= set(path.node_ids)
    return walked, reach


def unheld_properties(qc: QueryContext, asked: Sequence[str], named_ids: Sequence[str]) -> set[str]:
    """The asked words that only a property key of the knowledge base holds ("the *brand* name of
    amiodarone") when the knowledge base lacks the fact asked: a property that the named things' kind
    carries is asked of them, so it is lacking when none of them has it (another medication's brand
    is not amiodarone's); a property their kind never carries is asked of an answer ("the brand of
    the drug John takes"; "which *titles* are printed at Northgate" asks for books, whatever an
    editor's job title), lacking only when no answer node was found. Such a word is held only by a chunk
    whose text shows it, never by an answer node's properties."""
    if not named_ids:
        return set()
    keys = property_words(qc) & set(asked)
    if not keys:
        return set()
    named = qc.state.get_nodes(list(named_ids))
    keys -= _name_stems(named)  # a word of a named thing's name is no property asked ("the price *engine*")
    store = qc.state.store
    kind: set[str] = set()
    for label in {n.label for n in named}:
        for key in store.property_names(label, sample=50):
            kind |= stems(key_words(key))
    out: set[str] = set()
    for key in keys:
        if key in kind:
            if not any(key in property_stems(node) for node in named):
                out.add(key)
        elif not qc.answer_nodes:  # asked of an answer, and no answer was found
            out.add(key)
    return out


def _name_stems(nodes: Sequence[Node]) -> set[str]:
    """The stems of the named things' names ("the price *engine*": "engine" asks nothing of it)."""
    out: set[str] = set()
    for node in nodes:
        out |= stems(" ".join(node.names).replace("-", " ").replace("_", " "))
    return out


def _relations_at(g: GraphIndex, positions: list[int], relations: set[str]) -> set[str]:
    """Those of ``relations`` that a live edge at one of ``positions`` has (either direction): one
    vector pass over the edges, however many neighbours a named thing has (a speaker's turns)."""
    codes = {c: r for r in relations if (c := g.relations.get(r)) is not None}
    if not codes:
        return set()
    n = len(g.edge_ids)
    alive = np.flatnonzero(g.e_alive.view[:n] & np.isin(g.e_rel.view[:n], list(codes)))
    at = np.asarray(positions)
    touching = alive[np.isin(g.e_src.view[alive], at) | np.isin(g.e_dst.view[alive], at)]
    return {codes[int(c)] for c in np.unique(g.e_rel.view[touching])}


def _other_ends(g: GraphIndex, relation: str, kinds: set[int]) -> set[int]:
    """The labels at the other end of the live edges of ``relation`` that have a node of one of
    ``kinds`` at one end (empty: no node of those kinds has the relation)."""
    code = g.relations.get(relation)
    if code is None:
        return set()
    n = len(g.edge_ids)
    alive = np.flatnonzero(g.e_alive.view[:n] & (g.e_rel.view[:n] == code))
    if not len(alive):
        return set()
    src = g.node_label.view[g.e_src.view[alive]]
    dst = g.node_label.view[g.e_dst.view[alive]]
    codes = list(kinds)
    return {int(c) for c in np.unique(np.concatenate([dst[np.isin(src, codes)], src[np.isin(dst, codes)]]))}
