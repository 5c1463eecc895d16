"""Front doors: the MCP server and the REST API over one knowledge base.

Thin layers around the engine: they parse, call one engine operation and
serialize. Nothing here is imported by the engine, and this package imports
neither FastAPI nor the MCP SDK until a server is built.

- :mod:`cef.server.tools` — the tools (names, input models, descriptions with
  the live schema), defined once for MCP, REST and ``cef tools``
- :mod:`cef.server.service` — the operations both servers call (limits,
  search cache, graph time limit, tool dispatch)
- :mod:`cef.server.mcp` — MCP over stdio and streamable HTTP (``pip install 'cef-context[mcp]'``)
- :mod:`cef.server.http` — the REST API (``pip install 'cef-context[server]'``)
- :mod:`cef.server.explorer` — the graph explorer page at ``/`` and its read-only routes
- :mod:`cef.server.graphview` — the drawable subgraph behind an answer or around a node
  (the explorer and ``cef graph`` draw it)
- :mod:`cef.server.settings` — ``ServerSettings`` from ``CEF_*`` variables (read at the edges)
"""
