"""The REST API (FastAPI): search, retrieve, context, CRUD for nodes/edges/chunks, schema, health.

``create_app(kb, settings)`` builds the app; ``cef serve http`` runs it with
uvicorn. Every route parses, calls one engine operation and serializes. API
keys travel in ``X-API-Key`` and are compared in constant time; keys have a
``read`` or ``write`` scope. Every error is JSON (:class:`~cef.server.errors.ErrorBody`):
a client's mistake is a 4xx, never a 500. The OpenAPI spec is at ``/openapi.json``.

    app = create_app(cef.open("kb.db"), ServerSettings(api_keys={"secret-key-1": "write"}))
"""

# no `from __future__ import annotations`: FastAPI reads the route annotations at runtime

import logging
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

import anyio
import pydantic
from fastapi import APIRouter, Depends, FastAPI, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from cef.engine.answer import Answer
from cef.engine.kb import KnowledgeBase
from cef.errors import CefError, ConflictError, ForbiddenError, NotFoundError
from cef.model import Chunk, Edge, Node, SearchResult
from cef.model.graph import INVERTED_WINDOW, inverted_window
from cef.schema.discovery import GraphSchema
from cef.server.auth import (
    API_KEY_HEADER,
    OPEN,
    KeyRing,
    read_scope,
    scoped_query,
)
from cef.server.errors import ErrorBody, body, error_kind, status_for
from cef.server.middleware import BodyLimit, KeyFirst, StrictJsonRoute
from cef.server.paths import EncodedSlashes, IdPath
from cef.server.responses import SearchResponse
from cef.server.service import CefService, WriteResult
from cef.server.settings import ApiKey, Scope, ServerSettings
from cef.server.tools import format_validation_error, input_models

log = logging.getLogger(__name__)

__all__ = ["READ_ONLY_MESSAGE", "ApiError", "ApiKeyAuth", "create_app"]

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in (
        (400, "The request body could not be read (not JSON, or not UTF-8)"),
        (404, "Not found"),
        (
            409,
            "Conflict: the knowledge base refuses the write (an existing id, a missing node named in the body, an unknown relation type)",
        ),
        (413, "The request body is larger than this server accepts (max_body_bytes)"),
        (422, "The request is invalid or exceeds the server's limits"),
        (500, "Server error"),
        (501, "Not available: an optional dependency is missing"),
        (503, "Temporarily unavailable; retry"),
        (504, "Time limit exceeded"),
    )
}
AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "Missing or unknown API key"},
    403: {"model": ErrorBody, "description": "The API key lacks the needed scope"},
}


def created_links(kind: str, param: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI links from ``POST /api/v1/{kind}s`` to reading, patching and deleting what it created."""
    base = f"{kind}_api_v1_{kind}s__{param}_"
    return {
        201: {
            "links": {
                f"{verb.capitalize()}{kind.capitalize()}": {
                    "operationId": f"{verb}_{base}_{verb}",
                    "parameters": {param: "$response.body#/id"},
                    "description": f"{verb} the {kind} just created",
                }
                for verb in ("get", "patch", "delete")
            }
        }
    }


class ApiError(Exception):
    """An HTTP error with a kind and a message (rendered as :class:`ErrorBody`)."""

    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.headers = headers


class ApiKeyAuth:
    """The key ring as FastAPI dependencies (the header is declared in the OpenAPI spec)."""

    def __init__(self, keys: dict[str, ApiKey] | dict[str, Scope]) -> None:
        self.ring = KeyRing(keys)
        self.header = APIKeyHeader(
            name=API_KEY_HEADER, auto_error=False, description="an API key with read (or write) scope"
        )

    @property
    def enabled(self) -> bool:
        return self.ring.enabled

    def require(self, needed: Scope) -> Callable[..., Coroutine[Any, Any, ApiKey]]:
        """A dependency: the presented key's grant (401/403 when it does not give ``needed``)."""

        async def check(key: Annotated[str | None, Security(self.header)] = None) -> ApiKey:
            if not self.enabled:
                return OPEN
            denied = self.ring.check(key, needed)
            if denied is not None:
                raise ApiError(denied.status, denied.kind, denied.message)
            grant = self.ring.grant_of(key)
            assert grant is not None  # check() passed
            return grant

        return check


# ------------------------------------------------------------------ wire models
class _Patch(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodePatch(_Patch):
    properties: dict[str, Any] | None = Field(default=None, description="properties to set")
    content: str | None = Field(default=None, description="new text to embed")
    label: str | None = Field(default=None, min_length=1, max_length=128)
    merge: bool = Field(default=True, description="merge properties into the old ones (false: replace them)")


class EdgePatch(_Patch):
    properties: dict[str, Any] | None = None
    weight: float | None = Field(default=None, ge=1e-6, le=1e6, description="strength, from 1e-6 to 1e6")
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    valid_from: datetime | None = Field(default=None, description="not after the edge's valid_to (else 422)")
    valid_to: datetime | None = Field(default=None, description="not before the edge's valid_from (else 422)")

    @model_validator(mode="after")
    def _window(self) -> "EdgePatch":
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise inverted_window("the patch", self.valid_from, self.valid_to)
        return self


class ChunkPatch(_Patch):
    content: str | None = Field(default=None, min_length=1)
    metadata: dict[str, Any] | None = Field(default=None, description="metadata to set")
    node_id: str | None = Field(default=None, min_length=1, description="link the chunk to this node")
    unlink: bool = Field(default=False, description="remove the chunk's link to its node")
    merge: bool = Field(default=True, description="merge metadata into the old one (false: replace it)")


class Health(BaseModel):
    status: Literal["starting", "ready", "failed"] = Field(
        description="starting: loading models and indexes (reads wait for it); ready: warm; failed: the "
        "warm-up failed (see loaded.error; reads are answered, but the server is not ready)"
    )
    loaded: dict[str, Any] = Field(
        default_factory=dict, description="what the warm-up loaded: embedder, counts, seconds"
    )
    version: str
    auth: bool = Field(description="whether API keys are required")
    provide_context: bool = Field(description="whether POST /api/v1/context is available")


# ------------------------------------------------------------------ the app
#: what every write endpoint of a read-only REST API answers (403)
READ_ONLY_MESSAGE = "this server is read-only: start it with `cef serve http --writable` (or CEF_WRITABLE=true) to accept writes"


def create_app(
    kb: KnowledgeBase, settings: ServerSettings, *, service: CefService | None = None, read_only: bool = False
) -> FastAPI:
    """The REST API over ``kb``; ``read_only``: every write endpoint answers 403, whatever the key
    (``cef serve http`` passes ``not settings.writable``)."""
    from cef import __version__

    svc = service or CefService(kb, settings)
    auth = ApiKeyAuth(settings.api_keys)
    extra = AUTH_RESPONSES if auth.enabled else {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(svc.warm_up)  # /health says "starting" until it is done
            try:
                yield
            finally:
                svc.close()

    app = FastAPI(
        title="cef",
        version=__version__,
        description="Context Engineering Framework: graph + vector + BM25 retrieval over a knowledge graph "
        "with linked text chunks.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = svc
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    write_routes: list[tuple[str, re.Pattern[str]]] = []  # filled below, once the routes exist
    if auth.enabled:
        app.add_middleware(KeyFirst, ring=auth.ring, write_routes=write_routes)
    app.add_middleware(EncodedSlashes)
    install_error_handlers(app)
    install_docs(app)

    @app.get(
        "/health",
        response_model=Health,
        tags=["meta"],
        responses={
            503: {"model": Health, "description": "Starting (models and indexes are loading) or failed"}
        },
    )
    async def health() -> Any:
        """Readiness: "starting" (503) while models and indexes load, then "ready" with what was loaded."""
        info = Health(
            status="ready" if svc.ready else "failed" if svc.failed else "starting",
            loaded=svc.loaded if svc.warmed else {},
            version=__version__,
            auth=auth.enabled,
            provide_context=svc.context is not None,
        )
        return info if svc.ready else JSONResponse(info.model_dump(mode="json"), status_code=503)

    api = APIRouter(prefix="/api/v1", responses={**ERROR_RESPONSES, **extra}, route_class=StrictJsonRoute)
    models = input_models(settings)  # request models whose constraints are this server's limits
    write_key = _refuse_writes if read_only else auth.require("write")
    routes = _Routes(api, svc, auth.require("read"), write_key)
    routes.retrieval(models)
    routes.nodes()
    routes.edges()
    routes.chunks()

    from cef.server.explorer import explorer_api, mount_explorer

    api.include_router(explorer_api(svc, auth.require("read"), models.graph_query, StrictJsonRoute))
    app.include_router(api)
    mount_explorer(app)
    write_routes.extend(_routes_using(app, write_key))
    return app


def _api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        inner = getattr(route, "original_router", None)  # an included router (newer FastAPI keeps it whole)
        if inner is not None:
            yield from _api_routes(inner.routes)


def _routes_using(app: FastAPI, dependency: Any) -> list[tuple[str, re.Pattern[str]]]:
    """(method, path pattern) of every route that depends on ``dependency``."""
    out = []
    for route in _api_routes(app.routes):
        stack = list(route.dependant.dependencies)
        while stack:
            dep = stack.pop()
            if dep.call is dependency:
                out += [(method, route.path_regex) for method in route.methods or ()]
                break
            stack.extend(dep.dependencies)
    return out


async def _refuse_writes() -> ApiKey:
    """The write key check of a read-only API: every write is refused before its body is used."""
    raise ForbiddenError(READ_ONLY_MESSAGE)


class _Routes:
    """The API's routes by group; each parses, calls the service (through the caller's tenant view)
    and returns the result. Every route takes its grant as a parameter: ``read_key`` / ``write_key``
    are the dependencies that check a read / write key and return its grant."""

    def __init__(self, api: APIRouter, svc: CefService, read_key: Any, write_key: Any) -> None:
        self.api, self.svc, self.read_key, self.write_key = api, svc, read_key, write_key

    def retrieval(self, models: Any) -> None:
        api, svc = self.api, self.svc
        Reader = Annotated[ApiKey, Depends(self.read_key)]
        search_request, graph_query, answer_request = models.search, models.graph_query, models.answer

        @api.post("/search", response_model=SearchResponse, tags=["retrieval"])
        async def search(req: search_request, grant: Reader) -> SearchResponse:  # type: ignore[valid-type]
            """Memory search with graph exploration; the seed's response (results, exploration summary,
            related entities, suggested queries). Cached until the next write."""
            return await svc.search(req.model_copy(update={"scope": read_scope(grant, req.scope)}))  # type: ignore[attr-defined]

        @api.post("/retrieve", response_model=SearchResult, tags=["retrieval"])
        async def retrieve(query: graph_query, grant: Reader) -> SearchResult:  # type: ignore[valid-type]
            """A structured graph query → ranked chunks with the paths that explain them."""
            return await svc.retrieve_knowledge(scoped_query(grant, query))

        @api.post("/answer", response_model=Answer, tags=["retrieval"])
        async def answer(req: answer_request, grant: Reader) -> Answer:  # type: ignore[valid-type]
            """A question answered by the server's LLM (CEF_LLM) from the retrieved passages, citing
            their ids; without an LLM configured, ``answer`` is null and the passages are returned."""
            return await svc.answer(req.model_copy(update={"scope": read_scope(grant, req.scope)}))  # type: ignore[attr-defined]

        if svc.context is not None:
            request_model = svc.context.request_model

            @api.post("/context", response_model=svc.context.response_model, tags=["retrieval"])
            async def context(request: request_model, grant: Reader) -> Any:  # type: ignore[valid-type]
                """Several queries, one token budget, deduplicated: context ready for a prompt."""
                scoped = request.model_copy(update={"scope": read_scope(grant, request.scope)})  # type: ignore[attr-defined]
                return await svc.provide_context(scoped)

        @api.get("/schema", response_model=GraphSchema, tags=["schema"])
        async def schema(grant: Reader) -> GraphSchema:
            """Node types (properties, counts) and relation types (semantics, observed endpoints); a key
            bound to scopes sees only what its scopes' records and shared (unscoped) records show."""
            return await svc.graph_schema(grant)

    def nodes(self) -> None:
        api, svc = self.api, self.svc
        Reader = Annotated[ApiKey, Depends(self.read_key)]
        Writer = Annotated[ApiKey, Depends(self.write_key)]

        @api.post(
            "/nodes",
            response_model=Node,
            status_code=201,
            tags=["nodes"],
            responses=created_links("node", "node_id"),
        )
        async def create_node(node: Node, grant: Writer) -> Node:
            return await svc.run(svc.view(grant).index_node, node)

        @api.get("/nodes", response_model=list[Node], tags=["nodes"])
        async def list_nodes(
            label: Annotated[str, Query(min_length=1, max_length=128, description="node type")],
            grant: Reader,
            limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        ) -> list[Node]:
            """Nodes with a label (those the key may see)."""
            return await svc.run(svc.view(grant).find_nodes_by_label, label, limit)

        @api.get("/nodes/{node_id}", response_model=Node, tags=["nodes"])
        async def get_node(node_id: IdPath, grant: Reader) -> Node:
            return _found(await svc.run(svc.view(grant).find_node, node_id), "node", node_id)

        @api.patch("/nodes/{node_id}", response_model=Node, tags=["nodes"])
        async def patch_node(node_id: IdPath, patch: NodePatch, grant: Writer) -> Node:
            view = svc.view(grant)
            return await svc.run(
                lambda: view.update_node(
                    node_id, patch.properties, content=patch.content, label=patch.label, merge=patch.merge
                )
            )

        @api.delete("/nodes/{node_id}", response_model=WriteResult, tags=["nodes"])
        async def delete_node(node_id: IdPath, grant: Writer, cascade: bool = True) -> WriteResult:
            """Delete a node; with ``cascade`` (default) its edges and linked chunks too."""
            return await svc.delete_node(node_id, cascade, grant)

    def edges(self) -> None:
        api, svc = self.api, self.svc
        Reader = Annotated[ApiKey, Depends(self.read_key)]
        Writer = Annotated[ApiKey, Depends(self.write_key)]

        @api.post(
            "/edges",
            response_model=Edge,
            status_code=201,
            tags=["edges"],
            responses=created_links("edge", "edge_id"),
        )
        async def create_edge(edge: Edge, grant: Writer) -> Edge:
            return await svc.run(svc.view(grant).index_edge, edge)

        @api.get("/edges/{edge_id}", response_model=Edge, tags=["edges"])
        async def get_edge(edge_id: IdPath, grant: Reader) -> Edge:
            return _found(await svc.run(svc.view(grant).get_edge, edge_id), "edge", edge_id)

        @api.patch("/edges/{edge_id}", response_model=Edge, tags=["edges"])
        async def patch_edge(edge_id: IdPath, patch: EdgePatch, grant: Writer) -> Edge:
            view = svc.view(grant)

            def apply() -> Edge:
                old = view.access.owned(view.get_edge(edge_id), "edge", edge_id)
                try:
                    new = Edge.model_validate({**old.model_dump(), **patch.model_dump(exclude_unset=True)})
                except pydantic.ValidationError as exc:  # the patch is valid; with the stored edge it is not
                    raise ConflictError(f"edge {edge_id!r}: {format_validation_error(exc)}") from None
                return view.update_edge(new)

            return await svc.run(apply)

        @api.delete("/edges/{edge_id}", response_model=WriteResult, tags=["edges"])
        async def delete_edge(edge_id: IdPath, grant: Writer) -> WriteResult:
            await svc.run(svc.view(grant).delete_edge, edge_id)
            return WriteResult(edges=1)

    def chunks(self) -> None:
        api, svc = self.api, self.svc
        Reader = Annotated[ApiKey, Depends(self.read_key)]
        Writer = Annotated[ApiKey, Depends(self.write_key)]

        @api.post(
            "/chunks",
            response_model=Chunk,
            status_code=201,
            tags=["chunks"],
            responses=created_links("chunk", "chunk_id"),
        )
        async def create_chunk(chunk: Chunk, grant: Writer) -> Chunk:
            return await svc.run(svc.view(grant).index_chunk, chunk)

        @api.get("/chunks/{chunk_id}", response_model=Chunk, tags=["chunks"])
        async def get_chunk(chunk_id: IdPath, grant: Reader) -> Chunk:
            return _found(await svc.run(svc.view(grant).get_chunk, chunk_id), "chunk", chunk_id)

        @api.patch("/chunks/{chunk_id}", response_model=Chunk, tags=["chunks"])
        async def patch_chunk(chunk_id: IdPath, patch: ChunkPatch, grant: Writer) -> Chunk:
            view = svc.view(grant)
            return await svc.run(
                lambda: view.update_chunk(
                    chunk_id,
                    content=patch.content,
                    metadata=patch.metadata,
                    node_id=patch.node_id,
                    unlink=patch.unlink,
                    merge=patch.merge,
                )
            )

        @api.delete("/chunks/{chunk_id}", response_model=WriteResult, tags=["chunks"])
        async def delete_chunk(chunk_id: IdPath, grant: Writer) -> WriteResult:
            await svc.run(svc.view(grant).delete_chunk, chunk_id)
            return WriteResult(chunks=1)


# ------------------------------------------------------------------ docs
#: Swagger UI, shipped with cef (swagger-ui-dist, Apache-2.0; see its LICENSE and NOTICE there)
SWAGGER_DIR = FilePath(__file__).parent / "static" / "swagger-ui"
SWAGGER_FILES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}


def install_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI served from the package (works offline); the spec is at /openapi.json."""

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon-32x32.png",
        )

    @app.get("/docs/assets/{name}", include_in_schema=False)
    async def docs_asset(name: str) -> FileResponse:
        media = SWAGGER_FILES.get(name)
        if media is None:
            raise NotFoundError(f"no documentation asset {name!r}")
        return FileResponse(SWAGGER_DIR / name, media_type=media)


def _found(value: Any, kind: str, ident: str) -> Any:
    if value is None:
        raise NotFoundError(f"{kind} {ident!r} does not exist")
    return value


# ------------------------------------------------------------------ errors
def allowed_methods(request: Request) -> list[str]:
    """Every method the API documents at this path (Starlette names only the first route's)."""
    methods: set[str] = set()
    for template, operations in request.app.openapi().get("paths", {}).items():
        pattern = "[^/]+".join(re.escape(part) for part in re.split(r"\{[^}]+\}", template))
        if re.fullmatch(pattern, request.url.path):
            methods.update(m.upper() for m in operations)
    return sorted(methods)


def install_error_handlers(app: FastAPI) -> None:
    """Every error as JSON :class:`ErrorBody`; a client's mistake is a 4xx."""

    def respond(
        status: int, kind: str, message: str, details: Any = None, headers: Any = None
    ) -> JSONResponse:
        return JSONResponse(status_code=status, content=body(kind, message, details), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def on_request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"field": ".".join(str(p) for p in err.get("loc", ())), "message": str(err.get("msg", "invalid"))}
            for err in exc.errors()[:20]
        ]
        summary = "; ".join(f"{d['field']}: {d['message']}" for d in details[:5])
        if exc.errors() and all(err.get("type") == INVERTED_WINDOW for err in exc.errors()):
            # schema-valid, but its two dates conflict (a rule JSON Schema cannot state): 409, like a patch
            # that conflicts with the stored edge
            return respond(409, INVERTED_WINDOW, summary, details)
        return respond(422, "validation_error", f"invalid request: {summary}", details)

    @app.exception_handler(pydantic.ValidationError)
    async def on_model_invalid(request: Request, exc: pydantic.ValidationError) -> JSONResponse:
        return respond(422, "validation_error", f"invalid request: {format_validation_error(exc)}")

    @app.exception_handler(ApiError)
    async def on_api_error(request: Request, exc: ApiError) -> JSONResponse:
        return respond(exc.status, exc.kind, exc.message, headers=exc.headers)

    @app.exception_handler(CefError)
    async def on_cef_error(request: Request, exc: CefError) -> JSONResponse:
        status = status_for(exc)
        if status >= 500:
            log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
        headers = {"Retry-After": "1"} if status == 503 else None
        return respond(status, error_kind(exc), str(exc), headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(allowed_methods(request))
        return respond(
            exc.status_code, kinds.get(exc.status_code, "http_error"), str(exc.detail), headers=headers
        )

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s crashed", request.method, request.url.path)
        return respond(500, "internal_error", f"internal error: {type(exc).__name__}: {exc}")
