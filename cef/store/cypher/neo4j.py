"""Neo4j adapter for the shared Cypher dialect (needs the ``neo4j`` extra; Neo4j 5 or later)."""

from __future__ import annotations

from typing import Any

from cef.errors import CefError, MissingExtraError, RetryableStoreError, StoreError


class Neo4jDriver:
    """Runs the dialect's queries on one Neo4j database (``bolt://`` or ``neo4j://`` URL)."""

    def __init__(
        self,
        url: str = "bolt://localhost:7687",
        *,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        batch_size: int = 5000,
    ) -> None:
        try:
            import neo4j
        except ImportError as exc:
            raise MissingExtraError("the Neo4j graph store", "neo4j", "neo4j") from exc
        self.url = url
        self.database = database if database and database != "cef" else None
        self.batch_size = batch_size
        auth = (user or "neo4j", password) if password is not None else None
        self._driver = neo4j.GraphDatabase.driver(url, auth=auth)

    def __repr__(self) -> str:
        return f"Neo4jDriver({self.url!r}, database={self.database!r})"

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        try:
            records, _, _ = self._driver.execute_query(query, params or {}, database_=self.database)
        except CefError:
            raise
        except Exception as exc:
            raise _translate(exc) from exc
        return [list(r.values()) for r in records]

    def ensure_schema(self) -> None:
        for q in (
            "CREATE CONSTRAINT cef_node_id IF NOT EXISTS FOR (n:CefNode) REQUIRE n.id IS UNIQUE",
            "CREATE INDEX cef_edge_id IF NOT EXISTS FOR ()-[r:CEF_EDGE]-() ON (r.id)",
            "CREATE CONSTRAINT cef_meta_key IF NOT EXISTS FOR (m:CefMeta) REQUIRE m.key IS UNIQUE",
        ):
            self.run(q)

    def drop_all(self) -> None:
        for label_query in (
            "MATCH (n:CefNode) WITH n LIMIT $n DETACH DELETE n RETURN count(*)",
            "MATCH (n:CefMeta) WITH n LIMIT $n DETACH DELETE n RETURN count(*)",
        ):
            while self.run(label_query, {"n": 10_000})[0][0]:
                pass

    def close(self) -> None:
        self._driver.close()


def _translate(exc: BaseException) -> StoreError:
    from neo4j import exceptions as nex

    msg = str(exc).strip() or type(exc).__name__
    if isinstance(exc, nex.ServiceUnavailable | nex.SessionExpired | nex.TransientError):
        return RetryableStoreError(f"Neo4j unavailable: {msg}; retry")
    return StoreError(f"Neo4j error: {msg}")
