"""DuckDB vector store (``duckdb`` extra; HNSW with ``duckdb-extension-vss``). Imported lazily."""

from cef.store.duckdb.store import DuckDBVectorIndex, DuckDBVectorStore

__all__ = ["DuckDBVectorIndex", "DuckDBVectorStore"]
