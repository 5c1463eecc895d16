"""PostgreSQL adapter: system of record, full text (tsvector), vectors (pgvector HNSW), traversal pushdown.

Needs the ``postgres`` extra (``psycopg[binary,pool]``, ``pgvector``); the
driver is imported when a store is opened, not when this package is.
"""

from cef.store.postgres.store import PostgresStore
from cef.store.postgres.vectors import PgVectorIndex, PgVectorStore

__all__ = ["PgVectorIndex", "PgVectorStore", "PostgresStore"]
