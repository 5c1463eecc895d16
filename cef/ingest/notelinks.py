"""Links between notes: Markdown links and wiki links become typed edges between documents and sections.

A folder of notes (Obsidian, Logseq, Foam, a docs tree) is a graph its author
already wrote. :class:`~cef.ingest.parsers.text.MarkdownParser` reads it:

* each heading below the title is a ``Section`` node (id ``<document id>§<heading path>``,
  ``name`` the heading), holding the chunks under it, below its document (or its
  parent section) by a ``HAS_SECTION`` edge;
* each link — ``[[Page]]``, ``[[Page|shown text]]``, ``[[Page#Heading]]``,
  ``![[Page]]``, ``[text](other.md)``, ``[text](<other note.md>#Heading)`` — is
  kept on the document node (property ``links``: where it stands, what it names).

When the files of one ingest are in, :func:`link_notes` resolves every kept link
to the document it names (a relative path; else, for a wiki link, a file name,
title or alias anywhere in the knowledge base, as Obsidian does) or to that
document's section, and writes one ``LINKS_TO`` edge per linking section (or
document) and target; edges no link asks for any more are removed. A link to a
note that does not exist makes no edge and is reported. Links are resolved after
the files, so notes may link each other in any order, cycles included.

:func:`mask_markup` gives the text that entity extraction reads: link syntax and
heading marks blanked out (same length, so mention offsets still point into the
chunk), the shown text kept — a mention never holds ``](`` or ``[[``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from cef.extract.base import Mention
from cef.extract.normalize import normalize_name
from cef.model import Batch, Edge, Node, RelationSemantics, RelationType, stable_id

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase
    from cef.ingest.parsers.base import ParsedDocument

__all__ = [
    "HAS_SECTION",
    "LINKS_TO",
    "NOTE_PROPERTY",
    "NOTE_RELATION_TYPES",
    "SECTION_LABEL",
    "Link",
    "LinkReport",
    "find_links",
    "first_line",
    "link_notes",
    "mask_markup",
    "note_graph",
    "section_id",
]

LINKS_TO = "LINKS_TO"
HAS_SECTION = "HAS_SECTION"
SECTION_LABEL = "Section"

NOTE_RELATION_TYPES = (
    RelationType(
        name=LINKS_TO,
        semantics=RelationSemantics.REFERENCE,
        inverse="LINKED_FROM",
        description="a note (or a section of it) links to another note or section: links to, refers to",
    ),
    RelationType(
        name=HAS_SECTION,
        semantics=RelationSemantics.CONTAINMENT,
        inverse="SECTION_OF",
        parent_end="source",
        description="a note has a section under a heading (a section has its subsections)",
    ),
)

# [[Page]], [[Page|shown]], [[Page#Heading]], [[#Heading]], ![[Page]] (an embed links too)
_WIKI = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
# [shown](target) and [shown](<target with spaces>), an optional "title" after the target
_MARKDOWN = re.compile(r"!?\[([^\[\]\n]*)\]\((?:<([^<>\n]+)>|([^()\s]+))(?:\s+\"[^\"\n]*\")?\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_NOTE_SUFFIXES = (".md", ".markdown", ".mdx")
_TITLE_HEADING = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_HEADING_MARK = re.compile(r"^( {0,3}#{1,6})([ \t])", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Link:
    """One link in a note: ``target`` a note name (wiki) or a path relative to the note (markdown),
    empty for a link to a heading of the same note; ``anchor`` the heading, if any."""

    kind: str  # "wiki" | "path"
    target: str
    anchor: str | None
    text: str
    start: int
    end: int


def _outside_fences(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` outside fenced code blocks."""
    spans, at = [], 0
    for fence in _FENCE.finditer(text):
        spans.append((at, fence.start()))
        at = fence.end()
    spans.append((at, len(text)))
    return spans


def find_links(text: str) -> list[Link]:
    """The links to notes in ``text`` (outside fenced code), in order. Links to web pages, mail
    addresses and files that are not notes are left out."""
    found: list[Link] = []
    for lo, hi in _outside_fences(text):
        for m in _WIKI.finditer(text, lo, hi):
            page, anchor, shown = (m.group(1) or "").strip(), m.group(2), m.group(3)
            anchor = anchor.strip() if anchor and anchor.strip() else None
            if not page and anchor is None:
                continue
            found.append(
                Link("wiki", page, anchor, (shown or page or anchor or "").strip(), m.start(), m.end())
            )
        for m in _MARKDOWN.finditer(text, lo, hi):
            raw = m.group(2) or m.group(3) or ""
            if _SCHEME.match(raw):
                continue  # https:, mailto:, obsidian: ...
            path, _, anchor = raw.partition("#")
            path = unquote(path)
            if path and not path.lower().endswith(_NOTE_SUFFIXES):
                continue  # an image, a PDF: not a note
            heading = unquote(anchor).strip() or None
            if not path and heading is None:
                continue
            found.append(Link("path", path, heading, m.group(1).strip(), m.start(), m.end()))
    found.sort(key=lambda link: link.start)
    return found


def mask_markup(text: str) -> str:
    """``text`` with link syntax and heading marks replaced by spaces (same length): ``[[Page|x]]``
    reads ``x``, ``[[Page]]`` reads ``Page``, ``[x](a.md)`` reads ``x``."""
    if "[" not in text and "#" not in text:
        return text
    out = list(text)

    def blank(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            if out[i] != "\n":
                out[i] = " "

    for m in _WIKI.finditer(text):
        keep = 3 if m.group(3) is not None else 1
        blank(m.start(), m.start(keep))
        blank(m.end(keep), m.end())
    for m in _MARKDOWN.finditer(text):
        blank(m.start(), m.start(1))
        blank(m.end(1), m.end())
    for m in _HEADING_MARK.finditer(text):
        blank(m.start(1), m.end(1))
    return "".join(out)


def slug(heading: str) -> str:
    """A heading as it appears in a section id and in a link anchor (case and spacing folded)."""
    return re.sub(r"\s+", " ", heading).strip().lower()


def section_id(document_id: str, trail: Iterable[str]) -> str:
    """The id of the section under the heading path ``trail`` of a document."""
    return f"{document_id}§" + "/".join(slug(h) for h in trail)


_GAP = re.compile(r"\n|\s{2,}")


def first_line(m: Mention) -> Mention:
    """A mention cut at a line break or a run of spaces (where a heading or link syntax was masked):
    a name never spans two lines of a note."""
    gap = _GAP.search(m.text)
    if gap is None or m.start < 0:
        return m
    text = m.text[: gap.start()].rstrip()
    return replace(m, text=text, normalized=normalize_name(text), end=m.start + len(text))


# ------------------------------------------------------------------ resolving, after the files
@dataclass
class LinkReport:
    """What :func:`link_notes` did."""

    edges: int = 0  # LINKS_TO edges the notes ask for now
    added: int = 0
    removed: int = 0
    unresolved: list[str] | None = None  # "note.md: [[Missing]]"


def _key(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip().lower()


def _root(node: Any) -> str:
    """The source root a note was read from (links resolve within it)."""
    return str(node.properties.get("source") or "")


def _in(node: Any, key: str) -> str:
    return f"{_root(node)}\0{key}"


class _Notes:
    """Every note document of the knowledge base, found by path, file name, title or alias."""

    def __init__(self, docs: list[Any]) -> None:
        self.by_path: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        self.sections: dict[str, dict[str, str]] = {}
        for node in sorted(docs, key=lambda n: (_root(n), str(n.properties.get("path", "")))):
            path = str(node.properties.get("path", ""))
            self.by_path[_in(node, path.lower())] = node.id
            stem = posixpath.splitext(posixpath.basename(path))[0]
            names = [stem, str(node.properties.get("title") or ""), *_strings(node.properties.get("aliases"))]
            for name in names:
                if name.strip():
                    self.by_name.setdefault(_in(node, _key(name)), node.id)
            sections = node.properties.get("sections")
            self.sections[node.id] = dict(sections) if isinstance(sections, dict) else {}

    def resolve(self, source: Any, link: dict[str, Any]) -> str | None:
        """The node a kept link names: a document, or its section when the anchor names one."""
        target = str(link.get("target") or "")
        if not target:
            doc: str | None = source.id
        elif link.get("kind") == "path":
            base = posixpath.dirname(str(source.properties.get("path", "")))
            doc = self.by_path.get(_in(source, posixpath.normpath(posixpath.join(base, target)).lower()))
        else:
            name = target[:-3] if target.lower().endswith(".md") else target
            doc = self.by_path.get(_in(source, target.lower())) or self.by_name.get(
                _in(source, _key(posixpath.basename(name)))
            )
        if doc is None:
            return None
        anchor = link.get("anchor")
        if anchor:
            return self.sections.get(doc, {}).get(slug(str(anchor)), doc)
        return doc


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


#: the property that marks a note document (its value is True), set by the Markdown parser
NOTE_PROPERTY = "note"


def _note_documents(kb: KnowledgeBase) -> Iterator[Any]:
    for node in kb.store.nodes_by_property(NOTE_PROPERTY, True, limit=10**9):
        if isinstance(node.properties.get("links"), list):
            yield node


def link_notes(kb: KnowledgeBase) -> LinkReport:
    """Write the ``LINKS_TO`` edges every note's kept links ask for, and remove those they no longer
    ask for (one transaction). Unresolved links are listed in the report."""
    docs = list(_note_documents(kb))
    report = LinkReport(unresolved=[])
    if not docs:
        return report
    notes = _Notes(docs)
    wanted: dict[str, Edge] = {}
    sources: set[str] = set()
    for doc in docs:
        sources.add(doc.id)
        sources.update(notes.sections.get(doc.id, {}).values())
        for link in doc.properties.get("links") or []:
            if not isinstance(link, dict):
                continue
            start = str(link.get("from") or doc.id)
            end = notes.resolve(doc, link)
            if end is None:
                shown = (
                    f"[[{link.get('target')}]]" if link.get("kind") == "wiki" else f"({link.get('target')})"
                )
                where = doc.properties.get("path", doc.id)
                report.unresolved.append(f"a link to a note that does not exist: {where}: {shown}")  # type: ignore[union-attr]
                continue
            if end == start:
                continue  # a link to the heading it stands under
            edge_id = stable_id("links", start, end)
            if edge_id not in wanted:
                wanted[edge_id] = Edge(
                    id=edge_id,
                    relation_type=LINKS_TO,
                    source=start,
                    target=end,
                    properties={"text": str(link.get("text") or ""), "kind": str(link.get("kind") or "")},
                    scope=doc.scope,
                )
    present: set[str] = set()
    for edge in kb.store.get_edges(kb.store.edges_for_nodes(sorted(sources))):
        if edge.relation_type == LINKS_TO and edge.source in sources:
            present.add(edge.id)
    add = [e for i, e in wanted.items() if i not in present]
    remove = sorted(present - set(wanted))
    if add or remove:
        kb.indexer.upsert_batch(
            Batch(relation_types=list(NOTE_RELATION_TYPES), edges=add), remove_edges=remove
        )
    report.edges, report.added, report.removed = len(wanted), len(add), len(remove)
    return report


# ------------------------------------------------------------------ the parser's part
def note_graph(
    doc: ParsedDocument, text: str, title: str, aliases: list[str], label: str = "Note"
) -> ParsedDocument:
    """A parsed Markdown document as a note: named by its title (and front-matter aliases), its
    headings below the title as ``Section`` nodes holding their chunks, its links kept for
    :func:`link_notes`."""
    batch = doc.batch
    document = batch.nodes[0]
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    section_keys: dict[str, str] = {}

    h1 = _TITLE_HEADING.search(text)
    top = {title, h1.group(1).strip() if h1 else title}

    def trail_of(headings: Iterable[str]) -> tuple[str, ...]:
        trail = tuple(headings)
        return trail[1:] if trail and trail[0] in top else trail  # the title heading is the note itself

    def holder(trail: tuple[str, ...]) -> str:
        parent = document.id
        for depth in range(1, len(trail) + 1):
            sid = section_id(document.id, trail[:depth])
            if sid not in nodes:
                nodes[sid] = Node(
                    id=sid,
                    label=SECTION_LABEL,
                    properties={
                        "name": trail[depth - 1],
                        "document": title,
                        "path": document.properties.get("path"),
                        "headings": list(trail[:depth]),
                    },
                    scope=document.scope,
                )
                edges.append(
                    Edge(
                        id=stable_id("section", parent, sid),
                        relation_type=HAS_SECTION,
                        source=parent,
                        target=sid,
                        scope=document.scope,
                    )
                )
                section_keys.setdefault(slug(trail[depth - 1]), sid)
                section_keys.setdefault("/".join(slug(h) for h in trail[:depth]), sid)
            parent = sid
        return parent

    chunks = []
    spans: list[tuple[int, str]] = []  # (start offset, holder) of each chunk, in order
    for chunk in batch.chunks:
        node_id = holder(trail_of(chunk.metadata.get("headings") or []))
        spans.append((int(chunk.metadata.get("char_start", 0)), node_id))
        chunks.append(chunk if node_id == chunk.node_id else chunk.model_copy(update={"node_id": node_id}))
    links = []
    for link in find_links(text):
        where = document.id
        for start, node_id in spans:
            if start > link.start:
                break
            where = node_id
        links.append(
            {
                "from": where,
                "kind": link.kind,
                "target": link.target,
                "anchor": link.anchor,
                "text": link.text,
            }
        )
    properties = {
        **document.properties,
        "name": title,
        NOTE_PROPERTY: True,
        "links": links,
        "sections": section_keys,
    }
    if aliases:
        properties["aliases"] = aliases
    document = document.model_copy(update={"properties": properties, "label": label})
    return doc.model_copy(
        update={
            "batch": batch.model_copy(
                update={
                    "relation_types": [*batch.relation_types, *NOTE_RELATION_TYPES],
                    "nodes": [document, *batch.nodes[1:], *nodes.values()],
                    "edges": [*batch.edges, *edges],
                    "chunks": chunks,
                }
            )
        }
    )
