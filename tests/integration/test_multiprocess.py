"""Several processes on one SQLite file: readers see committed writes; a killed writer leaves no half batch."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import cef
from cef import Batch, Edge, Node, RelationType

from ..conftest import CLINICAL

PY = sys.executable


def run(code: str, *args: str, timeout: float = 120) -> str:
    out = subprocess.run(
        [PY, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


QUERY = """
    import json, sys, cef
    kb = cef.open(sys.argv[1], embedder=None)
    res = kb.retrieve(cef.GraphQuery(query="John Miller warfarin interactions",
        targets=[cef.ResolutionTarget(description="John Miller")], top_k=5, min_results=1))
    print(json.dumps({"strategy": res.strategy.value, "ids": [r.chunk.id for r in res.results],
                      "scores": [round(r.score, 6) for r in res.results], "stats": kb.stats()["edges"]}))
"""


def test_ingest_in_one_process_query_in_another(tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    run(
        """
        import sys, yaml, cef
        kb = cef.open(sys.argv[1], embedder=None)
        kb.index_batch(cef.Batch.model_validate(yaml.safe_load(open(sys.argv[2]).read())))
        kb.close()
        """,
        db,
        str(CLINICAL),
    )
    other = json.loads(run(QUERY, db))
    with cef.open(db, embedder=None) as kb:
        res = kb.retrieve(
            cef.GraphQuery(
                query="John Miller warfarin interactions",
                targets=[cef.ResolutionTarget(description="John Miller")],
                top_k=5,
                min_results=1,
            )
        )
    assert other["ids"] and other["ids"] == [r.chunk.id for r in res.results]
    assert other["scores"] == [round(r.score, 6) for r in res.results]
    assert other["strategy"] == res.strategy.value


def test_open_reader_sees_later_commits_of_another_process(tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    with cef.open(db, embedder=None) as reader:
        reader.initialize([Node(id="hub", label="Hub")], [RelationType(name="LINK")])
        assert reader.get_neighbors("hub") == []
        run(
            """
            import sys, cef
            kb = cef.open(sys.argv[1], embedder=None)
            kb.index_batch(cef.Batch(nodes=[cef.Node(id=f"n{i}", label="Leaf") for i in range(50)],
                edges=[cef.Edge(id=f"e{i}", relation_type="LINK", source="hub", target=f"n{i}") for i in range(50)]))
            kb.delete_edge("e7")
            kb.delete_node("n8")
            kb.update_node("n9", {"name": "Nine"})
            """,
            db,
        )
        got = {n.id for n in reader.get_neighbors("hub")}
        assert got == {f"n{i}" for i in range(50)} - {"n7", "n8"}
        assert reader.find_node("n9").name == "Nine"  # type: ignore[union-attr]
        assert reader.full_text_search("Nine", 1) == []  # a node name, not a chunk
        # and our own writes after theirs are consistent too
        reader.index_edge(Edge(id="back", relation_type="LINK", source="n9", target="hub"))
        assert reader.stats()["edges"] == 49


def test_sigkill_mid_batch_leaves_batch_wholly_absent_or_present(tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    with cef.open(db, embedder=None) as kb:
        kb.initialize([Node(id="root", label="Root")], [RelationType(name="LINK")])
    writer = subprocess.Popen(
        [
            PY,
            "-c",
            textwrap.dedent(
                """
                import sys, cef
                kb = cef.open(sys.argv[1], embedder=None)
                n = 60000
                batch = cef.Batch(nodes=[cef.Node(id=f"n{i}", label="Leaf") for i in range(n)],
                    edges=[cef.Edge(id=f"e{i}", relation_type="LINK", source="root", target=f"n{i}") for i in range(n)])
                print("writing", flush=True)
                kb.index_batch(batch)
                print("done", flush=True)
                import time; time.sleep(60)
                """
            ),
            db,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "writing"
    time.sleep(0.4)  # the transaction takes seconds: kill it in the middle
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    writer.stdout.close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with cef.open(db, embedder=None) as kb:
        s = kb.stats()
        assert (s["nodes"], s["edges"]) in {(1, 0), (60001, 60000)}
        assert kb.state.graph.edge_count == s["edges"]
        # the store still takes writes
        kb.index_node(Node(id="after", label="Leaf"))
        assert kb.find_node("after") is not None


def test_reload_while_another_writer_commits_between_scans(tmp_path: Path) -> None:
    """A commit landing between the node scan and the edge scan of a reload is replayed, not a crash."""
    db = str(tmp_path / "kb.db")
    with cef.open(db, embedder=None) as setup:
        setup.initialize([Node(id="hub", label="Hub")], [RelationType(name="LINK")])
    writer = cef.open(db, embedder=None)
    reader = cef.open(db, embedder=None)
    scan = reader.store.iter_node_rows

    def nodes_then_commit():  # type: ignore[no-untyped-def]
        yield from scan()
        writer.index_batch(
            Batch(
                nodes=[Node(id="late", label="Leaf")],
                edges=[Edge(id="e", relation_type="LINK", source="hub", target="late")],
            )
        )

    reader.store.iter_node_rows = nodes_then_commit  # type: ignore[method-assign]
    reader.state.reload()
    reader.store.iter_node_rows = scan  # type: ignore[method-assign]
    assert {n.id for n in reader.get_neighbors("hub")} == {"late"}
    writer.close()
    reader.close()
