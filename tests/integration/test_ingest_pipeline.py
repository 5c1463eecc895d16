"""cef ingest on a folder: one transaction per file, bad files reported, incremental re-ingest."""

from __future__ import annotations

from pathlib import Path

import cef
from cef.ingest.pipeline import ingest_sources

GRAPH = """
relation_types:
  - {name: LINKS}
nodes:
  - {id: a, label: Thing, properties: {name: Alpha}}
  - {id: b, label: Thing, properties: {name: Beta}}
edges:
  - {relation_type: LINKS, source: a, target: b}
"""


def _statuses(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {o.path: o.status for o in report.outcomes}


def test_folder_ingest_is_incremental(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    (src / "graph.yaml").write_text(GRAPH)
    (src / "one.md").write_text("# One\n\nThe first document talks about apples and pears.\n")
    (src / "two.md").write_text("# Two\n\nThe second document talks about rivers.\n")
    (src / "bad.yaml").write_text(
        "nodes:\n  - {id: x, label: Thing}\nedges:\n  - {relation_type: LINKS, source: x}\n"
    )
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        first = ingest_sources(kb, [str(src)], extract=False)
        st = _statuses(first)
        assert st == {
            "graph.yaml": "ingested",
            "one.md": "ingested",
            "two.md": "ingested",
            "bad.yaml": "failed",
        }
        bad = first.failures[0]
        assert "bad.yaml" in bad and ":4" in bad  # file and line of the offending edge
        assert kb.find_node("x") is None  # nothing of the bad file was written
        assert [n.id for n in kb.get_neighbors("a")] == ["b"]
        apples = kb.full_text_search("apples", 3)
        assert apples and apples[0].chunk.node_id == "doc:docs/one.md"

        again = ingest_sources(kb, [str(src)], extract=False)
        assert _statuses(again)["one.md"] == "skipped" and _statuses(again)["graph.yaml"] == "skipped"

        (src / "one.md").write_text("# One\n\nNow it is about oranges only.\n")
        (src / "two.md").unlink()
        third = ingest_sources(kb, [str(src)], extract=False)
        st = _statuses(third)
        assert st["one.md"] == "replaced" and st["two.md"] == "deleted" and st["graph.yaml"] == "skipped"
        assert kb.full_text_search("apples", 3) == []  # old chunks replaced
        assert kb.full_text_search("oranges", 3)[0].chunk.node_id == "doc:docs/one.md"
        assert kb.full_text_search("rivers", 3) == []  # removed file's chunks gone
        assert kb.find_node("doc:docs/two.md") is None
        assert [n.id for n in kb.get_neighbors("a")] == ["b"]


def test_real_documents_end_to_end(tmp_path: Path) -> None:
    """The Markdown docs shipped with an installed package (not written here), ingested and queried."""
    import importlib.util

    spec = importlib.util.find_spec("fastapi")
    assert spec is not None and spec.origin is not None
    # FastAPI ships its reference docs for coding agents as Markdown inside the package
    root = Path(spec.origin).parent / ".agents" / "skills" / "fastapi"
    docs = list(root.rglob("*.md"))
    assert docs, f"no Markdown files under {root}"
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(root)], extract=False)
        assert report.succeeded >= 1 and not report.failures
        assert report.succeeded == len(docs)
        hits = kb.full_text_search("dependencies with yield", 5)
        assert hits and all(h.chunk.node_id and h.chunk.node_id.startswith("doc:") for h in hits)
        assert any("dependencies" in (h.chunk.node_id or "") for h in hits)
