"""Worked examples for the tool descriptions, built from real labels, names and relations of the live schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cef.schema.discovery import GraphSchema

__all__ = ["retrieve_context_examples", "retrieve_knowledge_examples", "search_memory_examples"]


@dataclass
class _Picks:
    """Real labels, names and relations from the schema to build examples from."""

    source: str | None = None
    source_name: str | None = None
    source_prop: str = "name"
    relation: str | None = None
    target: str | None = None
    second: str | None = None
    second_target: str | None = None
    any_name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _picks(schema: GraphSchema) -> _Picks:
    p = _Picks()
    examples = {n.label: n for n in schema.node_types if n.examples}
    if examples:
        first = next(iter(examples.values()))
        p.any_name = first.examples[0]
    best: tuple[int, str, str, str] | None = None
    for r in schema.relation_types:
        for e in r.endpoints:
            if e.source in examples and (best is None or e.count > best[0]):
                best = (e.count, r.name, e.source, e.target)
    if best is not None:
        _, p.relation, p.source, p.target = best
        node = examples[p.source]
        p.source_name = node.examples[0]
        props = node.properties
        p.source_prop = "name" if "name" in props or not props else props[0]
        for r in schema.relation_types:
            if r.name == p.relation:
                continue
            hop = next(
                (
                    e
                    for e in r.endpoints
                    if e.source == p.target or (r.bidirectional and e.target == p.target)
                ),
                None,
            )
            if hop is not None:
                p.second, p.second_target = r.name, hop.target if hop.source == p.target else hop.source
                break
    return p


def retrieve_knowledge_examples(schema: GraphSchema) -> list[dict[str, Any]]:
    """Example ``retrieve_knowledge`` calls built from the live schema."""
    p = _picks(schema)
    out: list[dict[str, Any]] = [
        {"query": f"What is known about {p.any_name}?" if p.any_name else "What is known about X?"}
    ]
    if p.relation and p.source_name:
        target = p.target or "node"
        out.append(
            {
                "query": f"Which {target} nodes is {p.source_name} connected to by {p.relation}?",
                "targets": [{"description": p.source_name, "type_hint": p.source}],
                "traversal": {"relation_types": [p.relation], "depth": 1},
                "top_k": 5,
            }
        )
        if p.second:
            out.append(
                {
                    "query": f"Which {p.second_target} nodes are two hops from {p.source_name}?",
                    "targets": [{"description": p.source_name, "type_hint": p.source}],
                    "traversal": {"relation_types": [p.relation, p.second], "depth": 2},
                }
            )
    return out


def retrieve_context_examples(schema: GraphSchema) -> list[dict[str, Any]]:
    """Example ``retrieve_context`` calls built from the live schema."""
    p = _picks(schema)
    subject = p.any_name or "this topic"
    out: list[dict[str, Any]] = [{"textQuery": f"What do the documents say about {subject}?"}]
    if p.relation and p.source and p.source_name:
        hints: dict[str, Any] = {
            "entityLabel": p.source,
            "entityProperty": p.source_prop,
            "entityValue": p.source_name,
        }
        out.append({"textQuery": f"What is {p.source_name} linked to?", "graphHints": hints})
        full = {**hints, "traverseRelations": [p.relation, *([p.second] if p.second else [])], "depth": 2}
        out.append(
            {
                "textQuery": f"Which {p.second_target or p.target} relate to {p.source_name}?",
                "graphHints": full,
                "semanticKeywords": [(p.second_target or p.target or "").lower()],
            }
        )
    return out


def search_memory_examples(schema: GraphSchema) -> list[dict[str, Any]]:
    """Example ``search_memory`` calls built from the live schema."""
    p = _picks(schema)
    subject = p.any_name or "a topic"
    return [
        {"query": f"{subject}", "limit": 5},
        {"query": f"everything related to {subject}", "graph_depth": 2},
        {"query": f"{subject}", "enable_graph": False},
    ]
