"""Qdrant vector store (``qdrant`` extra). The client is imported when a store is opened."""

from cef.store.qdrant.store import QdrantVectorIndex, QdrantVectorStore

__all__ = ["QdrantVectorIndex", "QdrantVectorStore"]
