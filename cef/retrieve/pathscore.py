"""How well a typed relation path fits a question: words, cues and embeddings.

A relation path is a sequence of hops, each a relation walked forward (source
→ target) or backward. Its words come from the graph's own schema: the
relation's name (``directed_by`` → "directed by"), its inverse name when the
hop is walked backward (else "directed by of"), its description, and a few
example values that the last hop reaches ("has genre: Drama, Comedy,
Thriller" says what kind of answer the path gives).

The score of a path for a question whose anchor mention is masked:

``cos(question, path words) + distinct · cos(question, distinct relations)
+ answer · cos(question, example answers of the last hop)
+ cue · (hops explained by a question word − cue_cost · hops) − length · (hops − 1)
+ order · (cued relations named in walking order from the anchor)
+ answer_type · fit(the kind of thing the question asks for, the types the last hop reaches)
+ mentioned_type · (share of the other types the question names that the path walks through)
+ voice · (the first hop goes the way the wording says, for a relation the anchor has both ways)
− cue · (the path ends walking straight back, and no sharing word or second naming asks for it)``

Every weight is a field of :class:`~cef.retrieve.presets.PathSettings` (its description says where its
value came from). Types are the head words of node labels (``DrugClass``: class).

**What is asked** (:func:`asked_for`): the noun a "which" / "what" opens (its head: "the plant
*manager*"), else what the question word asks in general English ("who": a person). Its fit with
each last hop (:meth:`PathScorer._asked_fit`) is, by the embedder, the best cosine of the asked
words with the names and members of the types the hop reaches ("vendors" fits ``Supplier``), 1.0
when the asked word heads a type's name; the best fitting end gets the whole ``answer_type``, the
others ``exp(-gap / type_temperature)`` of it, so a path that ends at the asked type beats a shorter
one that stops on the way. A classifier noun ("what *kind* of film") where every end has the same
type names the relation whose values the most things share (:meth:`PathScorer._category`).

A naming of a relation in the question *explains* one hop of it. A question word names a relation
when it shares a stem with one of the relation's name words (:func:`~cef.retrieve.pathwords.stem_match`:
same lemma or Snowball stem, a stem plus a one-syllable derivational ending: "acted"/"actors",
"written"/"writer"; or the head of a compound: "screenwriter"); a name word that heads a node type's
name is left to the type ("vehicles" names the ends of ``HAS_VEHICLE``, not the relation). A relation
without a description gets a card built from its name and the labels of its ends
(:meth:`PathScorer.relation_card`). Each question word explains one hop, so "the films written by the
writer of X" asks for two ``written_by`` hops. A word that asks for things sharing a neighbour ("same",
"share", "also", "co-") explains a hop that walks straight back along the previous relation.
Description words explain ``soft_cue`` (three quarters) of a hop, but not those that name node types
("a *team* is led by a *person*": the ends, not the relation), and a word explains one hop of one
relation of a path, however many relations it could name.
Nothing here knows a domain: the words all come from the graph.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cef.extract.lemmas import WORD
from cef.retrieve.pathcues import RelationWords, explained_hops, name_cues, voiced_direction
from cef.retrieve.pathshapes import schema_paths
from cef.retrieve.pathwords import (
    FUNCTION_WORDS,
    MASK,
    PREPOSITIONS,
    SHARING_CUE,
    Hop,
    Lemmatize,
    RelationPath,
    content_words,
    default_lemmatizer,
    masked_question,
    relation_words,
    shared_relation,
    stem_match,
)
from cef.retrieve.presets import PathSettings
from cef.text import QUESTION_WORDS

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.retrieve.ports import EngineView as EngineState

log = logging.getLogger(__name__)

__all__ = ["AskedFor", "PathScorer", "asked_for", "path_scorer"]


#: texts -> their vectors, one row each (None without an embedder)
EmbedMany = Callable[[Sequence[str]], np.ndarray | None]

_EXAMPLES = 5
#: stands in for a question word that names no relation (a content word: it ends a naming)
_TYPE_TOKEN = "<type>"
#: texts of this many paths are kept per graph generation (a schema's paths are far fewer)
_TEXTS_KEPT = 200_000
#: copulas and determiners between a question word and the noun it asks about ("what is *the* genre")
_COPULAS = frozenset(["is", "are", "was", "were", "be", "been"])
_DETERMINERS = frozenset(["the", "a", "an"])
#: English classifier nouns: "what *kind* / *type* / *sort* of X" asks for a category of X (a closed
#: class of general English, no relation's name: the relation is found by how widely its values are
#: shared, :meth:`PathScorer._sharing`)
CLASSIFIER_NOUNS = frozenset(["kind", "type", "sort", "category", "class", "variety"])
#: words that open a noun phrase: articles and quantifiers ("*all* services", "*every* plant")
_QUANTIFIERS = _DETERMINERS | frozenset(["all", "every", "each", "any", "some", "both"])
#: what a verb takes after it: an object's determiner, a preposition
_VERB_OBJECTS = _DETERMINERS | PREPOSITIONS
#: what the question words that name no noun ask for, in general English
_WH_ASKS = {"who": "person", "whom": "person", "where": "place", "when": "date"}


@dataclass
class PathScorer:
    """Scores relation paths against questions for one graph generation (see the module doc)."""

    graph: GraphIndex
    stamp: tuple[int, int]
    settings: PathSettings
    lemmatize: Lemmatize
    relations: dict[str, RelationWords] = field(default_factory=dict)
    examples: dict[Hop, str] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    _names: dict[int, str] = field(default_factory=dict)  # example answers: node position -> name
    _texts: dict[RelationPath, tuple[str, str, str]] = field(default_factory=dict)  # texts_of, per path
    _types: dict[str, frozenset[str]] = field(default_factory=dict)  # _type_lemmas
    _ends: dict[Hop, frozenset[str]] = field(default_factory=dict)  # _end_types, per hop
    _cards: dict[int, tuple[str, str]] = field(default_factory=dict)  # type_cards, per label code
    _shares: dict[Hop, float] = field(default_factory=dict)  # _sharing, per hop
    _labels: dict[Hop, tuple[int, ...]] = field(default_factory=dict)  # _end_labels, per hop
    _members: dict[int, list[int]] = field(default_factory=dict)  # label code -> a few node positions

    # ------------------------------------------------------------------ words
    def words_of(self, relation: str) -> RelationWords:
        cur = self.relations.get(relation)
        if cur is not None:
            return cur
        rt = self.graph.rel_types.get(relation)
        fwd = relation_words(relation)
        inv = relation_words(rt.inverse) if rt is not None and rt.inverse else None
        desc = content_words([w.lower() for w in WORD.findall(self.relation_card(relation, examples=False))])
        cue_words = list(dict.fromkeys(content_words([*fwd, *(inv or [])])))
        soft = [(w, self._lemma(w)) for w in dict.fromkeys(desc) if w not in cue_words]
        types = self._type_lemmas()  # "a *team* is led by a *person*": the ends, not the relation
        # a name word that is a node type's head word names those nodes, not the relation
        # ("vehicles" in a question: HAS_VEHICLE's ends; the type fit and mentioned types count
        # it), unless the name has no other word (RELEASE_OF keeps "release")
        heads = self._type_lemmas(heads=True)
        verbs = [w for w in cue_words if w not in heads and self._lemma(w) not in heads]
        cue_words = verbs or cue_words
        cur = RelationWords(
            forward=fwd,
            inverse=inv,
            description=desc,
            cue=[(w, self._lemma(w)) for w in cue_words],
            soft=[(w, lw) for w, lw in soft if lw not in types and w not in types],
        )
        self.relations[relation] = cur
        return cur

    def relation_card(self, relation: str, *, examples: bool = True) -> str:
        """What a relation means: its description, else a card built from the graph (issue 23):
        its name, the labels of its ends and, with ``examples``, a few example pairs
        ("directed by: from Thing to Thing, e.g. Alpha Movie → Dana Director"). The cue words of
        :meth:`words_of` read it without the examples (names are values, not relation words)."""
        rt = self.graph.rel_types.get(relation)
        if rt is not None and rt.description:
            return rt.description
        g = self.graph
        code = g.relations.get(relation)
        head = " ".join(relation_words(relation))
        if code is None:
            return head
        n_edges = len(g.edge_ids)
        alive = np.flatnonzero(g.e_alive.view[:n_edges] & (g.e_rel.view[:n_edges] == code))
        src, dst = g.e_src.view[alive].astype(np.int64), g.e_dst.view[alive].astype(np.int64)

        def labels(ends: np.ndarray) -> str:
            codes = np.unique(g.node_label.view[ends]).tolist() if len(ends) else []
            return " or ".join(g.labels.names[int(c)] for c in codes[:3])

        card = f"{head}: from {labels(src)} to {labels(dst)}"
        if examples and len(alive):
            pairs = [
                (self._names.get(int(a), ""), self._names.get(int(b), ""))
                for a, b in zip(src.tolist(), dst.tolist(), strict=True)
            ]
            shown = [f"{a} → {b}" for a, b in pairs if a and b][:3]
            if shown:
                card += ", e.g. " + "; ".join(shown)
        return card

    def _lemma(self, word: str) -> str:
        return (self.lemmatize(word) or [(word, word)])[0][1]

    def _reached(self, relation: str, forward: bool) -> np.ndarray:
        """Positions of the nodes the live edges of ``relation`` lead to (``forward``: their targets,
        else their sources), one per edge (int64; empty for an unknown relation)."""
        g = self.graph
        code = g.relations.get(relation)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        n_edges = len(g.edge_ids)
        alive = g.e_alive.view[:n_edges] & (g.e_rel.view[:n_edges] == code)
        ends = g.e_dst.view[:n_edges] if forward else g.e_src.view[:n_edges]
        return ends[alive].astype(np.int64)

    def _type_lemmas(self, *, heads: bool = False) -> frozenset[str]:
        """The words of the graph's node labels (``SearchIndex``: search, index) with their lemmas;
        ``heads``: only the word that names the type (index; ``DrugClass`` is a class, not a drug)."""
        key = "heads" if heads else "words"
        cached = self._types.get(key)
        if cached is None:
            names = [relation_words(label) for label in self.graph.labels.names]
            words = {ws[-1] for ws in names if ws} if heads else {w for ws in names for w in ws}
            cached = self._types[key] = frozenset(words | {self._lemma(w) for w in words})
        return cached

    def _end_types(self, hop: Hop) -> frozenset[str]:
        """Lemmas of the head words of the labels of the nodes ``hop`` reaches (``Team``: team)."""
        cached = self._ends.get(hop)
        if cached is not None:
            return cached
        g = self.graph
        out: set[str] = set()
        for c in np.unique(g.node_label.view[self._reached(hop.relation, hop.forward)]).tolist():
            for w in relation_words(g.labels.names[int(c)])[-1:]:  # the head word names the type
                out.update((w, self._lemma(w)))
        self._ends[hop] = frozenset(out)
        return self._ends[hop]

    def _mentioned_types(self, tokens: list[tuple[str, str]], skip: int | None) -> frozenset[str]:
        """Head words of node labels the question names besides the thing it asks for (token
        ``skip``): "who is on call for the *services* X relies on" asks for a path through services."""
        types = self._type_lemmas(heads=True)
        return frozenset(
            lem
            for i, (t, lem) in enumerate(tokens)
            if i != skip and t not in FUNCTION_WORDS and (lem in types or t in types)
        )

    def _end_labels(self, hop: Hop) -> tuple[int, ...]:
        """Codes of the labels of the nodes ``hop`` reaches."""
        cached = self._labels.get(hop)
        if cached is None:
            g = self.graph
            reached = self._reached(hop.relation, self._walks_forward(hop))
            cached = self._labels[hop] = tuple(np.unique(g.node_label.view[reached]).tolist())
        return cached

    def type_cards(self, label: int) -> tuple[str, str]:
        """What a node type is, for comparing with what a question asks for: its name's words
        ("search index") and those with a few of its members ("person: Priya Raman, Sam Whitfield")."""
        cached = self._cards.get(label)
        if cached is None:
            g = self.graph
            name = " ".join(relation_words(g.labels.names[label]))
            shown = [n for n in (self._names.get(p, "") for p in self._members.get(label, ())) if n]
            cached = self._cards[label] = (name, f"{name}: {', '.join(shown)}" if shown else name)
        return cached

    def _walks_forward(self, hop: Hop) -> bool:
        rt = self.graph.rel_types.get(hop.relation)
        return hop.forward or bool(rt and rt.bidirectional)

    def _asked_fit(
        self, asked: AskedFor | None, ends: Sequence[Hop], embed: EmbedMany, vectors: bool
    ) -> dict[Hop, float]:
        """How well the nodes each last hop reaches fit what the question asks for: 1.0 for the
        best fitting and ``exp(-gap / type_temperature)`` for the others (empty: the question asks
        for no kind of thing, or every candidate ends at the same node types). A hop fits as well
        as the best of the types it reaches; a type fits by meaning, with an embedder (the best
        cosine of the asked words and its :meth:`type_cards`), else when the asked head word is
        the head word of its name."""
        if asked is None or len(ends) < 2:
            return {}
        fits: dict[Hop, float] = {}
        labels = {h: self._end_labels(h) for h in ends}
        if len(set(labels.values())) < 2:
            return {}  # every candidate ends at nodes of the same types: nothing to tell (see _category)
        else:
            kinds = sorted({c for cs in labels.values() for c in cs})
            cards = [self.type_cards(c) for c in kinds]
            got = (
                self._vectors([asked.text, *(x for pair in cards for x in pair)], embed) if vectors else None
            )
            # the asked word is the head word of the type's name ("company": TransportCompany): 1.0,
            # the most a cosine gives (not a classifier: "class" heads DrugClass and DiseaseClass
            # alike, the words around it tell); else, with an embedder, the best cosine with its cards
            by_type = {c: float(not asked.classifier and self._names_type(asked, c)) for c in kinds}
            if got is not None:
                sims = got[1:] @ got[0]
                by_type = {
                    c: max(by_type[c], float(sims[2 * i]), float(sims[2 * i + 1]))
                    for i, c in enumerate(kinds)
                }
            fits = {h: max((by_type[c] for c in cs), default=0.0) for h, cs in labels.items()}
        best = max(fits.values())
        t = self.settings.type_temperature
        return {h: math.exp((f - best) / t) for h, f in fits.items()}

    def _category(self, asked: AskedFor | None, ends: Sequence[Hop]) -> str | None:
        """The relation a classifier noun names ("what *kind* of film", "what *types* are ...")
        where node types tell nothing (every candidate ends at the same labels): a category is a
        value many things share, so the relation of the last hop whose ends are each reached by
        the most edges, when it shares ``category_sharing`` times more than any other relation's."""
        if asked is None or not asked.classifier or asked.at is None:
            return None
        if len({self._end_labels(h) for h in ends}) > 1:
            return None  # typed ends: the type fit reads the classifier's phrase ("drug class")
        best: dict[str, float] = {}
        for h in ends:
            best[h.relation] = max(best.get(h.relation, 0.0), self._sharing(h))
        ranked = sorted(best.items(), key=lambda kv: -kv[1])
        if not ranked or (len(ranked) > 1 and ranked[0][1] < self.settings.category_sharing * ranked[1][1]):
            return None
        return ranked[0][0]

    def _sharing(self, hop: Hop) -> float:
        """How many of the hop's edges reach each of its end nodes, on average (≥ 1): high for a
        relation to categories many things share (a genre, a drug class), 1 for one to things of
        their own (a film's director is seldom shared by hundreds of films)."""
        cached = self._shares.get(hop)
        if cached is None:
            ends = self._reached(hop.relation, self._walks_forward(hop))
            cached = self._shares[hop] = len(ends) / max(len(np.unique(ends)), 1) if len(ends) else 1.0
        return cached

    def _names_type(self, asked: AskedFor, label: int) -> bool:
        """The asked head word is the head word of the label's name, in any inflection (a shared
        stem, :func:`~cef.retrieve.pathwords.stem_match`: "vendors" names ``Vendor``)."""
        words = relation_words(self.graph.labels.names[label])[-1:]
        return any(stem_match(t, w, t, self._lemma(w)) for t in asked.lemmas for w in words)

    def _voiced(
        self,
        paths: Sequence[RelationPath],
        tokens: list[tuple[str, str]],
        at: int | None,
        strong: dict[str, list[int]],
    ) -> dict[str, bool]:
        """relation -> the direction the question's wording gives it (:func:`voiced_direction`), for
        the relations the anchor has both ways (a service that depends on services and is depended on)."""
        first = {(p[0].relation, p[0].forward) for p in paths}
        out: dict[str, bool] = {}
        for r, fwd in first:
            rt = self.graph.rel_types.get(r)
            if not fwd or (r, False) not in first or r not in strong or (rt is not None and rt.bidirectional):
                continue
            got = voiced_direction(self.words_of(r), tokens, at, strong[r])
            if got is not None:
                out[r] = got
        return out

    def hop_text(self, hop: Hop) -> str:
        w = self.words_of(hop.relation)
        rt = self.graph.rel_types.get(hop.relation)
        if hop.forward or (rt is not None and rt.bidirectional):
            return " ".join(w.forward)
        if w.inverse:
            return " ".join(w.inverse)
        return " ".join(w.forward) + " of"

    def verbalize(self, path: RelationPath) -> str:
        """``directed by, starred actors of``: the hops' words in walking order."""
        return ", ".join(self.hop_text(h) for h in path)

    def verbalize_relations(self, path: RelationPath) -> str:
        return ", ".join(" ".join(self.words_of(r).forward) for r in dict.fromkeys(h.relation for h in path))

    def describe(self, path: RelationPath) -> str:
        """``PRESCRIBED > INTERACTS_WITH`` (``<REL`` for a hop walked backward)."""
        return " > ".join(h.relation if h.forward else f"<{h.relation}" for h in path)

    def answer_text(self, hop: Hop) -> str:
        """Example values the hop reaches: what kind of answer a path ending with it gives."""
        cached = self.examples.get(hop)
        if cached is not None:
            return cached
        rt = self.graph.rel_types.get(hop.relation)
        counts = np.bincount(
            self._reached(hop.relation, hop.forward or bool(rt and rt.bidirectional)), minlength=1
        )
        top = np.argsort(-counts, kind="stable")[:_EXAMPLES]
        names = [self._name(int(p)) for p in top.tolist() if counts[p] > 0]
        text = ", ".join(n for n in names if n)
        self.examples[hop] = text
        return text

    def _name(self, pos: int) -> str:
        return self._names.get(pos, "")

    # ------------------------------------------------------------------ scoring
    def _vectors(self, texts: Sequence[str], embed: EmbedMany) -> np.ndarray | None:
        """The texts' vectors, the missing ones embedded in one batch and kept."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            got = embed(missing)
            if got is None:
                return None
            for t, v in zip(missing, np.asarray(got, dtype=np.float32), strict=True):
                self.vectors[t] = v
        return np.stack([self.vectors[t] for t in texts]) if texts else None

    def texts_of(self, path: RelationPath) -> tuple[str, str, str]:
        """What a path is compared with: its words, its distinct relations, its example answers."""
        got = self._texts.get(path)
        if got is None:
            if len(self._texts) >= _TEXTS_KEPT:
                self._texts.clear()
            got = self._texts[path] = (
                self.verbalize(path),
                self.verbalize_relations(path),
                self.answer_text(path[-1]) or self.hop_text(path[-1]),
            )
        return got

    def prepare(self, embed: EmbedMany, *, limit: int = 10_000, batch: int = 512) -> int:
        """Embed the texts of the relation paths the schema allows, up to 3 hops while there are at
        most ``limit`` of them, so that answering seldom embeds more than the question.
        Returns how many texts are embedded now."""
        paths = schema_paths(self.graph, min(self.settings.max_hops, 3), limit=limit)
        texts = list(dict.fromkeys(t for p in paths for t in self.texts_of(p)))
        todo = [t for t in texts if t not in self.vectors]
        for i in range(0, len(todo), batch):
            if self._vectors(todo[i : i + batch], embed) is None:
                break
        return len(self.vectors)

    def load_vectors(self, path: Path, space: str) -> int:
        """Add the text vectors saved in ``path`` by :meth:`save_vectors` for the embedding ``space``
        (the embedder's name); returns how many were read (0 when absent, stale or unreadable)."""
        if not path.exists():
            return 0
        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["space"]) != space:
                    log.info("saved path vectors %s are from another embedder; embedding again", path)
                    return 0
                texts, vectors = data["texts"].tolist(), np.asarray(data["vectors"], dtype=np.float32)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("ignoring saved path vectors %s: %s", path, exc)
            return 0
        if vectors.ndim != 2 or len(texts) != len(vectors):
            log.warning(
                "ignoring saved path vectors %s: %d texts for %s vectors", path, len(texts), vectors.shape
            )
            return 0
        for t, v in zip(texts, vectors, strict=True):
            self.vectors.setdefault(str(t), v)
        return len(texts)

    def save_vectors(self, path: Path, space: str) -> bool:
        """Write the text vectors beside the store (atomically), so the next open embeds nothing."""
        if not self.vectors:
            return False
        texts = list(self.vectors)
        tmp = path.with_name(path.name + ".tmp")
        try:
            with open(tmp, "wb") as f:
                np.savez(
                    f,
                    space=np.array(space),
                    texts=np.array(texts),
                    vectors=np.stack(list(self.vectors.values())),
                )
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("could not save the path vectors to %s: %s", path, exc)
            tmp.unlink(missing_ok=True)
            return False
        return True

    def rank(
        self,
        question: str,
        span: tuple[int, int] | None,
        paths: Sequence[RelationPath],
        *,
        embed: EmbedMany,
        explained_out: dict[RelationPath, float] | None = None,
        question_vectors: dict[str, np.ndarray] | None = None,
    ) -> list[tuple[float, RelationPath]]:
        """The paths with their scores, best first. ``explained_out`` receives, per path, the share
        of its hops a question word names (1.0: the question spells the whole path out; a noun that
        names the type the path ends at names one).
        ``question_vectors``: vectors of masked questions (:func:`masked_question`) embedded already."""
        s = self.settings
        masked = masked_question(question, span)
        tokens = self.lemmatize(masked)
        at = next((i for i, (t, _) in enumerate(tokens) if t == MASK.lower()), None)
        sharing = bool(SHARING_CUE.search(masked))
        where: dict[str, list[int]] = {}
        strong: dict[str, list[int]] = {}
        namings: dict[str, list[tuple[float, frozenset[int]]]] = {}
        relations = {h.relation for p in paths for h in p}
        verbs = frozenset(
            lem for r in relations for _, lem in (*self.words_of(r).cue, *self.words_of(r).soft)
        )
        asked = asked_for(tokens, at, self._lemma, verbs)
        heads = self._type_lemmas(heads=True)
        named = tokens
        if asked is not None and asked.at is not None and not asked.lemmas.isdisjoint(heads):
            # "which *vehicles* had faults ...": a noun that names a node type asks for the end of
            # the path (the type fit below), not for a relation whose name holds it (HAS_VEHICLE)
            named = [*tokens[: asked.at], (_TYPE_TOKEN, _TYPE_TOKEN), *tokens[asked.at + 1 :]]
        cues = name_cues(
            self.words_of,
            named,
            at,
            relations,
            where,
            strong,
            namings,
            soft=s.soft_cue,
        )
        category = self._category(asked, list(dict.fromkeys(p[-1] for p in paths)))
        if category is not None and asked is not None and asked.at is not None:
            # the classifier noun names the category relation, one hop, like its name would
            count, near = cues.get(category, (0.0, 10_000))
            cues[category] = (count + 1.0, min(near, abs(asked.at - at) if at is not None else asked.at + 1))
            namings.setdefault(category, []).append((1.0, frozenset({asked.at})))
            where.setdefault(category, []).append(asked.at)
            strong.setdefault(category, []).append(asked.at)
        shared = shared_relation(tokens, where) if sharing else None
        dists = {  # signed: negative before the anchor
            r: [i - at if at is not None else i + 1 for i in pos] for r, pos in strong.items()
        }

        mentioned = self._mentioned_types(tokens, asked.at if asked else None)
        if asked is not None:
            mentioned -= asked.lemmas
        has_vectors = self._has_embedder(embed)
        fit = self._asked_fit(asked, list(dict.fromkeys(p[-1] for p in paths)), embed, has_vectors)
        named_type = asked is not None and asked.at is not None and bool(fit)
        voiced = self._voiced(paths, tokens, at, strong)
        lexical: list[float] = []
        for p in paths:
            explained, order = explained_hops(p, cues, sharing, shared, dists, namings)
            if explained_out is not None:
                # a noun of the question that names the type the path ends at names its last hop's end
                typed = named_type and fit.get(p[-1], 0.0) >= 1.0
                explained_out[p] = min(1.0, (explained + typed) / len(p))
            visited = (
                len(mentioned & set().union(*(self._end_types(h) for h in p))) / len(mentioned)
                if mentioned
                else 0.0
            )
            lexical.append(
                s.cue * (explained - s.cue_cost * len(p))
                - s.length * (len(p) - 1)
                + s.order * order
                + s.answer_type * fit.get(p[-1], 0.0)
                + s.mentioned_type * visited
                + s.voice * (voiced.get(p[0].relation) == p[0].forward)
                - s.cue * (not sharing and _ends_coming_back(p) and cues.get(p[-1].relation, (0.0, 0))[0] < 2)
            )
        if not paths:
            return []
        qv = (question_vectors or {}).get(masked)
        if qv is None and has_vectors:
            got = embed([masked])
            qv = np.asarray(got, dtype=np.float32)[0] if got is not None else None
        if qv is None:
            out = list(zip(lexical, paths, strict=True))
        else:
            out = self._with_vectors(qv, paths, lexical, embed)
        out.sort(key=lambda x: -x[0])
        return out

    def _with_vectors(
        self, qv: np.ndarray, paths: Sequence[RelationPath], lexical: list[float], embed: EmbedMany
    ) -> list[tuple[float, RelationPath]]:
        """Word scores plus the embedding terms. A path whose texts are embedded (warm-up embeds
        those of the paths the schema allows, up to 3 hops) is scored from them; a deeper one, when
        a quick guess (:meth:`_estimate`) puts it within ``score_margin`` + ``estimate_slack``
        of the best embedded path, from vectors composed of its parts (:meth:`_composed`), so that
        answering embeds no path text beyond the few hop texts a graph has; the others are left
        out. The ``embed_limit`` best of the composed are then embedded and scored exactly (default
        none: the composition ranked MetaQA's and the services' paths the same, at no encoder call)."""
        s = self.settings
        texts = [self.texts_of(p) for p in paths]
        vec = self.vectors
        out: list[tuple[float, RelationPath]] = []
        fresh: list[int] = []
        for i, (p, t) in enumerate(zip(paths, texts, strict=True)):
            if all(x in vec for x in t):
                out.append((lexical[i] + self._terms(qv, t), p))
            else:
                fresh.append(i)
        if not fresh:
            return out
        best = max((x for x, _ in out), default=None)
        if best is not None:  # first a bound from lookups alone: only paths that may come near the best
            floor = best - s.score_margin - s.estimate_slack
            fresh = [i for i in fresh if lexical[i] + self._estimate(qv, paths[i], texts[i]) >= floor]
        hops = dict.fromkeys(h for i in fresh for h in paths[i])
        if self._vectors([x for h in hops for x in self.texts_of((h,))], embed) is None:
            out.extend((lexical[i], paths[i]) for i in fresh)
            return out
        guess = {i: lexical[i] + self._composed(qv, paths[i], texts[i]) for i in fresh}
        exact = sorted(fresh, key=lambda i: -guess[i])[: s.embed_limit]
        if exact and self._vectors([x for i in exact for x in texts[i]], embed) is not None:
            out.extend((lexical[i] + self._terms(qv, texts[i]), paths[i]) for i in exact)
            done = set(exact)
            fresh = [i for i in fresh if i not in done]
        out.extend((guess[i], paths[i]) for i in fresh)
        return out

    def _terms(self, qv: np.ndarray, texts: tuple[str, str, str]) -> float:
        """The embedding terms of a path whose three texts are embedded."""
        full, distinct, answer = (float(self.vectors[t] @ qv) for t in texts)
        return full + self.settings.distinct * distinct + self.settings.answer * answer

    def _estimate(self, qv: np.ndarray, path: RelationPath, texts: tuple[str, str, str]) -> float:
        """A quick guess at the embedding terms of a path whose texts are not embedded (dictionary
        lookups only): each text's cosine is its own, else its longest embedded prefix's."""
        n = self._embedded_prefix(path)
        prefix = self.texts_of(path[:n]) if n else None
        parts = []
        for k, t in enumerate(texts):
            v = self.vectors.get(t)
            if v is None and prefix is not None:
                v = self.vectors.get(prefix[k])
            parts.append(float(v @ qv) if v is not None else 0.0)
        return parts[0] + self.settings.distinct * parts[1] + self.settings.answer * parts[2]

    def _composed(self, qv: np.ndarray, path: RelationPath, texts: tuple[str, str, str]) -> float:
        """The embedding terms of a path whose texts are not embedded, from :meth:`composed_vectors`."""
        full, distinct, answer = (float(v @ qv) for v in self.composed_vectors(path))
        return full + self.settings.distinct * distinct + self.settings.answer * answer

    def composed_vectors(self, path: RelationPath) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectors for the three texts of ``path`` (:meth:`texts_of`): each one's own when it is
        embedded, else composed of embedded parts. The encoder mean-pools its tokens, so a text's
        vector is close to the word-weighted mean of its parts' vectors: the path's words are its
        longest embedded prefix's words plus each later hop's (:meth:`hop_text`), its distinct
        relations are each relation's words, and its answer text is its last hop's. Each hop's own
        texts (``texts_of((hop,))``) must be embedded."""
        vec = self.vectors
        texts = self.texts_of(path)

        def mean(parts: Sequence[str]) -> np.ndarray:
            w = np.asarray([max(1, len(t.split())) for t in parts], dtype=np.float32)
            v = (w[:, None] * np.stack([vec[t] for t in parts])).sum(axis=0)
            return v / max(float(np.linalg.norm(v)), 1e-12)

        full_v = vec.get(texts[0])
        if full_v is None:
            n = self._embedded_prefix(path)
            head = [self.texts_of(path[:n])[0]] if n else []
            full_v = mean(head + [self.texts_of((h,))[0] for h in path[n:]])
        distinct_v = vec.get(texts[1])
        if distinct_v is None:
            rels = dict.fromkeys(h.relation for h in path)
            distinct_v = mean([self.texts_of((Hop(r, True),))[1] for r in rels])
        return full_v, distinct_v, vec[self.texts_of(path[-1:])[2]]

    def _embedded_prefix(self, path: RelationPath) -> int:
        """Hops of the longest proper prefix of ``path`` whose words are embedded (0: none)."""
        return next((n for n in range(len(path) - 1, 0, -1) if self.texts_of(path[:n])[0] in self.vectors), 0)

    def _has_embedder(self, embed: EmbedMany) -> bool:
        """Whether ``embed`` gives vectors (probed once with a text that is kept)."""
        return self._vectors(["relation"], embed) is not None


@dataclass(frozen=True)
class AskedFor:
    """What kind of thing a question asks for: the words to compare with the ends of its paths
    (``text``), the lemmas of its head word and the head's token position (None: a question word
    alone, "who"); ``classifier``: the head is a classifier noun ("what *kind* of film"), the
    question asks for a category."""

    text: str
    lemmas: frozenset[str]
    at: int | None
    classifier: bool = False


def asked_for(
    tokens: list[tuple[str, str]],
    at: int | None,
    lemma: Callable[[str], str],
    verbs: frozenset[str] = frozenset(),
) -> AskedFor | None:
    """The kind of thing the question asks for, read with general English: the noun a "which" /
    "what" / "how many" or a request ("list all ...", "name the ...") opens ("*which vendors*",
    "what bike *models*", "what is the *genre* of", "which of the *plants*"; its head is its last
    word: "the plant *manager*" asks for a manager), else what the question word itself asks for
    ("who" a person, "where" a place, "when" a date; "who is the *manager*": a person who manages).
    None when the question names no kind ("what did X write").

    No tagger tells nouns from verbs, so the noun ends before a later word that is a form of a
    relation's verb (``verbs``: lemmas of the graph's relation words: "which cluster *runs*") or an
    inflected -ed / -ing form ("which team *looked* after", "name the team *owning* X"), and
    right after "which" / "what" a last word followed by what a verb takes (a determiner, a
    preposition, the anchor: "which team *looked* after", "which service *writes* to X") is the
    verb, not the noun (after a copula it is a noun phrase: "who is the plant manager of X")."""
    wh = next((i for i, (t, _) in enumerate(tokens) if _wh_word(t) and i != at), None)
    copula = False
    if wh is None:
        # a request asks too: a verb, then what it asks for ("*list* all services that ...",
        # "*name* the team that ...", "give me the owners of X")
        j = 1
        while j < len(tokens) and tokens[j][0] in ("me", "us"):
            j += 1
        if (
            not tokens
            or tokens[0][0] in FUNCTION_WORDS
            or j >= len(tokens)
            or tokens[j][0] not in _QUANTIFIERS
        ):
            return None
        word, opened = "", True
    else:
        word = _wh_word(tokens[wh][0])
        j = wh + 1
        contracted = tokens[wh][0] != word  # "who's the lead"
        opened = word in ("which", "what")
        if word == "how" and j < len(tokens) and tokens[j][0] in ("many", "much"):  # "how many services"
            j += 1
            opened = True
        copula = contracted or (j < len(tokens) and tokens[j][0] in _COPULAS)
        if copula:  # "what is the genre", "who was the lead": a noun phrase, no verb in it
            j += 0 if contracted else 1
            opened = True
        elif opened and j + 1 < len(tokens) and tokens[j][0] == "of":  # "which of the vendors"
            j += 1
    while opened and j < len(tokens) and tokens[j][0] in _QUANTIFIERS:
        j += 1
    noun: list[int] = []
    while opened and j < len(tokens) and len(noun) < 3:
        t, lem = tokens[j]
        if j == at or t in FUNCTION_WORDS or t in QUESTION_WORDS or len(t) < 2:
            break
        if noun and (lem in verbs or (lem != t and t.endswith(("ed", "ing")))):
            break  # "which cluster *runs*", "which team *looked* after": a verb ends the noun
        noun.append(j)
        j += 1
    if not copula and len(noun) > 1 and (j == at or (j < len(tokens) and tokens[j][0] in _VERB_OBJECTS)):
        noun.pop()  # "which cluster runs the ...": the last word is the verb
    general = _WH_ASKS.get(word)
    if not noun:
        return AskedFor(general, frozenset({general}), None) if general else None
    head = noun[-1]
    t, lem = tokens[head]
    lemmas = frozenset({t, lem, lemma(t)})
    if not lemmas.isdisjoint(CLASSIFIER_NOUNS):
        # a classifier says little alone: the words around it say of what ("drug class", "class
        # of disease")
        words = [tokens[i][0] for i in noun]
        if (
            j + 1 < len(tokens)
            and tokens[j][0] == "of"
            and j + 1 != at
            and tokens[j + 1][0] not in FUNCTION_WORDS
        ):
            words += ["of", tokens[j + 1][0]]
        return AskedFor(" ".join(words), lemmas, head, classifier=True)
    return AskedFor(f"{general} {t}" if general else t, lemmas, head)


def _wh_word(token: str) -> str:
    """The question word ``token`` is, also contracted with a copula ("who's": who), else ""."""
    if token in QUESTION_WORDS:
        return token
    head, _, rest = token.partition("'")
    return head if rest == "s" and head in QUESTION_WORDS else ""


def _ends_coming_back(path: RelationPath) -> bool:
    """The last hop walks straight back along the one before: things like the one before it ("the
    services its on-call engineer is on call for"), which a question asks with a sharing word or by
    naming the relation twice ("movies starred by actors in X")."""
    return len(path) > 1 and path[-1].relation == path[-2].relation and path[-1].forward != path[-2].forward


_cache: weakref.WeakKeyDictionary[EngineState, PathScorer] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def path_scorer(state: EngineState, settings: PathSettings | None = None) -> PathScorer:
    """The scorer of the engine's current graph (words rebuilt when the graph changed, vectors kept)."""
    g = state.graph
    stamp = (id(g), g.generation)
    settings = settings or PathSettings()
    with _lock:
        cur = _cache.get(state)
        if cur is not None and cur.stamp == stamp and cur.settings == settings:
            return cur
    scorer = PathScorer(g, stamp, settings, default_lemmatizer())
    if cur is not None:
        scorer.vectors = cur.vectors  # texts embed the same whatever the graph generation
    _fill_example_names(state, scorer)
    with _lock:
        _cache[state] = scorer
    return scorer


def _fill_example_names(state: EngineState, scorer: PathScorer) -> None:
    """Names of the most reached nodes of each relation and direction (the hops' example answers)
    and of a few nodes of each label (:meth:`PathScorer.type_cards`)."""
    g = scorer.graph
    n_edges = len(g.edge_ids)
    if not n_edges:
        return
    alive = g.e_alive.view[:n_edges]
    rel = g.e_rel.view[:n_edges].astype(np.int64)
    wanted: set[int] = set()
    # a few nodes of each label, those with the most typed edges first (the best known members)
    ends = np.concatenate([g.e_src.view[:n_edges][alive], g.e_dst.view[:n_edges][alive]]).astype(np.int64)
    degree = np.bincount(ends, minlength=len(g.node_ids))
    labels = g.node_label.view[: len(g.node_ids)].astype(np.int64)
    live = np.flatnonzero(g.node_alive.view[: len(g.node_ids)] & (degree > 0))
    by_label = live[np.lexsort((-degree[live], labels[live]))]
    lab = labels[by_label]
    for code in np.unique(lab).tolist():
        scorer._members[int(code)] = by_label[lab == code][:_EXAMPLES].tolist()
        wanted.update(scorer._members[int(code)])
    for code in np.unique(rel[alive]).tolist():
        mask = alive & (rel == code)
        for ends in (g.e_dst.view[:n_edges][mask], g.e_src.view[:n_edges][mask]):
            counts = np.bincount(ends.astype(np.int64))
            wanted.update(np.argsort(-counts, kind="stable")[:_EXAMPLES].tolist())
    nodes = state.get_nodes([g.node_ids[p] for p in sorted(wanted) if g.node_alive[p]])
    by_id = {n.id: n.name for n in nodes}
    scorer._names = {p: by_id[g.node_ids[p]] for p in wanted if g.node_ids[p] in by_id}
