"""FalkorDB adapter for the shared Cypher dialect (needs the ``falkordb`` extra)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from cef.errors import CefError, MissingExtraError, RetryableStoreError, StoreError


class FalkorDBDriver:
    """Runs the dialect's queries on one FalkorDB graph (a Redis key).

    ``url`` is ``redis://[:password@]host:port`` or ``unix:///path/to/redis.sock``.
    """

    def __init__(
        self,
        url: str = "redis://localhost:6379",
        *,
        graph: str = "cef",
        password: str | None = None,
        socket_timeout: float = 60.0,
        batch_size: int = 2000,
    ) -> None:
        try:
            from falkordb import FalkorDB
        except ImportError as exc:
            raise MissingExtraError("the FalkorDB graph store", "falkordb", "falkordb") from exc
        self.url = url
        self.graph_name = graph
        self.batch_size = batch_size
        parts = urlsplit(url)
        if parts.scheme not in ("unix", "redis", "rediss", "falkor", "falkordb"):
            raise StoreError(f"FalkorDB URL must be redis://host:port or unix:///path, not {url!r}")
        try:  # the client talks to the server already while it is constructed
            if parts.scheme == "unix":
                db = FalkorDB(unix_socket_path=parts.path, password=password, socket_timeout=socket_timeout)
            else:
                db = FalkorDB(
                    host=parts.hostname or "localhost",
                    port=parts.port or 6379,
                    password=password or parts.password,
                    username=parts.username or None,
                    ssl=parts.scheme == "rediss",
                    socket_timeout=socket_timeout,
                )
        except Exception as exc:
            raise _translate(exc) from exc
        self._db = db
        self._graph = db.select_graph(graph)

    def __repr__(self) -> str:
        return f"FalkorDBDriver({self.url!r}, graph={self.graph_name!r})"

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        try:
            result = self._graph.query(query, params)
        except CefError:
            raise
        except Exception as exc:
            raise _translate(exc) from exc
        return [list(r) for r in result.result_set]

    def ensure_schema(self) -> None:
        for q in (
            "CREATE INDEX FOR (n:CefNode) ON (n.id)",
            "CREATE INDEX FOR ()-[r:CEF_EDGE]-() ON (r.id)",
            "CREATE INDEX FOR (m:CefMeta) ON (m.key)",
        ):
            try:
                self.run(q)
            except StoreError as exc:
                if "already indexed" not in str(exc):
                    raise

    def drop_all(self) -> None:
        try:
            self._graph.delete()
        except Exception as exc:
            if "empty key" not in str(exc).lower() and "invalid graph" not in str(exc).lower():
                raise _translate(exc) from exc

    def close(self) -> None:
        try:
            self._db.connection.close()
        except Exception:  # already closed or never connected
            return


def _translate(exc: BaseException) -> StoreError:
    from redis import exceptions as rex

    msg = str(exc).strip() or type(exc).__name__
    if isinstance(exc, rex.ConnectionError | rex.TimeoutError | rex.BusyLoadingError):
        return RetryableStoreError(f"FalkorDB unavailable: {msg}; retry")
    return StoreError(f"FalkorDB error: {msg}")
