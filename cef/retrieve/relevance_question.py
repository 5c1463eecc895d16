"""What a question asks, read once for relevance (:mod:`cef.retrieve.relevance`): the things it names
(the nodes linked by name, with their link confidence; a dated name's date must agree), its content words,
and what a result must *show* to answer it — a year, a measure, a count, an amount, a name — with the
measures the named things hold as properties given."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from cef.model import Node, RankedChunk, RankedNode
from cef.retrieve.askedkinds import AMOUNT, COUNTED, NAMED, asked_terms
from cef.retrieve.context import QueryContext
from cef.retrieve.english import MEASURE_NOUNS, MONEY, YEAR, dates_in, same_date
from cef.retrieve.names import name_finder
from cef.retrieve.presets import RelevanceSettings
from cef.retrieve.questionterms import Term
from cef.retrieve.relevance_vocab import key_words, label_words, stems

__all__ = ["Named", "Question", "evidence_of", "read_question", "shows", "unshown"]

#: how anchors found by name are marked (vector anchors are guesses, not things the question names)
_GUESSED = frozenset({"vector", "dense"})


def shows(q: Question, evidence: set[str], own: str) -> bool:
    """A result answers "what *year*" / "how *tall* is X" only where it shows a year / a length; a
    measure of a thing the question names, only where the result's own text (not the path it was
    found by) names it too: a length beside another place found from X is not X's height; a year may
    stand in a title that names X otherwise."""
    if not q.shown:
        return True
    measures = [key for key, p in q.shown.items() if _measure(key, p)]
    if measures and q.named:
        said = stems(own)
        if not any(n.said and n.said <= said for n in q.named):
            return False
    return all(key in evidence for key in q.shown)


def _measure(key: str, pattern: re.Pattern[str]) -> bool:
    """A measure, a count or an amount is shown only where a result's own text names the thing
    asked about; a year or a name anywhere in its evidence."""
    return pattern is not YEAR and key != NAMED


def evidence_of(q: Question, text: str) -> set[str]:
    """The match keys of a result's text, and the question's words it shows ("what year": a year);
    a measure word is held only where its quantity shows ("the *Old* Pier" holds no age)."""
    measures = {key for key, p in q.shown.items() if _measure(key, p)}
    shown = {key for key, shows in q.shown.items() if shows.search(text)}
    return (stems(text) - measures) | shown | q.given


@dataclass
class Named:
    """A node the question names: its link confidence, the stems of its names and of the question's
    own words for it (``said``)."""

    node_id: str
    confidence: float
    stems: set[str]
    said: set[str] = field(default_factory=set)


@dataclass
class Question:
    terms: dict[str, Term]  # stem -> the question's content word, in order
    named: list[Named] = field(default_factory=list)
    asked_given: bool = False  # the query names the relations to follow: what it asks is given
    miscredited: set[str] = field(default_factory=set)  # said only of another speaker (credit.py)
    shown: dict[str, re.Pattern[str]] = field(default_factory=dict)  # held where a result shows it
    unheld: set[str] = field(default_factory=set)  # a property asked of named things none of them has
    given: set[str] = field(default_factory=set)  # a measure a named thing holds as a property ("age")

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


def read_question(qc: QueryContext, settings: RelevanceSettings) -> Question:
    terms, shown = asked_terms(qc.query.query, label_words(qc), settings.phrase_words)
    q = Question(terms, asked_given=bool(qc.query.traversal.relation_types), shown=shown)
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
    finder = name_finder(qc.state)
    for node_id, conf in best.items():
        node = nodes.get(node_id)
        names = [mention[node_id]] + (finder.names_of(node) if node is not None else [])
        keys: set[str] = set().union(*(stems(n) for n in names if n))
        if keys & set(q.stems) or mention[node_id] in hinted:  # named by the question or its targets
            said = stems(mention[node_id]) & set(q.stems)
            if not same_date(
                _dates_at(qc.query.query, mention[node_id]), [d for n in names[1:] for d in dates_in(n)]
            ):
                conf = 0.0  # "the *September* 2024 meeting" is not the note "2024-03 Council Meeting"
            q.named.append(Named(node_id, min(max(conf, 0.0), 1.0), keys, said or keys))
    _given_measures(q, [nodes[n.node_id] for n in q.named if n.node_id in nodes])
    return q


def _dates_at(question: str, mention: str) -> list[tuple[int | None, int | None]]:
    """The dates the question writes in its words for a named thing or right before them ("the
    *September 2024* council meeting"), not elsewhere ("the PolyDial paper's authors *in 2023*": a
    time, not the paper's name)."""
    low = question.lower()
    at, span = (low.find(mention.lower()), mention) if mention else (-1, "")
    if at < 0:  # a fuzzy link's mention is the node's name: find its words without their date
        span = " ".join(w for w in mention.split() if not dates_in(w)).strip()
        at = low.find(span.lower()) if span else -1
    if at < 0:
        return []
    before = question[:at].split()[-3:]
    return dates_in(" ".join([*before, question[at : at + len(span)]]))


def _given_measures(q: Question, named: Sequence[Node]) -> None:
    """A measure the named things hold as a property is given, not to be shown by a result's text
    ("how *old* is Lucas Brandt": his ``age``; "how *much* does the plan cost": its ``price``): the
    knowledge base answers it with the named node, whatever its chunks say. Moves such keys from
    ``q.shown`` to ``q.given``."""
    for key in [k for k, p in q.shown.items() if _measure(k, p) and k != COUNTED]:
        dimension = "much" if key == AMOUNT else q.form(key)
        nouns = MEASURE_NOUNS.get(dimension, frozenset())
        if any(
            value not in (None, "") and nouns & set(key_words(prop).split())
            for node in named
            for prop, value in node.properties.items()
        ):
            del q.shown[key]
            q.given.add(key)


def unshown(q: Question, results: Sequence[RankedChunk], nodes: Sequence[RankedNode]) -> list[str]:
    """What the question asks a result to show that none of them does, in words for the note: "a
    sum of money", "a year", "the count asked", "a quantity for 'tall'"."""
    texts = [rc.chunk.content for rc in results] + [rn.text or "" for rn in nodes]
    out: list[str] = []
    for key, pattern in q.shown.items():
        # a measure of a named thing is shown only by a text that names it (as :func:`shows` reads)
        names = bool(q.named) and _measure(key, pattern)
        if any(
            pattern.search(t) and (not names or any(n.said and n.said <= stems(t) for n in q.named))
            for t in texts
        ):
            continue
        if pattern is MONEY:
            out.append("a sum of money")
        elif pattern is YEAR:
            out.append("a year")
        elif key == NAMED:
            out.append("a name")
        elif key == COUNTED:
            out.append("the count asked")
        else:
            out.append(f"a quantity for {q.form(key)!r}" if key != AMOUNT else "an amount")
    return out
