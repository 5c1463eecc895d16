"""Small JSON Schema helpers for publishing pydantic models as tool input schemas."""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["inline_refs", "model_input_schema", "strip_titles"]


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace local ``$ref``s with their definitions (clients differ in ``$ref`` support).

    A recursive definition stays as a ``$ref`` and keeps its entry in ``$defs``.
    """
    defs: dict[str, Any] = schema.get("$defs", {})
    kept: set[str] = set()

    def walk(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in stack or name not in defs:
                    kept.add(name)
                    return node
                resolved = walk(copy.deepcopy(defs[name]), (*stack, name))
                siblings = {k: walk(v, stack) for k, v in node.items() if k != "$ref"}
                return {**resolved, **siblings}
            return {k: walk(v, stack) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v, stack) for v in node]
        return node

    out: dict[str, Any] = walk(schema, ())
    if kept:
        out["$defs"] = {name: defs[name] for name in kept if name in defs}
    return out


def strip_titles(schema: Any) -> Any:
    """Drop the ``title`` keywords pydantic adds (property *names* called "title" are kept)."""
    if isinstance(schema, list):
        return [strip_titles(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = strip_titles(value)
    return out


def model_input_schema(model: type[Any]) -> dict[str, Any]:
    """The compact, self-contained JSON Schema of a pydantic model's input."""
    schema = model.model_json_schema(mode="validation", by_alias=True)
    out: dict[str, Any] = strip_titles(inline_refs(schema))
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out
