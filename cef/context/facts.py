"""The semantic memory's item kinds: facts (nodes with their relations), beliefs, conflicts and changes.

They are :class:`~cef.context.items.ContextItem` kinds like the others, packed
and rendered by the one packer (:mod:`cef.context.budget`) in the sections of
the memory's :class:`~cef.memory.bundle.ContextBundle`. A :class:`Fact` that
does not fit whole has shorter forms: without its excerpt, with fewer
relations, and last its name and type alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from cef.context.items import ContextItem, Forms
from cef.context.markup import code_like, date_text, md_code, md_inline, md_name, plain_inline, value_text

__all__ = ["BeliefInfo", "Conflict", "Fact", "ObservationRef", "Relation", "TemporalChange"]


class Relation(BaseModel):
    """An edge between two nodes in the context (shown under the fact it is attached to)."""

    model_config = ConfigDict(extra="forbid")

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
            [esc("; ".join(f"{k}: {value_text(v)}" for k, v in self.properties.items()))]
            if self.properties
            else []
        )
        if self.valid_from and self.valid_to:
            extra.append(f"from {date_text(self.valid_from)} to {date_text(self.valid_to)}")
        elif self.valid_from:
            extra.append(f"since {date_text(self.valid_from)}")
        elif self.valid_to:
            extra.append(f"until {date_text(self.valid_to)}")
        if self.confidence != 1.0:
            extra.append(f"confidence {self.confidence:.2f}")
        return out + (f" ({'; '.join(extra)})" if extra else "")


class Fact(ContextItem):
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

    def _lines(self, md: bool) -> str:
        esc = md_inline if md else plain_inline
        props = (
            esc("; ".join(f"{k}: {value_text(v)}" for k, v in self.properties.items()))
            if self.properties
            else ""
        )
        name = md_name if md else esc
        if md:
            shown = md_code(self.name) if code_like(self.name) else f"**{esc(self.name)}**"
        else:
            shown = esc(self.name)
        head = f"- {shown} ({esc(self.type)})"
        if props:
            head += " — " + props
        lines = [head]
        if self.path:
            lines.append(f"  - via: {md_code(self.path) if md else esc(self.path)}")
        for r in self.relations:
            lines.append("  - " + r.describe(esc, name))
        if self.excerpt:
            lines.append(f"  - excerpt: {esc(self.excerpt)}")
        return "\n".join(lines) + "\n"

    def markdown(self, index: int) -> str:
        return self._lines(True)

    def plain(self, index: int) -> str:
        return self._lines(False)

    def shortenings(self) -> Sequence[Self]:
        """Without the excerpt, then with fewer relations, then name and type alone (built when read)."""
        updates: list[dict[str, Any]] = [{"excerpt": None}] if self.excerpt else []
        n = len(self.relations)
        for k in sorted({n * 3 // 4, n // 2, n // 4, 2, 1, 0}, reverse=True):
            if k < n:
                updates.append({"excerpt": None, "relations": self.relations[:k]})
        updates.append({"excerpt": None, "relations": [], "path": None})
        return Forms(self, updates)


class ObservationRef(BaseModel):
    """An observation a conflict cites: its text, source type and credibility."""

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str
    source_type: str
    credibility: float
    observed_at: datetime | None = None


class BeliefInfo(ContextItem):
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

    def _line(self, esc: Callable[[str], str]) -> str:
        extra = [f"confidence {self.confidence:.2f}", self.status]
        if self.sources:
            extra.append("sources: " + ", ".join(self.sources))
        if self.verified:
            extra.append("verified")
        if self.contradicted_by:
            extra.append(f"contradicted by {len(self.contradicted_by)} observation(s)")
        about = f"[{esc(self.subject_name)}] " if self.subject_name else ""
        return f"- {about}{esc(self.statement)} ({'; '.join(extra)})\n"

    def markdown(self, index: int) -> str:
        return self._line(md_inline)

    def plain(self, index: int) -> str:
        return self._line(plain_inline)


class Conflict(ContextItem):
    """A belief that sources disagree about."""

    belief_id: str
    statement: str
    subject_name: str | None = None
    confidence: float
    supporting: list[ObservationRef] = Field(default_factory=list)
    contradicting: list[ObservationRef] = Field(default_factory=list)

    def _line(self, esc: Callable[[str], str]) -> str:
        def refs(items: Sequence[ObservationRef]) -> str:
            return (
                "; ".join(f'"{esc(o.text)}" ({esc(o.source_type)}, {o.credibility:.2f})' for o in items)
                or "none"
            )

        about = f"[{esc(self.subject_name)}] " if self.subject_name else ""
        return (
            f"- {about}{esc(self.statement)} (confidence {self.confidence:.2f}): supported by "
            f"{refs(self.supporting)}; contradicted by {refs(self.contradicting)}\n"
        )

    def markdown(self, index: int) -> str:
        return self._line(md_inline)

    def plain(self, index: int) -> str:
        return self._line(plain_inline)


class TemporalChange(ContextItem):
    """A relation that began or ended within the time window of the context."""

    kind: str  # added | ended
    at: datetime
    source_name: str
    relation: str
    target_name: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None

    def _line(self, esc: Callable[[str], str], name: Callable[[str], str]) -> str:
        what = f"{name(self.source_name)} —{esc(self.relation)}→ {name(self.target_name)}"
        if self.kind == "ended":
            return f"- {date_text(self.at)} ended: {what} (valid until {date_text(self.valid_to)})\n"
        since = f" (valid since {date_text(self.valid_from)})" if self.valid_from else ""
        return f"- {date_text(self.at)} added: {what}{since}\n"

    def markdown(self, index: int) -> str:
        return self._line(md_inline, md_name)

    def plain(self, index: int) -> str:
        return self._line(plain_inline, plain_inline)
