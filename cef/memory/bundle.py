"""The universal context output: core facts, supporting facts, beliefs, temporal context, conflicts.

A :class:`ContextBundle` keeps every candidate the retrieval found, in
priority order, and packs them into its token budget for each format it is
rendered in: ``to_text("markdown" | "yaml" | "json" | "plain")`` never returns
more than ``max_tokens`` tokens as counted by the bundle's
:class:`~cef.context.tokens.TokenCounter` (a final exact count removes the
last items if the join of fragments ever counts more than their sum).
Markdown/plain escaping reuses :mod:`cef.context.formats`; the sections are
the memory's own (the seed's bundle), so the packing here is too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from cef.context.formats import ContextFormat, md_code, md_inline, plain_inline
from cef.context.tokens import TokenCounter

__all__ = [
    "BeliefInfo",
    "Conflict",
    "ContextBundle",
    "Fact",
    "ObservationRef",
    "Relation",
    "TemporalChange",
    "TemporalContext",
]

Section = Literal["core_facts", "beliefs", "conflicts", "temporal", "supporting"]
#: sections in the order they are rendered
SECTIONS: tuple[Section, ...] = ("core_facts", "beliefs", "conflicts", "temporal", "supporting")
TITLES: dict[str, str] = {
    "core_facts": "Core facts",
    "beliefs": "Beliefs",
    "conflicts": "Conflicts",
    "temporal": "What changed",
    "supporting": "Supporting facts",
}
#: share of the budget each section may take before the others had their turn
QUOTAS: dict[str, float] = {
    "core_facts": 0.6,
    "conflicts": 0.1,
    "beliefs": 0.15,
    "temporal": 0.1,
    "supporting": 0.2,
}
#: the order sections are offered room in
PRIORITY: tuple[Section, ...] = ("core_facts", "conflicts", "beliefs", "supporting", "temporal")
JOIN_SLACK = 2
#: no item renders in fewer tokens than this
MIN_ITEM_TOKENS = 4


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


_CODE_LIKE = re.compile(r"[_*`\\/<>\[\]#&]")


def md_name(name: str) -> str:
    """A node name in Markdown: a code span when it holds markup characters (paths, identifiers)."""
    return md_code(name) if _CODE_LIKE.search(name) else md_inline(name)


def _date(value: datetime | None) -> str:
    return value.date().isoformat() if value is not None else ""


def _value(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(_value(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


class Relation(_Model):
    """An edge between two nodes in the context."""

    source_id: str
    source_name: str
    relation: str
    target_id: str
    target_name: str
    properties: dict[str, Any] = Field(default_factory=dict)
    confidence: float = 1.0
    valid_from: datetime | None = None
    valid_to: datetime | None = None

    def describe(self, esc: Callable[[str], str], name: Callable[[str], str] | None = None) -> str:
        nm = name or esc
        out = f"{nm(self.source_name)} —{esc(self.relation)}→ {nm(self.target_name)}"
        extra = (
            [esc("; ".join(f"{k}: {_value(v)}" for k, v in self.properties.items()))]
            if self.properties
            else []
        )
        if self.valid_from and self.valid_to:
            extra.append(f"from {_date(self.valid_from)} to {_date(self.valid_to)}")
        elif self.valid_from:
            extra.append(f"since {_date(self.valid_from)}")
        elif self.valid_to:
            extra.append(f"until {_date(self.valid_to)}")
        if self.confidence != 1.0:
            extra.append(f"confidence {self.confidence:.2f}")
        return out + (f" ({'; '.join(extra)})" if extra else "")


class Fact(_Model):
    """A node in the context, with the relations shown under it."""

    node_id: str
    name: str
    type: str
    kind: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)
    relations: list[Relation] = Field(default_factory=list)
    score: float = 0.0
    depth: int = 0
    path: str | None = Field(default=None, description="how it was reached from an anchor")
    excerpt: str | None = Field(default=None, description="the best passage linked to the node")


class ObservationRef(_Model):
    id: str
    text: str
    source_type: str
    credibility: float
    observed_at: datetime | None = None


class BeliefInfo(_Model):
    """A belief with its confidence, sources and verification status."""

    belief_id: str
    statement: str
    subject_id: str | None = None
    subject_name: str | None = None
    confidence: float
    status: str = "active"
    sources: list[str] = Field(default_factory=list, description="source types that support it")
    verified: bool = False
    supported_by: int = 0
    contradicted_by: list[str] = Field(default_factory=list)
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class Conflict(_Model):
    """A belief that sources disagree about."""

    belief_id: str
    statement: str
    subject_name: str | None = None
    confidence: float
    supporting: list[ObservationRef] = Field(default_factory=list)
    contradicting: list[ObservationRef] = Field(default_factory=list)


class TemporalChange(_Model):
    kind: str  # added | ended
    at: datetime
    source_name: str
    relation: str
    target_name: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class TemporalContext(_Model):
    """The time frame of the context and what changed in the window."""

    mode: str = "current"
    reference_time: datetime
    as_of: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None
    changes: list[TemporalChange] = Field(default_factory=list)

    def note(self) -> str:
        parts = []
        if self.mode == "as_of" and self.as_of is not None:
            parts.append(f"as known on {self.as_of.isoformat(timespec='minutes')}")
        elif self.mode == "history":
            parts.append("history included")
        else:
            parts.append(f"current as of {self.reference_time.isoformat(timespec='minutes')}")
        if self.since is not None:
            parts.append(f"changes since {_date(self.since)}")
        return "; ".join(parts)


# ------------------------------------------------------------------ rendering
def _md_fact(f: Fact, esc: Callable[[str], str], md: bool) -> str:
    props = esc("; ".join(f"{k}: {_value(v)}" for k, v in f.properties.items())) if f.properties else ""
    name = md_name if md else esc
    shown = (
        md_name(f.name) if md and _CODE_LIKE.search(f.name) else (f"**{esc(f.name)}**" if md else esc(f.name))
    )
    head = f"- {shown} ({esc(f.type)})"
    if props:
        head += " — " + props
    lines = [head]
    if f.path:
        lines.append(f"  - via: {md_code(f.path) if md else esc(f.path)}")
    for r in f.relations:
        lines.append("  - " + r.describe(esc, name))
    if f.excerpt:
        lines.append(f"  - excerpt: {esc(f.excerpt)}")
    return "\n".join(lines) + "\n"


def _md_belief(b: BeliefInfo, esc: Callable[[str], str]) -> str:
    extra = [f"confidence {b.confidence:.2f}", b.status]
    if b.sources:
        extra.append("sources: " + ", ".join(b.sources))
    if b.verified:
        extra.append("verified")
    if b.contradicted_by:
        extra.append(f"contradicted by {len(b.contradicted_by)} observation(s)")
    about = f"[{esc(b.subject_name)}] " if b.subject_name else ""
    return f"- {about}{esc(b.statement)} ({'; '.join(extra)})\n"


def _md_conflict(c: Conflict, esc: Callable[[str], str]) -> str:
    def refs(items: Sequence[ObservationRef]) -> str:
        return (
            "; ".join(f'"{esc(o.text)}" ({esc(o.source_type)}, {o.credibility:.2f})' for o in items) or "none"
        )

    about = f"[{esc(c.subject_name)}] " if c.subject_name else ""
    return (
        f"- {about}{esc(c.statement)} (confidence {c.confidence:.2f}): supported by {refs(c.supporting)}; "
        f"contradicted by {refs(c.contradicting)}\n"
    )


def _md_change(t: TemporalChange, esc: Callable[[str], str], name: Callable[[str], str]) -> str:
    what = f"{name(t.source_name)} —{esc(t.relation)}→ {name(t.target_name)}"
    if t.kind == "ended":
        return f"- {_date(t.at)} ended: {what} (valid until {_date(t.valid_to)})\n"
    since = f" (valid since {_date(t.valid_from)})" if t.valid_from else ""
    return f"- {_date(t.at)} added: {what}{since}\n"


def _yaml(value: Any) -> str:
    out: str = yaml.safe_dump(
        value, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False
    )
    return out


class _Renderer:
    def __init__(self, fmt: ContextFormat) -> None:
        self.fmt = fmt
        self.esc = md_inline if fmt is ContextFormat.MARKDOWN else plain_inline

    def head(self, meta: dict[str, Any]) -> str:
        f = self.fmt
        if f is ContextFormat.JSON:
            return '{\n"meta": ' + json.dumps(meta, ensure_ascii=False, default=str)
        if f is ContextFormat.YAML:
            return _yaml({"meta": json.loads(json.dumps(meta, default=str))})
        queries = " · ".join(self.esc(q) for q in meta["query"])
        title = "# Context" if f is ContextFormat.MARKDOWN else "CONTEXT"
        return f"{title}\nQuery: {queries}\n"

    def open(self, section: str, meta: dict[str, Any]) -> str:
        f = self.fmt
        title = TITLES[section]
        if section == "temporal" and meta.get("temporal_note"):
            title += f" ({meta['temporal_note']})"
        if f is ContextFormat.JSON:
            return f',\n"{section}": [\n'
        if f is ContextFormat.YAML:
            return f"{section}:\n"
        if f is ContextFormat.MARKDOWN:
            return f"\n## {md_inline(title)}\n"
        return f"\n{plain_inline(title).upper()}\n"

    def sep(self) -> str:
        return ",\n" if self.fmt is ContextFormat.JSON else ""

    def close(self, section: str) -> str:
        return "\n]" if self.fmt is ContextFormat.JSON else ""

    def empty(self, section: str) -> str:
        if self.fmt is ContextFormat.JSON:
            return f',\n"{section}": []'
        if self.fmt is ContextFormat.YAML:
            return f"{section}: []\n"
        return ""

    def tail(self) -> str:
        return "\n}\n" if self.fmt is ContextFormat.JSON else ""

    def item(self, section: str, item: _Model) -> str:
        f = self.fmt
        if f is ContextFormat.JSON:
            return json.dumps(item.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False)
        if f is ContextFormat.YAML:
            return _yaml([item.model_dump(mode="json", exclude_defaults=True)])
        md = f is ContextFormat.MARKDOWN
        if isinstance(item, Fact):
            return _md_fact(item, self.esc, md)
        if isinstance(item, BeliefInfo):
            return _md_belief(item, self.esc)
        if isinstance(item, Conflict):
            return _md_conflict(item, self.esc)
        if isinstance(item, TemporalChange):
            return _md_change(item, self.esc, md_name if md else self.esc)
        raise TypeError(f"cannot render {type(item).__name__}")

    def compose(self, meta: dict[str, Any], frags: dict[str, list[str]]) -> str:
        parts = [self.head(meta)]
        for section in SECTIONS:
            items = frags.get(section)
            if items:
                parts.append(self.open(section, meta) + self.sep().join(items) + self.close(section))
            else:
                parts.append(self.empty(section))
        parts.append(self.tail())
        return "".join(parts)


def _shorter(item: _Model) -> list[_Model]:
    """Shorter versions of an item, longest first (a fact without its excerpt, with fewer relations)."""
    if not isinstance(item, Fact):
        return []
    base = item.model_copy(update={"excerpt": None})
    out: list[_Model] = [base] if item.excerpt else []
    n = len(item.relations)
    for k in sorted({n * 3 // 4, n // 2, n // 4, 2, 1, 0}, reverse=True):
        if k < n:
            out.append(base.model_copy(update={"relations": item.relations[:k]}))
    out.append(base.model_copy(update={"relations": [], "path": None}))
    return out


class _Packed:
    def __init__(self, text: str, tokens: int, selected: dict[Section, list[_Model]], dropped: int) -> None:
        self.text = text
        self.tokens = tokens
        self.selected = selected
        self.dropped = dropped


class ContextBundle(_Model):
    """Structured context for one retrieval — the same shape for every domain.

    The list fields hold what fits ``max_tokens`` in the bundle's ``format``;
    :meth:`to_text` packs again for another format.
    """

    query: list[str]
    core_facts: list[Fact] = Field(default_factory=list)
    supporting: list[Fact] = Field(default_factory=list)
    beliefs: list[BeliefInfo] = Field(default_factory=list)
    temporal: TemporalContext | None = None
    conflicts: list[Conflict] = Field(default_factory=list)
    estimated_tokens: int = 0
    max_tokens: int
    format: ContextFormat = ContextFormat.MARKDOWN
    token_counter: str = ""
    truncated: bool = False
    scope: str | None = None
    understanding: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    _candidates: list[tuple[Section, _Model]] = PrivateAttr(default_factory=list)
    _counter: TokenCounter | None = PrivateAttr(default=None)
    _packed: dict[str, _Packed] = PrivateAttr(default_factory=dict)

    # ------------------------------------------------------------ building
    @classmethod
    def assemble(
        cls,
        *,
        query: list[str],
        candidates: Sequence[tuple[Section, _Model]],
        temporal: TemporalContext | None,
        max_tokens: int,
        counter: TokenCounter,
        fmt: ContextFormat | str = ContextFormat.MARKDOWN,
        **fields: Any,
    ) -> ContextBundle:
        """Pack ``candidates`` (each section's items in priority order) into ``max_tokens``."""
        bundle = cls(
            query=query,
            temporal=temporal.model_copy(update={"changes": []}) if temporal is not None else None,
            max_tokens=max_tokens,
            format=ContextFormat(fmt),
            token_counter=counter.name,
            **fields,
        )
        bundle._candidates = list(candidates)
        bundle._counter = counter
        packed = bundle._pack(bundle.format)
        sel = packed.selected
        bundle.core_facts = [x for x in sel["core_facts"] if isinstance(x, Fact)]
        bundle.supporting = [x for x in sel["supporting"] if isinstance(x, Fact)]
        bundle.beliefs = [x for x in sel["beliefs"] if isinstance(x, BeliefInfo)]
        bundle.conflicts = [x for x in sel["conflicts"] if isinstance(x, Conflict)]
        if bundle.temporal is not None:
            bundle.temporal.changes = [x for x in sel["temporal"] if isinstance(x, TemporalChange)]
        bundle.estimated_tokens = packed.tokens
        bundle.truncated = packed.dropped > 0
        return bundle

    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"query": list(self.query), "max_tokens": self.max_tokens}
        if self.scope is not None:
            meta["scope"] = self.scope
        if self.temporal is not None:
            meta["temporal_note"] = self.temporal.note()
        return meta

    def _pack(self, fmt: ContextFormat) -> _Packed:
        hit = self._packed.get(fmt.value)
        if hit is not None:
            return hit
        counter = self._counter
        if counter is None:  # a bundle rebuilt from data: render what it holds
            raise RuntimeError(
                "this bundle has no token counter; use the bundle returned by retrieve_context"
            )
        r = _Renderer(fmt)
        meta = self._meta()
        budget = self.max_tokens
        empty: dict[Section, list[_Model]] = {s: [] for s in SECTIONS}
        frame = r.compose(meta, {})
        used = counter.count(frame)
        if used > budget:
            packed = _Packed("", 0, empty, len(self._candidates))
            self._packed[fmt.value] = packed
            return packed
        by_section: dict[Section, list[tuple[int, _Model]]] = {s: [] for s in SECTIONS}
        for index, (section, item) in enumerate(self._candidates):
            by_section[section].append((index, item))
        # per section: (candidate index, item as placed, fragment); rendered in candidate order
        chosen: dict[Section, list[tuple[int, _Model, str]]] = {s: [] for s in SECTIONS}
        section_used: dict[Section, int] = dict.fromkeys(SECTIONS, 0)
        added: list[tuple[Section, int]] = []  # (section, candidate index) in the order items went in
        waiting: list[tuple[Section, int, _Model]] = []
        shortened = 0
        open_cost = {s: counter.count(r.open(s, meta) + r.close(s)) + JOIN_SLACK for s in SECTIONS}
        for passes, quota in ((0, True), (1, False)):
            todo = [(s, i, it) for s in PRIORITY for i, it in by_section[s]] if passes == 0 else waiting
            waiting = []
            for section, index, item in todo:
                opening = 0 if chosen[section] else open_cost[section]
                room = budget - used
                if quota:
                    room = min(room, int(QUOTAS[section] * budget) - section_used[section])
                if room <= opening + JOIN_SLACK + MIN_ITEM_TOKENS:  # nothing fits any more
                    waiting.append((section, index, item))
                    continue
                frag = r.item(section, item)
                cost = counter.count(frag) + JOIN_SLACK + opening
                if cost > room:
                    # a section's most important item, or anything in the last pass, may go in shortened
                    fitted = None
                    variants = _shorter(item) if not quota or not chosen[section] else []
                    if variants:  # try the shortest first: if even that does not fit, none will
                        f_min = r.item(section, variants[-1])
                        if counter.count(f_min) + JOIN_SLACK + opening > room:
                            variants = []
                    if variants:
                        for smaller in variants:
                            f2 = r.item(section, smaller)
                            c2 = counter.count(f2) + JOIN_SLACK + opening
                            if c2 <= room:
                                fitted = (smaller, f2, c2)
                                break
                    if fitted is None:
                        waiting.append((section, index, item))
                        continue
                    item, frag, cost = fitted
                    shortened += 1
                chosen[section].append((index, item, frag))
                added.append((section, index))
                used += cost
                section_used[section] += cost

        def text_of() -> str:
            return r.compose(
                meta, {s: [f for _, _, f in sorted(chosen[s], key=lambda x: x[0])] for s in SECTIONS}
            )

        text = text_of()
        tokens = counter.count(text)
        while tokens > budget and added:  # a join counted more than its parts: drop the last items
            section, index = added.pop()
            chosen[section] = [x for x in chosen[section] if x[0] != index]
            text = text_of()
            tokens = counter.count(text)
        for sec in SECTIONS:
            chosen[sec].sort(key=lambda x: x[0])
        selected = {s: [it for _, it, _ in chosen[s]] for s in SECTIONS}
        dropped = len(self._candidates) - sum(len(v) for v in selected.values()) + shortened
        packed = _Packed(text, tokens, selected, dropped)
        self._packed[fmt.value] = packed
        return packed

    # ------------------------------------------------------------ output
    def to_text(self, format: ContextFormat | str | None = None) -> str:
        """The context as text in ``format`` (markdown, yaml, json or plain), within ``max_tokens``."""
        return self._pack(ContextFormat(format) if format is not None else self.format).text

    def tokens(self, format: ContextFormat | str | None = None) -> int:
        """Tokens of :meth:`to_text` in ``format``, as counted by the bundle's counter."""
        return self._pack(ContextFormat(format) if format is not None else self.format).tokens

    def to_structured(self) -> dict[str, Any]:
        """The bundle as JSON-compatible data (what fits the budget in the bundle's format)."""
        data: dict[str, Any] = self.model_dump(mode="json")
        return data

    def facts(self) -> list[Fact]:
        """Core then supporting facts."""
        return [*self.core_facts, *self.supporting]

    def node_ids(self) -> set[str]:
        """Every node id the bundle mentions (facts, relation ends, belief subjects)."""
        out: set[str] = set()
        for f in self.facts():
            out.add(f.node_id)
            for r in f.relations:
                out.update((r.source_id, r.target_id))
        for b in self.beliefs:
            out.add(b.belief_id)
            if b.subject_id:
                out.add(b.subject_id)
        for c in self.conflicts:
            out.add(c.belief_id)
        return out
