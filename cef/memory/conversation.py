"""Conversations as memory: dated sessions of turns, each turn a searchable chunk.

An agent keeps its user's chat history; :func:`ingest_conversation` writes one
conversation into a scope:

* a ``Conversation`` node, one ``Session`` node per session (property ``date``,
  its ``IN_CONVERSATION`` edge valid from that date) and one ``Person`` node per
  speaker (``SPEAKS_IN`` edges from each session to its speakers);
* every turn as a chunk (id: the turn's id) linked to its session node, its
  content ``Speaker (8 May 2023): what was said`` (an image's caption after it,
  ``[image: …]``) with each relative time expression followed by the date it
  names ("yesterday [7 May 2023]", see :mod:`cef.extract.reldates`), then the
  turn it answers on a line of its own (``(in reply to Speaker: …)``): a short
  reply ("A sunset!") is found by the words of the question it answers. The
  turn's own text (without that line) is what is embedded. Its metadata
  holds the conversation, session, date, speaker (and speaker node), the
  resolved dates (``dates``: ISO dates at their precision), its place
  (``turn``) and the ids of the turns before and after it (``previous``,
  ``next``), which retrieval reads as the turn's context;
* the people, places, things and events mentioned, linked by the ingest
  enricher (:class:`~cef.ingest.enrich.EntityEnricher`, the same resolver as
  ``cef ingest``: a speaker's name links to the speaker's node).

Re-ingesting a conversation writes only the turns whose text, speaker, date or
neighbours changed, and removes the turns it no longer has (with their
mentions); the rest is left as it was.

Layouts read by :func:`read_conversations` (see the README):

* **plain JSON Lines**, one turn a line: ``{"id", "conversation", "session",
  "date", "speaker", "text", "image_caption"?}`` (``id`` optional);
* **plain JSON**: ``{"id", "sessions": [{"id"?, "date", "turns": [{"id"?,
  "speaker", "text", "image_caption"?}]}]}``, or a list of such objects;
* **LoCoMo**: the LoCoMo release's objects ``{"sample_id", "conversation":
  {"speaker_a", "speaker_b", "session_1": [{"speaker", "dia_id", "text",
  "blip_caption"?}], "session_1_date_time": "1:56 pm on 8 May, 2023", …}}``
  (a list of them, or one).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cef.errors import ValidationError
from cef.model import Batch, Chunk, Edge, Node, RelationSemantics, RelationType

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = [
    "CONVERSATION_LABEL",
    "PERSON_LABEL",
    "SESSION_LABEL",
    "Conversation",
    "ConversationReport",
    "Session",
    "Turn",
    "ingest_conversation",
    "ingest_conversations",
    "read_conversations",
    "turn_content",
]

CONVERSATION_LABEL = "Conversation"
SESSION_LABEL = "Session"
PERSON_LABEL = "Person"
IN_CONVERSATION = "IN_CONVERSATION"
SPEAKS_IN = "SPEAKS_IN"
#: chunk metadata ``kind`` of a conversation turn
TURN_KIND = "turn"
#: store meta key prefix of a conversation's manifest (its turns and their digests)
_MANIFEST = "conversation."

RELATION_TYPES = (
    RelationType(
        name=IN_CONVERSATION,
        semantics=RelationSemantics.CONTAINMENT,
        parent_end="target",
        description="a session of a conversation (valid from the session's date)",
    ),
    RelationType(
        name=SPEAKS_IN,
        semantics=RelationSemantics.ASSOCIATION,
        inverse="SPOKE_IN",
        description="a session has this person among its speakers",
    ),
)


@dataclass(frozen=True)
class Turn:
    """What one speaker said once (``image_caption``: the description of an image they shared)."""

    id: str
    speaker: str
    text: str
    image_caption: str | None = None


@dataclass
class Session:
    """Turns said together, from ``date`` on."""

    key: str
    date: datetime | None
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Conversation:
    """A conversation: its sessions in order."""

    id: str
    sessions: list[Session] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    @property
    def speakers(self) -> list[str]:
        return list(dict.fromkeys(t.speaker for s in self.sessions for t in s.turns))


@dataclass
class ConversationReport:
    """What :func:`ingest_conversation` did: turns in the conversation, written, removed, kept."""

    conversation: str
    scope: str | None
    turns: int = 0
    written: int = 0
    removed: int = 0
    unchanged: int = 0
    dates: int = 0
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------- reading


def _date(value: Any, where: str) -> datetime | None:
    """A session date: ISO 8601, or any date dateparser reads ("1:56 pm on 8 May, 2023"); None: none."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{where}: date must be a string, not {type(value).__name__}")
    try:
        out = datetime.fromisoformat(value)
    except ValueError:
        import dateparser

        parsed = dateparser.parse(value, languages=["en"])
        if parsed is None:
            raise ValidationError(f"{where}: cannot read the date {value!r}") from None
        out = parsed
    return out if out.tzinfo is not None else out.replace(tzinfo=UTC)


def _text(value: Any, what: str, where: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValidationError(f"{where}: {what} must be a non-empty string")
    return value.strip() or None


def _turn(raw: Any, where: str, default_id: str) -> Turn:
    if not isinstance(raw, dict):
        raise ValidationError(f"{where}: a turn must be an object")
    text = _text(raw.get("text"), "text", where)
    speaker = _text(raw.get("speaker"), "speaker", where)
    tid = raw.get("id", raw.get("dia_id"))
    caption = raw.get("image_caption", raw.get("blip_caption"))
    assert text is not None and speaker is not None
    return Turn(
        id=str(tid) if tid not in (None, "") else default_id,
        speaker=speaker,
        text=text,
        image_caption=_text(caption, "image_caption", where, required=False) if caption else None,
    )


def _from_plain(obj: dict[str, Any], where: str, n: int) -> Conversation:
    cid = str(obj.get("id") or obj.get("conversation") or f"conversation-{n}")
    sessions_raw = obj.get("sessions")
    if not isinstance(sessions_raw, list):
        raise ValidationError(f"{where}: a conversation needs a list of sessions")
    conv = Conversation(cid)
    for i, s in enumerate(sessions_raw, 1):
        at = f"{where} session {i}"
        if not isinstance(s, dict) or not isinstance(s.get("turns"), list):
            raise ValidationError(f"{at}: a session must be an object with a list of turns")
        key = str(s.get("id") or s.get("session") or i)
        sess = Session(key, _date(s.get("date"), at))
        for j, t in enumerate(s["turns"], 1):
            sess.turns.append(_turn(t, f"{at} turn {j}", f"{cid}/{key}:{j}"))
        conv.sessions.append(sess)
    return conv


_LOCOMO_SESSION = re.compile(r"^session_(\d+)$")


def _from_locomo(obj: dict[str, Any], where: str, n: int) -> Conversation:
    body = obj["conversation"]
    cid = str(obj.get("sample_id") or f"conversation-{n}")
    numbers = sorted(int(m.group(1)) for k in body if (m := _LOCOMO_SESSION.match(k)))
    conv = Conversation(cid)
    for k in numbers:
        at = f"{where} session_{k}"
        turns = body[f"session_{k}"]
        if not isinstance(turns, list):
            raise ValidationError(f"{at}: must be a list of turns")
        sess = Session(f"D{k}", _date(body.get(f"session_{k}_date_time"), f"{at}_date_time"))
        for j, t in enumerate(turns, 1):
            turn = _turn(t, f"{at} turn {j}", f"D{k}:{j}")
            sess.turns.append(Turn(f"{cid}/{turn.id}", turn.speaker, turn.text, turn.image_caption))
        conv.sessions.append(sess)
    return conv


def _from_lines(rows: Iterable[tuple[int, dict[str, Any]]], where: str) -> list[Conversation]:
    convs: dict[str, Conversation] = {}
    sessions: dict[tuple[str, str], Session] = {}
    for line, row in rows:
        at = f"{where} line {line}"
        cid = str(row.get("conversation") or "conversation")
        key = str(row.get("session") if row.get("session") not in (None, "") else "1")
        conv = convs.setdefault(cid, Conversation(cid))
        sess = sessions.get((cid, key))
        if sess is None:
            sess = sessions[(cid, key)] = Session(key, _date(row.get("date"), at))
            conv.sessions.append(sess)
        sess.turns.append(_turn(row, at, f"{cid}/{key}:{len(sess.turns) + 1}"))
    return list(convs.values())


def _open_text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_conversations(path: str | Path) -> list[Conversation]:
    """The conversations of a file in one of the module's layouts (``.gz`` decompressed).

    A file that is not in any of them raises :class:`~cef.errors.ValidationError`
    naming the file (and the line or session where it went wrong)."""
    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"{p} is not a file")
    text = _open_text(p)
    stripped = text.lstrip()
    if not stripped:
        raise ValidationError(f"{p}: empty file")
    try:
        whole: Any = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if whole is None or (isinstance(whole, dict) and "text" in whole and "speaker" in whole):
        rows = []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationError(f"{p} line {i}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValidationError(f"{p} line {i}: a turn must be an object")
            rows.append((i, row))
        return _from_lines(rows, str(p))
    items = whole if isinstance(whole, list) else [whole]
    out = []
    for n, obj in enumerate(items, 1):
        where = f"{p} conversation {n}"
        if not isinstance(obj, dict):
            raise ValidationError(f"{where}: must be an object")
        if isinstance(obj.get("conversation"), dict) and "speaker_a" in obj["conversation"]:
            out.append(_from_locomo(obj, where, n))
        elif "sessions" in obj:
            out.append(_from_plain(obj, where, n))
        else:
            raise ValidationError(
                f"{where}: not a conversation (expected 'sessions', or LoCoMo's 'conversation' with 'speaker_a')"
            )
    return out


# ---------------------------------------------------------------------------------------------- writing


def _day(d: datetime) -> str:
    return f"{d.day} {d:%B} {d.year}"


def turn_content(turn: Turn, date: datetime | None, resolved: Sequence[Any] = ()) -> str:
    """The text a turn is kept and searched as: ``Speaker (8 May 2023): what was said [image: …]``,
    each resolved time expression followed by the date it names in brackets."""
    text = turn.text
    for r in sorted(resolved, key=lambda r: -len(r.text)):
        i = text.find(r.text)
        if i >= 0 and not text[i + len(r.text) :].startswith(" ["):
            end = i + len(r.text)
            text = f"{text[:end]} [{r.readable()}]{text[end:]}"
    head = f"{turn.speaker} ({_day(date)})" if date is not None else turn.speaker
    caption = f" [image: {turn.image_caption}]" if turn.image_caption else ""
    return f"{head}: {text}{caption}"


def _person_id(scope: str | None, name: str) -> str:
    key = " ".join(name.lower().split())
    return f"person:{scope}/{key}" if scope else f"person:{key}"


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def ingest_conversations(
    kb: KnowledgeBase, path: str | Path, *, scope: str | None = None, enricher: Any = "default"
) -> list[ConversationReport]:
    """Every conversation of a file (:func:`read_conversations`) into ``scope`` (None: each into a
    scope named after the conversation's id)."""
    return [
        ingest_conversation(kb, conv, scope=scope if scope is not None else conv.id, enricher=enricher)
        for conv in read_conversations(path)
    ]


def ingest_conversation(
    kb: KnowledgeBase,
    conversation: Conversation,
    *,
    scope: str | None = None,
    enricher: Any = "default",
) -> ConversationReport:
    """Write ``conversation`` into ``scope`` (see the module doc); only changed turns are rewritten.

    ``enricher``: the ingest enricher that links what turns mention (``"default"``:
    :class:`~cef.ingest.enrich.EntityEnricher` when spaCy is installed; None: no mentions)."""
    t0 = time.perf_counter()
    conv = conversation
    report = ConversationReport(conv.id, scope, turns=conv.turns)
    _check_turns(conv)
    mkey = f"{_MANIFEST}{scope or ''}\x1f{conv.id}"
    manifest = kb.store.get_meta(mkey) or {}
    old_turns: dict[str, dict[str, Any]] = dict(manifest.get("turns", {}))

    people = {name: _person_id(scope, name) for name in conv.speakers}
    nodes, edges = _structure(conv, scope, people)
    turns = _turn_chunks(conv, scope, people, old_turns, report)
    chunks, turn_meta = turns.chunks, turns.meta
    gone = [tid for tid in old_turns if tid not in turn_meta]
    changed = {c.id for c in chunks}
    # the mentions of rewritten and removed turns go with them (the enricher writes the new ones)
    remove_edges = [e for tid in [*changed, *gone] for e in old_turns.get(tid, {}).get("edges", [])]
    batch = Batch(relation_types=_missing_types(kb), nodes=nodes, edges=edges, chunks=chunks)
    if chunks:
        batch = _enrich_and_embed(kb, batch, turns, {e.id for e in edges}, enricher)
    keep = {e.id for e in batch.edges}
    sessions = [n.id for n in nodes if n.label == SESSION_LABEL]
    dropped = [sid for sid in manifest.get("sessions", []) if sid not in set(sessions)]
    manifest_out = {"conversation": conv.id, "scope": scope, "turns": turn_meta, "sessions": sessions}
    kb.indexer.upsert_batch(
        batch,
        remove_nodes=dropped,  # sessions the conversation no longer has (their edges go with them)
        remove_edges=[e for e in dict.fromkeys(remove_edges) if e not in keep],
        remove_chunks=gone,
        meta={mkey: manifest_out},
    )
    report.written = len(chunks)
    report.removed = len(gone)
    report.seconds = time.perf_counter() - t0
    return report


def _check_turns(conv: Conversation) -> None:
    """Raise unless the conversation has turns, each with its own id."""
    if not conv.turns:
        raise ValidationError(f"conversation {conv.id!r} has no turns")
    ids = [t.id for s in conv.sessions for t in s.turns]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ValidationError(f"conversation {conv.id!r}: turn id {dup!r} occurs twice")


def _session_id(conv: Conversation, sess: Session, scope: str | None) -> str:
    return f"session:{scope}/{conv.id}/{sess.key}" if scope else f"session:{conv.id}/{sess.key}"


def _structure(
    conv: Conversation, scope: str | None, people: dict[str, str]
) -> tuple[list[Node], list[Edge]]:
    """The conversation's node, its speakers' and its sessions' nodes, and the edges between them."""
    conv_id = f"conversation:{scope}/{conv.id}" if scope else f"conversation:{conv.id}"
    nodes = [Node(id=conv_id, label=CONVERSATION_LABEL, properties={"name": conv.id}, scope=scope)]
    nodes += [
        Node(id=pid, label=PERSON_LABEL, properties={"name": name}, scope=scope)
        for name, pid in people.items()
    ]
    edges: list[Edge] = []
    for n, sess in enumerate(conv.sessions, 1):
        sid = _session_id(conv, sess, scope)
        name = f"{conv.id} session {sess.key}" + (f" ({_day(sess.date)})" if sess.date else "")
        props: dict[str, Any] = {"name": name, "session": sess.key, "number": n, "conversation": conv.id}
        if sess.date is not None:
            props["date"] = sess.date.isoformat()
        nodes.append(Node(id=sid, label=SESSION_LABEL, properties=props, scope=scope))
        edges.append(
            Edge(
                id=f"{sid}>in",
                relation_type=IN_CONVERSATION,
                source=sid,
                target=conv_id,
                valid_from=sess.date,
                scope=scope,
            )
        )
        for name in dict.fromkeys(t.speaker for t in sess.turns):
            edges.append(
                Edge(
                    id=f"{sid}>speaker>{people[name]}",
                    relation_type=SPEAKS_IN,
                    source=sid,
                    target=people[name],
                    valid_from=sess.date,
                    scope=scope,
                )
            )
    return nodes, edges


@dataclass
class _Turns:
    """The chunks of the turns to (re)write, and what the writing needs besides."""

    chunks: list[Chunk] = field(default_factory=list)
    #: every turn's manifest entry: its digest and its mention edges
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: each turn's own text, which is what is embedded
    own: dict[str, str] = field(default_factory=dict)
    #: the turn it answers, which full-text search also reads
    context: dict[str, str] = field(default_factory=dict)


def _turn_chunks(
    conv: Conversation,
    scope: str | None,
    people: dict[str, str],
    old_turns: dict[str, dict[str, Any]],
    report: ConversationReport,
) -> _Turns:
    """A chunk for every turn whose digest changed (``report`` counts the unchanged and the dates)."""
    from cef.extract.reldates import resolve_dates

    out = _Turns()
    flat = [(s, t) for s in conv.sessions for t in s.turns]
    for i, (sess, turn) in enumerate(flat):
        sid = _session_id(conv, sess, scope)
        prev = flat[i - 1][1].id if i > 0 else None
        nxt = flat[i + 1][1].id if i + 1 < len(flat) else None
        before = flat[i - 1][1] if i > 0 and flat[i - 1][0] is sess else None
        digest = _digest(
            turn.speaker,
            turn.text,
            turn.image_caption,
            sess.key,
            sess.date,
            prev,
            nxt,
            (before.speaker, before.text, before.image_caption) if before else None,
        )
        old = old_turns.get(turn.id)
        out.meta[turn.id] = {"sha": digest, "edges": old.get("edges", []) if old else []}
        if old is not None and old.get("sha") == digest:
            report.unchanged += 1
            continue
        resolved = resolve_dates(turn.text, sess.date) if sess.date is not None else []
        report.dates += len(resolved)
        meta = _turn_metadata(conv, sess, turn, sid, people[turn.speaker], i, resolved)
        if prev is not None:
            meta["previous"] = prev
        if nxt is not None:
            meta["next"] = nxt
        out.own[turn.id] = turn_content(turn, sess.date, resolved)
        if before is not None:
            caption = f" [image: {before.image_caption}]" if before.image_caption else ""
            out.context[turn.id] = f"\n(in reply to {before.speaker}: {before.text}{caption})"
        out.chunks.append(
            Chunk(id=turn.id, content=out.own[turn.id], node_id=sid, metadata=meta, scope=scope)
        )
    return out


def _turn_metadata(
    conv: Conversation,
    sess: Session,
    turn: Turn,
    sid: str,
    speaker_id: str,
    i: int,
    resolved: Sequence[Any],
) -> dict[str, Any]:
    """A turn chunk's metadata (without its neighbours)."""
    meta: dict[str, Any] = {
        "kind": TURN_KIND,
        "conversation": conv.id,
        "session": sess.key,
        "session_id": sid,
        "speaker": turn.speaker,
        "speaker_id": speaker_id,
        "turn": i,
        "text": turn.text,
    }
    if sess.date is not None:
        meta["date"] = sess.date.isoformat()
    if turn.image_caption:
        meta["image_caption"] = turn.image_caption
    if resolved:
        meta["dates"] = [{"text": r.text, "date": r.iso(), "period": r.period} for r in resolved]
    return meta


def _enrich_and_embed(
    kb: KnowledgeBase, batch: Batch, turns: _Turns, structural: set[str], enricher: Any
) -> Batch:
    """The batch with its turns' mentions (found in their own text, recorded in ``turns.meta``), the
    text each turn replies to appended to its content, and each turn's own text embedded."""
    batch = _enrich(kb, batch, enricher)
    vectors = kb.embedder.embed([turns.own[c.id] for c in batch.chunks]) if kb.embedder is not None else None
    batch = batch.model_copy(
        update={
            "chunks": [
                c.model_copy(
                    update={
                        "content": c.content + turns.context.get(c.id, ""),
                        "embedding": [float(x) for x in vectors[k]] if vectors is not None else None,
                    }
                )
                for k, c in enumerate(batch.chunks)
            ]
        }
    )
    mention_edges: dict[str, list[str]] = {c.id: [] for c in turns.chunks}
    for e in batch.edges:
        cid = e.properties.get("chunk_id")
        if e.id not in structural and isinstance(cid, str) and cid in mention_edges:
            mention_edges[cid].append(e.id)
    for cid, eids in mention_edges.items():
        turns.meta[cid]["edges"] = eids
    return batch


def _missing_types(kb: KnowledgeBase) -> list[RelationType]:
    known = kb.state.graph.rel_types
    return [rt for rt in RELATION_TYPES if rt.name not in known]


_default_enricher: Any = None


def _enrich(kb: KnowledgeBase, batch: Batch, enricher: Any) -> Batch:
    """The batch with the mentions ``enricher`` finds in its turns (the ingest enricher by default)."""
    global _default_enricher
    if enricher == "default":
        if _default_enricher is None:
            from cef.ingest.pipeline import make_enricher

            # co-occurrence and synonym edges serve PageRank over text, which turns do not use
            _default_enricher = make_enricher(cooccurrence=False, synonyms=False) or False
        enricher = _default_enricher or None
    if enricher is None:
        return batch
    from cef.ingest.parsers.base import ParsedDocument

    doc = enricher(kb, ParsedDocument(batch=batch, parser="conversation"))
    return doc.batch
