"""Graph files: relation types, nodes, edges and chunks written out in YAML or JSON.

The format (both syntaxes share it)::

    relation_types:            # optional; each edge's relation type must be registered
      - name: TREATS           # required, [A-Za-z_][A-Za-z0-9_]*
        semantics: ASSOCIATION # HIERARCHY, CONTAINMENT, CLASSIFICATION, ASSOCIATION,
                               # SEQUENCE, REFERENCE or CUSTOM (any case)
        bidirectional: false
        inverse: TREATED_BY
        description: a drug treats a condition
    nodes:
      - id: aspirin            # required: edges and chunks refer to it
        label: Drug            # required: the node's type
        properties: {name: Aspirin}
        content: text embedded for vector search   # optional
        scope: tenant-a                             # optional
    edges:
      - source: aspirin        # required
        target: headache       # required
        relation_type: TREATS  # required (``type`` is accepted as a synonym)
        id: e1                 # optional; default derived from source, type, target
                               # and the validity window
        properties: {}
        weight: 1.0            # > 0
        confidence: 0.9        # 0..1
        valid_from: 2020-01-01 # ISO 8601 date or date-time, optional
        valid_to: null
    chunks:
      - content: Aspirin relieves mild headaches.   # required
        node_id: aspirin       # optional: the node the passage is about
        id: c1                 # optional; default derived from node_id and content
        metadata: {source: leaflet}

Any other key is an error (typos should not pass silently). Errors name the
file and the line of the offending item and its index path (``edges[3].weight``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from cef.errors import ParseError, UnsupportedFileError
from cef.ingest.parsers.base import ParseContext, ParsedDocument, decode_text
from cef.model import Batch, Chunk, Edge, Node, RelationType, stable_id

__all__ = ["JsonGraphParser", "TextDatesLoader", "YamlGraphParser", "build_graph_batch"]

Path = tuple[str | int, ...]
LineOf = Callable[[Path], int | None]

SECTIONS = ("relation_types", "nodes", "edges", "chunks")
_NODE_KEYS = ("id", "label", "properties", "content", "scope")
_EDGE_KEYS = (
    "id",
    "relation_type",
    "type",
    "source",
    "target",
    "properties",
    "weight",
    "confidence",
    "valid_from",
    "valid_to",
    "scope",
)
_CHUNK_KEYS = ("id", "content", "node_id", "metadata", "scope")
_REL_KEYS = tuple(RelationType.model_fields)
_ID_FIELDS = ("id", "source", "target", "node_id")
#: an alias-expanded YAML document may be at most this many times larger than its text's nodes
_MAX_ALIAS_EXPANSION = 10
#: top-level keys of a memory dataset (cef/memory/dataset.py), which `cef memory load` reads
MEMORY_DATASET_KEYS = ("domain", "extension", "supersede", "observations")


def _where(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _fail(ctx: ParseContext, line_of: LineOf, path: Path, message: str) -> ParseError:
    line = None
    for depth in range(len(path), -1, -1):  # the deepest part of the path we can place
        line = line_of(path[:depth])
        if line is not None:
            break
    return ctx.error(f"{_where(path)}: {message}" if path else message, line)


def build_graph_batch(data: Any, ctx: ParseContext, line_of: LineOf, parser: str) -> ParsedDocument:
    """Turn an already-loaded graph document (dicts and lists) into a :class:`ParsedDocument`."""
    warnings: list[str] = []
    if data is None:
        warnings.append(f"{ctx.path}: empty graph file")
        return ParsedDocument(batch=Batch(), parser=parser, warnings=warnings)
    if not isinstance(data, Mapping):
        raise _fail(ctx, line_of, (), f"a graph file must be a mapping with keys {', '.join(SECTIONS)}")
    memory_keys = [str(k) for k in data if k in MEMORY_DATASET_KEYS]
    if memory_keys:
        raise UnsupportedFileError(
            f"{ctx.path}: a memory dataset (it has {', '.join(memory_keys)}), not a graph file: "
            f"load it with `cef memory load {ctx.path}`"
        )
    if data and not any(key in SECTIONS for key in data):
        keys = ", ".join(str(k) for k in list(data)[:5])
        raise UnsupportedFileError(
            f"{ctx.path}: not a graph file (its top-level keys are {keys}; a graph file has "
            f"{', '.join(SECTIONS)})"
        )
    for key in data:
        if key not in SECTIONS:
            raise _fail(ctx, line_of, (str(key),), f"unknown key; expected one of {', '.join(SECTIONS)}")
    scope = ctx.options.scope
    batch = Batch()
    seen: dict[tuple[str, str], int] = {}
    for section in SECTIONS:
        items = data.get(section)
        if items is None:
            continue
        if not isinstance(items, list):
            raise _fail(ctx, line_of, (section,), f"must be a list, not {type(items).__name__}")
        for index, item in enumerate(items):
            path: Path = (section, index)
            if not isinstance(item, Mapping):
                raise _fail(ctx, line_of, path, f"must be a mapping, not {type(item).__name__}")
            record = _build(section, dict(item), scope, ctx, line_of, path)
            key_id = record.name if isinstance(record, RelationType) else record.id
            first = seen.setdefault((section, key_id), index)
            if first != index:
                what = "name" if section == "relation_types" else "id"
                raise _fail(ctx, line_of, path, f"duplicate {what} {key_id!r} (first at {section}[{first}])")
            getattr(batch, section).append(record)
    return ParsedDocument(batch=batch, parser=parser, warnings=warnings)


def _build(
    section: str, item: dict[Any, Any], scope: str | None, ctx: ParseContext, line_of: LineOf, path: Path
) -> RelationType | Node | Edge | Chunk:
    allowed = {"relation_types": _REL_KEYS, "nodes": _NODE_KEYS, "edges": _EDGE_KEYS, "chunks": _CHUNK_KEYS}[
        section
    ]
    for key in item:
        if key not in allowed:
            raise _fail(ctx, line_of, (*path, str(key)), f"unknown field; allowed: {', '.join(allowed)}")
    for key in _ID_FIELDS:  # YAML reads `id: 42` as a number; ids are strings
        if isinstance(item.get(key), int | float) and not isinstance(item.get(key), bool):
            item[key] = str(item[key])
    model: type[BaseModel]
    if section == "relation_types":
        if isinstance(item.get("semantics"), str):
            item["semantics"] = item["semantics"].upper()
        model = RelationType
    elif section == "nodes":
        if "id" not in item:
            raise _fail(ctx, line_of, path, "a node needs an id (edges and chunks refer to nodes by id)")
        item.setdefault("scope", scope)
        model = Node
    elif section == "edges":
        if "type" in item:
            if "relation_type" in item:
                raise _fail(ctx, line_of, (*path, "type"), "give relation_type or type, not both")
            item["relation_type"] = item.pop("type")
        for key in ("source", "target", "relation_type"):
            if key not in item:
                raise _fail(ctx, line_of, path, f"an edge needs {key!r}")
        if "id" not in item and all(isinstance(item[k], str) for k in ("source", "relation_type", "target")):
            window = (str(item.get("valid_from") or ""), str(item.get("valid_to") or ""))
            item["id"] = stable_id("edge", item["source"], item["relation_type"], item["target"], *window)
        item.setdefault("scope", scope)
        model = Edge
    else:
        if "id" not in item and isinstance(item.get("content"), str):
            item["id"] = stable_id("chunk", str(item.get("node_id") or ""), item["content"])
        item.setdefault("scope", scope)
        model = Chunk
    try:
        return model.model_validate(item)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
        field = loc[:1] if loc and loc[0] in item else ()
        rest = loc[len(field) :]
        message = str(err["msg"]).removeprefix("Value error, ")
        detail = f"{'.'.join(str(p) for p in rest)}: {message}" if rest else message
        raise _fail(ctx, line_of, (*path, *field), detail) from None


# -- YAML ------------------------------------------------------------------------------------

try:
    from yaml import CSafeLoader as _Base
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Base  # type: ignore[assignment]


class TextDatesLoader(_Base):
    """Safe YAML loader that keeps dates as strings (pydantic parses them; properties stay JSON)."""


TextDatesLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _yaml_line_of(root: yaml.Node | None) -> LineOf:
    def line_of(path: Path) -> int | None:
        node = root
        if node is None:
            return None
        for depth, part in enumerate(path, 1):
            nxt: yaml.Node | None = None
            if isinstance(node, yaml.MappingNode) and isinstance(part, str):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == part:
                        # a field names its key's line; a section is entered through its value
                        nxt = key_node if depth == len(path) else value_node
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                nxt = node.value[part]
            if nxt is None:
                return None
            node = nxt
        return int(node.start_mark.line) + 1

    return line_of


def _check_aliases(root: yaml.Node, ctx: ParseContext) -> None:
    """Refuse recursive aliases and alias bombs (a few lines expanding to billions of nodes)."""
    expanded: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if done:
            on_path.discard(key)
            expanded[key] = 1 + sum(expanded[id(c)] for c in children)
            continue
        if key in expanded:
            continue
        if key in on_path:
            raise ctx.error("recursive YAML alias", int(node.start_mark.line) + 1)
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise ctx.error("recursive YAML alias", int(child.start_mark.line) + 1)
            if id(child) not in expanded:
                stack.append((child, False))
    if expanded[id(root)] > _MAX_ALIAS_EXPANSION * len(expanded) + 10_000:
        raise ctx.error(
            f"YAML aliases expand {len(expanded)} nodes to {expanded[id(root)]}: refusing (alias bomb?)"
        )


class YamlGraphParser:
    """``.yaml``/``.yml`` graph files (see the module docstring for the format)."""

    name = "graph-yaml"
    extensions: tuple[str, ...] = (".yaml", ".yml")
    content_types: tuple[str, ...] = ("application/yaml", "application/x-yaml", "text/yaml")
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        text = decode_text(data, ctx)
        loader = TextDatesLoader(text)
        try:
            root = loader.get_single_node()
            if root is not None:
                _check_aliases(root, ctx)
            loaded = loader.construct_document(root) if root is not None else None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = int(mark.line) + 1 if mark is not None else None
            problem = exc.problem or str(exc)
            if exc.context:
                started = exc.context_mark
                since = (
                    f" started on line {started.line + 1}"
                    if started is not None and started is not mark
                    else ""
                )
                problem = f"{problem} ({exc.context}{since})"
            raise ctx.error(f"invalid YAML: {problem}", line) from None
        except yaml.YAMLError as exc:
            raise ctx.error(f"invalid YAML: {exc}") from None
        except RecursionError:
            raise ctx.error("YAML nested too deeply") from None
        finally:
            loader.dispose()
        return build_graph_batch(loaded, ctx, _yaml_line_of(root), self.name)


# -- JSON ------------------------------------------------------------------------------------

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"


def _json_positions(text: str) -> dict[Path, int]:
    """Start offsets of the root, its keys, their array items and those items' fields."""
    out: dict[Path, int] = {}

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in _WS:
            pos += 1
        return pos

    def walk(pos: int, path: Path) -> int:
        pos = skip(pos)
        out[path] = pos
        ch = text[pos]
        if len(path) < 3 and ch == "{":
            pos = skip(pos + 1)
            if text[pos] == "}":
                return pos + 1
            while True:
                key, pos = _DECODER.raw_decode(text, skip(pos))
                pos = skip(pos) + 1  # the colon
                pos = skip(walk(pos, (*path, key)))
                if text[pos] == "}":
                    return pos + 1
                pos += 1  # the comma
        if len(path) < 3 and ch == "[":
            pos = skip(pos + 1)
            if text[pos] == "]":
                return pos + 1
            index = 0
            while True:
                pos = skip(walk(pos, (*path, index)))
                index += 1
                if text[pos] == "]":
                    return pos + 1
                pos += 1
        _, end = _DECODER.raw_decode(text, pos)
        return int(end)

    walk(0, ())
    return out


class JsonGraphParser:
    """``.json`` graph files (see the module docstring for the format)."""

    name = "graph-json"
    extensions: tuple[str, ...] = (".json",)
    content_types: tuple[str, ...] = ("application/json",)
    priority = 100

    def parse(self, data: bytes, ctx: ParseContext) -> ParsedDocument:
        text = decode_text(data, ctx)
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ctx.error(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
        except RecursionError:
            raise ctx.error("JSON nested too deeply") from None
        positions: dict[Path, int] | None = None

        def line_of(path: Path) -> int | None:
            nonlocal positions
            if positions is None:  # computed only when an error needs a line
                positions = _json_positions(text)
            pos = positions.get(path)
            return None if pos is None else text.count("\n", 0, pos) + 1

        return build_graph_batch(loaded, ctx, line_of, self.name)
