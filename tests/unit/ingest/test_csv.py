"""CSV parser: nodes and edges files, typed columns, header mapping, and row errors with lines."""

from __future__ import annotations

import pytest

from cef.errors import ParseError
from cef.ingest.parsers import CsvParser, ParseContext, ParseOptions
from cef.ingest.parsers.base import ParsedDocument


def _parse(text: str, path: str = "data.csv", **options: object) -> ParsedDocument:
    return CsvParser().parse(text.encode(), ParseContext(path=path, options=ParseOptions(**options)))  # type: ignore[arg-type]


def _error(text: str, path: str = "data.csv", **options: object) -> ParseError:
    with pytest.raises(ParseError) as err:
        _parse(text, path, **options)
    assert err.value.file == path
    return err.value


def test_nodes_csv() -> None:
    text = (
        "id,label,name,age:int,score:float,active:bool,tags:list,extra:json,content\n"
        'aspirin,Drug,Aspirin,,1.5,yes,a|b,"{""k"": [1]}","A pain reliever,\nover two lines."\n'
        "p1,Patient,Ann,54,,false,,,\n"
    )
    nodes = _parse(text).batch.nodes
    assert [n.id for n in nodes] == ["aspirin", "p1"]
    assert nodes[0].label == "Drug"
    assert nodes[0].properties == {
        "name": "Aspirin",
        "score": 1.5,
        "active": True,
        "tags": ["a", "b"],
        "extra": {"k": [1]},
    }
    assert nodes[0].content == "A pain reliever,\nover two lines."
    assert nodes[1].properties == {"name": "Ann", "age": 54, "active": False} and nodes[1].content is None


def test_edges_csv() -> None:
    text = (
        "source,target,relation_type,weight,confidence,valid_from,valid_to,since:int,note\n"
        "aspirin,headache,TREATS,0.9,0.8,2020-01-01,,1899,\n"
        "aspirin,fever,TREATS,,,,,,first line\n"
    )
    edges = _parse(text).batch.edges
    assert [(e.source, e.target, e.relation_type) for e in edges] == [
        ("aspirin", "headache", "TREATS"),
        ("aspirin", "fever", "TREATS"),
    ]
    assert edges[0].weight == 0.9 and edges[0].confidence == 0.8 and edges[0].valid_from is not None
    assert edges[0].properties == {"since": 1899}
    assert edges[1].weight == 1.0 and edges[1].properties == {"note": "first line"}
    assert edges[0].id != edges[1].id and edges[0].id.startswith("edge:")


def test_type_column_and_case_insensitive_headers() -> None:
    edges = _parse("Source,TARGET,Type,ID\na,b,R,e1\n").batch.edges
    assert (edges[0].id, edges[0].relation_type) == ("e1", "R")


def test_tsv_and_custom_delimiter() -> None:
    assert _parse("id\tlabel\nx\tY\n", path="n.tsv").batch.nodes[0].label == "Y"
    assert _parse("id;label\nx;Y\n", csv_delimiter=";").batch.nodes[0].id == "x"


def test_header_mapping_override() -> None:
    text = "from,to,kind,strength\na,b,KNOWS,0.5\n"
    edges = _parse(
        text, csv_columns={"from": "source", "to": "target", "kind": "relation_type", "strength": "weight"}
    ).batch.edges
    assert (edges[0].source, edges[0].target, edges[0].relation_type, edges[0].weight) == (
        "a",
        "b",
        "KNOWS",
        0.5,
    )


def test_forced_kind() -> None:
    text = "id,label,source,target\nn1,Note,a,b\n"
    err = _error(text)
    assert err.line == 1 and "csv_kind" in str(err)
    node = _parse(text, csv_kind="nodes").batch.nodes[0]
    assert node.properties == {"source": "a", "target": "b"}


def test_header_errors() -> None:
    assert "cannot tell" in str(_error("name,value\na,1\n"))
    err = _error("source,target\na,b\n")
    assert err.line == 1 and "relation_type" in str(err)
    assert "twice" in str(_error("id,label,id\n"))
    assert "header" in str(_error(""))


def test_bad_rows_name_the_line() -> None:
    text = 'id,label,content\na,X,"two\nlines"\nb,Y\n'
    err = _error(text)
    assert err.line == 4 and "expected 3 fields" in str(err)
    assert str(err).startswith("data.csv:4: ")
    err = _error("id,label,age:int\na,X,1\nb,Y,old\n")
    assert err.line == 3 and "age:int" in str(err)
    err = _error("id,label\na,X\n,Y\n")
    assert err.line == 3 and "empty id" in str(err)
    err = _error("source,target,type,weight\na,b,R,1\nb,c,R,-2\n")
    assert err.line == 3 and "weight" in str(err)
    err = _error("source,target,type,confidence\na,b,R,high\n")
    assert err.line == 2 and "confidence" in str(err)
    err = _error('id,label\na,X\n"b,Y\n')
    assert err.line == 3
    err = _error("id,label,flag:bool\na,X,maybe\n")
    assert err.line == 2 and "boolean" in str(err)


def test_duplicate_ids() -> None:
    err = _error("id,label\na,X\nb,X\na,Y\n")
    assert err.line == 4 and "first on line 2" in str(err)


def test_blank_lines_are_skipped_and_empty_file_warns() -> None:
    assert len(_parse("id,label\n\na,X\n\n").batch.nodes) == 1
    assert _parse("id,label\n").warnings
