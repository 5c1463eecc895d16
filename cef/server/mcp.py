"""The MCP server: cef's tools over stdio or streamable HTTP, on the official ``mcp`` SDK.

Tools are listed from :mod:`cef.server.tools` with the live graph schema and
examples in their descriptions. When a write (through a write tool, or by
another process, seen by polling the change feed) changes the schema, the
descriptions are rebuilt and every connected client is sent
``notifications/tools/list_changed`` (and ``subscriptions/listen`` streams
get the same event). A caller whose API key is bound to data scopes is
listed tools whose descriptions show only its scopes' (and shared) schema. Every failure of a call comes back as a tool error
(``isError``) with a readable message::

    server = CefMcpServer(kb, ServerSettings(writable=True))
    anyio.run(server.serve_stdio)
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from cef.engine.kb import KnowledgeBase
from cef.errors import CefError
from cef.schema.discovery import SchemaTracker, discover_schema
from cef.server.auth import API_KEY_HEADER, KeyRing
from cef.server.errors import body
from cef.server.service import CefService
from cef.server.settings import ApiKey, ServerSettings
from cef.server.tools import tool_definitions, tool_spec

log = logging.getLogger(__name__)

__all__ = ["CefMcpServer", "RequireApiKey"]

INSTRUCTIONS = (
    "cef is a knowledge base: a graph of typed nodes and relations with linked text passages. "
    "Call get_graph_schema to see its node and relation types, then retrieve_knowledge (structured: "
    "targets + traversal) or retrieve_context (question + graph hints) to get ranked passages with the "
    "graph paths that explain them; search_memory for a quick search. Tool descriptions carry the "
    "current schema and are refreshed (tools/list_changed) when it changes."
)


class _Server(Server[dict[str, Any]]):
    """The SDK's low-level server, advertising ``tools.listChanged`` on every transport."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class CefMcpServer:
    """cef's tools as an MCP server over one knowledge base."""

    def __init__(
        self,
        kb: KnowledgeBase,
        settings: ServerSettings | None = None,
        *,
        writable: bool | None = None,
        service: CefService | None = None,
    ) -> None:
        from cef import __version__

        self.kb = kb
        self.settings = settings or ServerSettings()
        self.writable = self.settings.writable if writable is None else writable
        self.service = service or CefService(kb, self.settings)
        self.keys = KeyRing(self.settings.api_keys)
        self.tracker = SchemaTracker(kb, samples=self.settings.schema_samples)
        self.tracker.attach()
        self._tools: tuple[str, list[types.Tool]] | None = None
        self._sessions: deque[ServerSession] = deque(maxlen=1024)
        self.bus = InMemorySubscriptionBus()
        self.server = _Server(
            "cef",
            version=__version__,
            instructions=INSTRUCTIONS,
            lifespan=self._lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._on_initialized
        )

    def close(self) -> None:
        self.tracker.detach()
        self.service.close()

    # ------------------------------------------------------------- tools
    def tools(self) -> list[types.Tool]:
        """The tools as listed now (rebuilt only when the schema's shape changed)."""
        if not self.tracker.fingerprint:  # not read yet (the server's lifespan normally does it first)
            self.tracker.refresh()
        fingerprint = self.tracker.fingerprint
        if self._tools is None or self._tools[0] != fingerprint:
            context = self.service.context.request_model if self.service.context else None
            defs = tool_definitions(
                self.tracker.schema, self.settings, writable=self.writable, context_model=context
            )
            self._tools = (fingerprint, [types.Tool.model_validate(d.to_mcp()) for d in defs])
        return self._tools[1]

    def scoped_tools(self, scopes: tuple[str, ...]) -> list[types.Tool]:
        """The tools as a key bound to ``scopes`` sees them: their descriptions carry only the schema of
        its scopes' and shared records (read now; nothing of another tenant's data)."""
        schema = discover_schema(self.kb, samples=self.settings.schema_samples, scopes=scopes)
        context = self.service.context.request_model if self.service.context else None
        defs = tool_definitions(schema, self.settings, writable=self.writable, context_model=context)
        return [types.Tool.model_validate(d.to_mcp()) for d in defs]

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        grant = self._grant(ctx)
        if grant is not None and grant.scopes is not None:
            return types.ListToolsResult(tools=await self.service.run(self.scoped_tools, grant.scopes))
        return types.ListToolsResult(tools=self.tools())

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        spec = tool_spec(name)
        if spec is not None and spec.write:
            denied = self._write_denied(ctx)
            if denied is not None:
                return _error(denied)
        try:
            result = await self.service.call_tool(
                name, params.arguments, writable=self.writable, grant=self._grant(ctx)
            )
        except CefError as exc:
            log.info("tool %s failed: %s", name, exc)
            return _error(str(exc))
        except Exception as exc:  # a bug must still come back as a tool error, not a dropped connection
            log.exception("tool %s crashed", name)
            return _error(f"internal error in {name}: {type(exc).__name__}: {exc}")
        if spec is not None and spec.write:
            try:
                changed = await self.service.run(self.tracker.refresh)
            except Exception:
                log.exception("schema refresh after %s failed", name)
                changed = False
            if changed:
                await self.notify_tools_changed()
        payload = result.model_dump(mode="json", by_alias=True)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
            structured_content=payload,
        )

    def _grant(self, ctx: Any) -> ApiKey | None:
        """The caller's API key over HTTP (None over stdio or without keys): it bounds the data scopes."""
        request = getattr(ctx, "request", None)
        if not self.keys.enabled or request is None:
            return None
        return self.keys.grant_of(request.headers.get(API_KEY_HEADER))

    def _write_denied(self, ctx: Any) -> str | None:
        """Over HTTP with API keys, a write tool needs a key with write scope (stdio needs none)."""
        request = getattr(ctx, "request", None)
        if not self.keys.enabled or request is None or not self.writable:
            return None
        denied = self.keys.check(request.headers.get(API_KEY_HEADER), "write")
        return denied.message if denied is not None else None

    # ------------------------------------------------------------- notifications
    async def _on_initialized(self, ctx: Any, params: types.NotificationParams) -> None:
        self._sessions.append(ctx.session)

    async def notify_tools_changed(self) -> None:
        """Tell every connected client that the tool list (its descriptions) changed."""
        self._tools = None
        await self.bus.publish(ToolsListChanged())
        for session in list(self._sessions):
            try:
                await session.send_tool_list_changed()
            except Exception:  # the client went away
                log.debug("dropping a closed MCP session", exc_info=True)
                if session in self._sessions:
                    self._sessions.remove(session)

    async def _poll_schema(self) -> None:
        """Notice schema changes made by other processes (through the shared database)."""
        interval = self.settings.schema_poll_seconds
        while True:
            await anyio.sleep(interval)
            try:
                changed = await self.service.run(self.tracker.poll)
            except Exception:
                log.exception("schema poll failed")
                continue
            if changed:
                await self.notify_tools_changed()

    @asynccontextmanager
    async def _lifespan(self, server: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        await self.service.run(self.tracker.refresh)  # the schema the first tools/list shows
        await self.service.warm_up()
        async with anyio.create_task_group() as tg:
            if self.settings.schema_poll_seconds > 0:
                tg.start_soon(self._poll_schema)
            try:
                yield {}
            finally:
                tg.cancel_scope.cancel()

    # ------------------------------------------------------------- transports
    async def serve_stdio(self) -> None:
        """Serve one client on stdin/stdout until it disconnects."""
        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    def http_app(self, *, path: str = "/mcp") -> ASGIApp:
        """The ASGI app serving streamable HTTP at ``path`` (behind the API keys, when there are any)."""
        app: ASGIApp = self.server.streamable_http_app(streamable_http_path=path, host=self.settings.host)
        return RequireApiKey(app, self.keys) if self.keys.enabled else app

    async def serve_http(self, *, path: str = "/mcp") -> None:
        """Serve streamable HTTP on the settings' host and port until cancelled."""
        import uvicorn

        config = uvicorn.Config(
            self.http_app(path=path), host=self.settings.host, port=self.settings.port, log_level="warning"
        )
        await uvicorn.Server(config).serve()


class RequireApiKey:
    """ASGI middleware: every HTTP request needs a key with read scope (write tools check for write)."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            presented = dict(scope.get("headers") or []).get(API_KEY_HEADER.lower().encode())
            denied = self.keys.check(presented, "read")
            if denied is not None:
                response = JSONResponse(body(denied.kind, denied.message), status_code=denied.status)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)
