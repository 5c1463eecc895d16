"""What every REST request passes before its route runs: the key first, then the body's size and
depth, then strict JSON types (:class:`StrictJsonRoute`). Nothing here parses a body it has not
bounded: a body over the size limit is 413 unread, one nested too deep is 422 unparsed."""

# no `from __future__ import annotations`: FastAPI reads the route annotations at runtime

import json
import re
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import numpy as np
import pydantic
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from cef.server.auth import API_KEY_HEADER, KeyRing
from cef.server.errors import body
from cef.server.tools import MAX_BODY_DEPTH, strict_json

__all__ = ["BodyLimit", "KeyFirst", "StrictJsonRoute", "raw_depth_ok"]


class StrictJsonRoute(APIRoute):
    """A route whose JSON body is validated in strict mode first: JSON types are taken as they are.

    ``0`` is not a boolean or a date, ``"5"`` is not a number, ``1.5`` is not an
    integer; ISO 8601 strings still make dates and enum values enums (pydantic's
    strict JSON mode). Then FastAPI validates as usual. A body that is not JSON
    is left to FastAPI (400/422 as before).
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        field = self.body_field
        if field is None or field.field_info.annotation is None:
            return handler
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(field.field_info.annotation)

        async def strict(request: Request) -> Response:
            raw = await request.body()
            if raw:
                if not raw_depth_ok(raw, MAX_BODY_DEPTH):  # before a parser recurses into it
                    msg = f"the request nests deeper than {MAX_BODY_DEPTH} levels of lists and objects"
                    raise RequestValidationError([{"type": "value_error", "loc": ("body",), "msg": msg}])
                try:
                    data = json.loads(raw)
                except ValueError:
                    return await handler(request)  # FastAPI reports unreadable bodies
                try:
                    adapter.validate_json(strict_json(data), strict=True)
                except ValueError as exc:
                    if not isinstance(exc, pydantic.ValidationError):  # nested too deep: never recursed into
                        raise RequestValidationError(
                            [{"type": "value_error", "loc": ("body",), "msg": str(exc), "input": None}]
                        ) from None
                    errors = exc.errors(include_url=False)
                    raise RequestValidationError(
                        [{**e, "loc": ("body", *e.get("loc", ()))} for e in errors]
                    ) from None
                except pydantic.ValidationError as exc:
                    errors = exc.errors(include_url=False)
                    raise RequestValidationError(
                        [{**e, "loc": ("body", *e.get("loc", ()))} for e in errors]
                    ) from None
            return await handler(request)

        return strict


_JSON_STRING = re.compile(rb'"(?:\\.|[^"\\])*"')


def raw_depth_ok(raw: bytes, limit: int) -> bool:
    """Whether JSON text ``raw`` nests at most ``limit`` lists / objects deep, read without parsing
    (strings are skipped; a malformed text is left to the parser, which reports it)."""
    bare = _JSON_STRING.sub(b"", raw)
    codes = np.frombuffer(bare, dtype=np.uint8)
    step = np.isin(codes, (ord("["), ord("{"))).astype(np.int32) - np.isin(codes, (ord("]"), ord("}")))
    return not len(step) or int(np.cumsum(step).max()) <= limit


class KeyFirst:
    """ASGI middleware: an API request without a known key gets 401, and a read key on a write
    route 403, before its body is read or validated (a caller learns nothing of the schema from a
    422). ``write_routes``: (method, path pattern) of the routes that need a write key, filled in
    once the app's routes exist; the routes check the key again themselves."""

    def __init__(
        self, app: ASGIApp, ring: KeyRing, write_routes: Sequence[tuple[str, re.Pattern[str]]] = ()
    ) -> None:
        self.app = app
        self.ring = ring
        self.write_routes = write_routes

    def _needs_write(self, method: str, path: str) -> bool:
        return any(m == method and pattern.match(path) for m, pattern in self.write_routes)

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope.get("path", "")).startswith("/api/"):
            headers = dict(scope.get("headers") or [])
            presented = headers.get(API_KEY_HEADER.lower().encode())
            write = self._needs_write(str(scope.get("method")), str(scope["path"]))
            denied = self.ring.check(presented, "write" if write else "read")
            if denied is not None:
                await JSONResponse(body(denied.kind, denied.message), status_code=denied.status)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


class _TooLarge(StarletteHTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(
            413,
            f"the request body is larger than this server accepts ({limit} bytes; setting max_body_bytes, "
            "CEF_MAX_BODY_BYTES): send fewer records per call",
        )


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes gets 413 before it is read (by its Content-Length)
    or as soon as the bytes received pass the limit (chunked bodies) — never parsed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            status = 413 if length.isdigit() else 400
            kind = "payload_too_large" if status == 413 else "bad_request"
            text = _TooLarge(self.limit).detail if status == 413 else "invalid Content-Length header"
            await JSONResponse(body(kind, text), status_code=status)(scope, receive, send)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _TooLarge(self.limit)
            return message

        await self.app(scope, limited, send)
