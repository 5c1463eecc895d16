"""The item kinds of a context: what one entry of a section holds and how it reads in each format.

Every kind is a :class:`ContextItem`: :meth:`~ContextItem.to_data` is what the
JSON and YAML forms hold (fields at their default left out to save tokens),
:meth:`~ContextItem.markdown` and :meth:`~ContextItem.plain` its fragment in
the two text formats, and :meth:`~ContextItem.shortenings` the shorter forms
the packer may place when the whole item does not fit. The kinds here are
those of a :class:`~cef.context.formats.ContextDocument` (entities,
relationships, domain rules, claims, graph paths, chunks); the semantic
memory's facts, beliefs, conflicts and changes are in :mod:`cef.context.facts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

from cef.context.cuts import LazyForms
from cef.context.markup import date_text, md_code, md_inline, plain_inline, props_text

__all__ = [
    "ContextAxiom",
    "ContextChunk",
    "ContextClaim",
    "ContextEntity",
    "ContextItem",
    "ContextPath",
    "ContextRelationship",
    "Forms",
]


class ContextItem(BaseModel):
    """One entry of a context section, in every format.

    ``NUMBERED`` kinds show their position in the section (their fragment
    depends on it); the others read the same wherever they are.
    """

    model_config = ConfigDict(extra="forbid")
    NUMBERED: ClassVar[bool] = False

    def to_data(self) -> dict[str, Any]:
        """The item as JSON-compatible data, fields at their default left out."""
        data: dict[str, Any] = self.model_dump(mode="json", exclude_defaults=True)
        return data

    def markdown(self, index: int) -> str:
        """The item's Markdown fragment (``index``: its 1-based position in its section)."""
        raise NotImplementedError

    def plain(self, index: int) -> str:
        """The item's plain-text fragment (``index``: its 1-based position in its section)."""
        raise NotImplementedError

    def shortenings(self) -> Sequence[Self]:
        """Shorter forms of the item, longest first, that keep what matters most (none by default)."""
        return ()


class Forms(LazyForms):
    """Shorter forms of an item, each a copy with one update applied, built when read."""

    def __init__(self, item: BaseModel, updates: Sequence[dict[str, Any]]) -> None:
        self.item = item
        self.updates = updates

    def __len__(self) -> int:
        return len(self.updates)

    def _form(self, i: int) -> Any:
        return self.item.model_copy(update=self.updates[i])


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


class ContextEntity(ContextItem):
    """A graph node in context: its type, name, selected properties and relevance."""

    id: str
    type: str
    name: str
    properties: dict[str, Any] = Field(default_factory=dict)
    score: float | None = None
    matched_terms: list[str] = Field(default_factory=list)

    def markdown(self, index: int) -> str:
        e = md_inline
        out = f"- **{e(self.type)}: {e(self.name)}** (id: {e(self.id)})"
        if self.properties:
            out += " — " + props_text(self.properties, e)
        if self.score is not None:
            out += f" · relevance {_score(self.score)}"
        if self.matched_terms:
            out += " · matched: " + e(", ".join(self.matched_terms))
        return out + "\n"

    def plain(self, index: int) -> str:
        p = plain_inline
        out = f"- {p(self.type)}: {p(self.name)} [{p(self.id)}]"
        if self.properties:
            out += " " + props_text(self.properties, p, "=")
        if self.score is not None:
            out += f" (relevance {_score(self.score)})"
        return out + "\n"


class ContextRelationship(ContextItem):
    """An edge between two nodes, with its properties and validity window."""

    id: str
    source: str
    source_name: str
    relation: str
    target: str
    target_name: str
    properties: dict[str, Any] = Field(default_factory=dict)
    confidence: float = 1.0
    valid_from: datetime | None = None
    valid_to: datetime | None = None

    def to_data(self) -> dict[str, Any]:
        data = super().to_data()
        data.pop("id", None)  # an edge id tells a reader nothing; the model keeps it
        return data

    def _validity(self) -> str:
        if self.valid_from and self.valid_to:
            return f"from {date_text(self.valid_from)} to {date_text(self.valid_to)}"
        if self.valid_from:
            return f"since {date_text(self.valid_from)}"
        if self.valid_to:
            return f"until {date_text(self.valid_to)}"
        return ""

    def _extra(self, esc: Any, sep: str) -> str:
        extra = [x for x in (props_text(self.properties, esc, sep), esc(self._validity())) if x]
        if self.confidence != 1.0:
            extra.append(f"confidence {self.confidence:g}")
        return f" ({'; '.join(extra)})" if extra else ""

    def markdown(self, index: int) -> str:
        e = md_inline
        out = f"- {e(self.source_name)} → {md_code(self.relation)} → {e(self.target_name)}"
        return out + self._extra(e, ": ") + "\n"

    def plain(self, index: int) -> str:
        p = plain_inline
        return (
            f"- {p(self.source_name)} --{p(self.relation)}--> {p(self.target_name)}"
            + self._extra(p, "=")
            + "\n"
        )


class ContextAxiom(ContextItem):
    """A domain rule that applies to a node type (or a node) present in the context."""

    id: str
    name: str
    rule: str
    applies_to: list[str] = Field(default_factory=list, description="node types or node names")
    severity: str | None = None

    def markdown(self, index: int) -> str:
        e = md_inline
        scope = f" (applies to {e(', '.join(self.applies_to))})" if self.applies_to else ""
        sev = f" [{e(self.severity)}]" if self.severity else ""
        return f"- **{e(self.name)}**{sev}{scope}: {e(self.rule)}\n"

    def plain(self, index: int) -> str:
        p = plain_inline
        scope = f" (applies to {p(', '.join(self.applies_to))})" if self.applies_to else ""
        sev = f" [{p(self.severity)}]" if self.severity else ""
        return f"- {p(self.name)}{sev}{scope}: {p(self.rule)}\n"


class ContextClaim(ContextItem):
    """A statement from a source document about one or more entities."""

    id: str
    statement: str
    about: list[str] = Field(default_factory=list, description="names of the entities it is about")
    source: str | None = None
    confidence: float = 1.0
    truncated: bool = False

    def _line(self, esc: Any) -> str:
        extra = []
        if self.about:
            extra.append("about " + esc(", ".join(self.about)))
        if self.source:
            extra.append("source: " + esc(self.source))
        if self.confidence != 1.0:
            extra.append(f"confidence {self.confidence:g}")
        return f"- {esc(self.statement)}" + (f" ({'; '.join(extra)})" if extra else "") + "\n"

    def markdown(self, index: int) -> str:
        return self._line(md_inline)

    def plain(self, index: int) -> str:
        return self._line(plain_inline)


class ContextPath(ContextItem):
    """A graph path that explains why something is in context."""

    text: str
    node_ids: list[str] = Field(default_factory=list)
    confidence: float = 1.0

    def markdown(self, index: int) -> str:
        return f"- {md_code(self.text)} (confidence {self.confidence:.2f})\n"

    def plain(self, index: int) -> str:
        return f"- {plain_inline(self.text)} (confidence {self.confidence:.2f})\n"


class ContextChunk(ContextItem):
    """A passage of text as placed in the context (``truncated`` when cut to fit)."""

    NUMBERED: ClassVar[bool] = True

    id: str
    content: str
    score: float | None = None
    node_id: str | None = None
    queries: list[int] = Field(
        default_factory=list, description="1-based numbers of the queries that found it"
    )
    why: str | None = None
    truncated: bool = False

    def _queries(self) -> str:
        return ("query " if len(self.queries) == 1 else "queries ") + ", ".join(map(str, self.queries))

    def markdown(self, index: int) -> str:
        e = md_inline
        head = f"### ({index}) {e(self.id)}"
        if self.score is not None:
            head += f" · score {_score(self.score)}"
        if self.queries:
            head += " · " + self._queries()
        if self.truncated:
            head += " · truncated"
        lines = [head]
        if self.why:
            lines.append(f"via {md_code(self.why)}")
        body = "\n".join(("> " + ln) if ln.strip() else ">" for ln in self.content.strip().splitlines())
        return "\n".join(lines) + "\n\n" + (body or ">") + "\n\n"

    def plain(self, index: int) -> str:
        p = plain_inline
        meta = [f"score {_score(self.score)}"] if self.score is not None else []
        if self.queries:
            meta.append(self._queries())
        if self.why:
            meta.append(f"via {p(self.why)}")
        if self.truncated:
            meta.append("truncated")
        head = f"[{index}] {p(self.id)}" + (f" ({'; '.join(meta)})" if meta else "")
        return head + "\n" + self.content.strip() + "\n\n"
