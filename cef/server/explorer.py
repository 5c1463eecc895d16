"""The graph explorer: a page at ``/`` and the read-only API routes it uses.

The page (``cef/server/static/``: plain HTML, CSS and JavaScript, with the
vendored Cytoscape.js graph library) asks a question with a strategy, depth,
as-of time and token budget, lists the ranked chunks with their explanations
and draws the subgraph behind them (:mod:`cef.server.graphview`). Clicking a
node shows its properties, chunks and neighbours and can expand it.

Every route here reads: each needs a ``read`` key when keys are configured
(sent by the page in ``X-API-Key``), and the page calls nothing else. The
page and its files themselves are public (they hold no data), so that a
browser can load them and then ask for the key.
"""

# no `from __future__ import annotations`: FastAPI reads the route annotations at runtime

from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query
from fastapi.responses import FileResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from cef.model import Chunk, SearchResult
from cef.server.graphview import GraphView, neighbourhood_view, result_view
from cef.server.paths import IdPath
from cef.server.service import CefService

__all__ = ["ExploreResponse", "explorer_api", "mount_explorer", "static_dir"]

STATIC_PREFIX = "/explorer"


def static_dir() -> Any:
    """The folder of the page's files (package data)."""
    return resources.files("cef.server") / "static"


class ExploreResponse(BaseModel):
    """A retrieval and the subgraph behind it."""

    result: SearchResult
    graph: GraphView


def explorer_api(
    svc: CefService, reader: Any, graph_query: type[BaseModel], route_class: type[APIRoute] = APIRoute
) -> APIRouter:
    """The read-only routes of the explorer (mounted under ``/api/v1``); ``reader`` is the
    dependency that checks a read key and returns its grant (scopes); ``route_class`` the API's
    (strict JSON bodies)."""
    from cef.server.auth import ApiKey, scoped_query

    api = APIRouter(tags=["explorer"], route_class=route_class)
    Grant = Annotated[ApiKey | None, Depends(reader)]

    @api.post("/explore", response_model=ExploreResponse)
    async def explore(query: graph_query, grant: Grant) -> ExploreResponse:  # type: ignore[valid-type]
        """A structured graph query → ranked chunks and the subgraph behind them (anchors, typed paths,
        answer nodes, chunks), ready to draw."""
        scoped = scoped_query(grant, query)
        result = await svc.retrieve_knowledge(scoped)
        graph = await svc.run(lambda: result_view(svc.view(grant), result))
        return ExploreResponse(result=result, graph=graph)

    @api.get("/nodes/{node_id}/neighbors", response_model=GraphView)
    async def neighbors(
        node_id: IdPath,
        depth: Annotated[int, Query(ge=1, le=10, description="hops from the node")] = 1,
        limit: Annotated[int, Query(ge=1, le=1000, description="most nodes returned")] = 50,
        relation: Annotated[
            list[str] | None, Query(description="only follow these relation types (repeatable)")
        ] = None,
        *,
        grant: Grant,
    ) -> GraphView:
        """A node's neighbourhood: the nodes within ``depth`` hops and the typed edges to them (at
        most the server's ``max_depth`` hops and ``max_limit`` nodes: a larger request gets that much)."""
        depth = min(depth, svc.settings.max_depth)
        limit = min(limit, svc.settings.max_limit)

        view = svc.view(grant)  # the drawing reads only what the key's scopes see
        return await svc.run(
            lambda: neighbourhood_view(view, node_id, depth=depth, max_nodes=limit, relation_types=relation)
        )

    @api.get("/nodes/{node_id}/chunks", response_model=list[Chunk])
    async def node_chunks(
        node_id: IdPath,
        limit: Annotated[int, Query(ge=1, le=1000)] = 20,
        *,
        grant: Grant,
    ) -> list[Chunk]:
        """The chunks linked to a node (the first ``limit``, at most the server's result limit)."""
        limit = min(limit, svc.settings.max_limit)

        return await svc.run(svc.view(grant).chunks_of, node_id, limit)

    return api


def mount_explorer(app: FastAPI) -> None:
    """Serve the page at ``/`` and its files under ``/explorer/`` (no key needed: they hold no data)."""
    folder = static_dir()
    index = folder / "index.html"

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(str(index), media_type="text/html")

    app.mount(STATIC_PREFIX, StaticFiles(directory=str(folder)), name="explorer")
