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
  ``1 + speaker`` times.

The weights are a :class:`~cef.retrieve.presets.DialogueSettings` (query
option ``dialogue``), fitted leave-one-conversation-out (``bench/fit_locomo.py``).
"""

from __future__ import annotations

import re

from cef.model import Chunk, Explanation, RankedChunk, SearchStrategy
from cef.retrieve.context import QueryContext
from cef.retrieve.presets import DialogueSettings, settings_for
from cef.retrieve.search import bm25_hits, vector_hits

__all__ = ["SESSION_LABEL", "TURN_KIND", "dialogue_search", "is_turn"]

#: chunk metadata ``kind`` of a conversation turn, and the label of the node a turn hangs on
TURN_KIND = "turn"
SESSION_LABEL = "Session"


def is_turn(chunk: Chunk) -> bool:
    return chunk.metadata.get("kind") == TURN_KIND


def _holds_sessions(qc: QueryContext) -> bool:
    g = qc.state.graph
    return g.labels.get(SESSION_LABEL) is not None


def dialogue_search(qc: QueryContext) -> list[RankedChunk] | None:
    """The question's turns ranked as the module doc says; None when the chunks it finds are not
    conversation turns (the route then goes on as for any text)."""
    if not _holds_sessions(qc):
        return None
    s = settings_for(DialogueSettings, qc.query)
    q = qc.query
    words = bm25_hits(qc, q.query, max(s.session_depth, s.depth))
    head = qc.chunks([cid for cid, _ in words[:5]])
    if not head or sum(is_turn(c) for c in head.values()) * 2 <= len(head):
        return None
    dense = vector_hits(qc, q.query, s.depth) if qc.state.embedder is not None else []
    fused: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, hits, weight in (("vector", dense, s.vector), ("bm25", words[: s.depth], s.bm25)):
        for rank, (cid, _) in enumerate(hits, 1):
            fused[cid] = fused.get(cid, 0.0) + weight / (s.fuse_k + rank)
            ranks.setdefault(cid, {})[name] = rank
    chunks = qc.chunks(list(dict.fromkeys([*fused, *(cid for cid, _ in words)])))
    turns = {cid: c for cid, c in chunks.items() if is_turn(c)}
    if not turns:
        return None
    session_of = {cid: str(c.metadata.get("session_id") or c.node_id or "") for cid, c in turns.items()}
    per_session: dict[str, list[float]] = {}
    for cid, score in words:
        if cid in session_of:
            per_session.setdefault(session_of[cid], []).append(score)
    session_score = {k: sum(sorted(v, reverse=True)[: s.session_turns]) for k, v in per_session.items()}
    best_session = max(session_score.values(), default=0.0)
    top = max(fused.values(), default=0.0)
    named = _named_speaker(q.query, {str(c.metadata.get("speaker") or "") for c in turns.values()})
    scored: dict[str, float] = {}
    for cid in turns:
        base = fused.get(cid, 0.0)
        prior = session_score.get(session_of[cid], 0.0) / best_session if best_session > 0 else 0.0
        score = base + s.session * prior * top
        if named is not None and turns[cid].metadata.get("speaker") == named:
            score *= 1.0 + s.speaker
        scored[cid] = score
    order = sorted(scored, key=lambda c: (-scored[c], c))[: q.top_k]
    qc.metadata["route"] = {
        "sources": {
            "vector": {"weight": s.vector, "results": len(dense)},
            "bm25": {"weight": s.bm25, "results": len(words)},
        },
        "dialogue": {"sessions": len(session_score), "speaker": named},
        "hints": [],
    }
    out = []
    for cid in order:
        c = turns[cid]
        notes = [f"dialogue: session {c.metadata.get('session')}, speaker {c.metadata.get('speaker')}"]
        if named is not None and c.metadata.get("speaker") == named:
            notes.append(f"the question names the speaker {named}")
        out.append(
            RankedChunk(
                chunk=c,
                score=round(scored[cid], 6),
                explanation=Explanation(
                    strategy=SearchStrategy.AUTO,
                    rank_sources=ranks.get(cid, {}),
                    notes=notes,
                ),
            )
        )
    return out


def _named_speaker(question: str, speakers: set[str]) -> str | None:
    """The one speaker the question names (word-bounded, any case), else None."""
    low = question.lower()
    named = [sp for sp in speakers if sp and re.search(rf"\b{re.escape(sp.lower())}\b", low)]
    return named[0] if len(named) == 1 else None
