"""Conversation turns in the ``auto`` route: sessions, speakers and the turn a reply answers.

A conversation ingested with :func:`cef.memory.conversation.ingest_conversation`
is kept as turns: short chunks (metadata ``kind: turn``) linked to a dated
``Session`` node, each naming its speaker and holding, after its own text, the
turn it answers (so a reply is found by the words of the question it answers).
When the chunks a question finds are such turns, the route ranks them here
instead of by PageRank over the text graph (mentions in chit-chat are mostly
the two speakers' names, which seed nothing useful):

* **vector** and **BM25** lists are fused by weighted reciprocal rank
  (``Σ weight / (fuse_k + rank)``). BM25 here scores the Snowball stems of the
  scope's turns (their own text and the turn they answer), with IDF among those
  turns: full-text search matches words as written ("paint" does not find
  "painting") and weighs them by every scope's text. Each two content stems a
  turn says in order, at most one other between, are a term too, the question's
  pairs weighed ``phrase`` ("support group": the two words apart say something else);
* **asked**: both lists match the question without the speakers' names: every turn is kept
  (and embedded) with its speaker in front and every session says them, so a short question's
  vector leans toward whatever the person named said or was told, not what it asks about (the
  named speaker is weighed on its own, below);
* **neighbours**: a turn gains ``neighbours`` × the better fused score of the
  turns just before and after it in its session (a short turn means what the
  turns around it say);
* **session**: a session is scored by the BM25 scores of its best
  ``session_turns`` turns among the ``session_depth`` best BM25 hits, and every
  candidate turn gains ``session`` × (its session's score / the best
  session's) × the best fused score: evidence is said where the topic is
  talked about, not in a stray line that shares one word;
* **speaker**: when the question names exactly one of the candidate turns'
  speakers ("what did Melanie paint"), that speaker's turns count
  ``1 + speaker`` times;
* **date**: when the question names a calendar date ("in June", "on 13 October
  2023", "in 2022"), turns said on it or naming it (their resolved relative
  dates) count ``1 + date`` times;
* **when**: a question that asks when (:func:`.asks_when`: "when did …", "what year …", "how long
  ago …") is answered by a turn that says when: turns naming a date (a relative or calendar date
  they say, resolved at ingest) up to the day they were said count ``1 + when`` times, those
  naming only later dates (a plan: "next month") ``1 + when_other`` (the other way round for a
  question about a plan, :func:`.asks_ahead`);
* **several occasions**: a question that asks about several occasions, read by
  general English (:func:`.asks_several`: "how many", "both", a present perfect
  after its wh-word, "what" / "which" + a plural noun + its auxiliary), has its
  evidence spread over sessions: its session prior weighs ``several_session``
  instead of ``session``, and its best turns are re-ranked greedily, a turn's
  score × ``several_diversity`` per turn of its session ranked before it;
* **second round**: the first round's best ``feedback_turns`` turns give their
  ``feedback_terms`` heaviest stems (BM25 weight in those turns; not the
  question's words nor the speakers' names) as a second BM25 list, fused
  ``several_feedback`` × (``feedback`` for other questions, the first round's
  best turn kept first): pseudo-relevance feedback (RM3-style), evidence said
  in other sessions shares words with the evidence found, not with the question.

The scope's turns (ids, sessions, speakers, dates, neighbours and their BM25
index) are read once per graph generation; the vector list is the exact cosine
over them.

The weights are a :class:`~cef.retrieve.presets.DialogueSettings` (query
option ``dialogue``), fitted leave-one-conversation-out (``bench/fit_locomo.py``).
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from dataclasses import dataclass

import numpy as np

from cef.model import Chunk, Explanation, RankedChunk, SearchStrategy, in_scope
from cef.retrieve.context import QueryContext
from cef.retrieve.dialoguequestion import (
    asked_dates,
    asks_ahead,
    asks_several,
    asks_when,
    named_speaker,
    same_date,
    without_speakers,
)
from cef.retrieve.ports import EngineView
from cef.retrieve.presets import DialogueSettings, settings_for
from cef.retrieve.search import bm25_hits
from cef.retrieve.stagestate import DialogueInfo, RouteInfo, RouteSource
from cef.text import QUERY_STOP_WORDS, STOP_WORDS, stem, words

__all__ = ["SESSION_LABEL", "TURN_KIND", "dialogue_search", "is_turn"]

#: chunk metadata ``kind`` of a conversation turn, and the label of the node a turn hangs on
TURN_KIND = "turn"
SESSION_LABEL = "Session"


def is_turn(chunk: Chunk) -> bool:
    return chunk.metadata.get("kind") == TURN_KIND


class _Lexicon:
    """BM25 over the stems of a scope's turns (``k1`` 1.2, ``b`` 0.75; IDF among those turns)."""

    K1 = 1.2
    B = 0.75

    def __init__(self, texts: list[str], heads: list[str] | None = None) -> None:
        """``heads``: per text, the words it opens with that say who and when, not what (the
        ``Speaker (8 May 2023)`` of a turn): what a second round does not read from it."""
        postings: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.zeros(len(texts), dtype=np.float32)
        for i, text in enumerate(texts):
            stems = _stems(text)
            lengths[i] = len(stems)
            # a pair of content stems said close together is a term of its own ("support group")
            for term, tf in Counter([*stems, *_pairs(stems)]).items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(i)
                tfs.append(tf)
        n = len(texts)
        norm = self.K1 * (1 - self.B + self.B * lengths / max(float(lengths.mean()) if n else 1.0, 1.0))
        self.size = n
        #: per turn, its terms but its head's (what a second round reads from the turns found first)
        self.terms: list[list[str]] = [[] for _ in range(n)]
        head_stems = [set(_stems(h)) for h in heads] if heads is not None else [set() for _ in range(n)]
        for term, (docs, _) in postings.items():
            for d in docs:
                if term not in head_stems[d]:
                    self.terms[d].append(term)
        #: term (a stem, or two as "a b") -> (turn positions, that term's BM25 contribution to each)
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (docs, tfs) in postings.items():
            idx = np.asarray(docs, dtype=np.int64)
            freq = np.asarray(tfs, dtype=np.float32)
            idf = np.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            self.postings[term] = (idx, (idf * freq * (self.K1 + 1) / (freq + norm[idx])).astype(np.float32))

    def scores(self, question: str, phrase: float = 0.0) -> np.ndarray:
        """Every turn's BM25 score for the question's content words (0: none of them), plus
        ``phrase`` × that of the pairs of them it says in order, close together."""
        out = np.zeros(self.size, dtype=np.float32)
        stems = _stems(question, QUERY_STOP_WORDS)
        terms = [(t, 1.0) for t in dict.fromkeys(stems)]
        if phrase > 0:
            terms += [(t, phrase) for t in dict.fromkeys(_pairs(stems))]
        for term, weight in terms:
            hit = self.postings.get(term)
            if hit is not None:
                out[hit[0]] += weight * hit[1]
        return out

    def feedback(self, seeds: list[int], skip: set[str], k: int) -> np.ndarray:
        """Every turn's BM25 score for the ``k`` terms (single stems, not in ``skip``) that weigh most
        in the ``seeds`` turns, each weighed by that share (RM3-style pseudo-relevance feedback)."""
        weight: dict[str, float] = {}
        for d in seeds:
            for term in self.terms[d]:
                if " " in term or term in skip:
                    continue
                idx, contrib = self.postings[term]
                weight[term] = weight.get(term, 0.0) + float(contrib[int(np.searchsorted(idx, d))])
        out = np.zeros(self.size, dtype=np.float32)
        best = sorted(weight.items(), key=lambda tw: (-tw[1], tw[0]))[:k]
        total = sum(w for _, w in best) or 1.0
        for term, w in best:
            idx, contrib = self.postings[term]
            out[idx] += (w / total) * contrib
        return out


#: two stems at most this far apart (content stems: function words left out) make a pair
PAIR_SPAN = 2


def _pairs(stems: list[str]) -> list[str]:
    """Each two stems in this order at most :data:`PAIR_SPAN` apart, as one term ("support group";
    "group ... therapy" in "support group for therapy"). Span 2 against 1, LOCO on LoCoMo: held out
    session Hit@1 78.9 against 77.4; 3 gave the same as 2."""
    return [
        f"{a} {b}" for k in range(1, PAIR_SPAN + 1) for a, b in zip(stems, stems[k:], strict=False) if a != b
    ]


def _stems(text: str, stop: frozenset[str] = STOP_WORDS) -> list[str]:
    return [stem(w) for w in words(text) if w not in stop]


@dataclass(frozen=True)
class _Turns:
    """The conversation turns a scope sees (in conversation order): ids, and each turn's session
    node, speaker, dates and neighbours, and the BM25 index of their stems."""

    ids: list[str]
    session: dict[str, str]
    speaker: dict[str, str]
    #: the days a turn is about: the day it was said and the dates it names (ISO, at their precision)
    dates: dict[str, list[str]]
    #: per position: the session's index (sessions numbered in order of appearance) and the speaker
    session_of: np.ndarray
    #: per position: the positions of the turns before and after it in its session (-1: none)
    previous: np.ndarray
    next: np.ndarray
    lexicon: _Lexicon
    #: the speakers' names
    speakers: frozenset[str]
    #: per position: whether the turn names a date up to the day it was said (what happened), and
    #: one after it (what was planned)
    dated: np.ndarray
    planned: np.ndarray


#: per engine, per scope: the turns (read once per graph generation, not per query)
_turns: weakref.WeakKeyDictionary[EngineView, dict[str | None, tuple[tuple[int, int], _Turns]]] = (
    weakref.WeakKeyDictionary()
)
_turns_lock = threading.Lock()


def _scope_turns(qc: QueryContext) -> _Turns | None:
    """The turns of the query's scope (None: the graph has no sessions, so no conversation)."""
    st = qc.state
    g = st.graph
    code = g.labels.get(SESSION_LABEL)
    if code is None:
        return None
    scope = qc.query.scope
    stamp = (id(g), g.generation)
    with _turns_lock:
        cached = _turns.get(st, {}).get(scope)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    n = len(g.node_ids)
    mask = g.visible_nodes(None if scope is None else [scope]) & (g.node_label.view[:n] == code)
    sessions = [g.node_ids[int(p)] for p in np.flatnonzero(mask)]
    linked = st.store.chunks_for_nodes(sessions) if sessions else {}
    ids = [cid for node in sessions for cid in linked.get(node, [])]
    session: dict[str, str] = {}
    speaker: dict[str, str] = {}
    dates: dict[str, list[str]] = {}
    order: dict[str, tuple[str, int]] = {}
    content: dict[str, str] = {}
    for c in st.store.get_chunks(ids):
        if is_turn(c) and in_scope(c.scope, scope):
            session[c.id] = str(c.node_id)
            speaker[c.id] = str(c.metadata.get("speaker") or "")
            said = str(c.metadata.get("date") or "")[:10]
            named = [str(d.get("date")) for d in c.metadata.get("dates") or [] if isinstance(d, dict)]
            dates[c.id] = [d for d in (said, *named) if d]
            turn = c.metadata.get("turn")
            order[c.id] = (str(c.metadata.get("conversation") or ""), turn if isinstance(turn, int) else 0)
            content[c.id] = c.content
    kept = sorted((i for i in ids if i in session), key=lambda i: (order[i], i))
    numbers = {k: n for n, k in enumerate(dict.fromkeys(session[i] for i in kept))}
    session_of = np.asarray([numbers[session[i]] for i in kept], dtype=np.int64)
    same = session_of[1:] == session_of[:-1] if len(kept) > 1 else np.zeros(0, dtype=bool)
    positions = np.arange(len(kept))
    previous = np.full(len(kept), -1, dtype=np.int64)
    nxt = np.full(len(kept), -1, dtype=np.int64)
    previous[1:][same] = positions[:-1][same]
    nxt[:-1][same] = positions[1:][same]
    out = _Turns(
        kept,
        session,
        speaker,
        dates,
        session_of,
        previous,
        nxt,
        _Lexicon([content[i] for i in kept], [_head(content[i], speaker[i]) for i in kept]),
        frozenset(speaker[i] for i in kept if speaker[i]),
        np.fromiter((any(d <= dates[i][0] for d in dates[i][1:]) for i in kept), dtype=bool, count=len(kept)),
        np.fromiter((any(d > dates[i][0] for d in dates[i][1:]) for i in kept), dtype=bool, count=len(kept)),
    )
    with _turns_lock:
        _turns.setdefault(st, {})[scope] = (stamp, out)
    return out


def _head(content: str, speaker: str) -> str:
    """A turn's head, ``Speaker (8 May 2023)`` (how conversation ingest keeps a turn), else its speaker."""
    end = content.find("): ")
    return content[:end] if speaker and content.startswith(f"{speaker} (") and end > 0 else speaker


def _content_words(question: str) -> str:
    """The question without its function and question words (what full-text search should weigh)."""
    kept = [w for w in words(question) if w not in QUERY_STOP_WORDS]
    return " ".join(kept) if kept else question


def dialogue_search(qc: QueryContext) -> list[RankedChunk] | None:
    """The question's turns ranked as the module doc says; None when the chunks it finds are not
    conversation turns (the route then goes on as for any text)."""
    turns = _scope_turns(qc)
    if turns is None or not turns.ids:
        return None
    s = settings_for(DialogueSettings, qc.query)
    q = qc.query
    n = len(turns.ids)
    allowed = set(turns.ids)
    head = bm25_hits(qc, _content_words(q.query), 5)
    if head and sum(cid in allowed for cid, _ in head) * 2 <= len(head):
        return None  # the question finds other text first: not a question about the conversation
    visible = np.ones(n, dtype=bool)
    if qc.wanted_tags:
        seen = qc.chunks(turns.ids)
        visible = np.fromiter((i in seen for i in turns.ids), dtype=bool, count=n)
    # what the question asks about, without the speakers' names (see the module doc)
    asked = without_speakers(q.query, turns.speakers)
    lexical = np.where(visible, turns.lexicon.scores(asked, s.phrase), 0.0)
    dense = np.full(n, -np.inf, dtype=np.float32)
    vec = qc.embed(asked) if qc.state.embedder is not None and len(qc.state.chunk_vectors) else None
    if vec is not None:
        dense = np.where(visible, qc.state.chunk_vectors.similarities(vec, turns.ids), -np.inf)
    elif not head and not lexical.any():
        return None  # nothing in the conversation, nor elsewhere, says the question's words
    fused = np.zeros(n, dtype=np.float64)
    ranks: dict[str, np.ndarray] = {}
    for name, scores, weight, floor in (("vector", dense, s.vector, -np.inf), ("bm25", lexical, s.bm25, 0.0)):
        rank = _ranks(scores)
        listed = (rank <= s.depth) & (scores > floor)
        fused += np.where(listed, weight / (s.fuse_k + rank), 0.0)
        ranks[name] = np.where(listed, rank, 0)
    if s.neighbours > 0:
        around = np.zeros(n, dtype=np.float64)
        for side in (turns.previous, turns.next):
            around = np.maximum(around, np.where(side >= 0, fused[np.maximum(side, 0)], 0.0))
        fused = fused + s.neighbours * around
    found, session_score = _session_scores(turns, lexical, s)
    best_session = float(session_score.max()) if len(session_score) else 0.0
    prior = session_score[turns.session_of] / best_session if best_session > 0 else np.zeros(n)
    candidate = (fused > 0) | np.isin(np.arange(n), found)
    several = asks_several(q.query)
    session_w = s.several_session if several else s.session
    scored = fused + session_w * prior * float(fused.max(initial=0.0))
    speakers = {turns.speaker[turns.ids[int(p)]] for p in np.flatnonzero(candidate)}
    named = named_speaker(q.query, speakers)
    speaker_turns = np.zeros(n, dtype=bool)
    if named is not None:
        speaker_turns = np.fromiter((turns.speaker[i] == named for i in turns.ids), dtype=bool, count=n)
        scored = np.where(speaker_turns, scored * (1.0 + s.speaker), scored)
    scored = _dated(turns, q.query, scored, s)
    scored = np.where(candidate & visible, scored, -np.inf)
    feedback = s.several_feedback if several else s.feedback
    if feedback > 0:
        skip = set(_stems(asked, QUERY_STOP_WORDS)) | {stem(w) for sp in turns.speakers for w in words(sp)}
        scored = _second_round(turns, scored, visible, skip, feedback, s, pin=not several)
    if several and named is not None and s.several_speaker > 0:
        scored = _speaker_below_best(scored, speaker_turns, s.several_speaker)
    diverse = several and s.several_diversity < 1.0
    depth = max(q.top_k, _DIVERSE_DEPTH) if diverse else q.top_k
    top = [int(p) for p in np.argsort(-scored, kind="stable")[:depth] if np.isfinite(scored[p])]
    if diverse:
        top = _diverse(top, scored, turns.session_of, s.several_diversity)
    top = top[: q.top_k]
    qc.stages.route = RouteInfo(
        sources={
            "vector": RouteSource(s.vector, int((ranks["vector"] > 0).sum())),
            "bm25": RouteSource(s.bm25, int((ranks["bm25"] > 0).sum())),
        },
        hints=[],
        dialogue=DialogueInfo(int((session_score > 0).sum()), named),
    )
    chunks = qc.chunks([turns.ids[p] for p in top])
    out = []
    for p in top:
        cid = turns.ids[p]
        c = chunks.get(cid)
        if c is None:
            continue
        notes = [f"dialogue: session {c.metadata.get('session')}, speaker {turns.speaker[cid]}"]
        if speaker_turns[p]:
            notes.append(f"the question names the speaker {named}")
        out.append(
            RankedChunk(
                chunk=c,
                score=round(float(scored[p]), 6),
                explanation=Explanation(
                    strategy=SearchStrategy.AUTO,
                    rank_sources={k: int(r[p]) for k, r in ranks.items() if r[p] > 0},
                    notes=notes,
                ),
            )
        )
    return out


def _dated(turns: _Turns, question: str, scored: np.ndarray, s: DialogueSettings) -> np.ndarray:
    """``scored`` with the turns said on (or naming) a date the question names × ``1 + date``, and,
    for a question that asks when, the turns that say when × ``1 + when`` (those naming only dates
    on the other side of the day they were said × ``1 + when_other``)."""
    n = len(turns.ids)
    on_dates = asked_dates(question) if s.date > 0 else []
    if on_dates:
        on_date = np.fromiter(
            (any(same_date(d, a) for d in turns.dates.get(i, ()) for a in on_dates) for i in turns.ids),
            dtype=bool,
            count=n,
        )
        scored = np.where(on_date, scored * (1.0 + s.date), scored)
    if s.when > 0 and asks_when(question):
        said, other = (turns.planned, turns.dated) if asks_ahead(question) else (turns.dated, turns.planned)
        scored = np.where(
            said, scored * (1.0 + s.when), np.where(other, scored * (1.0 + s.when_other), scored)
        )
    return scored


def _second_round(
    turns: _Turns,
    scored: np.ndarray,
    visible: np.ndarray,
    skip: set[str],
    weight: float,
    s: DialogueSettings,
    *,
    pin: bool,
) -> np.ndarray:
    """``scored`` plus a second BM25 list read from the first round's best ``feedback_turns`` turns
    (their ``feedback_terms`` heaviest stems not in ``skip``: :meth:`_Lexicon.feedback`), fused as
    ``weight`` × the best score × ``fuse_k / (fuse_k + rank)``: evidence said in other sessions
    shares words with the evidence found rather than with the question ("what books has John read"
    against a later turn about "The Alchemist"). ``pin``: the first round's best turn stays first."""
    order = [int(p) for p in np.argsort(-scored, kind="stable")[: s.feedback_turns] if np.isfinite(scored[p])]
    if not order:
        return scored
    second = np.where(visible, turns.lexicon.feedback(order, skip, s.feedback_terms), 0.0)
    rank = _ranks(second)
    listed = (rank <= s.depth) & (second > 0)
    best = float(scored[order[0]])
    extra = np.where(listed, weight * best * s.fuse_k / (s.fuse_k + rank), 0.0)
    out = np.where(np.isfinite(scored), scored + extra, np.where(listed, extra, -np.inf))
    if pin:
        out[order[0]] = max(float(out.max()) * (1 + 1e-6) + 1e-9, best)
    return out


def _speaker_below_best(scored: np.ndarray, speaker_turns: np.ndarray, weight: float) -> np.ndarray:
    """``scored`` with the named speaker's turns × ``1 + weight``, the best turn kept first (chosen by
    the weights fitted on session Hit@1): several occasions of one person are told in that person's
    own turns (97 % of LoCoMo's multi-hop evidence turns naming one speaker; bench/README.md)."""
    finite = np.isfinite(scored)
    if not finite.any():
        return scored
    best = int(np.argmax(scored))
    out = np.where(speaker_turns & finite, scored * (1.0 + weight), scored)
    out[best] = max(float(out.max()) * (1 + 1e-6) + 1e-9, float(scored[best]))
    return out


#: the best turns a question about several occasions re-ranks for diversity
_DIVERSE_DEPTH = 50


def _session_scores(turns: _Turns, lexical: np.ndarray, s: DialogueSettings) -> tuple[np.ndarray, np.ndarray]:
    """The ``session_depth`` best BM25 hits (best first), and each session's score: the sum of its
    best ``session_turns`` among them."""
    found = np.argsort(-lexical, kind="stable")[: s.session_depth]
    found = found[lexical[found] > 0]
    session_score = np.zeros(int(turns.session_of.max()) + 1 if len(turns.ids) else 0, dtype=np.float64)
    taken = Counter[int]()
    for p in found:  # best first: each session's best session_turns turns
        k = int(turns.session_of[p])
        if taken[k] < s.session_turns:
            session_score[k] += lexical[p]
            taken[k] += 1
    return found, session_score


def _diverse(top: list[int], scored: np.ndarray, session_of: np.ndarray, factor: float) -> list[int]:
    """``top`` (best first) re-ranked greedily: a turn's score × ``factor`` per turn of its session
    already taken (ties: the earlier in ``top``)."""
    left = list(top)
    taken = Counter[int]()
    out: list[int] = []
    while left:
        k = max(
            range(len(left)), key=lambda i: (scored[left[i]] * factor ** taken[int(session_of[left[i]])], -i)
        )
        best = left.pop(k)
        taken[int(session_of[best])] += 1
        out.append(best)
    return out


def _ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of every score, best first (ties in position order)."""
    order = np.argsort(-scores, kind="stable")
    out = np.empty(len(scores), dtype=np.int64)
    out[order] = np.arange(1, len(scores) + 1)
    return out
