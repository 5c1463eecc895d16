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
  (stems of their lemmas; question and function words, numbers and calendar
  words left out), each weighted by how specific it is in this knowledge base
  (``ln(1 + N / (1 + df))``, df its text hits up to
  :attr:`~cef.retrieve.presets.RelevanceSettings.df_cap`: "service" in a
  services graph weighs little, "wishlist" much). Each counts 1 when the
  result's evidence holds it (its text and headings, the relation names and
  descriptions and node names along its path, an answer node's label and
  properties), ``elsewhere`` (½) when the knowledge base holds it somewhere else
  (text, node names, labels, relation types), and 0 when nothing in the
  knowledge base does and the word names a thing: a question about a dentist,
  asked of a graph that knows none, is not answered by the nephrologist;
* **which absent words name things** — an absent word names a thing when it
  is the head of a noun phrase or a noun before the head (the phrase opened by
  a determiner, a quantifier, a possessive or a preposition: "the *loyalty
  points* service", "Priya Raman's annual *salary*", "which *city*"; an
  adjective before the head only describes it: "a negative *experience*"), or
  a capitalized name or a code ("the *Security* team", "*Twilio*"). Words
  before a label word of the knowledge base name an instance of it, so a node
  must hold them ("the *product reviews* service": chunks that mention reviews
  are not that service). Verbs are told by word order (the clause after an
  auxiliary ends with its verb: "what did the council *decide*") and by
  inflection ("blamed", "went"). Such a word weighs as the rarest word of the
  knowledge base and counts 0; any other absent word (a verb, a particle: "who
  would be *hurt* if it *went down*") is the question's own phrasing: common,
  counted ``elsewhere``. No tagger and no domain word list: general English only.

A result the relation-path stage found counts at least as much as that stage's
own measure of how much of the question the path's relation names explain
(``metadata["paths"]["named"]``: "which screenwriter wrote" names ``written_by``;
an answer node, its own path's, ``metadata["paths"]["answer_named"]``), up to the
share of what is asked that the knowledge base holds at all (a path that names
``hosts`` does not answer "the monthly hosting *cost*").

With named things: ``relevance = tie confidence × (floor + (1 − floor) × asked) × held``,
``held`` the weighted share of what is asked that names nothing absent; without: the coverage of
all the question's content words, counted the same way, × √held (a question that names nothing
is read more loosely: conversations and notes say in other words what a question asks).
A query's own hints count as naming: its ``targets`` name things, its
``traversal.relation_types`` say what it asks. The weights and the threshold
are fields of :class:`~cef.retrieve.presets.RelevanceSettings` (a query may set
them in ``options["relevance"]``).

When no chunk and no answer node reaches the threshold (default
:data:`NOTHING_MATCHED_BELOW`), the result says so:
``metadata["relevance"]["nothing_matched"]`` is true, a note says ``nothing
matched``, and there are no answer nodes. Answer nodes below it are dropped
whatever the chunks say. Chunks are kept (ranked as before), each with its
relevance, for a caller who wants to look anyway.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cef.extract.lemmas import default_lemmatizer
from cef.model import GraphPath, RankedChunk, RankedNode
from cef.retrieve.context import QueryContext
from cef.retrieve.pathtypes import CLASSIFIER_NOUNS
from cef.retrieve.pathwords import PREPOSITIONS, stem_match
from cef.retrieve.presets import AutoSettings, RelevanceSettings, settings_for
from cef.retrieve.stagestate import Verdict
from cef.retrieve.visibility import hidden_nodes
from cef.text import QUERY_STOP_WORDS, STOP_WORDS, stem

__all__ = ["FLOOR", "NOTHING_MATCHED_BELOW", "assess_relevance"]

#: the default threshold: below this relevance (best chunk and best answer node), "nothing matched"
NOTHING_MATCHED_BELOW = RelevanceSettings().threshold
#: the default floor (:attr:`~cef.retrieve.presets.RelevanceSettings.floor`)
FLOOR = RelevanceSettings().floor
#: words that open a noun phrase in general English: articles, possessive and demonstrative
#: determiners, quantifiers, the interrogative determiners, and prepositions (their object; not
#: "to", which opens infinitives as often: "to *promote* his venture")
_OPENERS = frozenset(
    ["the", "a", "an", "our", "my", "your", "his", "her", "its", "their", "this", "these", "those",
     "which", "what", "whose", "each", "every", "any", "some", "all", "no",
     "many", "much", "few", "several", "more", "most", "enough",
     "of", "by", "in", "on", "at", "for", "with", "from", "per", "about", "after", "before", "during",
     "into", "over", "under", "between", "without", "within", "through", "across", "along", "among",
     "around", "behind", "below", "beneath", "beside", "beyond", "inside", "near", "onto", "outside",
     "since", "until", "upon", "via", "toward", "towards", "against", "like", "unlike", "than"]
)  # fmt: skip
#: calendar and time words (months, weekdays, seasons, time adverbs): when a question asks, not
#: what it is about
_CALENDAR = frozenset(
    [m.lower() for m in calendar.month_name if m]
    + [d.lower() for d in calendar.day_name]
    + ["spring", "summer", "autumn", "winter"]
    # English time adverbs and the nouns of time idioms ("these days", "at the moment", "at the
    # start of", "back in"): when the question asks, which the temporal filters read
    + ["today", "tonight", "yesterday", "tomorrow", "moment", "day", "days", "nowadays", "lately",
       "recently", "currently", "current", "presently", "start", "beginning", "end", "back", "ago",
       "ever", "anymore", "formerly", "previously", "once", "since"]
)  # fmt: skip
#: English adjective endings: a word with one before the head of a noun phrase describes it
_ADJECTIVE_ENDINGS = ("al", "ive", "ous", "ful", "less", "able", "ible", "ic", "ary")
#: English pro-forms: "one(s)" and the indefinite pronouns stand for a thing, they name none
_PRO_FORMS = frozenset(
    ["one", "ones", "someone", "anyone", "everyone", "somebody", "anybody", "everybody", "nobody",
     "something", "anything", "everything", "nothing", "whoever", "whomever", "whatever", "whichever"]
)  # fmt: skip
#: English classifier nouns and their plurals ("what *kind* of film", "what *types* are"): they ask
#: for a category, they name no thing
_CLASSIFIERS = CLASSIFIER_NOUNS | frozenset(
    w[:-1] + "ies" if w.endswith("y") else w + ("es" if w.endswith("s") else "s") for w in CLASSIFIER_NOUNS
)
#: English verb particles: the word before one is a phrasal verb ("make up", "find out")
_PARTICLES = frozenset(["up", "out", "off", "down", "away"])
#: auxiliaries and modals: in a question, the clause after one ends with its main verb
_AUXILIARIES = frozenset(
    ["do", "does", "did", "will", "would", "can", "could", "should", "shall", "may", "might", "must"]
)
#: the interrogative determiners ("*which* team", "*what* drug class")
_WH_DETERMINERS = frozenset(["what", "which", "whose"])
#: subordinating conjunctions that open a clause after a verb ("what happens *when*")
_CONJUNCTIONS = frozenset(["when", "if", "while", "where", "whenever", "because", "after", "before"])
#: the prepositions that open English complex prepositions ("in charge of", "on behalf of", "by means of")
_COMPLEX_FIRST = frozenset(["in", "on", "at", "by"])
#: English plurals not formed from their singular, which the dictionary lemmatizer keeps as they are
_SUPPLETIVE = {"people": "person"}
_TOKEN = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
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
class _Term:
    """A content word of the question: its match key, its form in the question, whether it names a
    thing (in a noun phrase, or a capitalized name or a code), and once weighed, how many records of
    the knowledge base hold it (``df``, up to twice ``df_cap``; 0: none) and its weight."""

    key: str
    form: str
    lemma: str
    names_thing: bool
    instance: bool = False  # it names an instance of a label ("the *loyalty* service"): a node
    df: int | None = None
    weight: float = 1.0

    @property
    def absent_thing(self) -> bool:
        """A thing the question names that the knowledge base holds nowhere."""
        return self.df == 0 and self.names_thing


@dataclass
class _Question:
    terms: dict[str, _Term]  # stem -> the question's content word, in order
    named: list[_Named] = field(default_factory=list)
    asked_given: bool = False  # the query names the relations to follow: what it asks is given

    @property
    def stems(self) -> list[str]:
        return list(self.terms)

    @property
    def asked(self) -> list[str]:
        """The stems the named things do not account for: what the question asks about them."""
        covered: set[str] = set()
        for n in self.named:
            covered |= n.stems
        return [s for s in self.terms if s not in covered]

    def form(self, key: str) -> str:
        term = self.terms.get(key)
        return term.form if term is not None else key


def _inflected_verb(token: str, lemma: str) -> bool:
    """A past or progressive form ("blamed", "hosting") or an irregular one ("went" -> "go"): a verb
    (a plural noun's lemma is the token less its plural ending)."""
    if (len(token) > 4 and token.endswith("ed")) or (len(token) > 5 and token.endswith("ing")):
        return True
    if lemma == token or token in (lemma + "s", lemma + "es") or token == lemma[:-1] + "ies":
        return False
    return not token.startswith(lemma[:3])  # an irregular form, not a spelling variant


def _to_object(tokens: Sequence[tuple[str, str, bool, bool]], i: int) -> bool:
    """ "to" before a noun ("allergic to *penicillin*"), not before a verb and its object ("to
    *promote* his venture")."""
    if tokens[i][1] != "to" or i + 1 >= len(tokens) or not tokens[i + 1][3]:
        return False
    return i + 2 >= len(tokens) or tokens[i + 2][1] not in _OPENERS


def _verb_positions(tokens: Sequence[tuple[str, str, bool, bool]]) -> set[int]:
    """Where the question's verbs stand by its word order, in general English: the last content
    word of the clause after an auxiliary ("what did the town council *decide*", "which database
    does the wishlist service *store* its data in") and, in such a question, a last word that
    follows another content word ("what do the dancers in the photo *represent*"), and a word between "what" / "which" and a
    determiner, a preposition or a conjunction ("what *happens* when", "what *causes* the")."""
    out: set[int] = set()
    n = len(tokens)
    for i, (_, low, _, _) in enumerate(tokens):
        if low in _AUXILIARIES:
            j = i + 1
            while j < n and j <= i + 2 and not tokens[j][3] and tokens[j][1] not in PREPOSITIONS:
                j += 1  # the subject's determiner or pronoun
            last = None
            while j < n and tokens[j][3]:
                last = j
                j += 1
            if last is not None:
                out.add(last)
            if n >= 2 and tokens[-1][3] and tokens[-2][3]:  # "... in the photo *represent*?"
                out.add(n - 1)
            if n >= 2 and tokens[-1][1] in _OPENERS and tokens[-2][3]:  # a stranded preposition: "*rely* on?"
                out.add(n - 2)
        elif low in _WH_DETERMINERS and i + 1 < n and tokens[i + 1][3]:
            after = tokens[i + 2][1] if i + 2 < n else ""
            if after in _OPENERS or after in _CONJUNCTIONS:
                out.add(i + 1)
    for i in range(n - 1):
        if tokens[i][3] and tokens[i + 1][1] in _PARTICLES:  # a phrasal verb: "which units *make* up"
            out.add(i)
    return out


def _terms(question: str, heads: set[str], phrase_words: int) -> dict[str, _Term]:
    """The question's content words, each marked when it names a thing: it is in a noun phrase
    (up to ``phrase_words`` content words after a determiner, a possessive or a preposition; the
    phrase ends at a label word of the knowledge base, its head, or at a verb), or it is
    capitalized inside the question, or it holds a digit (a code). The words of a phrase before a
    label word name an instance of that label ("the *loyalty points* service"): a node must hold them. Numbers and calendar words are
    left out: they say when, and the temporal filters read them."""
    lemmatize = default_lemmatizer()
    tokens: list[tuple[str, str, bool, bool]] = []  # (word as written, lower case, possessive, content)
    for m in _TOKEN.finditer(question):
        raw = m.group(0)
        possessive = raw.lower().endswith(("'s", "’s"))
        if possessive:
            raw = raw[:-2]
        low = raw.lower().replace("’", "'")
        content = bool(low) and not (
            low in QUERY_STOP_WORDS
            or low in _PRO_FORMS
            or low in _CLASSIFIERS
            or low in _OPENERS
            or low in _CALENDAR
            or not any(c.isalpha() for c in low)
        )
        tokens.append((raw, low, possessive, content))
    verbs = _verb_positions(tokens)
    out: dict[str, _Term] = {}
    things: set[str] = set()  # keys with an occurrence that names a thing
    phrase: list[tuple[_Term, bool]] = []  # the open noun phrase: (word, capitalized or a code)

    def close() -> None:
        """The head of a noun phrase is its last word and names a thing; so does a noun before it
        ("the *seabird* monitoring project"), not an adjective that only describes the head ("a
        *negative* experience": the experience is the thing asked about)."""
        for n, (term, name) in enumerate(phrase):
            if n == len(phrase) - 1 or name or term.instance or not term.form.endswith(_ADJECTIVE_ENDINGS):
                things.add(term.key)
        phrase.clear()

    room = 0  # content words the open noun phrase may still take
    for i, (raw, low, possessive, content) in enumerate(tokens):
        if not content:
            close()
            room = phrase_words if (low in _OPENERS or possessive or _to_object(tokens, i)) else 0
            continue
        pairs = lemmatize(low)
        lemma = _SUPPLETIVE.get(low) or (pairs[0][1] if len(pairs) == 1 else low)
        key = stem(lemma)
        verb = i in verbs or _inflected_verb(low, lemma)
        # a participle inside a phrase, before another content word, modifies it ("a punctured tyre")
        modifier = verb and room > 0 and i + 1 < len(tokens) and tokens[i + 1][3]
        name = i > 0 and (raw[:1].isupper() or any(c.isdigit() for c in raw))
        # a bare noun in a complex preposition ("in charge of", "on top of") names no thing
        idiom = 0 < i < len(tokens) - 1 and tokens[i - 1][1] in _COMPLEX_FIRST and tokens[i + 1][1] == "of"
        term = out.get(key)
        if term is None:
            term = out[key] = _Term(key, low, lemma, False)
        if name:
            things.add(key)
        if room > 0 and not verb and not idiom:
            phrase.append((term, name))
            if key in heads:  # "the loyalty points service": the words before it name a service
                for before, _ in phrase[:-1]:
                    before.instance = True
        elif not modifier:
            close()
        room = 0 if (verb and not modifier) or key in heads else max(room - 1, 1 if modifier else 0)
        if room == 0:
            close()
        if possessive:
            close()
            room = phrase_words
    close()
    for term in out.values():
        term.names_thing = term.key in things
    return out


def _label_words(qc: QueryContext) -> set[str]:
    """The stems of the knowledge base's labels ("SearchIndex": search, index)."""
    out: set[str] = set()
    for label in qc.state.graph.labels.names:
        out |= _stems(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", label))
    return out


def _question(qc: QueryContext, settings: RelevanceSettings) -> _Question:
    terms = _terms(qc.query.query, _label_words(qc), settings.phrase_words)
    q = _Question(terms, asked_given=bool(qc.query.traversal.relation_types))
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


def _records(qc: QueryContext) -> int:
    """How many records (nodes and chunks) a word's document frequency is out of."""
    chunks = len(qc.state.chunk_vectors) or qc.state.store.counts().get("chunks", 0)
    return max(qc.state.graph.node_count + chunks, 1)


def _weigh(qc: QueryContext, q: _Question, settings: RelevanceSettings) -> None:
    """Each content word's document frequency (text hits in chunks and nodes, up to ``df_cap``
    each; a label or relation word counts as common) and its weight: ``ln(1 + N / (1 + df))``; an
    absent word that names a thing weighs ``ln(1 + N)`` (the rarest), any other absent word weighs
    as a common one (it is the question's phrasing)."""
    todo = [t for t in q.terms.values() if t.df is None]
    if not todo:
        return
    g = qc.state.graph
    scope = qc.query.scope
    hidden = hidden_nodes(g, scope)  # a scoped query knows only its scope's and shared vocabulary
    labels = list(g.labels.names)
    if hidden is not None:
        labels = [g.labels.names[int(c)] for c in np.unique(g.node_label.view[: len(hidden)][~hidden])]
    schema_text = "\n".join(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", label).lower() for label in labels)
    for rt in g.rel_types.values():
        schema_text += "\n" + "\n".join(
            [_relation_words(rt.name), _relation_words(rt.inverse or ""), rt.description or ""]
        )
    schema_words = _words(schema_text)
    schema = {key for _, key in schema_words} | {stem(token) for token, _ in schema_words}
    schema_pairs = {
        (token, lemma) for token, lemma in default_lemmatizer()(schema_text) if token not in STOP_WORDS
    }
    store = qc.state.store
    cap = settings.df_cap
    n = _records(qc)
    for t in todo:
        if t.key in schema or any(stem_match(t.form, w, t.lemma, lw) for w, lw in schema_pairs):
            t.df = cap  # a label or relation word ("screenwriter" names written_by the way the paths do)
        else:
            t.df = 0
            for word in dict.fromkeys([t.form, t.lemma]):  # "kidneys": the text may say "kidney"
                t.df = len(store.search_text("node", word, cap, scope=scope))
                if not t.instance:  # an instance of a label is a node: chunks mentioning the word are not it
                    t.df += len(store.search_text("chunk", word, cap, scope=scope))
                if t.df:
                    break
    _synonyms(qc, [t for t in todo if t.df == 0 and t.names_thing], schema_text, settings)
    for t in todo:
        df = t.df or 0
        if df > 0:
            t.weight = math.log1p(n / (1 + df))
        elif t.names_thing:
            t.weight = math.log1p(n)
        else:
            t.weight = math.log1p(n / (1 + cap))


def _synonyms(qc: QueryContext, absent: list[_Term], schema: str, settings: RelevanceSettings) -> None:
    """An absent word that means a label or a relation of the knowledge base (the embedder's cosine
    of the word and the label, the relation's name or its description reaches ``synonym``: a
    "skipper" is a captain) is held like a label or relation word. Without an embedder, no synonyms."""
    if not absent or qc.state.embedder is None or settings.synonym > 1.0:
        return
    phrases = _schema_phrases(schema)
    known = _phrase_vectors(qc, phrases)
    words = qc.embed_many([t.form for t in absent])
    if known is None or words is None or not len(known):
        return
    best = (_unit(words) @ known.T).max(axis=1)
    for t, cos in zip(absent, best, strict=True):
        if float(cos) >= settings.synonym:
            t.df = settings.df_cap


def _schema_phrases(schema: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.strip() for p in schema.split("\n") if p.strip()))


#: the unit vectors of a knowledge base's label and relation phrases, by phrases (the schema changes
#: rarely; each engine's embedder is asked once per schema)
_PHRASE_VECTORS: dict[tuple[int, tuple[str, ...]], np.ndarray] = {}


def _phrase_vectors(qc: QueryContext, phrases: tuple[str, ...]) -> np.ndarray | None:
    key = (id(qc.state.embedder), phrases)
    got = _PHRASE_VECTORS.get(key)
    if got is None:
        vectors = qc.embed_many(list(phrases))
        if vectors is None:
            return None
        if len(_PHRASE_VECTORS) >= 16:
            _PHRASE_VECTORS.clear()
        got = _PHRASE_VECTORS[key] = _unit(vectors)
    return got


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def _path_text(qc: QueryContext, path: GraphPath | None, nodes: bool = True) -> str:
    """The words of a path: its node names (with ``nodes``), its relations' names and descriptions."""
    if path is None:
        return ""
    g = qc.state.graph
    parts = list(path.node_names) if nodes else []
    for name in path.relation_types:
        parts.append(_relation_words(name))
        rt = g.rel_types.get(name)
        if rt is None:
            rt = next((r for r in g.rel_types.values() if r.inverse == name), None)
        if rt is not None and rt.description:
            parts.append(rt.description)
    return " ".join(parts)


def _credit(t: _Term, evidence: set[str], settings: RelevanceSettings) -> float:
    if t.key in evidence:
        return 1.0
    return 0.0 if t.absent_thing else settings.elsewhere


def _coverage(q: _Question, wanted: Sequence[str], evidence: set[str], settings: RelevanceSettings) -> float:
    """The weighted share of the wanted words the result holds: 1 in its evidence, ``elsewhere``
    when the knowledge base holds the word elsewhere (or it is the question's phrasing), 0 when the
    word names a thing the knowledge base does not hold."""
    terms = [q.terms[s] for s in wanted]
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 1.0
    return sum(t.weight * _credit(t, evidence, settings) for t in terms) / total


def _held(q: _Question, wanted: Sequence[str]) -> float:
    """The weighted share of the wanted words that name nothing absent: the most a relation path
    can explain of the question."""
    terms = [q.terms[s] for s in wanted]
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 1.0
    return sum(t.weight for t in terms if not t.absent_thing) / total


def _relevance(
    q: _Question, evidence: set[str], ties: set[str], settings: RelevanceSettings, named: float = 0.0
) -> float:
    """``named``: how much of the question the relation path behind the result explains (the path
    stage's own measure, 0 for results it did not find)."""
    if q.asked_given:
        named = 1.0
    if not q.named and all(t.df == 0 for t in q.terms.values()):
        return 0.0  # nothing the question says is in the knowledge base
    if not q.named:
        held = _held(q, q.stems)
        return round(max(_coverage(q, q.stems, evidence, settings), min(named, held)) * math.sqrt(held), 4)
    tie = max(
        (n.confidence for n in q.named if n.node_id in ties or (n.stems and n.stems <= evidence)), default=0.0
    )
    wanted = q.asked
    held = _held(q, wanted)
    asked = max(_coverage(q, wanted, evidence, settings), min(named, held))
    floor = settings.floor
    # what is asked about a named thing, scaled by the share of it the knowledge base holds at all
    tied = tie * (floor + (1.0 - floor) * asked) * held
    # a result tied to nothing the question names may still hold all of its words
    loose = floor * _coverage(q, q.stems, evidence, settings) * _held(q, q.stems)
    return round(min(1.0, max(tied, loose)), 4)


def _chunk_relevance(qc: QueryContext, q: _Question, rc: RankedChunk, settings: RelevanceSettings) -> float:
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
    return _relevance(q, _stems(text), ties, settings, _path_named(qc) if from_paths else 0.0)


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


def _node_relevance(qc: QueryContext, q: _Question, rn: RankedNode, settings: RelevanceSettings) -> float:
    node = rn.node
    text = " ".join([node.name, node.label, " ".join(node.aliases), rn.text, _path_text(qc, rn.path)])
    ties = {node.id}
    if rn.path is not None and rn.path.node_ids:
        ties.add(rn.path.node_ids[0])
    named = _answer_named(qc, node.id)
    relevance = _relevance(q, _stems(text), ties, settings, named)
    info = qc.stages.paths
    relation_words = _stems(_path_text(qc, rn.path, nodes=False))
    if (
        info is not None
        and info.confident(settings_for(AutoSettings, qc.query))
        and named >= 0.5
        and relation_words.intersection(q.asked)
    ):
        # the question names the relation path this answer ends (at least half its hops, from an
        # anchor it names, a word of what it asks in the path's relations): the path vouches for
        # the answer whatever other words the question holds
        tie = max((n.confidence for n in q.named if n.node_id in ties), default=0.0)
        relevance = max(relevance, round(tie * (settings.floor + (1.0 - settings.floor) * named), 4))
    return relevance


def assess_relevance(qc: QueryContext, results: list[RankedChunk]) -> list[RankedChunk]:
    """``results`` with their relevance; answer nodes below the threshold dropped from ``qc``; the
    verdict in ``qc.stages.relevance`` (and a note when nothing matched)."""
    settings = settings_for(RelevanceSettings, qc.query)
    threshold = settings.threshold
    q = _question(qc, settings)
    _weigh(qc, q, settings)
    out = [rc.model_copy(update={"relevance": _chunk_relevance(qc, q, rc, settings)}) for rc in results]
    nodes = [
        rn.model_copy(update={"relevance": _node_relevance(qc, q, rn, settings)}) for rn in qc.answer_nodes
    ]
    kept = [rn for rn in nodes if (rn.relevance or 0.0) >= threshold]
    best = max([0.0, *(r.relevance or 0.0 for r in out), *(n.relevance or 0.0 for n in nodes)])
    nothing = best < threshold
    qc.answer_nodes = [] if nothing else kept
    measured = q.asked if q.named else q.stems
    missing = [q.form(s) for s in measured if q.terms[s].df == 0]
    qc.stages.relevance = Verdict(
        best=best,
        threshold=threshold,
        nothing_matched=nothing,
        named=[n.node_id for n in q.named],
        asked=[q.form(s) for s in measured],
        unknown=missing,
        weights={q.form(s): round(q.terms[s].weight, 3) for s in measured},
    )
    if nothing:
        why = f" (the knowledge base has no {', '.join(repr(m) for m in missing)})" if missing else ""
        qc.notes.append(f"nothing matched: the best result's relevance {best:.2f} is below {threshold}{why}")
    elif len(kept) < len(nodes):
        qc.notes.append(f"relevance: {len(nodes) - len(kept)} answer node(s) below {threshold} left out")
    return out
