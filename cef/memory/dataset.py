"""Load a memory dataset file: nodes, bi-temporal edges, supersessions and observations.

A dataset is YAML (or JSON) with times given as ISO datetimes or relative to
the memory's clock (``-30d``, ``-6h``, ``now``), so examples stay "recent"::

    scope: pharma:rep-7
    nodes:
      - {id: patient-12345, type: patient, name: Patient 12345, properties: {mrn: "12345"}}
    edges:
      - {id: e1, source: patient-12345, relation: has_condition, target: cond-afib, valid_from: -400d}
    supersede:
      - {edge: e1, valid_to: -40d, at: -40d}
    observations:
      - {text: Patient 12345 reported taking OTC ibuprofen, source: user_stated, at: -3d}

Nodes and edges are written in one transaction (validated against the
registry first: a bad dataset writes nothing); supersessions and
observations follow in order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cef.errors import ParseError, ValidationError
from cef.memory.temporal import aware
from cef.model import Batch, Edge, Node

if TYPE_CHECKING:
    from cef.memory.memory import SemanticMemory

__all__ = ["DatasetReport", "load_dataset", "parse_time"]

_REL = re.compile(r"^([+-]?\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_time(value: Any, now: datetime) -> datetime | None:
    """``None``, ``now``, ``-30d``/``+2h``/``-1w``, an ISO string or a datetime → an aware datetime."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return aware(value)
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    v = value.strip()
    if v == "now":
        return now
    m = _REL.match(v)
    if m:
        return now + timedelta(seconds=float(m.group(1)) * _UNIT[m.group(2)])
    return aware(datetime.fromisoformat(v))


@dataclass
class DatasetReport:
    nodes: int = 0
    edges: int = 0
    superseded: int = 0
    observations: list[str] = field(default_factory=list)


def load_dataset(
    memory: SemanticMemory, source: str | Path | Mapping[str, Any], *, scope: str | None = None
) -> DatasetReport:
    """Write a dataset into ``memory`` (``scope`` overrides the file's own)."""
    if isinstance(source, Mapping):
        data, where = dict(source), "<dataset>"
    else:
        path = Path(source)
        where = str(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            line = getattr(getattr(exc, "problem_mark", None), "line", None)
            raise ParseError(
                f"invalid YAML: {exc}", file=where, line=line + 1 if line is not None else None
            ) from exc
    if not isinstance(data, dict):
        raise ParseError("a dataset is a mapping with nodes, edges, supersede and observations", file=where)
    now = memory.now()
    s = scope if scope is not None else data.get("scope")
    self_id = memory.self_id(s)

    def node_id(raw: str) -> str:
        return self_id if raw == "self" else raw

    nodes: list[Node] = []
    edges: list[Edge] = []
    try:
        for n in data.get("nodes") or []:
            props = dict(n.get("properties") or {})
            if "name" in n:
                props["name"] = n["name"]
            if "aliases" in n:
                props["aliases"] = list(n["aliases"])
            nodes.append(
                Node(
                    id=node_id(str(n["id"])),
                    label=str(n.get("type") or n.get("label")),
                    properties=props,
                    content=n.get("content"),
                    scope=n.get("scope", s),
                )
            )
        for e in data.get("edges") or []:
            kw: dict[str, Any] = {}
            if e.get("id"):
                kw["id"] = str(e["id"])
            edges.append(
                Edge(
                    relation_type=str(e["relation"]),
                    source=node_id(str(e["source"])),
                    target=node_id(str(e["target"])),
                    properties=dict(e.get("properties") or {}),
                    confidence=float(e.get("confidence", 1.0)),
                    weight=float(e.get("weight", 1.0)),
                    valid_from=parse_time(e.get("valid_from"), now),
                    valid_to=parse_time(e.get("valid_to"), now),
                    recorded_at=parse_time(e.get("recorded_at", e.get("valid_from") or "now"), now) or now,
                    scope=e.get("scope", s),
                    **kw,
                )
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"bad node or edge ({type(exc).__name__}: {exc})", file=where) from exc
    report = DatasetReport()
    if nodes or edges:
        memory.kb.index_batch(Batch(nodes=nodes, edges=edges))
        report.nodes, report.edges = len(nodes), len(edges)
    for item in data.get("supersede") or []:
        try:
            memory.supersede(
                str(item["edge"]),
                valid_to=parse_time(item.get("valid_to"), now),
                at=parse_time(item.get("at", "now"), now),
            )
        except (KeyError, ValueError) as exc:
            raise ParseError(f"bad supersede entry {item!r}: {exc}", file=where) from exc
        report.superseded += 1
    for item in data.get("observations") or []:
        try:
            extra = {k: item[k] for k in ("attribute", "value", "negated", "change") if k in item}
            result = memory.observe(
                str(item["text"]),
                source=str(item.get("source", "user_stated")),
                scope=item.get("scope", s),
                subject=node_id(str(item["subject"])) if item.get("subject") else None,
                credibility=item.get("credibility"),
                source_id=item.get("source_id"),
                at=parse_time(item.get("at", "now"), now),
                **extra,
            )
        except (KeyError, ValueError) as exc:
            raise ParseError(f"bad observation {item!r}: {exc}", file=where) from exc
        except ValidationError:
            raise
        report.observations.append(result.belief_id)
    return report
