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
  (answer_type_generic when only a question word says it: "who", "where"; answer_type_named when a
  noun names the type by its words: its name's head word, its members' names, its description)
+ mentioned_type · (share of the other types the question names that the path walks through on the
  way to its end, when a kind is asked)
+ voice · (the first hop goes the way the wording at the anchor says, or the last hop the way the
  wording at the asked word says: "*who supervises* the nurses", for a relation walked both ways)
+ voice · (the first hop walks a sequence relation the way an order word says: "the concert *after* X",
  :mod:`cef.retrieve.pathorder`)
+ phrase_hop · min(hops no question word explains, relational phrases no relation's words name)
− cue · (the path ends walking straight back, and no sharing word or second naming asks for it)``

A *relational phrase* (:func:`~cef.retrieve.pathcues.unnamed_phrases`) is a run of question words
that relate things rather than name them, read by word order and inflection: "who *runs* X",
"whom does the curator of X *answer* to", "the *boss* of", "in *charge* of". One that names no
candidate relation (a synonym: "runs" for ``HEADED_BY``) still asks for a hop, so each accounts
for one hop no word explains: such a hop costs less than one nothing asks for (``phrase_hop`` <
``cue · cue_cost``), and the asked and mentioned types and the embedding, not the missing
naming, decide between stopping a hop short and walking on.

Every weight is a field of :class:`~cef.retrieve.presets.PathSettings` (its description says where its
value came from). Types are the head words of node labels (``DrugClass``: class).

**What is asked** (:func:`~cef.retrieve.pathtypes.asked_for`, in :mod:`cef.retrieve.pathtypes`
with the node-type half of the scorer): the noun a "which" / "what" opens (its head: "the plant
*manager*"), else what the question word asks in general English ("who": a person). Its fit with
each last hop (:meth:`~cef.retrieve.pathtypes.PathTypes._asked_fit`) is, by the embedder, the best
cosine of the asked words with the names and members of the types the hop reaches ("vendors" fits
``Supplier``), 1.0 when the asked word heads a type's name or when the type's own nodes call
themselves by it (:meth:`~cef.retrieve.pathtypes.PathTypes._members_named`: "which *units*" and
"Majors Unit", "which *journals*" and ``type: journal``) or the relations' descriptions call them
so (:func:`~cef.retrieve.pathtypes.described_ends`: "an exhibition occupies a gallery *room*": "in
which *room*" asks for a ``Gallery``; such a word names a mentioned type too); the best fitting end gets the whole
``answer_type``, the others ``exp(-gap / type_temperature)`` of it (``generic_type_temperature`` for
a question word alone, a broad kind several types fit alike), so a path that ends at the asked
type beats a shorter one that stops on the way. The question word that asks is the last
sentence's ("X replaced a coach *who* ... *Which* club ..."); a noun word that names a node type
heads the asked noun ("what contractual *obligations* currently ..."), and the asked noun names no
relation by its description ("which *groups*": not PART_OF's "a lab or group is part of"). A classifier noun ("what *kind* of film")
where every end has the same type names the relation whose values the most things share
(:meth:`~cef.retrieve.pathtypes.PathTypes._category`).

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

import threading
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cef.extract.lemmas import WORD
from cef.retrieve.pathagent import agent_relations
from cef.retrieve.pathclassify import classification_relation
from cef.retrieve.pathcues import (
    RelationWords,
    answer_verb_relations,
    explained_many,
    name_cues,
    unnamed_phrases,
    voiced_first,
    voiced_last,
)
from cef.retrieve.pathembed import PathEmbedding
from cef.retrieve.pathorder import order_cues
from cef.retrieve.pathshapes import schema_paths
from cef.retrieve.pathtypes import (
    EXAMPLES,
    AskedFor,
    EmbedMany,
    PathTypes,
    asked_for,
    fill_example_names,
)
from cef.retrieve.pathwalkon import embedding_parts, end_fits, hold_below, modifiers, unasked_backs
from cef.retrieve.pathwords import (
    FUNCTION_WORDS,
    MASK,
    SHARING_CUE,
    Hop,
    Lemmatize,
    RelationPath,
    content_words,
    default_lemmatizer,
    masked_question,
    possessive,
    relation_words,
    shared_relation,
    stem_match,
)
from cef.retrieve.presets import PathSettings
from cef.retrieve.textvectors import read_text_vectors, write_text_vectors

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.retrieve.ports import EngineView as EngineState
    from cef.schema.registry import SchemaRegistry


__all__ = ["AskedFor", "PathScorer", "asked_for", "path_scorer"]


#: stands in for a question word that names no relation (a content word: it ends a naming)
_TYPE_TOKEN = "<type>"
#: texts of this many paths are kept per graph generation (a schema's paths are far fewer)
_TEXTS_KEPT = 200_000


@dataclass
class PathScorer(PathTypes, PathEmbedding):
    """Scores relation paths against questions for one graph generation (see the module doc)."""

    graph: GraphIndex
    stamp: tuple[int, int]
    settings: PathSettings
    lemmatize: Lemmatize
    schema: SchemaRegistry  # the knowledge base's registry: what each relation type means
    relations: dict[str, RelationWords] = field(default_factory=dict)
    examples: dict[Hop, str] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    _names: dict[int, str] = field(default_factory=dict)  # example answers: node position -> name
    _texts: dict[RelationPath, tuple[str, str, str]] = field(default_factory=dict)  # texts_of, per path
    _types: dict[str, frozenset[str]] = field(default_factory=dict)  # _type_lemmas
    _ends: dict[Hop, frozenset[str]] = field(default_factory=dict)  # _end_types, per hop
    # type_cards, per label code and whether described
    _cards: dict[tuple[int, bool], tuple[str, str]] = field(default_factory=dict)
    _shares: dict[Hop, float] = field(default_factory=dict)  # _sharing, per hop
    _labels: dict[Hop, tuple[int, ...]] = field(default_factory=dict)  # _end_labels, per hop
    # _labels_after, per hop and the labels it leaves from
    _after: dict[tuple[Hop, tuple[int, ...]], tuple[int, ...]] = field(default_factory=dict)
    _members: dict[int, list[int]] = field(default_factory=dict)  # label code -> a few node positions
    # label code -> the words that say what each of a sample of its nodes is (:func:`kind_words`)
    _member_words: dict[int, list[frozenset[str]]] = field(default_factory=dict)
    _naming: dict[tuple[str, str], bool] = field(default_factory=dict)  # _names_relation, per word
    _said: list[tuple[str, str]] | None = None  # _said_of_types
    _modifiers: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)  # _described_modifiers

    # ------------------------------------------------------------------ words
    def _names_relation(self, token: tuple[str, str]) -> bool:
        """Whether a question word (token, lemma) names one of the graph's relations by a name word
        (:func:`~cef.retrieve.pathwords.stem_match`), kept per word."""
        got = self._naming.get(token)
        if got is None:
            if len(self._naming) >= _TEXTS_KEPT:
                self._naming.clear()
            t, lt = token
            got = self._naming[token] = any(
                stem_match(t, w, lt, lw) for r in self.graph.relations.names for w, lw in self.words_of(r).cue
            )
        return got

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
        rt = self.schema.relation_type(relation)
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
        top = np.argsort(-counts, kind="stable")[:EXAMPLES]
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
        saved = read_text_vectors(path, space)
        for t, v in saved.items():
            self.vectors.setdefault(t, v)
        return len(saved)

    def save_vectors(self, path: Path, space: str) -> bool:
        """Write the text vectors beside the store (atomically), so the next open embeds nothing."""
        return write_text_vectors(path, space, self.vectors)

    def rank(
        self,
        question: str,
        span: tuple[int, int] | None,
        paths: Sequence[RelationPath],
        *,
        embed: EmbedMany,
        explained_out: dict[RelationPath, float] | None = None,
        question_vectors: dict[str, np.ndarray] | None = None,
        others: Sequence[tuple[int, int]] = (),
        parts_out: dict[RelationPath, dict[str, float]] | None = None,
        anchor: int | None = None,
    ) -> list[tuple[float, RelationPath]]:
        """The paths with their scores, best first. ``explained_out`` receives, per path, the share
        of its hops a question word names (1.0: the question spells the whole path out; a noun that
        names the type the path ends at names one).
        ``question_vectors``: vectors of masked questions (:func:`masked_question`) embedded already.
        ``others``: spans of the other things the question names (other anchors' mentions): no
        noun that says what is asked runs into one. ``parts_out`` receives, per path, the terms of its
        score (what each weight added; ``embedding``: the cosine terms), for explaining a ranking.
        ``anchor``: the node position the paths leave from: the types each path ends at are those
        it reaches from the anchor's type (:meth:`end_labels`), else those its last hop reaches."""
        s = self.settings
        masked = masked_question(question, span)
        tokens = self.lemmatize(masked)
        at = next((i for i, (t, _) in enumerate(tokens) if t == MASK.lower()), None)
        sharing = bool(SHARING_CUE.search(masked))
        asked = self._asked(question, masked, tokens, at, paths, others, possessive(question, span))
        cues, where, strong, namings = self._cues(tokens, at, asked, paths)
        ordered = order_cues(self.schema.relation_type, tokens, at, paths, (cues, where, strong, namings))
        shared = shared_relation(tokens, where) if sharing else None
        agent = self._agent(tokens, asked, paths, where)
        turns = (self._type_lemmas(heads=True), self._end_types)  # a type's noun: a turn at that type
        back = set() if sharing else unasked_backs(tokens, where, cues, paths, turns)
        # signed: negative before the anchor
        dists = {r: [i - at if at is not None else i + 1 for i in pos] for r, pos in strong.items()}
        # the types a question mentions besides the asked one lie on the way to the answer; with no
        # asked kind one of them may be the answer's own
        mentioned = self._mentioned_types(tokens, asked.at if asked else None)
        if asked is not None:
            mentioned -= asked.lemmas
        has_vectors = self._has_embedder(embed)
        start = int(self.graph.node_label.view[anchor]) if anchor is not None else None
        end_of = {p: self.end_labels(p, start) for p in paths}  # the types each path reaches from the anchor
        fit, named_end = self._asked_fit(asked, list(dict.fromkeys(end_of.values())), embed, has_vectors)
        named_type = asked is not None and asked.at is not None and bool(fit)
        voiced = voiced_first(self.words_of, self.graph.rel_types, paths, tokens, at, strong)
        here = None if asked is None else asked.at if asked.at is not None else asked.wh
        voiced_end = voiced_last(self.words_of, self.graph.rel_types, paths, tokens, here, strong)
        type_weight = self._type_weight(asked, named_end, agent, (tokens, here, strong, where), end_of, fit)
        # relational phrases no candidate relation's words name ("who *runs*"): each asks for a hop
        phrases = self._phrases(question, masked, tokens, at, others, where, asked) if s.phrase_hop > 0 else 0
        hops = explained_many(paths, cues, sharing, shared, dists, namings)
        fits = end_fits(hops, fit, end_of, named_end, (tokens, asked, s.soft_cue), mentioned, self._end_types)
        lexical: list[float] = []
        for p, (explained, order) in zip(paths, hops, strict=True):
            if explained_out is not None:
                # a noun of the question that names the type the path ends at names its last hop's end
                typed = named_type and fit.get(end_of[p], 0.0) >= 1.0
                explained_out[p] = min(1.0, (explained + typed + (p[-1].relation in agent)) / len(p))
            visited = self._visited(mentioned, p[:-1] if asked is not None else p)
            parts = {
                "cue": s.cue * (explained - s.cue_cost * len(p)),
                "length": -s.length * (len(p) - 1),
                "order": s.order * order,
                "answer_type": type_weight * fits[p],
                "mentioned_type": s.mentioned_type * visited,
                # an asked agent noun ("which *actors*") names the last hop: the path ends at its doer
                "agent": s.agent_noun * (p[-1].relation in agent),
                # the wording gives the direction of the first hop (at the anchor) or of the last hop
                # of a longer path (at the answer): once, so a path is not paid twice for one verb
                "voice": s.voice
                * (
                    voiced.get(p[0].relation) == p[0].forward
                    or (len(p) > 1 and voiced_end.get(p[-1].relation) == p[-1].forward)
                ),
                "sequence": s.voice * (ordered.get(p[0].relation, (0, not p[0].forward))[1] == p[0].forward),
                "phrase_hop": s.phrase_hop * min(max(0.0, len(p) - explained), phrases),
                "coming_back": -s.cue * (p in back),
            }
            if parts_out is not None:
                parts_out[p] = parts
            lexical.append(sum(parts.values()))
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
        if parts_out is not None:
            embedding_parts(parts_out, out, dict(zip(paths, lexical, strict=True)))
        # a detour, a loop back to a type, a hop past the answer: each held below the shorter path
        held = (fits, namings, modifiers(tokens, asked), (mentioned, self._end_types))
        out = hold_below(out, paths, back, (start, self.end_labels), held)
        out.sort(key=lambda x: -x[0])
        return out

    def _type_weight(
        self,
        asked: AskedFor | None,
        named: bool,
        agent: Collection[str],
        wording: tuple[list[tuple[str, str]], int | None, dict[str, list[int]], dict[str, list[int]]],
        end_of: dict[RelationPath, tuple[int, ...]],
        fit: dict[tuple[int, ...], float],
    ) -> float:
        """The answer_type weight: ``answer_type_named`` when a noun of the question names an end
        type by its words (``named``), so stopping short of that type costs more, unless the
        relations the question says the answer has (named by the asked agent noun or its modifier,
        ``agent``: "which *post-production* houses", or by the verb right after it, a name or description
        word: "which company *was distributing*", "*built*"; ``wording``: the tokens, the asked noun's
        place, where each relation is named) end at no type the noun names, and the noun names no type's every
        word (:meth:`names_fully`): then the noun is a broader word for the relation's end
        ("company" for a distributor) and the relation decides. ``answer_type_generic`` when only a
        question word ("who", "where") says what is asked, less than a noun does."""
        s = self.settings
        if named:
            tokens, here, strong, where = wording
            said = {*agent, *answer_verb_relations(tokens, here, strong, where)}
            if (
                not said
                or self.names_fully(asked, end_of.values(), tokens)
                or any(p[-1].relation in said and fit.get(e, 0.0) >= 1.0 for p, e in end_of.items())
            ):
                return s.answer_type_named
        return s.answer_type if asked is None or asked.at is not None else s.answer_type_generic

    def _phrases(
        self,
        question: str,
        masked: str,
        tokens: list[tuple[str, str]],
        at: int | None,
        others: Sequence[tuple[int, int]],
        where: dict[str, list[int]],
        asked: AskedFor | None,
    ) -> int:
        """How many relational phrases of the question no candidate relation's words name
        (:func:`~cef.retrieve.pathcues.unnamed_phrases`); ``where``: the positions of the words that
        name each candidate relation (:meth:`_cues`)."""
        skip = {at} if at is not None else set()
        skip.update(self._mention_at(question, others, tokens, at))
        # a word sharing asks for a hop back, the cues count it ("films that *share* actors")
        skip.update(i for i, (t, _) in enumerate(tokens) if SHARING_CUE.fullmatch(t))
        named = {i for pos in where.values() for i in pos}
        # every word that names a candidate relation, also one a naming before it took ("the
        # director that *directed* X")
        named.update(i for i, tok in enumerate(tokens) if self._names_relation(tok))
        asked_named = asked is not None and asked.at is not None and asked.at in named
        return unnamed_phrases(masked, tokens, frozenset(skip), frozenset(named), end_named=asked_named)

    def _cues(
        self,
        tokens: list[tuple[str, str]],
        at: int | None,
        asked: AskedFor | None,
        paths: Sequence[RelationPath],
    ) -> tuple[
        dict[str, tuple[float, int]],
        dict[str, list[int]],
        dict[str, list[int]],
        dict[str, list[tuple[float, frozenset[int]]]],
    ]:
        """The question's namings of the candidate relations (:func:`name_cues`: cues, their
        positions, those of name words, each naming), a classifier noun's category relation among
        them."""
        s = self.settings
        where: dict[str, list[int]] = {}
        strong: dict[str, list[int]] = {}
        namings: dict[str, list[tuple[float, frozenset[int]]]] = {}
        relations = {h.relation for p in paths for h in p}
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
            no_soft=frozenset({asked.at}) if asked is not None and asked.at is not None else frozenset(),
            # a noun naming a node type names the type, not a relation by a verb made from it
            nouns=frozenset(
                i
                for i, (t, lt) in enumerate(tokens)
                if (t in heads or lt in heads) and not t.endswith(("ed", "ing"))
            ),
        )
        ends = list(dict.fromkeys(p[-1] for p in paths))
        category = self._category(asked, ends) or classification_relation(asked, ends, self, cues)
        if category is not None and asked is not None and asked.at is not None:
            # the classifier noun names the category relation, one hop, like its name would
            count, near = cues.get(category, (0.0, 10_000))
            cues[category] = (count + 1.0, min(near, abs(asked.at - at) if at is not None else asked.at + 1))
            namings.setdefault(category, []).append((1.0, frozenset({asked.at})))
            where.setdefault(category, []).append(asked.at)
            strong.setdefault(category, []).append(asked.at)
        return cues, where, strong, namings

    def _visited(self, mentioned: frozenset[str], on_way: RelationPath) -> float:
        """The share of the ``mentioned`` types (besides the asked one) the hops ``on_way`` reach."""
        if not mentioned:
            return 0.0
        return len(mentioned & set().union(*(self._end_types(h) for h in on_way))) / len(mentioned)

    def _agent(
        self,
        tokens: list[tuple[str, str]],
        asked: AskedFor | None,
        paths: Sequence[RelationPath],
        where: dict[str, list[int]],
    ) -> frozenset[str]:
        """The candidate relations the asked noun names as their doer (:func:`agent_relations`: "which
        *actors*", "the *director*"), less those its name words already count as named (``where``:
        the cues pay for them), and those a modifier of the noun names ("which *post-production*
        houses": the houses doing it); none when the noun names a node type (the type fit reads it)."""
        heads = self._type_lemmas(heads=True)
        if asked is None or asked.at is None or not asked.lemmas.isdisjoint(heads):
            return frozenset()
        t, lt = tokens[asked.at]
        relations = {p[-1].relation for p in paths}
        before = asked.at - 1  # a modifier: "the *station* commander" (a compound a description may hold)
        opener = asked.wh if asked.wh is not None else -1
        modifier = tokens[before] if before > opener and tokens[before][0] not in FUNCTION_WORDS else None
        named = agent_relations(t, lt, relations, self.words_of, self._lemma, modifier)
        got = {r for r in named if asked.at not in where.get(r, ())}
        i = asked.at - 1
        while i > (asked.wh if asked.wh is not None else -1) and tokens[i][0] not in FUNCTION_WORDS:
            if not {*tokens[i]} & heads:  # a modifier naming a type says where the path goes through
                got.update(r for r in relations if i in where.get(r, ()))
            i -= 1
        return frozenset(got)

    def _has_embedder(self, embed: EmbedMany) -> bool:
        """Whether ``embed`` gives vectors (probed once with a text that is kept)."""
        return self._vectors(["relation"], embed) is not None


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
    scorer = PathScorer(g, stamp, settings, default_lemmatizer(), state.schema)
    if cur is not None:
        scorer.vectors = cur.vectors  # texts embed the same whatever the graph generation
    fill_example_names(state, scorer)
    with _lock:
        _cache[state] = scorer
    return scorer
