"""``cef memory``: load, observe, ingest and context through the command line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cef.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "memory"
EXTENSIONS = EXAMPLES / "extensions"
runner = CliRunner()


def cef(*args: str, db: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["memory", *args, "--db", str(db), "--embedder", "none"])
    return result.exit_code, result.output


def flat(text: str) -> str:
    """Console output with line wrapping undone."""
    return " ".join(text.split())


def test_load_observe_context(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    code, out = cef("load", str(EXAMPLES / "rpg.yaml"), db=db)
    # the dataset names its extension, but loading it runs no code unasked, and creates nothing
    assert code == 2 and "needs the extension 'rpg'" in flat(out) and not db.exists()
    code, out = cef("load", str(EXAMPLES / "rpg.yaml"), "--extension", str(EXTENSIONS / "rpg.py"), db=db)
    assert code == 0 and "loaded 13 node(s)" in out
    code, out = cef(
        "observe", "Raven is trustworthy", "--source", "user_stated", "--scope", "rpg:campaign-1", db=db
    )
    assert code == 0 and out.startswith("reinforced:")
    code, out = cef(
        "context",
        "Can Raven be trusted?",
        "--scope",
        "rpg:campaign-1",
        "--format",
        "json",
        "--max-tokens",
        "3000",
        db=db,
    )
    assert code == 0
    data = json.loads(out)
    assert data["core_facts"][0]["name"] == "Raven"
    assert (
        data["conflicts"][0]["statement"] == "Raven is trustworthy"
        and len(data["conflicts"][0]["supporting"]) == 3
    )
    # another scope sees none of it
    code, out = cef("context", "Can Raven be trusted?", "--scope", "pharma:rep-7", "--format", "json", db=db)
    assert code == 0 and "Raven is trustworthy" not in out.split('"core_facts"', 1)[1]


def test_as_of_and_history(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assert (
        cef("load", str(EXAMPLES / "pharma.yaml"), "--extension", str(EXTENSIONS / "pharma.py"), db=db)[0]
        == 0
    )
    q = ["context", "What is patient 12345 taking?", "--scope", "pharma:rep-7", "--format", "plain"]
    now = cef(*q, db=db)[1]
    assert "Lisinopril 10 mg daily" not in now and "CORE FACTS" in now
    from datetime import UTC, datetime, timedelta

    earlier = (datetime.now(UTC) - timedelta(days=60)).date().isoformat()
    then = cef(*q, "--as-of", earlier, db=db)[1]
    assert "Lisinopril 10 mg daily" in then and "Amiodarone 200 mg daily" not in then
    assert "Lisinopril 10 mg daily" in cef(*q, "--history", db=db)[1]
    code, out = cef(*q, "--history", "--as-of", earlier, db=db)
    assert code == 2 and "cannot be combined" in flat(out)


def test_ingest_python_with_the_code_extension(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    pkg = tmp_path / "src" / "calc"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .ops import add\n")
    (pkg / "ops.py").write_text(
        'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n    return a + b\n'
    )
    code, out = cef(
        "ingest",
        str(pkg),
        "--content-type",
        "python",
        "--extension",
        str(EXTENSIONS / "code.py"),
        "--scope",
        "dev",
        db=db,
    )
    assert code == 0 and "ingested 2 document(s)" in out
    code, out = cef("context", "where is add defined?", "--scope", "dev", db=db)
    assert code == 0 and "calc/ops.py" in out and "defines" in out
    # the registered extension is restored: ingesting again needs no --extension
    code, out = cef("ingest", str(pkg), "--content-type", "python", "--scope", "dev", db=db)
    assert code == 0 and "skipped 2 unchanged" in out


def test_errors_are_clear(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    code, out = cef("observe", "Raven is tall", "--source", "gossip", db=db)
    assert code == 2 and "not a valid SourceType" in flat(out)
    code, out = cef("ingest", str(tmp_path / "missing"), db=db)
    assert code == 2 and "does not exist" in flat(out)
    code, out = cef("ingest", str(tmp_path), "--content-type", "cobol", db=db)
    assert code == 2 and "no ingestion pipeline for content type 'cobol'" in flat(out)  # a usage error
    code, out = cef("load", str(EXAMPLES / "rpg.yaml"), "--extension", "nosuch", db=db)
    assert code == 2 and "unknown memory extension 'nosuch'" in flat(out)


def test_help_has_examples() -> None:
    for command in ("observe", "ingest", "load", "context"):
        result = runner.invoke(app, ["memory", command, "--help"])
        assert result.exit_code == 0 and "Example:" in result.output
