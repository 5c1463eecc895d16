"""Rendering assembled context as Markdown, YAML, JSON or plain text.

A :class:`ContextDocument` holds everything a context can carry — entities,
relationships, domain rules (axioms), claims, graph paths, key concepts and
text chunks — plus a header (queries, token budget, tokens used, whether the
budget cut anything). :func:`render` turns it into text in one of four
formats; every format shows every section, and the YAML and JSON forms parse
back to :meth:`ContextDocument.to_data`.

Each format is built by concatenating small fragments (a header, one fragment
per item, section openers and closers). The packer in :mod:`cef.context.budget`
counts the same fragments to fill a token budget, so what it counts is what is
rendered.

Fields at their default value (no properties, confidence 1.0, not truncated...)
are left out of the rendered items to save tokens.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SECTIONS",
    "SECTION_TITLES",
    "ContextAxiom",
    "ContextChunk",
    "ContextClaim",
    "ContextDocument",
    "ContextEntity",
    "ContextFormat",
    "ContextPath",
    "ContextRelationship",
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


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), 4)


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_data(self) -> dict[str, Any]:
        """The item as JSON-compatible data, fields at their default left out."""
        data: dict[str, Any] = self.model_dump(mode="json", exclude_defaults=True)
        return data


class ContextEntity(_Item):
    """A graph node in context: its type, name, selected properties and relevance."""

    id: str
    type: str
    name: str
    properties: dict[str, Any] = Field(default_factory=dict)
    score: float | None = None
    matched_terms: list[str] = Field(default_factory=list)


class ContextRelationship(_Item):
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


class ContextAxiom(_Item):
    """A domain rule that applies to a node type (or a node) present in the context."""

    id: str
    name: str
    rule: str
    applies_to: list[str] = Field(default_factory=list, description="node types or node names")
    severity: str | None = None


class ContextClaim(_Item):
    """A statement from a source document about one or more entities."""

    id: str
    statement: str
    about: list[str] = Field(default_factory=list, description="names of the entities it is about")
    source: str | None = None
    confidence: float = 1.0
    truncated: bool = False


class ContextPath(_Item):
    """A graph path that explains why something is in context."""

    text: str
    node_ids: list[str] = Field(default_factory=list)
    confidence: float = 1.0


class ContextChunk(_Item):
    """A passage of text as placed in the context (``truncated`` when cut to fit)."""

    id: str
    content: str
    score: float | None = None
    node_id: str | None = None
    queries: list[int] = Field(
        default_factory=list, description="1-based numbers of the queries that found it"
    )
    why: str | None = None
    truncated: bool = False


class ContextDocument(BaseModel):
    """Everything one context holds, ready to render."""

    model_config = ConfigDict(extra="forbid")

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


# ----------------------------------------------------------------- helpers
_MD_SPECIAL = re.compile(r"[\\`*<&\[\]]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|^[#>+-]|^\d+(?=[.)])")


@lru_cache(maxsize=8192)
def md_inline(text: str) -> str:
    """Text safe inside one Markdown line: line breaks flattened, markup characters escaped.

    Escapes what could start markup inline (backslash, backtick, ``*``, ``<``,
    ``&``, brackets, ``_`` at a word edge) and what would start a block at the
    beginning of a line (``#``, ``>``, list markers); ``snake_case`` and arrows
    stay readable.
    """
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(
        lambda m: "\\" + m.group(0) if not m.group(0)[0].isdigit() else m.group(0) + "\\", flat
    )


def md_code(text: str) -> str:
    """``text`` as an inline code span (shown literally), fenced to survive backticks inside."""
    flat = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def plain_inline(text: str) -> str:
    return " ".join(str(text).split())


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _props(props: dict[str, Any], esc: Callable[[str], str], sep: str = ": ") -> str:
    return "; ".join(f"{esc(k)}{sep}{esc(_value(v))}" for k, v in props.items())


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _date(value: datetime | None) -> str:
    return "" if value is None else value.date().isoformat()


def _validity(r: ContextRelationship) -> str:
    if r.valid_from and r.valid_to:
        return f"from {_date(r.valid_from)} to {_date(r.valid_to)}"
    if r.valid_from:
        return f"since {_date(r.valid_from)}"
    if r.valid_to:
        return f"until {_date(r.valid_to)}"
    return ""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):
    """Block mappings; lists of plain values in flow style (``[a, b]``)."""


def _represent_list(dumper: Any, data: list[Any]) -> Any:
    flat = all(not isinstance(v, list | dict) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_Dumper.add_representer(list, _represent_list)


def _yaml(value: Any) -> str:
    out: str = yaml.dump(
        value,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,
        default_flow_style=False,
    )
    return out


# --------------------------------------------------------------- renderers
class Renderer:
    """Fragments of one format. ``render`` = head + sections + tail."""

    def head(self, doc: ContextDocument) -> str:
        raise NotImplementedError

    def open(self, section: Section) -> str:
        raise NotImplementedError

    def close(self, section: Section) -> str:
        return ""

    def sep(self, section: Section) -> str:
        return ""

    def empty(self, section: Section) -> str:
        return ""

    def tail(self) -> str:
        return ""

    def item(self, section: Section, item: Any, index: int) -> str:
        """One item's fragment (``index`` is its 1-based position in the section)."""
        raise NotImplementedError

    def render(self, doc: ContextDocument) -> str:
        frags: dict[Section, list[str]] = {}
        for name in SECTIONS:
            items: list[Any] = (
                ([doc.keywords] if doc.keywords else []) if name == "keywords" else getattr(doc, name)
            )
            frags[name] = [self.item(name, it, i) for i, it in enumerate(items, 1)]
        return self.compose(doc, frags)

    def compose(self, doc: ContextDocument, fragments: Mapping[Section, Sequence[str]]) -> str:
        """The text from the header of ``doc`` and already rendered item fragments per section."""
        parts = [self.head(doc)]
        for name in SECTIONS:
            frags = fragments.get(name)
            if frags:
                parts.append(self.open(name) + self.sep(name).join(frags) + self.close(name))
            else:
                parts.append(self.empty(name))
        parts.append(self.tail())
        return "".join(parts)


class JsonRenderer(Renderer):
    """One JSON object; each item on its own line."""

    def head(self, doc: ContextDocument) -> str:
        return '{\n"meta": ' + _json(doc.meta())

    def open(self, section: Section) -> str:
        return f',\n"{section}": ' + ("" if section == "keywords" else "[\n")

    def close(self, section: Section) -> str:
        return "" if section == "keywords" else "\n]"

    def sep(self, section: Section) -> str:
        return ",\n"

    def empty(self, section: Section) -> str:
        return f',\n"{section}": []'

    def tail(self) -> str:
        return "\n}\n"

    def item(self, section: Section, item: Any, index: int) -> str:
        if section == "keywords":
            return _json(list(item))
        return _json(item.to_data())


class YamlRenderer(Renderer):
    """One YAML mapping; sections are block sequences, keywords a flow list."""

    def head(self, doc: ContextDocument) -> str:
        return _yaml({"meta": doc.meta()})

    def open(self, section: Section) -> str:
        return f"{section}: " if section == "keywords" else f"{section}:\n"

    def empty(self, section: Section) -> str:
        return f"{section}: []\n"

    def item(self, section: Section, item: Any, index: int) -> str:
        if section == "keywords":
            return _yaml(list(item))
        return _yaml([item.to_data()])


class MarkdownRenderer(Renderer):
    """Headings per section, one list item per fact, chunks as block quotes."""

    def head(self, doc: ContextDocument) -> str:
        lines = [f"# {md_inline(doc.title)}"]
        if len(doc.queries) == 1:
            lines.append(f"Query: {md_inline(doc.queries[0])}")
        elif doc.queries:
            lines.append(
                "Queries: " + " · ".join(f"({i}) {md_inline(q)}" for i, q in enumerate(doc.queries, 1))
            )
        lines.append(_budget_line(doc))
        return "\n".join(lines) + "\n"

    def open(self, section: Section) -> str:
        return f"\n## {SECTION_TITLES[section]}\n"

    def item(self, section: Section, item: Any, index: int) -> str:
        e = md_inline
        if section == "entities":
            ent: ContextEntity = item
            out = f"- **{e(ent.type)}: {e(ent.name)}** (id: {e(ent.id)})"
            if ent.properties:
                out += " — " + _props(ent.properties, e)
            if ent.score is not None:
                out += f" · relevance {_score(ent.score)}"
            if ent.matched_terms:
                out += " · matched: " + e(", ".join(ent.matched_terms))
            return out + "\n"
        if section == "relationships":
            r: ContextRelationship = item
            out = f"- {e(r.source_name)} → {md_code(r.relation)} → {e(r.target_name)}"
            extra = [x for x in (_props(r.properties, e), e(_validity(r))) if x]
            if r.confidence != 1.0:
                extra.append(f"confidence {r.confidence:g}")
            return out + (f" ({'; '.join(extra)})" if extra else "") + "\n"
        if section == "axioms":
            a: ContextAxiom = item
            scope = f" (applies to {e(', '.join(a.applies_to))})" if a.applies_to else ""
            sev = f" [{e(a.severity)}]" if a.severity else ""
            return f"- **{e(a.name)}**{sev}{scope}: {e(a.rule)}\n"
        if section == "claims":
            c: ContextClaim = item
            extra = []
            if c.about:
                extra.append("about " + e(", ".join(c.about)))
            if c.source:
                extra.append("source: " + e(c.source))
            if c.confidence != 1.0:
                extra.append(f"confidence {c.confidence:g}")
            return f"- {e(c.statement)}" + (f" ({'; '.join(extra)})" if extra else "") + "\n"
        if section == "paths":
            p: ContextPath = item
            return f"- {md_code(p.text)} (confidence {p.confidence:.2f})\n"
        if section == "keywords":
            return e(", ".join(item)) + "\n"
        ch: ContextChunk = item
        head = f"### ({index}) {e(ch.id)}"
        if ch.score is not None:
            head += f" · score {_score(ch.score)}"
        if ch.queries:
            head += (
                " · " + ("query " if len(ch.queries) == 1 else "queries ") + ", ".join(map(str, ch.queries))
            )
        if ch.truncated:
            head += " · truncated"
        lines = [head]
        if ch.why:
            lines.append(f"via {md_code(ch.why)}")
        body = "\n".join(("> " + ln) if ln.strip() else ">" for ln in ch.content.strip().splitlines())
        return "\n".join(lines) + "\n\n" + (body or ">") + "\n\n"


class PlainRenderer(Renderer):
    """Upper-case section titles and one line per fact; no markup."""

    def head(self, doc: ContextDocument) -> str:
        lines = [plain_inline(doc.title).upper()]
        if len(doc.queries) == 1:
            lines.append(f"Query: {plain_inline(doc.queries[0])}")
        elif doc.queries:
            lines.append(
                "Queries: " + " | ".join(f"({i}) {plain_inline(q)}" for i, q in enumerate(doc.queries, 1))
            )
        lines.append(_budget_line(doc))
        return "\n".join(lines) + "\n"

    def open(self, section: Section) -> str:
        return f"\n{SECTION_TITLES[section].upper()}\n"

    def item(self, section: Section, item: Any, index: int) -> str:
        p = plain_inline
        if section == "entities":
            ent: ContextEntity = item
            out = f"- {p(ent.type)}: {p(ent.name)} [{p(ent.id)}]"
            if ent.properties:
                out += " " + _props(ent.properties, p, "=")
            if ent.score is not None:
                out += f" (relevance {_score(ent.score)})"
            return out + "\n"
        if section == "relationships":
            r: ContextRelationship = item
            out = f"- {p(r.source_name)} --{p(r.relation)}--> {p(r.target_name)}"
            extra = [x for x in (_props(r.properties, p, "="), _validity(r)) if x]
            if r.confidence != 1.0:
                extra.append(f"confidence {r.confidence:g}")
            return out + (f" ({'; '.join(extra)})" if extra else "") + "\n"
        if section == "axioms":
            a: ContextAxiom = item
            scope = f" (applies to {p(', '.join(a.applies_to))})" if a.applies_to else ""
            sev = f" [{p(a.severity)}]" if a.severity else ""
            return f"- {p(a.name)}{sev}{scope}: {p(a.rule)}\n"
        if section == "claims":
            c: ContextClaim = item
            extra = []
            if c.about:
                extra.append("about " + p(", ".join(c.about)))
            if c.source:
                extra.append("source: " + p(c.source))
            if c.confidence != 1.0:
                extra.append(f"confidence {c.confidence:g}")
            return f"- {p(c.statement)}" + (f" ({'; '.join(extra)})" if extra else "") + "\n"
        if section == "paths":
            path: ContextPath = item
            return f"- {p(path.text)} (confidence {path.confidence:.2f})\n"
        if section == "keywords":
            return p(", ".join(item)) + "\n"
        ch: ContextChunk = item
        meta = [f"score {_score(ch.score)}"] if ch.score is not None else []
        if ch.queries:
            meta.append(("query " if len(ch.queries) == 1 else "queries ") + ", ".join(map(str, ch.queries)))
        if ch.why:
            meta.append(f"via {p(ch.why)}")
        if ch.truncated:
            meta.append("truncated")
        head = f"[{index}] {p(ch.id)}" + (f" ({'; '.join(meta)})" if meta else "")
        return head + "\n" + ch.content.strip() + "\n\n"


def _budget_line(doc: ContextDocument) -> str:
    used = "?" if doc.total_tokens is None else str(doc.total_tokens)
    line = f"Tokens: {used}" + (f" of {doc.token_budget}" if doc.token_budget is not None else "")
    return line + (" (truncated to fit the budget)" if doc.truncated else "")


RENDERERS: dict[ContextFormat, Renderer] = {
    ContextFormat.MARKDOWN: MarkdownRenderer(),
    ContextFormat.YAML: YamlRenderer(),
    ContextFormat.JSON: JsonRenderer(),
    ContextFormat.PLAIN: PlainRenderer(),
}


def renderer_for(fmt: ContextFormat | str) -> Renderer:
    return RENDERERS[ContextFormat(fmt)]


def render(doc: ContextDocument, fmt: ContextFormat | str = ContextFormat.MARKDOWN) -> str:
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
    return _finite(value)
