"""Record ids in URL paths: any id, "/" and "%" included, is addressed by its percent-encoding.

``cef ingest notes/`` names a document ``doc:sub/a.md``; its URL is ``/api/v1/nodes/doc%3Asub%2Fa.md``.
The server decodes a path before routing, which would turn that ``%2F`` into a separator and the
route would not match. :class:`EncodedSlashes` routes on the raw path instead, decoding every
escape except ``%2F`` and ``%25`` (so a literal ``%`` stays distinguishable from an escape);
:data:`IdPath` parameters then finish the decoding.
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import unquote

from fastapi import Path
from pydantic import AfterValidator
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

__all__ = ["EncodedSlashes", "IdPath"]

_KEPT = re.compile(r"(%2[fF]|%25)")


def _route_path(raw: str) -> str:
    """``raw`` decoded except for ``%2F`` and ``%25``, which stay escaped (upper case)."""
    parts = _KEPT.split(raw)
    return "".join(part.upper() if i % 2 else unquote(part) for i, part in enumerate(parts))


class EncodedSlashes:
    """ASGI middleware: under ``prefix``, a path with ``%2F`` or ``%25`` is routed with those kept."""

    def __init__(self, app: ASGIApp, prefix: str = "/api/") -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw and str(scope.get("path", "")).startswith(self.prefix):
            text = raw.split(b"?", 1)[0].decode("latin-1")
            if _KEPT.search(text) and unquote(text) == scope["path"]:
                scope = {**scope, "path": _route_path(text)}
        await self.app(scope, receive, send)


MAX_ID = 512  # as the records' ids (cef.model.graph)


def _record_id(value: str) -> str:
    decoded = unquote(value)
    if len(decoded) > MAX_ID:
        raise ValueError(f"an id has at most {MAX_ID} characters, this one has {len(decoded)}")
    return decoded


#: a record id in a path; the schema states its decoded bounds, which the validator checks
IdPath = Annotated[
    str, Path(min_length=1, json_schema_extra={"maxLength": MAX_ID}), AfterValidator(_record_id)
]
