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
  a determiner, a quantifier, a possessive, a preposition or "have": "which patients have *asthma*", "the *loyalty
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

With named things the rule relevance is ``tie confidence × (floor + (1 − floor) × asked) × held``,
``held`` the weighted share of what is asked that is no name or code the knowledge base lacks (nor
a property the named things lack): an absent common word ("his irregular *heartbeat*") counts once,
as 0 of what is asked, since a paraphrase may be absent; a name is not paraphrased, so an absent one
counts again (before 2026-11-28 every absent thing counted twice); without: the coverage of
all the question's content words, counted the same way, × √held (a question that names nothing
is read more loosely: conversations and notes say in other words what a question asks).
A query's own hints count as naming: its ``targets`` name things, its
``traversal.relation_types`` say what it asks. The weights and the threshold
are fields of :class:`~cef.retrieve.presets.RelevanceSettings` (a query may set
them in ``options["relevance"]``).

**Measures and counts** (:mod:`cef.retrieve.askedkinds`): "what *year*" is held only by a result that
shows a year; "how *tall* / *long* / *old* is X" only by one that shows a quantity in that dimension's unit
(not by the word: "the *Old* Pier" holds no age), "how *many* X" only by one that shows a number of X or
is an answer node of X's kind, "how *much*" only by one that shows a sum of money when the question
speaks of money ("how much do we *pay*", "how much *revenue*") and a quantity otherwise; a measure or
count of a thing the question names, only where the result's own text (not the path it was found by)
names it in the question's words. A measure a named thing holds as a property is given by it ("how
*old* is Lucas Brandt": his ``age``; "how much does X cost": its ``price``).

**Dated names.** A thing whose name holds a date ("2024-03 Council Meeting") is not the one asked when
the question writes another date in or right before its words for it ("the *September 2024* council
meeting"): the link counts nothing (a fuzzy match of the rest of the name is another meeting).

**Facts a named thing lacks** (:attr:`~cef.retrieve.presets.RelevanceSettings.unheld_properties`): a
word of what is asked that only a property key holds ("the *brand* name of amiodarone") is held
nowhere when the named things' kind carries that property and none of them has it (another
medication's brand is not amiodarone's), or when their kind never carries it and no answer node
was found ("the brand of the drug John takes" asks it of the answer). A code the question writes with
a capital ("INC-2200") of a family the knowledge base holds ("INC") is held only where its number is.
So is a word naming a relation (the path scorer's relation words) that no named thing has an edge of
while other nodes of their kind do (:mod:`cef.retrieve.relevance_relations`,
:attr:`~cef.retrieve.presets.RelevanceSettings.unheld_relations`): "which database does the pricing
service store its data in", when only other services store data, and no answer's path whose every
hop the question names walks it; a "nothing matched" note names it (off by default: on MetaQA it still
refuses a few right answers reached through a relation the question does not name).

A word is held when a record's text or a node's name holds it, when it is a label, relation or
property-key word ("the *brand* name of lisinopril" asks a property; an identifier noun right after
one, "the ICD-10 *code*": the ``icd10`` property), when an embedder reads it as
a label or a relation, or when a word of its base is held ("supervisor" where the notes say
"supervises", "foggy" where they say "fog").

**Calibration.** The reported relevance is the probability that the result answers the question:
``1 / (1 + exp(-(b0 + b_rule × rule)))``, the coefficients
:attr:`~cef.retrieve.presets.RelevanceSettings.calibration`, fitted by logistic regression on twelve
domains (``bench/fit_relevance.py``; reported leave-one-domain-out). It keeps the rule's order
(``b_rule`` > 0) and its verdicts (even odds at a rule relevance of 0.49). The question's other
evidence — ``named`` (the best link confidence of a thing it names) and ``absent`` (the weighted
share of what it asks that the knowledge base holds nowhere) — is reported in the verdict's
``features``; fitted beside the rule, neither improved the verdicts on a domain left out (``named``
helps graphs and hurts conversations), nor did the best chunk's cosine (on the embedder's scale).

**Dialogue speakers.** When the question names exactly one speaker of the results' dialogue turns
("What did *Melanie* make for the church?"), a turn's evidence is what that speaker said and the
sentences of the other side that name them or address them as the hearer; a question word that the
results hold only in another speaker's words counts as held nowhere (the question credits one
speaker with the other's deed; :mod:`cef.retrieve.credit`,
:attr:`~cef.retrieve.presets.RelevanceSettings.credit_speakers`).

**Semantic support** (:mod:`cef.retrieve.support`, off unless
:attr:`~cef.retrieve.presets.RelevanceSettings.support`): the best cosine of what the question asks
beyond its named things with the results' chunks, answer nodes and path relations, reported in the
verdict's ``features`` for fitting; it is not in the shipped calibration (it did not help a domain
left out).

**Vouching** (:mod:`cef.retrieve.vouch`, off unless
:attr:`~cef.retrieve.presets.RelevanceSettings.vouch` is at most 1): when no result reaches the
threshold, a question word no record holds is held by a result whose own things (node names, path
relations; not the things the question names) the embedder reads as it ("*Zestril*": lisinopril); the
best such cosine is reported as the ``vouched`` feature.

When no chunk and no answer node reaches the threshold (default
:data:`NOTHING_MATCHED_BELOW`), the result says so:
``metadata["relevance"]["nothing_matched"]`` is true, a note says ``nothing
matched``, and there are no answer nodes. Answer nodes below it are dropped
whatever the chunks say. Chunks are kept (ranked as before), each with its
relevance, for a caller who wants to look anyway.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from cef.model import GraphPath, RankedChunk, RankedNode
from cef.retrieve.askedkinds import COUNTED, NAMED, name_asked
from cef.retrieve.context import QueryContext
from cef.retrieve.credit import credited_text, named_speaker, people, unframed
from cef.retrieve.names import name_finder
from cef.retrieve.presets import AutoSettings, RelevanceSettings, settings_for
from cef.retrieve.questionterms import Term
from cef.retrieve.qwords import relation_share
from cef.retrieve.relevance_question import Question, evidence_of, read_question, shows, unshown
from cef.retrieve.relevance_relations import lacking_relations, unheld_properties
from cef.retrieve.relevance_vocab import (
    relation_words,
    stems,
    weigh,
)
from cef.retrieve.stagestate import Verdict
from cef.retrieve.support import semantic_support
from cef.retrieve.vouch import vouched_words

__all__ = ["FLOOR", "NOTHING_MATCHED_BELOW", "assess_relevance"]

#: the default threshold: below this relevance (best chunk and best answer node), "nothing matched"
NOTHING_MATCHED_BELOW = RelevanceSettings().threshold
#: the default floor (:attr:`~cef.retrieve.presets.RelevanceSettings.floor`)
FLOOR = RelevanceSettings().floor


def _path_text(qc: QueryContext, path: GraphPath | None, nodes: bool = True) -> str:
    """The words of a path: its node names (with ``nodes``), its relations' names and descriptions."""
    if path is None:
        return ""
    g = qc.state.graph
    parts = list(path.node_names) if nodes else []
    for name in path.relation_types:
        parts.append(relation_words(name))
        rt = g.rel_types.get(name)
        if rt is None:
            rt = next((r for r in g.rel_types.values() if r.inverse == name), None)
        if rt is not None and rt.description:
            parts.append(rt.description)
    return " ".join(parts)


def _credit(t: Term, evidence: set[str], settings: RelevanceSettings, miscredited: bool = False) -> float:
    if t.key in evidence:
        return 1.0
    return 0.0 if t.absent_thing or miscredited else settings.elsewhere


def _coverage(q: Question, wanted: Sequence[str], evidence: set[str], settings: RelevanceSettings) -> float:
    """The weighted share of the wanted words the result holds: 1 in its evidence, ``elsewhere``
    when the knowledge base holds the word elsewhere (or it is the question's phrasing), 0 when the
    word names a thing the knowledge base does not hold."""
    terms = [q.terms[s] for s in wanted]
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 1.0
    return (
        sum(
            t.weight
            * _credit(t, evidence, settings, t.key in q.miscredited or t.key in q.shown or t.key in q.unheld)
            for t in terms
        )
        / total
    )


def _held(
    q: Question, wanted: Sequence[str], *, names_only: bool = False, vouched: frozenset[str] = frozenset()
) -> float:
    """The weighted share of the wanted words that name nothing absent: the most a relation path
    can explain of the question. ``names_only``: only a name or a code the knowledge base lacks
    counts as absent (a paraphrase may be absent, a name is not paraphrased); a property the named
    things lack (:func:`~cef.retrieve.relevance_relations.unheld_properties`) is absent either way."""
    terms = [q.terms[s] for s in wanted]
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 1.0
    return (
        sum(
            t.weight
            for t in terms
            if t.key in vouched
            or not ((t.absent_thing and (t.proper or not names_only)) or t.key in q.unheld)
        )
        / total
    )


def _relevance(
    q: Question,
    evidence: set[str],
    ties: set[str],
    settings: RelevanceSettings,
    named: float = 0.0,
    vouched: frozenset[str] = frozenset(),
) -> float:
    """``named``: how much of the question the relation path behind the result explains (the path
    stage's own measure, 0 for results it did not find); ``vouched``: the absent words this result's
    own things mean (:mod:`cef.retrieve.vouch`), held by it."""
    evidence = evidence | vouched
    if q.asked_given:
        named = 1.0
    if not q.named and all(t.df == 0 for t in q.terms.values()):
        return 0.0  # nothing the question says is in the knowledge base
    if not q.named:
        held = _held(q, q.stems, vouched=vouched)
        return round(max(_coverage(q, q.stems, evidence, settings), min(named, held)) * math.sqrt(held), 4)
    tie = max(
        (n.confidence for n in q.named if n.node_id in ties or (n.stems and n.stems <= evidence)), default=0.0
    )
    wanted = q.asked
    held = _held(q, wanted, vouched=vouched)
    asked = max(_coverage(q, wanted, evidence, settings), min(named, held))
    floor = settings.floor
    # what is asked about a named thing; an absent word counts once, as 0 of what is asked, unless
    # it is a name or a code (or a property the named things lack): a paraphrase may be absent, a
    # name is not paraphrased, so the share of names the knowledge base holds scales it again
    tied = tie * (floor + (1.0 - floor) * asked) * _held(q, wanted, names_only=True, vouched=vouched)
    # a result tied to nothing the question names may still hold all of its words
    loose = floor * _coverage(q, q.stems, evidence, settings) * _held(q, q.stems, vouched=vouched)
    return round(min(1.0, max(tied, loose)), 4)


def _chunk_relevance(
    qc: QueryContext,
    q: Question,
    rc: RankedChunk,
    settings: RelevanceSettings,
    said: str | None = None,
    vouched: frozenset[str] = frozenset(),
) -> float:
    """``said``: when the question names one dialogue speaker, what this turn's chunk says of them
    (what they said and what was said naming them, :mod:`cef.retrieve.credit`): its evidence."""
    chunk, e = rc.chunk, rc.explanation
    headings = chunk.metadata.get("headings")
    title = chunk.metadata.get("title")
    speaker = chunk.metadata.get("speaker")  # a dialogue turn names who says it
    own = " ".join(
        [
            unframed(chunk) if said is None else said,  # a turn's framing ends a sentence
            speaker if isinstance(speaker, str) else "",
            title if isinstance(title, str) else "",
            " ".join(h for h in headings if isinstance(h, str)) if isinstance(headings, list) else "",
        ]
    )
    text = " ".join([own, _path_text(qc, e.path), " ".join(e.entities)])
    ties = set(e.anchors)
    if e.path is not None and e.path.node_ids:
        ties.add(e.path.node_ids[0])
    if chunk.node_id is not None:
        ties.add(chunk.node_id)
    from_paths = e.strategy.value == "paths" or bool({"paths", "path_context"} & set(e.shares))
    evidence, named = evidence_of(q, text), _path_named(qc) if from_paths else 0.0
    names = q.shown.get(NAMED)
    if names is not None and not names.search(own):
        evidence.discard(NAMED)  # a name its own text gives, not the entities or the path it was found by
    return _relevance(q, evidence, ties, settings, named, vouched) * shows(q, evidence, own)


def _credit_speaker(
    qc: QueryContext, q: Question, results: list[RankedChunk], settings: RelevanceSettings
) -> dict[str, str]:
    """When the question names one speaker of the results' dialogue turns: what each turn's chunk
    says of them (by chunk id); the question's words that the results say only of another speaker
    are ``miscredited`` (they count as a thing the knowledge base does not hold: the question credits
    one speaker with another's words, :mod:`cef.retrieve.credit`)."""
    person = named_speaker(qc.query.query, results) if settings.credit_speakers else None
    if person is None:
        return {}
    said: dict[str, str] = {}
    theirs: set[str] = set()
    others: set[str] = set()
    for rc in results:
        got = credited_text(rc.chunk, person)
        if got is not None:
            said[rc.chunk.id] = got[0]
            theirs |= stems(got[0])
            others |= stems(got[1])
    q.miscredited = {s for s in q.stems if s in others and s not in theirs} - stems(person)
    return said


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


def _node_relevance(
    qc: QueryContext,
    q: Question,
    rn: RankedNode,
    settings: RelevanceSettings,
    vouched: frozenset[str] = frozenset(),
) -> float:
    node = rn.node
    own = " ".join([*name_finder(qc.state).names_of(node), rn.text])
    text = " ".join([own, node.label, _path_text(qc, rn.path)])
    ties = {node.id}
    if rn.path is not None and rn.path.node_ids:
        ties.add(rn.path.node_ids[0])
    named = _answer_named(qc, node.id)
    # a property this node shows is not the one asked of the named things when none of them has it
    evidence = evidence_of(q, text) - q.unheld
    if NAMED in q.shown:
        evidence.add(NAMED)  # an answer node is a named thing: "what is the name of" its name
    counted = q.shown.get(COUNTED)
    if counted is not None and counted.search(f"2 {re.sub(r'(?<=[a-z])(?=[A-Z])', ' ', node.label)}"):
        # "how many services does checkout call": an answer node that is a service, on a path from
        # checkout, is one of those counted
        evidence.add(COUNTED)
        own = text
    relevance = _relevance(q, evidence, ties, settings, named, vouched)
    info = qc.stages.paths
    relation_stems = stems(_path_text(qc, rn.path, nodes=False))  # the relations' names and descriptions
    asked = [q.form(s) for s in q.asked]
    relations = rn.path.relation_types if rn.path is not None else []
    if (
        info is not None
        and info.confident(settings_for(AutoSettings, qc.query))
        and named >= 0.5
        and (
            bool(relation_stems.intersection(q.asked))
            # a word naming a relation by its form ("director": directed_by), the paths' own matcher
            or any(relation_share(asked, r) > 0 for r in relations)
        )
    ):
        # the question names the relation path this answer ends (at least half its hops, from an
        # anchor it names, a word of what it asks in the path's relations): the path vouches for
        # the answer whatever other words the question holds, but not a name or a code it says that
        # the knowledge base holds nowhere ("do we use *Stripe* for payments": a paraphrase may be
        # absent, a name is not paraphrased)
        tie = max((n.confidence for n in q.named if n.node_id in ties), default=0.0)
        by_path = tie * (settings.floor + (1.0 - settings.floor) * named)
        relevance = max(relevance, round(by_path * _held(q, q.asked, names_only=True, vouched=vouched), 4))
    return relevance * shows(q, evidence, own)


def _features(q: Question, measured: list[str]) -> dict[str, float]:
    """The question's own evidence, beside each result's rule relevance: ``named``, the best link
    confidence of a thing it names (0: it names none); ``absent``, the weighted share of what it asks
    (``measured``) that the knowledge base holds nowhere, verbs and phrasing included (reported
    for the calibration's fit, ``bench/fit_relevance.py``)."""
    terms = [q.terms[s] for s in measured]
    total = sum(t.weight for t in terms)
    absent = sum(t.weight for t in terms if t.df == 0) / total if total > 0 else 0.0
    return {
        "named": round(max((n.confidence for n in q.named), default=0.0), 4),
        "absent": round(absent, 4),
    }


def _asked_evidence(features: dict[str, float], settings: RelevanceSettings) -> float:
    """What the question's own evidence adds to the calibration's logistic
    (:attr:`~cef.retrieve.presets.RelevanceSettings.evidence`; 0 without it)."""
    if settings.evidence is None or settings.calibration is None:
        return 0.0
    named, absent = features["named"], features["absent"]
    b_named, b_absent, b_unnamed, b_both = settings.evidence
    return b_named * named + b_absent * absent + b_unnamed * (1.0 - named) * absent + b_both * named * absent


def _calibrated(rule: float, settings: RelevanceSettings, evidence: float = 0.0) -> float:
    """The probability that a result with this rule relevance answers the question: the logistic
    of :attr:`~cef.retrieve.presets.RelevanceSettings.calibration` (fitted on the pooled dev sets),
    plus the question's ``evidence`` (:func:`_asked_evidence`)."""
    if settings.calibration is None:
        return rule
    b0, b_rule = settings.calibration
    z = b0 + b_rule * rule + evidence
    return round(1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0))), 4)


def _vouch(
    qc: QueryContext,
    q: Question,
    measured: list[str],
    results: list[RankedChunk],
    said: dict[str, str],
    chunk_rules: list[float],
    node_rules: list[float],
    settings: RelevanceSettings,
) -> float:
    """Raise (in place) each result's rule relevance with the absent words its own things vouch for
    (:mod:`cef.retrieve.vouch`); the best cosine of an absent word with a result's own things (reported)."""
    # a word before a label word names an instance ("the *wishlist* service"): a name, not paraphrased
    absent = {q.terms[s].form: s for s in measured if q.terms[s].df == 0 and not q.terms[s].instance}
    named = frozenset(n.node_id for n in q.named)
    for_chunks, for_nodes, top = vouched_words(
        qc, list(absent), results, qc.answer_nodes, settings.vouch, named
    )
    for i, (rc, forms) in enumerate(zip(results, for_chunks, strict=True)):
        if forms:
            keys = frozenset(absent[f] for f in forms)
            r = _chunk_relevance(qc, q, rc, settings, said.get(rc.chunk.id), keys)
            chunk_rules[i] = max(chunk_rules[i], r)
    for i, (rn, forms) in enumerate(zip(qc.answer_nodes, for_nodes, strict=True)):
        if forms:
            r = _node_relevance(qc, q, rn, settings, frozenset(absent[f] for f in forms))
            node_rules[i] = max(node_rules[i], r)
    return top


def assess_relevance(qc: QueryContext, results: list[RankedChunk]) -> list[RankedChunk]:
    """``results`` with their relevance; answer nodes below the threshold dropped from ``qc``; the
    verdict in ``qc.stages.relevance`` (and a note when nothing matched)."""
    settings = settings_for(RelevanceSettings, qc.query)
    threshold = settings.threshold
    q = read_question(qc, settings)
    weigh(qc, q.terms, settings)
    measured = q.asked if q.named else q.stems
    features = _features(q, measured)
    ev = _asked_evidence(features, settings)
    said = _credit_speaker(qc, q, results, settings)
    if NAMED in q.shown:  # a name other than the question's own and the dialogue's people's
        q.shown[NAMED] = name_asked(qc.query.query, people(results))
    q.unheld = (
        unheld_properties(qc, q.asked, [n.node_id for n in q.named]) if settings.unheld_properties else set()
    )
    lacking = (
        lacking_relations(
            qc, q.terms, q.asked, [n.node_id for n in q.named], frozenset().union(*(n.said for n in q.named))
        )
        if settings.unheld_relations
        else {}
    )
    q.unheld |= set(lacking)
    chunk_rules = [_chunk_relevance(qc, q, rc, settings, said.get(rc.chunk.id)) for rc in results]
    node_rules = [_node_relevance(qc, q, rn, settings) for rn in qc.answer_nodes]
    if _calibrated(max([0.0, *chunk_rules, *node_rules]), settings, ev) < threshold:
        features["vouched"] = _vouch(qc, q, measured, results, said, chunk_rules, node_rules, settings)
    if settings.support:
        support = semantic_support(qc, [q.form(s) for s in measured], results, qc.answer_nodes)
        if support is not None:
            features["support"] = support
    out = [
        rc.model_copy(update={"relevance": _calibrated(r, settings, ev)})
        for rc, r in zip(results, chunk_rules, strict=True)
    ]
    nodes = [
        rn.model_copy(update={"relevance": _calibrated(r, settings, ev)})
        for rn, r in zip(qc.answer_nodes, node_rules, strict=True)
    ]
    kept = [rn for rn in nodes if (rn.relevance or 0.0) >= threshold]
    best = max([0.0, *(r.relevance or 0.0 for r in out), *(n.relevance or 0.0 for n in nodes)])
    nothing = best < threshold
    qc.answer_nodes = [] if nothing else kept
    missing = [q.form(s) for s in measured if q.terms[s].df == 0]
    features["rule"] = max([0.0, *chunk_rules, *node_rules])
    qc.stages.relevance = Verdict(
        best=best,
        threshold=threshold,
        nothing_matched=nothing,
        named=[n.node_id for n in q.named],
        asked=[q.form(s) for s in measured],
        unknown=missing,
        weights={q.form(s): round(q.terms[s].weight, 3) for s in measured},
        features=features,
    )
    if nothing:
        why = f" (the knowledge base has no {', '.join(repr(m) for m in missing)})" if missing else ""
        why += "".join(f" (what the question names has no {r} edge)" for r in dict.fromkeys(lacking.values()))
        why += "".join(f" (no result shows {w})" for w in unshown(q, results, nodes))
        qc.notes.append(f"nothing matched: the best result's relevance {best:.2f} is below {threshold}{why}")
    elif len(kept) < len(nodes):
        qc.notes.append(f"relevance: {len(nodes) - len(kept)} answer node(s) below {threshold} left out")
    return out
