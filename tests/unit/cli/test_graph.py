"""`cef graph`: a node's neighbourhood or a query's paths as Mermaid, DOT or a self-contained HTML page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

import cef
from cef.cli import app
from cef.cli.graph import to_dot, to_html, to_mermaid
from cef.model import Node
from cef.server.graphview import GraphView, ViewEdge, ViewNode
from tests.conftest import clinical_batch

QUESTION = "Which drugs interact with the medication John Miller takes?"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("graph") / "clinical.db"
    with cef.open(path, embedder=None) as kb:
        kb.index_batch(clinical_batch())
        kb.index_node(Node(id="twin-1", label="Thing", properties={"name": "Twin"}))
        kb.index_node(Node(id="twin-2", label="Other", properties={"name": "Twin"}))
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(app, ["graph", *args])


def test_mermaid_neighbourhood(db: Path) -> None:
    r = run("pat-john", "--db", str(db))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[:2] == ["%% John Miller (depth 1)", "flowchart LR"]
    names = dict(re.findall(r'^\s+(n\d+)\["([^<]+)<br/>', r.stdout, re.M))
    assert names["n0"] == "John Miller"
    ids = {v: k for k, v in names.items()}
    assert f"  {ids['John Miller']} -->|PRESCRIBED| {ids['Warfarin']}" in lines
    assert f"  {ids['John Miller']} -->|TREATED_BY_DOCTOR| {ids['Dr. Maria Chen']}" in lines
    assert f"  class {ids['John Miller']} center" in lines
    assert "Amiodarone" not in names.values()  # two hops away
    deeper = run("pat-john", "--db", str(db), "--depth", "2")
    assert "Amiodarone" in deeper.stdout


def test_dot_by_name_and_by_suffix(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "john.gv"
    r = run("John Miller", "--db", str(db), "--out", str(out))
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.startswith("digraph cef {") and text.rstrip().endswith("}")
    assert '"pat-john" -> "med-warfarin" [label="PRESCRIBED"];' in text
    assert '"pat-john" [label="John Miller\\nPatient", fillcolor="#7b3fbf"];' in text
    assert "wrote" in r.stderr and "(dot)" in r.stderr


def test_query_paths_drawn_with_answers_and_chunks(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "q.html"
    r = run(
        "--query", QUESTION, "--strategy", "paths", "--db", str(db), "--embedder", "none", "--out", str(out)
    )
    assert r.exit_code == 0, r.output
    page = out.read_text()
    data = json.loads(
        re.search(r'<script type="application/json" id="cef-graph">(.*?)</script>', page, re.S)[1]
    )
    view = GraphView.model_validate(data)
    answers = {n.id for n in view.nodes if "answer" in n.roles}
    assert {"med-amiodarone", "med-ibuprofen"} <= answers  # the best path's (weaker paths' follow)
    assert "med-warfarin" not in answers and "pat-john" not in answers
    assert any(e.kind == "chunk" for e in view.edges)
    assert "John Miller -[PRESCRIBED]-&gt; Warfarin -[INTERACTS_WITH]-&gt; Ibuprofen" in page
    # self-contained: the library is inlined, nothing is fetched
    assert "cytoscape" in page and "Permission is hereby granted" in page
    assert not re.search(r'<script[^>]+src=|<link[^>]+href="http', page)


def test_errors_are_clear(db: Path) -> None:
    missing = run("nobody", "--db", str(db))
    assert missing.exit_code == 2 and "no node has the id or the name 'nobody'" in missing.stderr
    twins = run("Twin", "--db", str(db))
    assert twins.exit_code == 2 and "twin-1 (Thing), twin-2 (Other)" in twins.stderr
    nothing = run("--db", str(db))
    assert nothing.exit_code == 2 and "--query" in nothing.stderr
    bad = run("pat-john", "--db", str(db), "--format", "png")
    assert bad.exit_code == 2 and "mermaid, dot, html" in bad.stderr


NASTY = st.lists(st.sampled_from([*'ab "\\<>|&\n#;]}[{', "</script>", "<!--"]), min_size=1, max_size=20).map(
    "".join
)


@given(NASTY, NASTY)
def test_names_cannot_break_out_of_any_format(name: str, relation: str) -> None:
    view = GraphView(
        title=name,
        nodes=[
            ViewNode(id="a", label="L", name=name, roles=["center"]),
            ViewNode(id=name, label="L", name="b"),
        ],
        edges=[ViewEdge(id="e", source="a", target=name, relation=relation)],
    )
    mermaid = to_mermaid(view)
    body = [line for line in mermaid.splitlines() if not line.startswith("%%")]
    assert all('"' not in line.split('["', 1)[1].rsplit('"]', 1)[0] for line in body if '["' in line)
    assert all(line.count("|") == 2 for line in body if "-->" in line)
    dot = to_dot(view)
    for quoted in re.findall(r'"((?:[^"\\]|\\.)*)"', dot):
        assert "\n" not in quoted
    assert len(dot.splitlines()) == 4 + 2 + 1 + 1
    page = to_html(view)
    script = re.search(r'id="cef-graph">(.*?)</script>', page, re.S)
    assert script is not None and GraphView.model_validate_json(script[1]) == view
