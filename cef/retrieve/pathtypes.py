"""What a question asks for, and how the node types a relation path ends at fit it.

**What is asked** (:func:`~cef.retrieve.pathasked.asked_for`, in :mod:`~cef.retrieve.pathasked`): the noun a "which" / "what" opens (its head: "the plant
*manager*"), else what the question word asks in general English ("who": a person), read with
general English only (no tagger, no domain words).

**How the ends fit** (:class:`PathTypes`, the node-type half of
:class:`~cef.retrieve.pathscore.PathScorer`): the types of the nodes each hop reaches (the head
words of their labels: ``DrugClass`` is a class), the types a question names besides what it asks
for, the fit of what is asked with each last hop (:meth:`PathTypes._asked_fit`) and, for a
classifier noun ("what *kind* of film"), the relation whose values the most things share
(:meth:`PathTypes._category`). The weights are fields of :class:`~cef.retrieve.presets.PathSettings`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from cef.extract.lemmas import WORD
from cef.retrieve.english import CLASSIFIER_NOUNS, word_forms
from cef.retrieve.pathagent import agent_noun
from cef.retrieve.pathasked import (
    AskedFor,
    asked_for,
    asks_broad_kind,
    described_ends,
    described_modifiers,
    heads_asked,
    last_sentence,
)
from cef.retrieve.pathwords import (
    FUNCTION_WORDS,
    PREPOSITIONS,
    Hop,
    Lemmatize,
    RelationPath,
    relation_words,
    stem_match,
)

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.model import Node
    from cef.retrieve.pathcues import RelationWords
    from cef.retrieve.ports import EngineView as EngineState
    from cef.retrieve.presets import PathSettings
    from cef.schema.registry import SchemaRegistry

__all__ = [
    "CLASSIFIER_NOUNS",
    "EXAMPLES",
    "AskedFor",
    "EmbedMany",
    "PathTypes",
    "asked_for",
    "described_ends",
    "fill_example_names",
    "kind_words",
    "last_sentence",
]


#: texts -> their vectors, one row each (None without an embedder)
EmbedMany = Callable[[Sequence[str]], np.ndarray | None]


#: example answers shown per hop and members per node type (:meth:`PathTypes.type_cards`)
EXAMPLES = 5
#: nodes of each type (the most connected first) whose :func:`kind_words` are read, once per graph state
TYPE_SAMPLE = 20
#: a string property value of at most this many words may say what the node is (``type: journal``)
_KIND_VALUE_WORDS = 3


def _name_head(text: str) -> str | None:
    """The head word of a name, in general English: the last word before a preposition ("*Journal*
    of Machine Reasoning", "International *Conference* on ..."), else the last word ("Majors *Unit*",
    "Premier *League*"); None for a name of one word (a name, not a kind: "Finance")."""
    words = [w.lower() for w in WORD.findall(text)]
    cut = next((i for i, w in enumerate(words) if i > 0 and w in PREPOSITIONS), len(words))
    words = words[:cut]
    return words[-1] if len(words) > 1 and not words[-1].isdigit() else None


def kind_words(node: Node) -> frozenset[str]:
    """Words that say what kind of thing a node is, as its own data writes it: the head words of its
    name and aliases ("Majors *Unit*", "legal *team*") and short string property values (``type:
    journal``)."""
    props = node.properties
    aliases = props.get("aliases")
    texts = (
        [node.name, *(a for a in aliases if isinstance(a, str))] if isinstance(aliases, list) else [node.name]
    )
    out = {h for h in map(_name_head, texts) if h}
    for key, value in props.items():
        if (
            key not in ("name", "aliases")
            and isinstance(value, str)
            and 0 < len(value.split()) <= _KIND_VALUE_WORDS
        ):
            words = WORD.findall(value.lower())
            if words and not any(c.isdigit() for c in value):
                out.add(words[-1] if len(words) == 1 else _name_head(value) or words[-1])
    return frozenset(out)


class PathTypes:
    """The node-type half of :class:`~cef.retrieve.pathscore.PathScorer` (a base it inherits):
    what the nodes a hop reaches are, and how well they fit what a question asks for. The fields
    are the scorer's; ``_vectors`` is its embedding cache."""

    graph: GraphIndex
    settings: PathSettings
    lemmatize: Lemmatize
    _names: dict[int, str]
    _members: dict[int, list[int]]
    _member_words: dict[int, list[frozenset[str]]]
    _types: dict[str, frozenset[str]]
    _ends: dict[Hop, frozenset[str]]
    _cards: dict[tuple[int, bool], tuple[str, str]]
    _shares: dict[Hop, float]
    _labels: dict[Hop, tuple[int, ...]]
    _after: dict[tuple[Hop, tuple[int, ...]], tuple[int, ...]]
    _said: list[tuple[str, str]] | None
    _modifiers: dict[int, list[tuple[str, ...]]]
    schema: SchemaRegistry

    def _vectors(self, texts: Sequence[str], embed: EmbedMany) -> np.ndarray | None:
        raise NotImplementedError  # PathScorer._vectors

    def words_of(self, relation: str) -> RelationWords:
        raise NotImplementedError  # PathScorer.words_of

    def relation_card(self, relation: str, *, examples: bool = True) -> str:
        raise NotImplementedError  # PathScorer.relation_card

    def _names_relation(self, token: tuple[str, str]) -> bool:
        raise NotImplementedError  # PathScorer._names_relation

    def _described_as(self, asked: AskedFor, label: int) -> float:
        """1.0 when the relations' descriptions call the label's nodes what is asked
        (:func:`described_ends`: "a gallery room" at the end of HELD_IN, whose targets are
        ``Gallery``, so "in which *room*" asks for a gallery); else 0. The schema's own words for
        its types, like :meth:`_members_named` reads the members' words."""
        if asked.at is None or asked.classifier:
            return 0.0
        words = self._described_words(label)
        if any(stem_match(t, w, t, self._lemma(w)) for t in asked.lemmas for w in words):
            return 1.0
        # a modifier before the head ("an *animal* patient") names the nodes only as the very word:
        # a derivation names an act or a quality of them ("a *conservation* treatment" is no
        # conservator, "a *musical* genre" no musician)
        said = {
            x
            for m in self._described_modifiers(label)
            for w in m
            for x in (w, self._lemma(w), *word_forms(w, self._lemma(w)))
        }
        return float(bool(asked.lemmas & said))

    def _described_modifiers(self, label: int) -> list[tuple[str, ...]]:
        """The words the relations' descriptions put before the label's head word
        (:func:`described_modifiers`: "*an animal* patient" for ``Patient``) when they all put the
        same words there: what kind of thing its nodes are, in the schema's words. A modifier that is a word of the
        label's own name says nothing more, and one that is another label's head word names another
        thing ("a *gallery* room": a room of a gallery), so neither counts (kept per label)."""
        cached = self._modifiers.get(label)
        if cached is not None:
            return cached
        g = self.graph
        own = relation_words(g.labels.names[label])
        found: dict[tuple[str, ...], int] = {}
        if own:
            head = self._lemma(own[-1])
            others = self._type_lemmas(heads=True)
            for relation in g.relations.names:
                rt = self.schema.relation_type(relation)
                if rt is None or not rt.description:
                    continue
                reached = np.concatenate([self._reached(relation, True), self._reached(relation, False)])
                if label not in np.unique(g.node_label.view[reached]).tolist():
                    continue
                for words in described_modifiers(rt.description, lambda w: self._lemma(w) == head):
                    kept = tuple(w for w in words if w not in own)
                    if not any(w in others or self._lemma(w) in others for w in kept):
                        found[kept] = found.get(kept, 0) + 1
        # descriptions that qualify the type in one way, every time they name it, say what its
        # nodes are ("an animal patient" throughout); a bare "a manager" beside "a line manager"
        # names a role some of them play, which the type is not
        cached = self._modifiers[label] = list(found) if len(found) == 1 and () not in found else []
        return cached

    def _describe_types(self) -> None:
        """Fill ``_types["described <label code>"]`` for every label: the words the descriptions of
        the relations at its nodes call them (:func:`described_ends`)."""
        g = self.graph
        found: dict[int, set[str]] = {c: set() for c in range(len(g.labels.names))}
        for relation in g.relations.names:
            subject, obj = described_ends(self.relation_card(relation, examples=False))
            for words, forward in ((obj, True), (subject, False)):
                if not words:
                    continue
                for c in np.unique(g.node_label.view[self._reached(relation, forward)]).tolist():
                    found.setdefault(int(c), set()).update(words)
        for c, said in found.items():
            self._types[f"described {c}"] = frozenset(said)

    def _asked(
        self,
        question: str,
        masked: str,
        tokens: list[tuple[str, str]],
        at: int | None,
        paths: Sequence[RelationPath],
        others: Sequence[tuple[int, int]],
        possessive: bool = False,
    ) -> AskedFor | None:
        """What the question asks for (:func:`asked_for`), read with the candidate relations' words
        as verbs, the other named things' positions and the graph's node types; ``possessive``: the
        anchor's mention is in the possessive ("X's")."""
        relations = {h.relation for p in paths for h in p}
        # a description's agent noun names a doer, not an act ("led by a watch *commander*"): no
        # verb ending the asked noun ("who is X's watch *commander*"); a name's words stay verbs
        verbs = frozenset(
            lem
            for r in relations
            for w, lem in (*self.words_of(r).cue, *self.words_of(r).soft)
            if (w, lem) in self.words_of(r).cue or not agent_noun(w, lem)
        )
        return asked_for(
            tokens,
            at,
            self._lemma,
            verbs,
            self._mention_at(question, others, tokens, at),
            self._type_lemmas(heads=True),
            last_sentence(masked),
            possessive,
        )

    def _mention_at(
        self, question: str, spans: Sequence[tuple[int, int]], tokens: list[tuple[str, str]], at: int | None
    ) -> frozenset[int]:
        """Token positions (in ``tokens``, the masked question's) of the words of the mentions at
        ``spans`` of ``question``: where each mention's words occur in a row, the anchor's mask aside."""
        words = [t for t, _ in tokens]
        out: set[int] = set()
        for start, end in spans:
            mention = [t for t, _ in self.lemmatize(question[start:end])]
            n = len(mention)
            if not n:
                continue
            for i in range(len(words) - n + 1):
                if words[i : i + n] == mention and (at is None or not i <= at < i + n):
                    out.update(range(i, i + n))
                    break
        return frozenset(out)

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
        out = {
            lem
            for i, (t, lem) in enumerate(tokens)
            if i != skip and t not in FUNCTION_WORDS and (lem in types or t in types)
        }
        # a word the relations' descriptions call a type's nodes by names it too ("the *conservator*
        # that ...": a staff member, "a treatment was carried out by a conservator"), unless it names
        # a relation ("which entities are *parties* to X": HAS_PARTY)
        said = self._said_of_types()
        for i, (t, lem) in enumerate(tokens):
            if (
                i != skip
                and t not in FUNCTION_WORDS
                and lem not in out
                and not self._names_relation((t, lem))
            ):
                out.update(head for word, head in said if stem_match(t, word, lem, self._lemma(word)))
        return frozenset(out)

    def _said_of_types(self) -> list[tuple[str, str]]:
        """(word, the lemma of the type's head word) for every word the relations' descriptions
        call a node type's nodes by (:func:`described_ends`) that is not its own head word (read once
        per graph generation)."""
        if self._said is not None:
            return self._said
        g = self.graph
        said = {c: self._described_words(c) for c in range(len(g.labels.names))}
        out: list[tuple[str, str]] = []
        for c, name in enumerate(g.labels.names):
            words = relation_words(name)
            if not words or not said[c]:
                continue
            head = self._lemma(words[-1])
            out.extend((w, head) for w in sorted(said[c]) if self._lemma(w) != head)
        self._said = out
        return out

    def _described_words(self, label: int) -> frozenset[str]:
        """The words the relations' descriptions call the label's nodes by (:func:`described_ends`)."""
        key = f"described {label}"
        if key not in self._types:
            self._describe_types()
        return self._types.get(key, frozenset())

    def _end_labels(self, hop: Hop) -> tuple[int, ...]:
        """Codes of the labels of the nodes ``hop`` reaches."""
        cached = self._labels.get(hop)
        if cached is None:
            g = self.graph
            reached = self._reached(hop.relation, self._walks_forward(hop))
            cached = self._labels[hop] = tuple(np.unique(g.node_label.view[reached]).tolist())
        return cached

    def end_labels(self, path: RelationPath, start: int | None) -> tuple[int, ...]:
        """Codes of the labels of the nodes ``path`` reaches from a node of label ``start`` (an
        anchor's; None: from anywhere, the labels its last hop reaches), walked type by type: where
        one relation chains several types (plant → reservoir → station), one hop back from a
        station reaches reservoirs only, two hops the plants."""
        if start is None:
            return self._end_labels(path[-1])
        labels: tuple[int, ...] = (start,)
        for hop in path:
            labels = self._labels_after(hop, labels)
            if not labels:  # no edge of the hop leaves those types: the hop's own ends
                return self._end_labels(path[-1])
        return labels

    def _labels_after(self, hop: Hop, start: tuple[int, ...]) -> tuple[int, ...]:
        """Codes of the labels of the nodes ``hop`` reaches from nodes of labels ``start`` (kept per
        hop and start; a relation walked both ways reaches both its ends)."""
        key = (hop, start)
        cached = self._after.get(key)
        if cached is not None:
            return cached
        g = self.graph
        code = g.relations.get(hop.relation)
        out: set[int] = set()
        if code is not None:
            n = len(g.edge_ids)
            alive = g.e_alive.view[:n] & (g.e_rel.view[:n] == code)
            src, dst = g.e_src.view[:n][alive], g.e_dst.view[:n][alive]
            rt = g.rel_types.get(hop.relation)
            ways = (
                [(src, dst), (dst, src)]
                if rt and rt.bidirectional
                else [(src, dst) if hop.forward else (dst, src)]
            )
            lab = g.node_label.view
            for frm, to in ways:
                out.update(np.unique(lab[to[np.isin(lab[frm], start)]]).tolist())
        cached = self._after[key] = tuple(sorted(out))
        return cached

    def type_cards(self, label: int, *, described: bool = False) -> tuple[str, str]:
        """What a node type is, for comparing with what a question asks for: its name's words
        ("search index") and those with a few of its members ("person: Priya Raman, Sam
        Whitfield"). ``described``: its name after the words its relations' descriptions most often
        put before it (:meth:`_described_modifiers`: "*animal* patient"), for a broad kind a
        question word asks (a patient's name alone is a person's word to an embedder)."""
        cached = self._cards.get((label, described))
        if cached is None:
            g = self.graph
            said = self._described_modifiers(label) if described else []
            name = " ".join([*(said[0] if said else ()), *relation_words(g.labels.names[label])])
            shown = [n for n in (self._names.get(p, "") for p in self._members.get(label, ())) if n]
            cached = self._cards[(label, described)] = (
                name,
                f"{name}: {', '.join(shown)}" if shown else name,
            )
        return cached

    def _walks_forward(self, hop: Hop) -> bool:
        rt = self.graph.rel_types.get(hop.relation)
        return hop.forward or bool(rt and rt.bidirectional)

    def _asked_fit(
        self, asked: AskedFor | None, ends: Sequence[tuple[int, ...]], embed: EmbedMany, vectors: bool
    ) -> tuple[dict[tuple[int, ...], float], bool]:
        """How well each set of end types (label codes: the nodes a path reaches, :meth:`end_labels`)
        fits what the question asks for: 1.0 for the best fitting and ``exp(-gap / type_temperature)``
        for the others (empty: the question asks for no kind of thing, or every candidate ends at
        the same node types). A set fits as well as the best of its types; a type fits by meaning,
        with an embedder (the best cosine of the asked words and its :meth:`type_cards`), else when
        the asked head word is the head word of its name. The flag: a noun of the question names the
        best fitting type by its words (its name's head word, its members' names, its description),
        not only by a cosine."""
        labels = {cs: cs for cs in ends}
        if asked is None or len(labels) < 2:
            # every candidate ends at nodes of the same types: nothing to tell (see _category)
            return {}, False
        kinds = sorted({c for cs in labels.values() for c in cs})
        broad = asks_broad_kind(asked)
        cards = [self.type_cards(c, described=broad) for c in kinds]
        got = self._vectors([asked.text, *(x for pair in cards for x in pair)], embed) if vectors else None
        # the asked word heads the type's name ("company": TransportCompany, "drug class": DrugClass): 1.0;
        # the very word heading some: only those (not a shared stem); else the best cosine with its cards
        same = {c for c in kinds if heads_asked(asked, self.graph.labels.names[c], self._lemma)}
        by_type = {c: max(float(self._names_type(asked, c)), self._described_as(asked, c)) for c in kinds}
        by_type = {c: float(c in same) for c in kinds} if same else by_type
        clipped: dict[int, float] = {}
        if got is not None:
            sims = got[1:] @ got[0]
            by_type = {
                c: max(by_type[c], float(sims[2 * i]), float(sims[2 * i + 1])) for i, c in enumerate(kinds)
            }
            clipped = self._clipped(asked, kinds, got[0], embed)
        # a clipped noun names its type, not others whose members are called by it ("which vets":
        # Veterinarian, though two clinics are called "... Vets")
        by_type = {
            c: clipped.get(c) or max(f, 0.0 if clipped or same else self._members_named(asked, c))
            for c, f in by_type.items()
        }
        fits = {h: max((by_type[c] for c in cs), default=0.0) for h, cs in labels.items()}
        best = max(fits.values())
        # the question's words name an end type (its name's head word, its members' names, its
        # description), not only a cosine: a path that stops before such a type answers something else
        named = asked.at is not None and not asked.classifier and best >= 1.0
        # a question word alone asks for a broad kind (a person, a place) that several types fit alike
        t = self.settings.type_temperature if asked.at is not None else self.settings.generic_type_temperature
        return {h: math.exp((f - best) / t) for h, f in fits.items()}, named

    def _clipped(
        self, asked: AskedFor, kinds: Sequence[int], qv: np.ndarray, embed: EmbedMany
    ) -> dict[int, float]:
        """Types whose name's head word the asked noun is a clipping of ("vets": ``Veterinarian``,
        "labs": ``Laboratory``): it begins the head word, three letters short of it at least, and
        the embedder reads the two alike (``clipping_cosine``; a derivation is no clipping: "art"
        is no ``Artist``, "ship" no ``Shipment``, "cat" no ``Category``). Such a type fits 1.0."""
        if asked.at is None or asked.classifier:
            return {}
        heads = {c: relation_words(self.graph.labels.names[c])[-1] for c in kinds}
        cand = [c for c in kinds if any(len(t) >= 3 and len(heads[c]) >= len(t) + 3 and heads[c].startswith(t)
                                        for t in asked.lemmas)]  # fmt: skip
        got = self._vectors([heads[c] for c in cand], embed) if cand else None
        if got is None:
            return {}
        return {
            c: 1.0 for c, v in zip(cand, got, strict=True) if float(v @ qv) >= self.settings.clipping_cosine
        }

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

    def _members_named(self, asked: AskedFor, label: int) -> float:
        """1.0 when the label's own nodes call themselves what is asked: at least two and at least
        ``member_share`` of a sample of them (:data:`TYPE_SAMPLE`) have a :func:`kind_words` word the
        asked head word names ("which *units*": "Majors Unit", "Coronary Care Unit"; "which
        *journals*": ``type: journal``); else 0 (one stray name is no kind: "non-steroidal
        anti-inflammatory drug" among drug classes; a question word alone is no node's word)."""
        if asked.at is None or asked.classifier:
            return 0.0
        members = self._member_words.get(label, [])
        if not members:
            return 0.0
        named = sum(
            1
            for words in members
            if any(stem_match(t, w, t, self._lemma(w)) for t in asked.lemmas for w in words)
        )
        return float(named >= 2 and named >= self.settings.member_share * len(members))

    def names_fully(
        self, asked: AskedFor | None, ends: Iterable[tuple[int, ...]], tokens: Sequence[tuple[str, str]] = ()
    ) -> bool:
        """The asked noun's words name every word of an end type's name ("launch *vehicles*":
        ``LaunchVehicle``, "suppliers": ``Supplier``), not only its head ("company":
        ``ProductionCompany``, a broader word than the type). ``tokens``: the question's (word,
        lemma) pairs, whose two words before the asked noun count as its modifiers."""
        if asked is None or asked.at is None:
            return False
        said = [(t, self._lemma(t)) for t in asked.text.split() if t not in FUNCTION_WORDS]
        said += [(t, t) for t in asked.lemmas]
        said += [tok for tok in tokens[max(0, asked.at - 2) : asked.at] if tok[0] not in FUNCTION_WORDS]
        return any(
            all(
                any(stem_match(t, w, lt, self._lemma(w)) for t, lt in said)
                for w in relation_words(self.graph.labels.names[c])
            )
            for c in {c for cs in ends for c in cs}
        )

    def _names_type(self, asked: AskedFor, label: int) -> bool:
        """The asked head word is the head word of the label's name, in any inflection (a shared
        stem, :func:`~cef.retrieve.pathwords.stem_match`: "vendors" names ``Vendor``). A classifier
        noun heads many types alike ("class": ``DrugClass``, ``DiseaseClass``): its phrase names a
        type only when its words name every word of the type's name ("what *drug class*", "what
        *class of drug*": ``DrugClass``)."""
        words = relation_words(self.graph.labels.names[label])
        if not asked.classifier:
            return any(stem_match(t, w, t, self._lemma(w)) for t in asked.lemmas for w in words[-1:])
        phrase = [(t, self._lemma(t)) for t in asked.text.split() if t not in FUNCTION_WORDS]
        return len(words) > 1 and all(
            any(stem_match(t, w, lt, self._lemma(w)) for t, lt in phrase) for w in words
        )


def fill_example_names(state: EngineState, scorer: PathTypes) -> None:
    """Names of the most reached nodes of each relation and direction (the hops' example answers)
    and of a few nodes of each label (:meth:`PathTypes.type_cards`; the kind words of a larger sample, :func:`kind_words`)."""
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
    sampled: dict[int, list[int]] = {}
    for code in np.unique(lab).tolist():
        sampled[int(code)] = by_label[lab == code][:TYPE_SAMPLE].tolist()
        scorer._members[int(code)] = sampled[int(code)][:EXAMPLES]
        wanted.update(sampled[int(code)])
    for code in np.unique(rel[alive]).tolist():
        mask = alive & (rel == code)
        for ends in (g.e_dst.view[:n_edges][mask], g.e_src.view[:n_edges][mask]):
            counts = np.bincount(ends.astype(np.int64))
            wanted.update(np.argsort(-counts, kind="stable")[:EXAMPLES].tolist())
    nodes = state.get_nodes([g.node_ids[p] for p in sorted(wanted) if g.node_alive[p]])
    by_id = {n.id: n.name for n in nodes}
    scorer._names = {p: by_id[g.node_ids[p]] for p in wanted if g.node_ids[p] in by_id}
    records = {n.id: n for n in nodes}
    scorer._member_words = {
        code: [kind_words(records[g.node_ids[p]]) for p in members if g.node_ids[p] in records]
        for code, members in sampled.items()
    }
