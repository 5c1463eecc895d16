"""``cef graph``: draw a node's neighbourhood, or the paths behind a query's answer, as a file to open.

Formats: ``mermaid`` (paste into Markdown), ``dot`` (Graphviz) and ``html``
(one self-contained page: the vendored Cytoscape.js and the explorer's
drawing code inlined, nothing loaded from the internet). The subgraph is a
:class:`~cef.server.graphview.GraphView`, the same one the explorer page draws.
"""

from __future__ import annotations

import html
import re
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cef.cli.common import DbOption, EmbedderOption, cli_errors, err_console, open_engine
from cef.errors import NotFoundError
from cef.model import GraphQuery, ResolutionTarget, SearchStrategy, TraversalHint
from cef.server.graphview import GraphView, ViewNode, neighbourhood_view, result_view

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = ["register", "to_dot", "to_html", "to_mermaid"]

FORMATS = ("mermaid", "dot", "html")
SUFFIXES = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid", ".dot": "dot", ".gv": "dot"}
SUFFIXES |= {".html": "html", ".htm": "html"}
#: fill colours by a node's main role (the explorer page uses the same)
COLOURS = {
    "center": "#7b3fbf",
    "anchor": "#e8833a",
    "answer": "#2e9d4a",
    "chunk": "#d9b93a",
    "path": "#2f6fdd",
    "context": "#8795a8",
}
ROLE_ORDER = ("center", "anchor", "answer", "chunk", "path", "context")


def main_role(node: ViewNode) -> str:
    return next((r for r in ROLE_ORDER if r in node.roles), "context")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------- mermaid
def _mermaid_text(text: str) -> str:
    return (
        text.replace("&", "#amp;")
        .replace('"', "#quot;")
        .replace("<", "#lt;")
        .replace(">", "#gt;")
        .replace("|", "#124;")
        .replace("\n", " ")
    )


def to_mermaid(view: GraphView) -> str:
    """A Mermaid flowchart (``flowchart LR``); node ids become ``n0, n1, …``."""
    ids = {n.id: f"n{i}" for i, n in enumerate(view.nodes)}
    lines = ["flowchart LR"]
    if view.title:
        lines.insert(0, f"%% {' '.join(view.title.split())}")  # a comment stays one line
    for n in view.nodes:
        label = f"{_mermaid_text(_short(n.name))}<br/>{_mermaid_text(n.label)}"
        shape = ('["', '"]') if "chunk" not in n.roles else ('(["', '"])')
        lines.append(f"  {ids[n.id]}{shape[0]}{label}{shape[1]}")
    for e in view.edges:
        arrow = "-.->" if e.kind == "chunk" else "-->"
        lines.append(f"  {ids[e.source]} {arrow}|{_mermaid_text(e.relation)}| {ids[e.target]}")
    for role, colour in COLOURS.items():
        lines.append(f"  classDef {role} fill:{colour},color:#fff,stroke:#333")
    for role in ROLE_ORDER:
        members = [ids[n.id] for n in view.nodes if main_role(n) == role]
        if members:
            lines.append(f"  class {','.join(members)} {role}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- dot
def _dot(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(view: GraphView) -> str:
    """A Graphviz digraph (``dot -Tsvg graph.dot -o graph.svg``)."""
    lines = [
        "digraph cef {",
        f"  label={_dot(view.title)}; labelloc=t; rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontcolor=white];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    for n in view.nodes:
        shape = ", shape=note, fontcolor=black" if "chunk" in n.roles else ""
        lines.append(
            f"  {_dot(n.id)} [label={_dot(_short(n.name) + chr(10) + n.label)}, "
            f'fillcolor="{COLOURS[main_role(n)]}"{shape}];'
        )
    for e in view.edges:
        style = ", style=dashed" if e.kind == "chunk" else ""
        lines.append(f"  {_dot(e.source)} -> {_dot(e.target)} [label={_dot(e.relation)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- html
def _static(name: str) -> str:
    return (resources.files("cef.server") / "static" / name).read_text(encoding="utf-8")


def _inline_script(code: str) -> str:
    """JavaScript safe inside a <script> element (no closing tag in it)."""
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)


HTML_STYLE = """
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: #1d2430; display: flex; height: 100vh; }
#graph { flex: 1; }
aside { width: 340px; overflow: auto; padding: 10px 14px; border-left: 1px solid #dde1e7; background: #fafbfc; }
h1 { font-size: 15px; } h2 { font-size: 14px; margin: 14px 0 4px; }
.path { font-family: ui-monospace, monospace; font-size: 12px; background: #eef8f0; color: #1c5f2b;
        padding: 2px 4px; margin: 2px 0; border-radius: 3px; }
table { border-collapse: collapse; font-size: 12px; width: 100%; }
th { text-align: left; color: #444d5c; width: 35%; vertical-align: top; } td { word-break: break-word; }
#legend span { display: inline-flex; align-items: center; gap: 3px; margin-right: 8px; font-size: 12px; }
#legend i { display: inline-block; width: 11px; height: 11px; border-radius: 50%; }
.muted { color: #6b7686; }
"""

HTML_SCRIPT = """
(function () {
  var view = JSON.parse(document.getElementById("cef-graph").textContent);
  function row(k, v) {
    var tr = document.createElement("tr"), th = document.createElement("th"), td = document.createElement("td");
    th.textContent = k; td.textContent = typeof v === "string" ? v : JSON.stringify(v);
    tr.appendChild(th); tr.appendChild(td); return tr;
  }
  function show(n) {
    var box = document.getElementById("node");
    box.innerHTML = "";
    var h = document.createElement("h2"); h.id = "node-title"; h.textContent = n.name; box.appendChild(h);
    var t = document.createElement("table");
    t.appendChild(row("id", n.id)); t.appendChild(row("label", n.label)); t.appendChild(row("roles", n.roles.join(", ")));
    if (n.score !== null && n.score !== undefined) t.appendChild(row("score", n.score.toFixed(3)));
    if (n.chunks) t.appendChild(row("chunks", String(n.chunks)));
    Object.keys(n.properties || {}).forEach(function (k) { t.appendChild(row(k, n.properties[k])); });
    if (n.text) t.appendChild(row("text", n.text));
    box.appendChild(t);
  }
  CefGraph.legend(document.getElementById("legend"));
  window.cefGraph = CefGraph.draw(document.getElementById("graph"), view, { onSelect: show });
})();
"""


def to_html(view: GraphView) -> str:
    """One self-contained page drawing ``view`` (Cytoscape.js inlined; works from a file:// URL)."""
    data = view.model_dump_json().replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    paths = "".join(f'<div class="path">{html.escape(p)}</div>' for p in view.paths)
    title = html.escape(view.title or "cef graph")
    licence = html.escape(_static("vendor/cytoscape.LICENSE"))
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>{HTML_STYLE}</style>
</head>
<body>
<div id="graph" aria-label="graph"></div>
<aside>
<h1>{title}</h1>
<div class="muted">{len(view.nodes)} nodes, {len(view.edges)} edges{" (truncated)" if view.truncated else ""}</div>
<div id="legend"></div>
{"<h2>Paths</h2>" + paths if paths else ""}
<div id="node"><p class="muted">Click a node to see its properties.</p></div>
</aside>
<script type="application/json" id="cef-graph">{data}</script>
<!-- Cytoscape.js, MIT licence:
{licence}
-->
<script>{_inline_script(_static("vendor/cytoscape.min.js"))}</script>
<script>{_inline_script(_static("graph.js"))}</script>
<script>{HTML_SCRIPT}</script>
</body>
</html>
"""


RENDERERS = {"mermaid": to_mermaid, "dot": to_dot, "html": to_html}


# ---------------------------------------------------------------------- command
def graph(
    node: Annotated[
        str | None,
        typer.Argument(help="The node to draw around: its id, or its exact name.", show_default=False),
    ] = None,
    db: DbOption = None,
    embedder: EmbedderOption = "default",
    depth: Annotated[
        int, typer.Option(help="Hops from the node (or the query's anchors).", min=0, max=10)
    ] = 1,
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="Draw the paths behind this question's answer instead."),
    ] = None,
    strategy: Annotated[SearchStrategy, typer.Option(help="Retrieval strategy for --query.")] = (
        SearchStrategy.AUTO
    ),
    top_k: Annotated[int, typer.Option("--top-k", help="Chunks drawn for --query.", min=1, max=100)] = 5,
    max_nodes: Annotated[int, typer.Option(help="Most nodes in a neighbourhood.", min=1, max=5000)] = 100,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", help="mermaid, dot or html (default: from --out's suffix, else mermaid)."
        ),
    ] = None,
    out: Annotated[str, typer.Option("--out", "-o", help="Output file ('-': standard output).")] = "-",
) -> None:
    """Draw a node's neighbourhood, or a query's paths, as Mermaid, Graphviz DOT or a self-contained HTML page.

    Example:  cef graph pat-john --depth 2 --format html --out john.html

    A query:  cef graph --query "Which drugs interact with the medication John Miller takes?" --out q.html
    """
    chosen = fmt or (SUFFIXES.get(Path(out).suffix.lower(), "mermaid") if out != "-" else "mermaid")
    if chosen not in FORMATS:
        raise typer.BadParameter(f"{chosen!r}: use one of {', '.join(FORMATS)}", param_hint="--format")
    if node is None and query is None:
        raise typer.BadParameter("name a NODE to draw around, or give --query", param_hint="NODE")
    with cli_errors():
        kb = open_engine(db, embedder if query else "none")
        try:
            if query is not None:
                result = kb.retrieve(
                    GraphQuery(
                        query=query,
                        targets=[ResolutionTarget(description=node)] if node else [],
                        traversal=TraversalHint(depth=depth),
                        strategy=strategy,
                        top_k=top_k,
                    )
                )
                view = result_view(kb, result)
            else:
                assert node is not None
                view = neighbourhood_view(kb, _resolve(kb, node), depth=depth, max_nodes=max_nodes)
        finally:
            kb.close()
    text = RENDERERS[chosen](view)
    if out == "-":
        sys.stdout.write(text)
        return
    Path(out).write_text(text, encoding="utf-8")
    err_console.print(f"wrote {out}: {len(view.nodes)} nodes, {len(view.edges)} edges ({chosen})")


def _resolve(kb: KnowledgeBase, node: str) -> str:
    """A node id from an id or an exact name."""
    if kb.find_node(node) is not None:
        return node
    found = kb.find_nodes_by_property("name", node, limit=5)
    if len(found) == 1:
        return found[0].id
    if len(found) > 1:
        which = ", ".join(f"{n.id} ({n.label})" for n in found)
        raise NotFoundError(f"several nodes are named {node!r}: {which}; give the id")
    raise NotFoundError(
        f"no node has the id or the name {node!r}: see `cef stats` for labels, or use --query"
    )


def register(app: typer.Typer) -> None:
    app.command()(graph)
