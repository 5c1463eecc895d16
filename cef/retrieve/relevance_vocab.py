"""The knowledge base's vocabulary as :mod:`cef.retrieve.relevance` reads it: a text's content words
and their match keys, the label, relation and property-key words, and how specific each of a
question's words is in this knowledge base (its document frequency and weight)."""

from __future__ import annotations

import math
import re
import weakref

import numpy as np

from cef.extract.lemmas import default_lemmatizer
from cef.model import Node
from cef.retrieve.context import QueryContext
from cef.retrieve.english import ABBREVIATIONS, word_forms
from cef.retrieve.names import name_finder
from cef.retrieve.pathwords import stem_match
from cef.retrieve.presets import RelevanceSettings
from cef.retrieve.questionterms import Term
from cef.retrieve.support import phrase_vectors, unit
from cef.retrieve.visibility import hidden_nodes
from cef.store.base import TextHit
from cef.text import STOP_WORDS, stem

__all__ = [
    "key_words",
    "label_words",
    "property_stems",
    "property_words",
    "relation_words",
    "stems",
    "weigh",
    "words",
]

_POSSESSIVE = re.compile(r"['’]s\b|['’](?=\s|$)")


def words(text: str) -> list[tuple[str, str]]:
    """(word, match key) of the content words of ``text``: the key is the stem of the word's lemma
    ("wrote" and "written" are one key), question and function words left out."""
    out = []
    for token, lemma in default_lemmatizer()(_POSSESSIVE.sub("", text)):
        if token not in STOP_WORDS:
            out.append((token, stem(lemma)))
    return out


def stems(text: str) -> set[str]:
    """The match keys of ``text``: of each word's lemma and of the word itself."""
    out: set[str] = set()
    for token, key in words(text):
        out.add(key)
        out.add(stem(token))
        if token in ABBREVIATIONS:  # "Dr. Lind": a doctor
            out.add(stem(ABBREVIATIONS[token]))
    return out


def relation_words(name: str) -> str:
    return name.replace("_", " ").lower()


def label_words(qc: QueryContext) -> set[str]:
    """The stems of the knowledge base's labels ("SearchIndex": search, index)."""
    out: set[str] = set()
    for label in qc.state.graph.labels.names:
        out |= stems(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", label))
    return out


def key_words(key: str) -> str:
    """A property key as words ("stoppedBecause", "icd_10": "stopped because", "icd 10")."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").lower()


def property_words(qc: QueryContext) -> frozenset[str]:
    """The stems that only a property key holds among the knowledge base's schema words (not a
    label's or a relation's word, not ``name``): a question asking one ("the *brand* name of X")
    asks a fact that a node holds or lacks. Read again after any write."""
    g = qc.state.graph
    labels = list(g.labels.names)
    store = qc.state.store
    key = (store.current_seq(), len(g.rel_types))
    got = _PROPERTY_WORDS.get(store)
    if got is not None and got[0] == key:
        return got[1]
    keys: set[str] = set()
    for name in _property_keys(qc, labels):
        keys |= stems(name)
    schema = label_words(qc)
    for rt in g.rel_types.values():
        schema |= stems(" ".join([relation_words(rt.name), relation_words(rt.inverse or "")]))
    out = frozenset(keys - schema - stems("name"))
    _PROPERTY_WORDS[store] = (key, out)
    return out


#: :func:`property_words` per store, by change-feed position and relation count
_PROPERTY_WORDS: weakref.WeakKeyDictionary[object, tuple[tuple[int, int], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def _records(qc: QueryContext) -> int:
    """How many records (nodes and chunks) a word's document frequency is out of."""
    chunks = len(qc.state.chunk_vectors) or qc.state.store.counts().get("chunks", 0)
    return max(qc.state.graph.node_count + chunks, 1)


def weigh(qc: QueryContext, terms: dict[str, Term], settings: RelevanceSettings) -> None:
    """Each content word's document frequency (text hits in chunks and nodes, up to ``df_cap``
    each; a label or relation word counts as common) and its weight: ``ln(1 + N / (1 + df))``; an
    absent word that names a thing weighs ``ln(1 + N)`` (the rarest), any other absent word weighs
    as a common one (it is the question's phrasing)."""
    todo = [t for t in terms.values() if t.df is None]
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
            [relation_words(rt.name), relation_words(rt.inverse or ""), rt.description or ""]
        )
    # property keys are held by their form, not by what an embedder finds like them
    synonym_text = schema_text
    keys = {form for name in _property_keys(qc, labels) for form in words_of_key(name)}  # "icd10": "icd-10"
    schema_text += "\n" + "\n".join(keys)
    schema_words = words(schema_text)
    schema = {key for _, key in schema_words} | {stem(token) for token, _ in schema_words}
    schema_pairs = {
        (token, lemma) for token, lemma in default_lemmatizer()(schema_text) if token not in STOP_WORDS
    }
    store = qc.state.store
    cap = settings.df_cap
    n = _records(qc)
    codes = {c.lower() for c in _CODE.findall(qc.query.query) if any(ch.isupper() for ch in c)}
    for t in todo:
        if t.key in schema or any(stem_match(t.form, w, t.lemma, lw) for w, lw in schema_pairs):
            t.df = cap  # a label or relation word ("screenwriter" names written_by the way the paths do)
        else:
            t.df = 0
            short = [a for a, full in ABBREVIATIONS.items() if full == t.lemma]  # "doctor": "Dr."
            for word in dict.fromkeys([t.form, t.lemma, *short]):  # "kidneys": the text may say "kidney"
                t.df = len(_named_hits(qc, word, store.search_text("node", word, cap, scope=scope)))
                if not t.instance:  # an instance of a label is a node: chunks mentioning the word are not it
                    t.df += len(store.search_text("chunk", word, cap, scope=scope))
                if t.df:
                    break
            if not t.df:
                t.df = _derived_df(qc, t, cap)
            elif t.form in codes:
                t.df = _code_df(qc, t, cap, t.df)
    _identifiers(qc.query.query, todo, keys, cap)
    _synonyms(qc, [t for t in todo if t.df == 0 and t.names_thing], synonym_text, settings)
    for t in todo:
        df = t.df or 0
        if df > 0:
            t.weight = math.log1p(n / (1 + df))
        elif t.names_thing:
            t.weight = math.log1p(n)
        else:
            t.weight = math.log1p(n / (1 + cap))


#: English nouns for the value of a property that identifies a thing ("the ICD-10 *code*", "the
#: tracking *number*", "the employee *ID*"): after a property's own word they say nothing more
IDENTIFIER_NOUNS = frozenset(["code", "codes", "number", "numbers", "id", "ids", "identifier", "identifiers"])


def words_of_key(name: str) -> list[str]:
    """A property key's forms as a question may write it: ``icd10`` also as "icd-10" and "icd 10",
    ``trackingNumber`` as its words."""
    low = key_words(name)
    split = re.sub(r"(?<=[a-z])(?=\d)", "-", low)
    return list(dict.fromkeys([low, split, split.replace("-", " ")]))


def _identifiers(question: str, terms: list[Term], keys: set[str], cap: int) -> None:
    """An identifier noun the knowledge base never writes is held right after a word naming one of
    its property keys ("the *ICD-10 code*": the ``icd10`` property is that code)."""
    low = question.lower()
    for t in terms:
        if t.df != 0 or t.form not in IDENTIFIER_NOUNS:
            continue
        before = re.search(rf"([\w-]+)\s+{re.escape(t.form)}\b", low)
        if before is not None and before.group(1) in keys:
            t.df = cap


def _named_hits(qc: QueryContext, word: str, hits: list[TextHit]) -> list[TextHit]:
    """The node full-text ``hits`` of ``word`` that hold it other than in a value naming a category
    (:meth:`~cef.retrieve.names.NameFinder.category_words`): ``language: Python`` on two services
    is no name of theirs, so "python" is held by them only if their name or label says it."""
    finder = name_finder(qc.state)
    if not hits or word.lower() not in finder.category_words():
        return hits
    nodes = qc.nodes([h.id for h in hits])
    keys = stems(word)
    out: list[TextHit] = []
    for h in hits:
        node = nodes.get(h.id)
        if node is not None and keys & stems(" ".join([*finder.names_of(node), node.label])):
            out.append(h)
    return out


#: a code: letters and digits joined by separators ("INC-2200", "QX-417"), written with a capital
_CODE = re.compile(r"(?<![0-9A-Za-z])(?=[^\s]*\d)(?=[^\s]*[a-zA-Z])[0-9A-Za-z]+(?:[-_./][0-9A-Za-z]+)+")
_PART = re.compile(r"[0-9A-Za-z]+")


def _code_df(qc: QueryContext, t: Term, cap: int, found: int) -> int:
    """A code's document frequency when the knowledge base holds its family (every part of letters
    only is held: "INC"): at most that of its rarest part holding a digit. The text search splits a
    code into its parts and finds records holding any of them ("INC-2200" finds every "INC-…");
    a number of a held family that no record holds is held nowhere. ``found``: the text search's
    count, kept when the family is not held ("Mid-2024" is no code)."""
    store, scope = qc.state.store, qc.query.scope

    def df(part: str) -> int:
        n = len(store.search_text("node", part, cap, scope=scope))
        return n if t.instance else n + len(store.search_text("chunk", part, cap, scope=scope))

    parts = list(dict.fromkeys(_PART.findall(t.form.lower())))
    letters = [p for p in parts if p.isalpha()]
    if not letters or not all(df(p) for p in letters):
        return found
    return min([found, *(df(p) for p in parts if not p.isalpha())])


def _derived_df(qc: QueryContext, t: Term, cap: int) -> int:
    """How many records hold another form of an absent question word (its inflections, and its
    base's when it has a derivational suffix, :func:`~cef.retrieve.english.word_forms`); 0: none."""
    if not t.form.isalpha():
        return 0
    store, scope = qc.state.store, qc.query.scope
    for form in word_forms(t.form, t.lemma):
        df = len(store.search_text("node", form, cap, scope=scope))
        if not t.instance:
            df += len(store.search_text("chunk", form, cap, scope=scope))
        if df:
            return df
    return 0


#: the property keys of a knowledge base's labels, per store (gone with it), by change-feed position
#: and labels (read again after any write)
_PROPERTY_KEYS: weakref.WeakKeyDictionary[object, dict[tuple[int, tuple[str, ...]], list[str]]] = (
    weakref.WeakKeyDictionary()
)


def _property_keys(qc: QueryContext, labels: list[str]) -> list[str]:
    """The property keys of the nodes of ``labels`` as words ("brand", "icd10", "stopped because"):
    a question asking for one ("the *brand* name of lisinopril") asks what the knowledge base holds,
    like a label or a relation word. Read from a sample of each label's nodes."""
    store = qc.state.store
    kept = _PROPERTY_KEYS.setdefault(store, {})
    key = (store.current_seq(), tuple(labels))
    got = kept.get(key)
    if got is None:
        names: dict[str, None] = {}
        for label in labels:
            for name in store.property_names(label, sample=50):
                if not name.startswith("_"):
                    names[key_words(name)] = None
        if len(kept) >= 16:
            kept.clear()
        got = kept[key] = list(names)
    return got


def _synonyms(qc: QueryContext, absent: list[Term], schema: str, settings: RelevanceSettings) -> None:
    """An absent word that means a label or a relation of the knowledge base (the embedder's cosine
    of the word and the label, the relation's name or its description reaches ``synonym``: a
    "skipper" is a captain) is held like a label or relation word. Without an embedder, no synonyms."""
    if not absent or qc.state.embedder is None or settings.synonym > 1.0:
        return
    phrases = _schema_phrases(schema)
    known = phrase_vectors(qc, phrases)
    words = qc.embed_many([t.form for t in absent])
    if known is None or words is None or not len(known):
        return
    best = (unit(words) @ known.T).max(axis=1)
    for t, cos in zip(absent, best, strict=True):
        if float(cos) >= settings.synonym:
            t.df = settings.df_cap


def _schema_phrases(schema: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.strip() for p in schema.split("\n") if p.strip()))


def property_stems(node: Node) -> set[str]:
    """The stems of the property keys a node has a value for."""
    has: set[str] = set()
    for key, value in node.properties.items():
        if value not in (None, "", [], {}):
            has |= stems(key_words(key))
    return has
