"""Two files that would give the same records never overwrite each other (a reliability probe found
``cef ingest X Y`` with ``a.md`` in both folders silently replacing X's text, for good).

A document's identity is its source root's name plus its path under that root, so two folders never
collide; the collision that remains (two roots of the same name) is an error naming both files."""

from __future__ import annotations

from pathlib import Path

import cef
from cef.ingest.pipeline import ingest_sources


def folders(tmp_path: Path, x_name: str = "X", y_name: str = "Y") -> tuple[Path, Path]:
    x, y = tmp_path / x_name, tmp_path / y_name
    for folder, word in ((x, "Xanthippe"), (y, "Yggdrasil")):
        (folder / "sub").mkdir(parents=True)
        (folder / "a.md").write_text(f"# Notes\n\n{word} wrote this note about lighthouses.\n")
        (folder / "sub" / f"only-{word.lower()}.md").write_text(f"{word} keeps a second note.\n")
    return x, y


def contents(kb: cef.KnowledgeBase) -> str:
    return " ".join(r.chunk.content for r in kb.full_text_search("note", top_k=50))


def test_the_same_relative_path_in_two_folders_names_two_documents(tmp_path: Path) -> None:
    x, y = folders(tmp_path)
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(x), str(y)], extract=False)
        assert [o.status for o in report.outcomes] == ["ingested"] * 4
        assert kb.find_node("doc:X/a.md") is not None and kb.find_node("doc:Y/a.md") is not None
        text = contents(kb)
        assert "Xanthippe wrote" in text and "Yggdrasil wrote" in text
        # deleting Y/a.md and re-ingesting Y removes Y's document only
        (y / "a.md").unlink()
        again = ingest_sources(kb, [str(y)], extract=False)
        assert [o.status for o in again.outcomes].count("deleted") == 1
        assert kb.find_node("doc:Y/a.md") is None and kb.find_node("doc:X/a.md") is not None
        text = contents(kb)
        assert "Xanthippe wrote" in text and "Yggdrasil wrote" not in text
        # a file ingested alone has the same identity as when its folder is ingested
        assert all(
            o.status == "skipped" for o in ingest_sources(kb, [str(x / "a.md")], extract=False).outcomes
        )


def test_two_roots_of_the_same_name_are_an_error_naming_both(tmp_path: Path) -> None:
    x = folders(tmp_path / "one", "notes", "other")[0]
    y = folders(tmp_path / "two", "spare", "notes")[1]
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
