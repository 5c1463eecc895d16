"""Entity resolution at ingest: mentions land on curated nodes; late curated nodes absorb extracted ones."""

from __future__ import annotations

from pathlib import Path

import pytest

import cef
from cef.engine.kb import KnowledgeBase
from cef.extract.normalize import alias_keys
from cef.ingest.pipeline import ingest_sources
from cef.schema.textgraph import ENTITY_LABEL, MENTIONS

CLINICAL = Path(__file__).resolve().parents[3] / "examples" / "clinical" / "graph.yaml"

DRUGS = """\
relation_types:
  - {name: INTERACTS_WITH, semantics: ASSOCIATION, bidirectional: true}
nodes:
  - {id: med-warfarin, label: Medication, properties: {name: Warfarin, aliases: [Coumadin]}}
  - {id: med-amiodarone, label: Medication, properties: {name: Amiodarone}}
edges:
  - {relation_type: INTERACTS_WITH, source: med-warfarin, target: med-amiodarone}
"""

NOTE = "# Ward round\n\nKaren Holt started Warfarin in May. Amiodarone was added by Dr. Okafor in June.\n"


def mentions_of(kb: KnowledgeBase, node_id: str) -> list[cef.Edge]:
    ids = kb.store.edges_for_nodes([node_id])
    return [e for e in kb.store.get_edges(ids) if e.relation_type == MENTIONS and e.target == node_id]


def no_dangling_edges(kb: KnowledgeBase) -> None:
    with kb.state.reading():
        g = kb.state.graph
        for p, alive in enumerate(g.e_alive.view[: len(g.edge_ids)].tolist()):
            if alive:
                assert g.node_alive[int(g.e_src[p])] and g.node_alive[int(g.e_dst[p])]


def test_the_clinical_graph_leaves_no_entity_beside_a_curated_name(tmp_path: Path) -> None:
    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(CLINICAL)])
        assert report.succeeded == 1, report.failures
        curated_keys = {
            k
            for n in kb.store.iter_nodes()
            if n.label != ENTITY_LABEL
            for name in [n.name, *n.aliases]
            for k in alias_keys(name)
        }
        extracted = [n for n in kb.store.iter_nodes() if n.label == ENTITY_LABEL]
        dupes = [n.name for n in extracted if set(alias_keys(n.name)) & curated_keys]
        assert dupes == []
        # the notes on John mention warfarin and atrial fibrillation: their edges reach the curated nodes
        assert any(e.source == "pat-john" for e in mentions_of(kb, "med-warfarin"))
        # a user's own names are found whatever their case ("diagnosed with atrial fibrillation")
        assert any(e.source == "pat-john" for e in mentions_of(kb, "cond-afib"))
        assert any(e.source == "med-warfarin" for e in mentions_of(kb, "med-amiodarone"))
        totals = report.entity_totals()
        assert totals["linked"] >= 8 and totals["merged"] == 0
        assert totals["new"] == len(extracted)
        assert any(line.startswith("entities: ") for line in report.summary_lines())


def test_a_curated_node_arriving_later_absorbs_the_extracted_entity(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "round.md").write_text(NOTE, encoding="utf-8")
    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        first = ingest_sources(kb, [str(docs)])
        assert first.succeeded == 1
        assert kb.find_node("entity:warfarin") is not None  # nothing curated yet: a new entity
        extracted = [i for i in ("entity:warfarin", "entity:amiodarone") if kb.find_node(i) is not None]
        before = {e.source for e in mentions_of(kb, "entity:warfarin")}
        assert before

        (docs / "drugs.yaml").write_text(DRUGS, encoding="utf-8")
        second = ingest_sources(kb, [str(docs)])
        assert second.succeeded == 1
        assert second.entity_totals()["merged"] == len(extracted)
        assert kb.find_node("entity:warfarin") is None and kb.find_node("entity:amiodarone") is None
        assert {e.source for e in mentions_of(kb, "med-warfarin")} == before
        no_dangling_edges(kb)
        edges_after_merge = kb.stats()["edges"]

        # unchanged files: nothing to do, nothing moves
        third = ingest_sources(kb, [str(docs)])
        assert [o.status for o in third.outcomes] == ["skipped", "skipped"]
        assert kb.stats()["edges"] == edges_after_merge

        # the note changes: its mentions are rewritten onto the curated nodes, no entity comes back
        (docs / "round.md").write_text(NOTE + "\nWarfarin dose lowered.\n", encoding="utf-8")
        fourth = ingest_sources(kb, [str(docs)])
        assert [o.status for o in fourth.outcomes if o.path == "round.md"] == ["replaced"]
        assert kb.find_node("entity:warfarin") is None
        assert len(mentions_of(kb, "med-warfarin")) == 1  # one edge per chunk and target, not two
        assert len({e.source for e in mentions_of(kb, "med-amiodarone")}) == 1
        no_dangling_edges(kb)

        # deleting the curated file leaves the note's mentions without a target: they go with it
        (docs / "drugs.yaml").unlink()
        ingest_sources(kb, [str(docs)])
        assert kb.find_node("med-warfarin") is None
        no_dangling_edges(kb)


@pytest.mark.parametrize(("mention", "target"), [("Coumadin", "med-warfarin"), ("warfarine", "med-warfarin")])
def test_aliases_and_misspellings_in_text_link_to_the_curated_node(
    tmp_path: Path, mention: str, target: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "drugs.yaml").write_text(DRUGS, encoding="utf-8")
    (docs / "note.md").write_text(
        f"# Note\n\nThe patient takes {mention.capitalize()} daily.\n", encoding="utf-8"
    )
    with cef.open(tmp_path / "k.db", embedder=None) as kb:
        report = ingest_sources(kb, [str(docs)])
        assert report.succeeded == 2, report.failures
        found = mentions_of(kb, target)
        assert found, [n.id for n in kb.find_nodes_by_label(ENTITY_LABEL)]
        assert not [
            n for n in kb.find_nodes_by_label(ENTITY_LABEL) if "warfarin" in n.id or "coumadin" in n.id
        ]
