"""CSV (and TSV) files of nodes or of edges; which one is told by the header.

Nodes CSV — needs ``id`` and ``label``::

    id,label,name,age:int,content
    aspirin,Drug,Aspirin,,A common pain reliever.

Edges CSV — needs ``source``, ``target`` and ``relation_type`` (or ``type``)::

    source,target,relation_type,weight,confidence,valid_from,valid_to,since:int
    aspirin,headache,TREATS,0.9,0.8,2020-01-01,,1899

Reserved columns: nodes ``id``, ``label``, ``content``, ``scope``; edges ``id``,
``source``, ``target``, ``relation_type``/``type``, ``weight``, ``confidence``,
``valid_from``, ``valid_to``, ``scope`` (names are case-insensitive). Every other
column becomes a property. A property column may carry a type after a colon:
``:str`` (default), ``:int``, ``:float``, ``:bool`` (true/false/yes/no/1/0),
``:json`` (any JSON value) or ``:list`` (``|``-separated strings). An empty cell
leaves the property out. ``ParseOptions.csv_columns`` renames header columns
(``{"from": "source", "to": "target"}``), ``csv_kind`` forces the kind and
``csv_delimiter`` the delimiter (default ``,``; tab for ``.tsv``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from cef.errors import ParseError
from cef.ingest.parsers.base import ParseContext, ParsedDocument, decode_text
from cef.model import Batch, Edge, Node, stable_id

__all__ = ["CsvParser"]

NODE_COLUMNS = frozenset({"id", "label", "content", "scope"})
EDGE_COLUMNS = frozenset(
    {
        "id",
        "source",
        "target",
        "relation_type",
        "type",
        "weight",
        "confidence",
        "valid_from",
        "valid_to",
        "scope",
    }
)
_FIELD_LIMIT = 64 * 1024 * 1024
_TRUE = {"true", "yes", "y", "1", "t"}
_FALSE = {"false", "no", "n", "0", "f"}


def _to_bool(value: str) -> bool:
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{value!r} is not a boolean (true/false/yes/no/1/0)")


_CONVERTERS: dict[str, Callable[[str], Any]] = {
    "str": str,
    "int": lambda v: int(v.strip()),
    "float": lambda v: float(v.strip()),
    "bool": _to_bool,
    "json": json.loads,
    "list": lambda v: [part.strip() for part in v.split("|") if part.strip()],
}


class _Column:
    __slots__ = ("canonical", "convert", "header", "name")

    def __init__(self, header: str, name: str, canonical: str | None, convert: Callable[[str], Any]) -> None:
        self.header = header
        self.name = name
        self.canonical = canonical
        self.convert = convert


class CsvParser:
    """Nodes or edges from ``.csv``/``.tsv`` (see the module docstring for the columns)."""

    name = "csv"
    extensions: tuple[str, ...] = (".csv", ".tsv")
    content_types: tuple[str, ...] = ("text/csv", "text/tab-separated-values")
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        text = decode_text(data, ctx)
        options = ctx.options
        delimiter = options.csv_delimiter or ("\t" if ctx.path.lower().endswith(".tsv") else ",")
        if csv.field_size_limit() < _FIELD_LIMIT:
            csv.field_size_limit(_FIELD_LIMIT)
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise ctx.error(f"invalid CSV header: {exc}", 1) from None
        if not header or not any(cell.strip() for cell in header):
            raise ctx.error("empty CSV file: the first line must be a header", 1)
        columns = self._columns(header, ctx)
        canon = {c.canonical for c in columns if c.canonical}
        kind = options.csv_kind or self._detect(canon, ctx)
        allowed = NODE_COLUMNS if kind == "nodes" else EDGE_COLUMNS
        for col in columns:  # a reserved name of the other kind is a plain property here
            if col.canonical not in allowed:
                col.canonical = None
        canon = {c.canonical for c in columns if c.canonical}
        needed = ("id", "label") if kind == "nodes" else ("source", "target")
        missing = [n for n in needed if n not in canon]
        if kind == "edges" and not canon & {"relation_type", "type"}:
            missing.append("relation_type")
        if missing:
            article = "a nodes" if kind == "nodes" else "an edges"
            raise ctx.error(f"{article} CSV needs the column(s) {', '.join(missing)}", 1)
        if {"relation_type", "type"} <= canon:
            raise ctx.error("give a relation_type column or a type column, not both", 1)

        batch = Batch()
        seen: dict[str, int] = {}
        prev_line = reader.line_num
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise ctx.error(f"invalid CSV: {exc}", prev_line + 1) from None
            line = prev_line + 1
            prev_line = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(columns):
                raise ctx.error(f"expected {len(columns)} fields as in the header, found {len(row)}", line)
            record = self._row(kind, columns, row, ctx, line)
            first = seen.setdefault(record.id, line)
            if first != line:
                raise ctx.error(f"duplicate {kind[:-1]} id {record.id!r} (first on line {first})", line)
            if isinstance(record, Node):
                batch.nodes.append(record)
            else:
                batch.edges.append(record)
        warnings = [] if batch.nodes or batch.edges else [f"{ctx.path}: no rows under the header"]
        return ParsedDocument(batch=batch, parser=self.name, warnings=warnings)

    @staticmethod
    def _columns(header: list[str], ctx: ParseContext) -> list[_Column]:
        rename = {k.strip(): v.strip() for k, v in ctx.options.csv_columns.items()}
        columns: list[_Column] = []
        seen: set[str] = set()
        for raw in header:
            cell = raw.strip()
            name, _, type_name = cell.rpartition(":") if ":" in cell else (cell, "", "")
            if type_name and type_name.lower() not in _CONVERTERS:
                name, type_name = cell, ""  # a colon that is part of the name
            name = rename.get(name, name)
            if not name:
                raise ctx.error("empty column name in the header", 1)
            lowered = name.lower()
            canonical = lowered if lowered in NODE_COLUMNS | EDGE_COLUMNS and not type_name else None
            key = canonical or name
            if key in seen:
                raise ctx.error(f"column {name!r} appears twice in the header", 1)
            seen.add(key)
            columns.append(_Column(raw, name, canonical, _CONVERTERS[type_name.lower() or "str"]))
        return columns

    @staticmethod
    def _detect(canon: set[str], ctx: ParseContext) -> str:
        is_nodes = {"id", "label"} <= canon
        is_edges = {"source", "target"} <= canon
        if is_nodes and is_edges:
            raise ctx.error(
                "the header has both node (id, label) and edge (source, target) columns: "
                "set ParseOptions.csv_kind",
                1,
            )
        if is_nodes:
            return "nodes"
        if is_edges:
            return "edges"
        raise ctx.error(
            "cannot tell the CSV kind: a nodes CSV needs id and label columns, an edges CSV "
            "source, target and relation_type (rename columns with ParseOptions.csv_columns)",
            1,
        )

    @staticmethod
    def _row(kind: str, columns: list[_Column], row: list[str], ctx: ParseContext, line: int) -> Node | Edge:
        fields: dict[str, Any] = {}
        properties: dict[str, Any] = {}
        for col, cell in zip(columns, row, strict=True):
            if col.canonical is not None:
                if cell.strip():
                    fields["relation_type" if col.canonical == "type" else col.canonical] = cell.strip()
                continue
            if not cell.strip():
                continue
            try:
                properties[col.name] = col.convert(cell)
            except ValueError as exc:
                raise ctx.error(f"column {col.header!r}: {exc}", line) from None
        fields["properties"] = properties
        fields.setdefault("scope", ctx.options.scope)
        if kind == "edges":
            for key in ("source", "target", "relation_type"):
                if key not in fields:
                    raise ctx.error(f"empty {key}", line)
            if "id" not in fields:
                window = (fields.get("valid_from", ""), fields.get("valid_to", ""))
                fields["id"] = stable_id(
                    "edge", fields["source"], fields["relation_type"], fields["target"], *window
                )
        elif "id" not in fields or "label" not in fields:
            raise ctx.error(f"empty {'id' if 'id' not in fields else 'label'}", line)
        try:
            return Node.model_validate(fields) if kind == "nodes" else Edge.model_validate(fields)
        except PydanticValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            message = str(err["msg"]).removeprefix("Value error, ")
            raise ParseError(f"{where}: {message}" if where else message, file=ctx.path, line=line) from None
