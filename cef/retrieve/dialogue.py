"""Conversation turns in the ``auto`` route: sessions, speakers and the turn a reply answers.

A conversation ingested with :func:`cef.memory.conversation.ingest_conversation`
is kept as turns: short chunks (metadata ``kind: turn``) linked to a dated
``Session`` node, each naming its speaker and holding, after its own text, the
turn it answers (so a reply is found by the words of the question it answers).
When the chunks a question finds are such turns, the route ranks them here
instead of by PageRank over the text graph (mentions in chit-chat are mostly
the two speakers' names, which seed nothing useful):

* **vector** and **BM25** lists are fused by weighted reciprocal rank
  (``Σ weight / (fuse_k + rank)``);
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
  dates) count ``1 + date`` times.

The scope's turns (ids, sessions, speakers, dates) are read once per graph
generation; the vector list is the exact cosine over them.

The weights are a :class:`~cef.retrieve.presets.DialogueSettings` (query
option ``dialogue``), fitted leave-one-conversation-out (``bench/fit_locomo.py``).
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from cef.model import Chunk, Explanation, RankedChunk, SearchStrategy, in_scope
from cef.retrieve.context import QueryContext
from cef.retrieve.ports import EngineView
from cef.retrieve.presets import DialogueSettings, settings_for
from cef.retrieve.search import bm25_hits
from cef.retrieve.stagestate import DialogueInfo, RouteInfo, RouteSource
from cef.text import QUERY_STOP_WORDS, words

__all__ = ["SESSION_LABEL", "TURN_KIND", "dialogue_search", "is_turn"]

#: chunk metadata ``kind`` of a conversation turn, and the label of the node a turn hangs on
TURN_KIND = "turn"
SESSION_LABEL = "Session"


def is_turn(chunk: Chunk) -> bool:
    return chunk.metadata.get("kind") == TURN_KIND


@dataclass(frozen=True)
class _Turns:
    """The conversation turns a scope sees: ids, and each turn's session node and speaker."""

    ids: list[str]
    session: dict[str, str]
    speaker: dict[str, str]
    #: the days a turn is about: the day it was said and the dates it names (ISO, at their precision)
    dates: dict[str, list[str]]


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
    for c in st.store.get_chunks(ids):
        if is_turn(c) and in_scope(c.scope, scope):
            session[c.id] = str(c.node_id)
            speaker[c.id] = str(c.metadata.get("speaker") or "")
            said = str(c.metadata.get("date") or "")[:10]
            named = [str(d.get("date")) for d in c.metadata.get("dates") or [] if isinstance(d, dict)]
            dates[c.id] = [d for d in (said, *named) if d]
    out = _Turns([i for i in ids if i in session], session, speaker, dates)
    with _turns_lock:
        _turns.setdefault(st, {})[scope] = (stamp, out)
    return out


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
    ids = turns.ids
    if qc.wanted_tags:
        visible = qc.chunks(ids)
        ids = [i for i in ids if i in visible]
    allowed = set(ids)
    words_ = [(cid, sc) for cid, sc in bm25_hits(qc, _content_words(q.query), max(s.session_depth, s.depth))]
    head = words_[:5]
    if not head or sum(cid in allowed for cid, _ in head) * 2 <= len(head):
        return None  # the question finds other text first: not a question about the conversation
    words_ = [(cid, sc) for cid, sc in words_ if cid in allowed]
    dense: list[tuple[str, float]] = []
    vec = qc.embed(q.query) if qc.state.embedder is not None and len(qc.state.chunk_vectors) else None
    if vec is not None and ids:
        sims = qc.state.chunk_vectors.similarities(vec, ids)
        top = np.argsort(-sims, kind="stable")[: s.depth]
        dense = [(ids[int(i)], float(sims[int(i)])) for i in top]
    fused: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, hits, weight in (("vector", dense, s.vector), ("bm25", words_[: s.depth], s.bm25)):
        for rank, (cid, _) in enumerate(hits, 1):
            fused[cid] = fused.get(cid, 0.0) + weight / (s.fuse_k + rank)
            ranks.setdefault(cid, {})[name] = rank
    per_session: dict[str, list[float]] = {}
    for cid, score in words_:
        per_session.setdefault(turns.session[cid], []).append(score)
    session_score = {k: sum(sorted(v, reverse=True)[: s.session_turns]) for k, v in per_session.items()}
    best_session = max(session_score.values(), default=0.0)
    top_fused = max(fused.values(), default=0.0)
    candidates = list(dict.fromkeys([*fused, *(cid for cid, _ in words_)]))
    named = _named_speaker(q.query, {turns.speaker[c] for c in candidates})
    asked = _asked_dates(q.query) if s.date > 0 else []
    scored: dict[str, float] = {}
    for cid in candidates:
        base = fused.get(cid, 0.0)
        prior = session_score.get(turns.session[cid], 0.0) / best_session if best_session > 0 else 0.0
        score = base + s.session * prior * top_fused
        if named is not None and turns.speaker[cid] == named:
            score *= 1.0 + s.speaker
        if asked and any(_same_date(d, a) for d in turns.dates.get(cid, ()) for a in asked):
            score *= 1.0 + s.date
        scored[cid] = score
    order = sorted(scored, key=lambda c: (-scored[c], c))[: q.top_k]
    qc.stages.route = RouteInfo(
        sources={"vector": RouteSource(s.vector, len(dense)), "bm25": RouteSource(s.bm25, len(words_))},
        hints=[],
        dialogue=DialogueInfo(len(session_score), named),
    )
    chunks = qc.chunks(order)
    out = []
    for cid in order:
        c = chunks.get(cid)
        if c is None:
            continue
        notes = [f"dialogue: session {c.metadata.get('session')}, speaker {turns.speaker[cid]}"]
        if named is not None and turns.speaker[cid] == named:
            notes.append(f"the question names the speaker {named}")
        out.append(
            RankedChunk(
                chunk=c,
                score=round(scored[cid], 6),
                explanation=Explanation(
                    strategy=SearchStrategy.AUTO, rank_sources=ranks.get(cid, {}), notes=notes
                ),
            )
        )
    return out


_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")


def _asked_dates(question: str) -> list[tuple[int | None, int | None, int | None]]:
    """The calendar dates a question names ("in June", "on 13 October 2023", "in 2022") as
    (year, month, day), None where the question leaves a part open. Relative expressions are
    left out: a question is asked after the conversation, its "last week" is not a turn's."""
    from datetime import datetime

    from cef.extract.reldates import resolve_dates

    out: list[tuple[int | None, int | None, int | None]] = []
    for r in resolve_dates(question, datetime(2000, 1, 1)):
        low = r.text.lower()
        if any(w in low.split() for w in ("ago", "last", "next", "this", "yesterday", "today", "tomorrow")):
            continue
        year = r.date.year if _YEAR.search(r.text) else None
        if r.period == "year":
            out.append((year, None, None))
        elif r.period == "month":
            out.append((year, r.date.month, None))
        else:
            out.append((year, r.date.month, r.date.day))
    return out


def _same_date(iso: str, asked: tuple[int | None, int | None, int | None]) -> bool:
    """Whether an ISO date (``2023-05-07``, ``2023-05`` or ``2023``) falls within the asked date."""
    parts = [int(x) for x in iso.split("-")[:3] if x.isdigit()]
    for have, want in zip(parts, asked, strict=False):
        if want is not None and have != want:
            return False
    return all(want is None for want in asked[len(parts) :])


def _named_speaker(question: str, speakers: set[str]) -> str | None:
    """The one speaker the question names (word-bounded, any case), else None."""
    low = question.lower()
    named = [sp for sp in speakers if sp and re.search(rf"\b{re.escape(sp.lower())}\b", low)]
    return named[0] if len(named) == 1 else None
