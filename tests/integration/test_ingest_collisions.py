"""Two files that would give the same records never overwrite each other (a reliability probe found
``cef ingest X Y`` with ``a.md`` in both folders silently replacing X's text, for good)."""

from __future__ import annotations

from pathlib import Path

import cef
from cef.ingest.pipeline import ingest_sources


def folders(tmp_path: Path) -> tuple[Path, Path]:
    x, y = tmp_path / "X", tmp_path / "Y"
    for folder, word in ((x, "Xanthippe"), (y, "Yggdrasil")):
        (folder / "sub").mkdir(parents=True)
        (folder / "a.md").write_text(f"# Notes\n\n{word} wrote this note about lighthouses.\n")
        (folder / "sub" / f"only-{word.lower()}.md").write_text(f"{word} keeps a second note.\n")
    return x, y


def contents(kb: cef.KnowledgeBase) -> str:
    return " ".join(r.chunk.content for r in kb.full_text_search("note", top_k=50))


def test_the_same_relative_path_in_two_folders_is_an_error_naming_both(tmp_path: Path) -> None:
    x, y = folders(tmp_path)
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(x), str(y)], extract=False)
        failed = [o for o in report.outcomes if o.status == "failed"]
        assert [o.path for o in failed] == ["a.md"]
        assert str(x / "a.md") in failed[0].message and str(y / "a.md") in failed[0].message
        assert "Nothing of this file was written" in failed[0].message
        text = contents(kb)
        assert "Xanthippe wrote" in text and "Yggdrasil wrote" not in text  # X's text kept
        assert "Yggdrasil keeps" in text  # Y's other files went in
        # re-ingesting X changes nothing and still holds; deleting Y/a.md and re-ingesting Y keeps X's
        assert all(o.status == "skipped" for o in ingest_sources(kb, [str(x)], extract=False).outcomes)
        (y / "a.md").unlink()
        ingest_sources(kb, [str(y)], extract=False)
        assert "Xanthippe wrote" in contents(kb)


def test_the_same_record_ids_in_two_jsonl_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "one.jsonl").write_text('{"id": "r1", "text": "first file passage about owls"}\n')
    (tmp_path / "two.jsonl").write_text('{"id": "r1", "text": "second file passage about owls"}\n')
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(tmp_path / "one.jsonl"), str(tmp_path / "two.jsonl")], extract=False)
        assert [o.status for o in report.outcomes] == ["ingested", "failed"]
        assert "one.jsonl" in report.outcomes[1].message
        assert kb.get_chunk("r1") is not None and kb.get_chunk("r1").content.startswith("first")  # type: ignore[union-attr]
