"""Query understanding without an LLM: entities, type and relation hints, intent, time.

* entities — node names and aliases found in the question (the node name
  index, scope-aware), the same after mapping registered synonyms to their
  canonical terms (``client 12345`` → ``patient 12345``), first-person and
  demonstrative references to the scope's own node (``my``, ``this
  student``), and names the entity extractor finds that match no node;
* type hints — registered node types named in the question (or through a
  synonym), plural or not;
* relation hints — registered relation types whose name words appear in the
  question (``interactions`` → ``interacts_with``, ``trusted`` → ``trusts``);
* intent — retrieve, list, count, compare, verify, recommend, temporal;
* temporal hints — see :func:`cef.memory.temporal.parse_temporal_hints`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cef.extract.normalize import normalize_name
from cef.memory.temporal import TemporalHint, parse_temporal_hints
from cef.schema.kinds import NodeKind
from cef.text import FUNCTION_WORDS, QUERY_STOP_WORDS, stem, stem_phrase, stems_match

if TYPE_CHECKING:
    from cef.memory.view import MemoryReader

__all__ = ["EntityMention", "QueryUnderstanding", "understand_query"]

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've"})
_DEMONSTRATIVE = frozenset({"this", "the", "my", "our", "current"})
_INTENTS: list[tuple[str, re.Pattern[str]]] = [
    ("count", re.compile(r"\b(how many|number of|count)\b")),
    ("compare", re.compile(r"\b(compare|versus|vs\.?|difference between|better than)\b")),
    ("verify", re.compile(r"\b(trust(?:ed|worthy)?|reliable|true that|is it true|believe|verify|sure)\b")),
    (
        "recommend",
        re.compile(
            r"\b(should|recommend|suggest|next|ready to|what to do|plan|advice|address first|modify)\b"
        ),
    ),
    (
        "temporal",
        re.compile(r"\b(when|since|history|progress(?:ed)?|changed?|over time|recent(?:ly)?|as of|last)\b"),
    ),
    ("list", re.compile(r"\b(list|which|all|what are|what (?:\w+ )?(?:is|are) .* taking)\b")),
]


@dataclass
class EntityMention:
    """Something in the question that may name a node."""

    text: str
    node_ids: list[str] = field(default_factory=list)
    how: str = "name"  # name | synonym | self | ner
    type_hint: str | None = None
    score: float = 1.0


@dataclass
class QueryUnderstanding:
    """What a question asks for (one question of a multi-query retrieval)."""

    query: str
    entities: list[EntityMention] = field(default_factory=list)
    type_hints: list[str] = field(default_factory=list)
    relation_hints: dict[str, float] = field(default_factory=dict)
    intent: list[str] = field(default_factory=list)
    temporal: TemporalHint = field(default_factory=TemporalHint)
    keywords: list[str] = field(default_factory=list)
    rewritten: str | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "entities": [
                {
                    "text": e.text,
                    "how": e.how,
                    "nodes": e.node_ids[:5],
                    **({"type": e.type_hint} if e.type_hint else {}),
                }
                for e in self.entities
            ],
            "type_hints": self.type_hints,
            "relation_hints": {k: round(v, 3) for k, v in self.relation_hints.items()},
            "intent": self.intent,
            "temporal": {
                "mode": self.temporal.mode,
                **({"as_of": self.temporal.as_of.isoformat()} if self.temporal.as_of else {}),
                **({"since": self.temporal.since.isoformat()} if self.temporal.since else {}),
                **({"phrases": self.temporal.phrases} if self.temporal.phrases else {}),
            },
            **({"rewritten": self.rewritten} if self.rewritten else {}),
        }


def _contains_phrase(text: str, phrase: str) -> int:
    """Start of ``phrase`` in ``text`` on word boundaries, or -1."""
    i = text.find(phrase)
    while i >= 0:
        end = i + len(phrase)
        if (i == 0 or not text[i - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return i
        i = text.find(phrase, i + 1)
    return -1


def _ngrams(words: list[str], n_max: int = 3) -> list[str]:
    out = []
    for n in range(n_max, 0, -1):
        for i in range(len(words) - n + 1):
            out.append(" ".join(words[i : i + n]))
    return out


def understand_query(
    memory: MemoryReader, query: str, scope: str | None, now: datetime
) -> QueryUnderstanding:
    """Parse one question (see the module docstring)."""
    reg = memory.registry
    u = QueryUnderstanding(query=query, temporal=parse_temporal_hints(query, now))
    words = [w.lower() for w in _WORD.findall(query)]
    stems = [stem(w) for w in words if w not in QUERY_STOP_WORDS]
    u.keywords = list(dict.fromkeys(stems))

    # synonyms → canonical terms; rewrite the question with them for name lookup
    vocab = reg.vocabulary_words()
    by_stem = {stem_phrase(k): v for k, v in vocab.items()}  # "boxes" finds "box", "quests" "quest"
    rewritten = query
    canonical_seen: set[str] = set()
    for gram in _ngrams(words):
        key = normalize_name(gram)
        canon = vocab.get(key) or by_stem.get(stem_phrase(key))
        if not canon:
            continue
        for c in canon:
            canonical_seen.add(c)
            if c != normalize_name(gram):
                rewritten = re.sub(rf"\b{re.escape(gram)}\b", c, rewritten, flags=re.IGNORECASE)
    if rewritten != query:
        u.rewritten = rewritten

    # type hints: registered node types named directly or through a synonym
    type_names = {normalize_name(t).replace(" ", "_"): t for t in reg.declared_node_types}
    type_stems = {t: stem(t.replace("_", " ").split()[-1]) for t in type_names}
    for w in [*words, *(c for c in canonical_seen)]:
        key = normalize_name(w).replace(" ", "_")
        if key in type_names:
            u.type_hints.append(type_names[key])
            continue
        s = stem(w)
        for t, ts in type_stems.items():
            if "_" not in t and s == ts:
                u.type_hints.append(type_names[t])
    # class extensions: a term placed under a class hints at that class ("metformin" → medication)
    for gram in _ngrams(words):
        ext = reg.class_of_term(gram)
        if ext is not None:
            key = normalize_name(ext.class_name).replace(" ", "_")
            if key in type_names:
                u.type_hints.append(type_names[key])
    u.type_hints = list(dict.fromkeys(u.type_hints))

    # relation hints: relation names whose words the question uses
    graph = memory.kb.state.graph
    for name in list(graph.rel_types):
        parts = [p for p in name.lower().split("_") if p and p not in FUNCTION_WORDS]
        if not parts:
            continue
        pstems = [stem(p) for p in parts]
        hit = sum(1 for ps in pstems if any(stems_match(ps, qs) for qs in stems))
        if hit:
            u.relation_hints[name] = hit / len(pstems)
        spec = reg.edge_type(name)
        if spec is not None and u.type_hints:
            ends = {*spec.source_types, *spec.target_types}
            if any(reg.is_a(t, e) or e == t for t in u.type_hints for e in ends):
                u.relation_hints[name] = max(u.relation_hints.get(name, 0.0), 0.25)

    # entities: node names in the (rewritten) question
    texts = [query] if u.rewritten is None else [query, u.rewritten]
    found: dict[str, EntityMention] = {}
    for text in texts:
        for node_id, name, _pos, _len in memory.names_in_text(text, scope):
            how = "name" if text is query else "synonym"
            m = found.get(name.lower())
            if m is None:
                found[name.lower()] = m = EntityMention(text=name, how=how)
            if node_id not in m.node_ids:
                m.node_ids.append(node_id)
    # the scope's own node: "my ...", "I ...", "this student"
    self_id = memory.self_id(scope)
    self_label = memory.node_label(self_id)
    if self_label is not None:
        refers = any(w in _FIRST_PERSON for w in words)
        if not refers:
            for i, w in enumerate(words[:-1]):
                if w in _DEMONSTRATIVE:
                    nxt = words[i + 1]
                    for t in reg.ancestors(self_label):
                        if stem(nxt) == stem(t.replace("_", " ").split()[-1]) and t not in {
                            k.value for k in NodeKind
                        }:
                            refers = True
        if refers:
            found.setdefault("__self__", EntityMention(text="self", node_ids=[self_id], how="self"))
    # names the extractor finds that match no node (resolved later by meaning)
    extractor = memory.extractor
    if extractor is not None:
        try:
            mentions = (
                extractor.extract_query(query)
                if hasattr(extractor, "extract_query")
                else extractor.extract([query])[0]
            )
        except Exception:  # an optional helper: never fail a query on it
            mentions = []
        known = " ".join(found).lower()
        for men in mentions:
            if men.text.lower() not in known and len(men.normalized) >= 3:
                found.setdefault(men.text.lower(), EntityMention(text=men.text, how="ner", score=0.8))
    u.entities = list(found.values())
    for e in u.entities:
        hinted = [t for t in u.type_hints if _contains_phrase(query.lower(), t.replace("_", " ")) >= 0]
        e.type_hint = hinted[0] if hinted and e.how == "ner" else None

    # intent
    low = query.lower()
    u.intent = [name for name, rx in _INTENTS if rx.search(low)] or ["retrieve"]
    if (u.temporal.mode != "current" or u.temporal.since is not None) and "temporal" not in u.intent:
        u.intent.append("temporal")
    return u
