"""The one place that imports psycopg and translates its errors."""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any, Protocol

from cef.errors import MissingExtraError, RetryableStoreError, StoreError


class Connections(Protocol):
    """What the vector index needs of the PostgreSQL store: pooled connections and the change-feed head."""

    def connection(self, doing: str) -> AbstractContextManager[Any]:
        """A pooled connection with errors translated; ``doing`` names the work in error messages."""
        ...

    def current_seq(self) -> int:
        """The newest change-feed sequence number."""
        ...


def psycopg() -> ModuleType:
    """The psycopg module, or a MissingExtraError naming the extra."""
    try:
        import psycopg as mod
        import psycopg_pool  # noqa: F401  (part of the extra)
        from pgvector import psycopg as _pgvector  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("the PostgreSQL store", "postgres", exc.name or "psycopg") from exc
    return mod


#: SQLSTATE classes worth a retry: serialization failure, deadlock, lock not available, admin shutdown, ...
_RETRYABLE_STATES = {"40001", "40P01", "55P03", "57P01", "57P02", "57P03", "53300"}


def translate(exc: BaseException, doing: str) -> StoreError:
    """A driver error as a cef StoreError (RetryableStoreError when a retry may succeed)."""
    import psycopg as pg
    from psycopg_pool import PoolTimeout

    state: Any = getattr(exc, "sqlstate", None)
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, PoolTimeout):
        return RetryableStoreError(f"PostgreSQL: no connection available while {doing}: {msg}; retry")
    if state in _RETRYABLE_STATES or (isinstance(exc, pg.OperationalError) and state is None):
        return RetryableStoreError(f"PostgreSQL error while {doing}: {msg}; retry")
    return StoreError(f"PostgreSQL error while {doing}: {msg}")
