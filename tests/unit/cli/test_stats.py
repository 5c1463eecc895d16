"""`cef stats` prints tables: records, node types (most first), relation types."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

import cef
from cef.cli import app
from tests.conftest import clinical_batch


def test_stats_tables(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    batch = clinical_batch()
    with cef.open(db, embedder=None) as kb:
        kb.index_batch(batch)
    r = CliRunner().invoke(app, ["stats", "--db", str(db)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert out.splitlines()[0] == str(db)
    for title in ("Records", "Node types", "Relation types"):
        assert title in out
    rows = {m[0].strip(): m[1].strip() for m in re.findall(r"│ ([^│]+?)\s*│\s*([^│]*?)\s*│", out)}
    assert rows["nodes"] == str(len(batch.nodes)) and rows["edges"] == str(len(batch.edges))
    assert rows["embedding"] == "none"
    assert rows["Medication"] == "6" and rows["Patient"] == "3"
    order = [label for label in ("Medication", "Condition", "Patient") if label in out]
    assert sorted(order, key=out.index) == order  # most nodes first
    assert "INTERACTS_WITH" in out
    as_json = json.loads(CliRunner().invoke(app, ["stats", "--db", str(db), "--json"]).stdout)
    assert as_json["nodes"] == len(batch.nodes)
