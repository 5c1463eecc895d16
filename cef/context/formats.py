"""Rendering a context as Markdown, YAML, JSON or plain text: one renderer for every kind of context.

A context is a :class:`ContextFrame` — its header (title, queries, what the
JSON and YAML forms carry as ``meta``) and its sections in order — filled with
items of the kinds in :mod:`cef.context.items` and :mod:`cef.context.facts`.
Two frames ship: :class:`ContextDocument` (entities, relationships, domain
rules, claims, graph paths, key concepts, chunks; the context providers') and
the semantic memory's :class:`~cef.memory.bundle.ContextBundle` (core facts,
beliefs, conflicts, changes, supporting facts). :func:`render` turns a
document into text in one of four formats; every format shows every section,
and the YAML and JSON forms parse back to :meth:`ContextDocument.to_data`.

Each format is built by concatenating small fragments (a header, one fragment
per item, section openers and closers). The packer in :mod:`cef.context.budget`
counts the same fragments to fill a token budget, so what it counts is what is
rendered. Fields at their default value (no properties, confidence 1.0, not
truncated...) are left out of the rendered items to save tokens.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, ClassVar, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field

from cef.context.items import (
    ContextAxiom,
    ContextChunk,
    ContextClaim,
    ContextEntity,
    ContextItem,
    ContextPath,
    ContextRelationship,
)
from cef.context.markup import json_text, md_code, md_inline, plain_inline, yaml_text

__all__ = [
    "SECTIONS",
    "SECTION_TITLES",
    "ContextAxiom",
    "ContextChunk",
    "ContextClaim",
    "ContextDocument",
    "ContextEntity",
    "ContextFormat",
    "ContextFrame",
    "ContextItem",
    "ContextPath",
    "ContextRelationship",
    "Renderer",
    "Section",
    "md_code",
    "md_inline",
    "parse",
    "plain_inline",
    "render",
    "renderer_for",
    "score_of",
]


class ContextFormat(StrEnum):
    """How assembled context is rendered."""

    MARKDOWN = "markdown"
    YAML = "yaml"
    JSON = "json"
    PLAIN = "plain"


class ContextFrame(BaseModel):
    """The header and the sections of a context; subclasses hold the items.

    ``SECTIONS`` are rendered in order under ``SECTION_TITLES``; a section in
    ``FLAT_SECTIONS`` holds one item, a list of strings, shown as the
    section's value. ``YAML_FLOW_LISTS``: lists of plain values in YAML read
    ``[a, b]`` (else one per line).
    """

    SECTIONS: ClassVar[tuple[str, ...]] = ()
    SECTION_TITLES: ClassVar[Mapping[str, str]] = {}
    FLAT_SECTIONS: ClassVar[frozenset[str]] = frozenset()
    YAML_FLOW_LISTS: ClassVar[bool] = True

    def meta(self) -> dict[str, Any]:
        """The header of the JSON and YAML forms."""
        raise NotImplementedError

    def heading(self) -> str:
        """The title line of the Markdown and plain forms."""
        raise NotImplementedError

    def head_lines(self, markdown: bool) -> list[str]:
        """The header lines under the title (Markdown when ``markdown``, else plain text)."""
        raise NotImplementedError

    def section_title(self, section: str) -> str:
        return self.SECTION_TITLES[section]

    def with_budget(self, budget: int) -> Self:
        """The frame as its header reads when packed into ``budget`` tokens."""
        return self

    def with_status(self, truncated: bool, total: int | None) -> Self:
        """The frame as its header reads when the packed text holds ``total`` tokens (None: unknown)."""
        return self

    def items(self, section: str) -> list[Any]:
        """The items of ``section`` (a flat section: its one list, when not empty)."""
        raise NotImplementedError

    def filled(self, items: Mapping[str, Sequence[Any]]) -> Self:
        """A copy holding ``items`` per section (what the packer selected)."""
        raise NotImplementedError


Section = Literal["entities", "relationships", "axioms", "claims", "paths", "keywords", "chunks"]

#: sections in the order they are rendered
SECTIONS: tuple[Section, ...] = (
    "entities",
    "relationships",
    "axioms",
    "claims",
    "paths",
    "keywords",
    "chunks",
)

SECTION_TITLES: dict[str, str] = {
    "entities": "Entities",
    "relationships": "Relationships",
    "axioms": "Domain rules",
    "claims": "Claims",
    "paths": "Graph paths",
    "keywords": "Key concepts",
    "chunks": "Retrieved information",
}


class ContextDocument(ContextFrame):
    """Everything one context of the providers holds, ready to render."""

    model_config = ConfigDict(extra="forbid")

    SECTIONS: ClassVar[tuple[str, ...]] = SECTIONS
    SECTION_TITLES: ClassVar[Mapping[str, str]] = SECTION_TITLES
    FLAT_SECTIONS: ClassVar[frozenset[str]] = frozenset({"keywords"})

    title: str = "Context"
    queries: list[str] = Field(default_factory=list)
    token_budget: int | None = None
    total_tokens: int | None = None
    truncated: bool = False
    entities: list[ContextEntity] = Field(default_factory=list)
    relationships: list[ContextRelationship] = Field(default_factory=list)
    axioms: list[ContextAxiom] = Field(default_factory=list)
    claims: list[ContextClaim] = Field(default_factory=list)
    paths: list[ContextPath] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    chunks: list[ContextChunk] = Field(default_factory=list)

    def meta(self) -> dict[str, Any]:
        """The header every format carries."""
        out: dict[str, Any] = {"title": self.title, "queries": list(self.queries)}
        out["token_budget"] = self.token_budget
        out["total_tokens"] = self.total_tokens
        out["truncated"] = self.truncated
        return out

    def heading(self) -> str:
        return self.title

    def head_lines(self, markdown: bool) -> list[str]:
        esc, sep = (md_inline, " · ") if markdown else (plain_inline, " | ")
        lines = []
        if len(self.queries) == 1:
            lines.append(f"Query: {esc(self.queries[0])}")
        elif self.queries:
            lines.append("Queries: " + sep.join(f"({i}) {esc(q)}" for i, q in enumerate(self.queries, 1)))
        used = "?" if self.total_tokens is None else str(self.total_tokens)
        line = f"Tokens: {used}" + (f" of {self.token_budget}" if self.token_budget is not None else "")
        lines.append(line + (" (truncated to fit the budget)" if self.truncated else ""))
        return lines

    def with_budget(self, budget: int) -> Self:
        return self.model_copy(update={"token_budget": budget})

    def with_status(self, truncated: bool, total: int | None) -> Self:
        return self.model_copy(update={"truncated": truncated, "total_tokens": total})

    def items(self, section: str) -> list[Any]:
        if section == "keywords":
            return [self.keywords] if self.keywords else []
        items: list[Any] = getattr(self, section)
        return items

    def filled(self, items: Mapping[str, Sequence[Any]]) -> Self:
        parts: dict[str, Any] = {name: list(items.get(name, ())) for name in SECTIONS}
        parts["keywords"] = [k for kw in parts["keywords"] for k in kw]
        return self.model_copy(update=parts)

    def to_data(self) -> dict[str, Any]:
        """What the JSON and YAML forms hold (they parse back to exactly this)."""
        data: dict[str, Any] = {"meta": self.meta()}
        for name in SECTIONS:
            if name == "keywords":
                data[name] = list(self.keywords)
            else:
                data[name] = [item.to_data() for item in getattr(self, name)]
        return data

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in SECTIONS)


# --------------------------------------------------------------- renderers
class Renderer:
    """Fragments of one format for any frame. ``render`` = head + sections + tail."""

    def head(self, frame: ContextFrame) -> str:
        raise NotImplementedError

    def open(self, frame: ContextFrame, section: str) -> str:
        raise NotImplementedError

    def close(self, frame: ContextFrame, section: str) -> str:
        return ""

    def sep(self) -> str:
        return ""

    def empty(self, section: str) -> str:
        return ""

    def tail(self) -> str:
        return ""

    def item(self, frame: ContextFrame, section: str, item: Any, index: int) -> str:
        """One item's fragment (``index`` is its 1-based position in the section)."""
        raise NotImplementedError

    def render(self, frame: ContextFrame) -> str:
        frags = {
            name: [self.item(frame, name, it, i) for i, it in enumerate(frame.items(name), 1)]
            for name in frame.SECTIONS
        }
        return self.compose(frame, frags)

    def compose(self, frame: ContextFrame, fragments: Mapping[str, Sequence[str]]) -> str:
        """The text from the header of ``frame`` and already rendered item fragments per section."""
        parts = [self.head(frame)]
        for name in frame.SECTIONS:
            frags = fragments.get(name)
            if frags:
                parts.append(self.open(frame, name) + self.sep().join(frags) + self.close(frame, name))
            else:
                parts.append(self.empty(name))
        parts.append(self.tail())
        return "".join(parts)


class JsonRenderer(Renderer):
    """One JSON object; each item on its own line."""

    def head(self, frame: ContextFrame) -> str:
        return '{\n"meta": ' + json_text(frame.meta())

    def open(self, frame: ContextFrame, section: str) -> str:
        return f',\n"{section}": ' + ("" if section in frame.FLAT_SECTIONS else "[\n")

    def close(self, frame: ContextFrame, section: str) -> str:
        return "" if section in frame.FLAT_SECTIONS else "\n]"

    def sep(self) -> str:
        return ",\n"

    def empty(self, section: str) -> str:
        return f',\n"{section}": []'

    def tail(self) -> str:
        return "\n}\n"

    def item(self, frame: ContextFrame, section: str, item: Any, index: int) -> str:
        if section in frame.FLAT_SECTIONS:
            return json_text(list(item))
        return json_text(item.to_data())


class YamlRenderer(Renderer):
    """One YAML mapping; sections are block sequences, a flat section a flow list."""

    def head(self, frame: ContextFrame) -> str:
        return yaml_text({"meta": frame.meta()}, flow_lists=frame.YAML_FLOW_LISTS)

    def open(self, frame: ContextFrame, section: str) -> str:
        return f"{section}: " if section in frame.FLAT_SECTIONS else f"{section}:\n"

    def empty(self, section: str) -> str:
        return f"{section}: []\n"

    def item(self, frame: ContextFrame, section: str, item: Any, index: int) -> str:
        if section in frame.FLAT_SECTIONS:
            return yaml_text(list(item))
        return yaml_text([item.to_data()], flow_lists=frame.YAML_FLOW_LISTS)


class MarkdownRenderer(Renderer):
    """Headings per section, one list item per fact, chunks as block quotes."""

    def head(self, frame: ContextFrame) -> str:
        return "\n".join([f"# {md_inline(frame.heading())}", *frame.head_lines(True)]) + "\n"

    def open(self, frame: ContextFrame, section: str) -> str:
        return f"\n## {md_inline(frame.section_title(section))}\n"

    def item(self, frame: ContextFrame, section: str, item: Any, index: int) -> str:
        if section in frame.FLAT_SECTIONS:
            return md_inline(", ".join(item)) + "\n"
        text: str = item.markdown(index)
        return text


class PlainRenderer(Renderer):
    """Upper-case section titles and one line per fact; no markup."""

    def head(self, frame: ContextFrame) -> str:
        return "\n".join([plain_inline(frame.heading()).upper(), *frame.head_lines(False)]) + "\n"

    def open(self, frame: ContextFrame, section: str) -> str:
        return f"\n{plain_inline(frame.section_title(section)).upper()}\n"

    def item(self, frame: ContextFrame, section: str, item: Any, index: int) -> str:
        if section in frame.FLAT_SECTIONS:
            return plain_inline(", ".join(item)) + "\n"
        text: str = item.plain(index)
        return text


RENDERERS: dict[ContextFormat, Renderer] = {
    ContextFormat.MARKDOWN: MarkdownRenderer(),
    ContextFormat.YAML: YamlRenderer(),
    ContextFormat.JSON: JsonRenderer(),
    ContextFormat.PLAIN: PlainRenderer(),
}


def renderer_for(fmt: ContextFormat | str) -> Renderer:
    return RENDERERS[ContextFormat(fmt)]


def render(doc: ContextFrame, fmt: ContextFormat | str = ContextFormat.MARKDOWN) -> str:
    """``doc`` as text in ``fmt`` (markdown, yaml, json or plain)."""
    return renderer_for(fmt).render(doc)


def parse(text: str, fmt: ContextFormat | str) -> dict[str, Any]:
    """Parse a JSON or YAML rendering back to data (the inverse of :func:`render` for those formats)."""
    fmt = ContextFormat(fmt)
    if fmt is ContextFormat.JSON:
        data: dict[str, Any] = json.loads(text)
        return data
    if fmt is ContextFormat.YAML:
        loaded: dict[str, Any] = yaml.safe_load(text)
        return loaded
    raise ValueError(f"{fmt.value} has no structured parse; use json or yaml")


def score_of(value: float | None) -> float | None:
    """A score as stored in context items: finite, rounded to 4 decimals, or None."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), 4)
