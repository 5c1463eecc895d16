"""Text helpers every context item kind renders with: Markdown and plain escaping, values, dates, YAML, JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any

import yaml

__all__ = [
    "date_text",
    "json_text",
    "md_code",
    "md_inline",
    "md_name",
    "plain_inline",
    "props_text",
    "value_text",
    "yaml_text",
]

_MD_SPECIAL = re.compile(r"[\\`*<&\[\]]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|^[#>+-]|^\d+(?=[.)])")
_CODE_LIKE = re.compile(r"[_*`\\/<>\[\]#&]")


@lru_cache(maxsize=8192)
def md_inline(text: str) -> str:
    """Text safe inside one Markdown line: line breaks flattened, markup characters escaped.

    Escapes what could start markup inline (backslash, backtick, ``*``, ``<``,
    ``&``, brackets, ``_`` at a word edge) and what would start a block at the
    beginning of a line (``#``, ``>``, list markers); ``snake_case`` and arrows
    stay readable.
    """
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(
        lambda m: "\\" + m.group(0) if not m.group(0)[0].isdigit() else m.group(0) + "\\", flat
    )


def md_code(text: str) -> str:
    """``text`` as an inline code span (shown literally), fenced to survive backticks inside."""
    flat = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def md_name(name: str) -> str:
    """A node name in Markdown: a code span when it holds markup characters (paths, identifiers)."""
    return md_code(name) if code_like(name) else md_inline(name)


def code_like(name: str) -> bool:
    """Whether ``name`` holds characters Markdown would read as markup (paths, identifiers)."""
    return _CODE_LIKE.search(name) is not None


def plain_inline(text: str) -> str:
    return " ".join(str(text).split())


def value_text(value: Any) -> str:
    """A property value on one line: lists joined with commas, mappings as JSON, floats short."""
    if isinstance(value, list):
        return ", ".join(value_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def props_text(props: dict[str, Any], esc: Callable[[str], str], sep: str = ": ") -> str:
    """Properties as ``key: value; key: value``, keys and values escaped."""
    return "; ".join(f"{esc(k)}{sep}{esc(value_text(v))}" for k, v in props.items())


def date_text(value: datetime | None) -> str:
    return "" if value is None else value.date().isoformat()


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _FlowDumper(_BaseDumper):
    """Block mappings; lists of plain values in flow style (``[a, b]``)."""


def _represent_list(dumper: Any, data: list[Any]) -> Any:
    flat = all(not isinstance(v, list | dict) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_FlowDumper.add_representer(list, _represent_list)


def yaml_text(value: Any, *, flow_lists: bool = True) -> str:
    """``value`` as block YAML; lists of plain values in flow style unless ``flow_lists`` is False."""
    if flow_lists:
        out: str = yaml.dump(
            value,
            Dumper=_FlowDumper,
            sort_keys=False,
            allow_unicode=True,
            width=2**31 - 1,
            default_flow_style=False,
        )
        return out
    block: str = yaml.safe_dump(
        value, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False
    )
    return block
