"""Small JSON Schema helpers for publishing pydantic models as tool input schemas."""

from __future__ import annotations

import copy
import json
from typing import Any

__all__ = ["inline_refs", "model_input_schema", "strip_titles"]


def inline_refs(schema: dict[str, Any], *, keep_shared: bool = True) -> dict[str, Any]:
    """Replace local ``$ref``s with their definitions (clients differ in ``$ref`` support).

    A recursive definition stays a ``$ref`` with its entry in ``$defs``; so does,
    with ``keep_shared``, a definition referenced more than once (inlining it
    would repeat it: the schema stays small for an LLM's context).
    """
    defs: dict[str, Any] = schema.get("$defs", {})
    text = json.dumps(schema)
    shared = {name for name in defs if keep_shared and text.count(f'"#/$defs/{name}"') > 1}
    kept: set[str] = set()

    def walk(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in stack or name not in defs or name in shared:
                    kept.add(name)
                    return node
                resolved = walk(copy.deepcopy(defs[name]), (*stack, name))
                siblings = {k: walk(v, stack) for k, v in node.items() if k not in ("$ref", "$defs")}
                return {**resolved, **siblings}
            return {k: walk(v, stack) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v, stack) for v in node]
        return node

    out: dict[str, Any] = walk(schema, ())
    done: set[str] = set()
    while kept - done:  # kept definitions may refer to further definitions
        name = sorted(kept - done)[0]
        done.add(name)
        if name in defs:
            out.setdefault("$defs", {})[name] = walk(copy.deepcopy(defs[name]), (name,))
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
