"""What the retrieval stages read of the engine: a narrow, read-only view of its state.

:class:`~cef.engine.state.EngineState` satisfies :class:`EngineView`; the stages
depend on this Protocol, not on the engine, so the arrows point one way
(``engine`` → ``retrieve``, never back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.graph.index import GraphIndex
    from cef.model import Node
    from cef.schema.registry import SchemaRegistry
    from cef.store.base import RecordStore, VectorIndex, WriteSet

__all__ = ["EngineView"]


class EngineView(Protocol):
    """The engine state as retrieval reads it: records, graph, vectors, and a consistent read."""

    store: RecordStore
    embedder: Embedder | None
    graph: GraphIndex
    #: the knowledge base's vocabulary: node types and relation types with what they mean
    schema: SchemaRegistry
    node_vectors: VectorIndex
    chunk_vectors: VectorIndex
    #: where the graph snapshot is kept beside the store (None: an in-memory or server store)
    snapshot_path: Path | None
    #: the change-feed position the in-memory indexes reflect
    seq: int
    #: callbacks run after every committed write (caches subscribe to forget what changed)
    listeners: list[Callable[[WriteSet], None]]

    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        """Node records by id, in order (missing ids are left out)."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """Hold the engine for a consistent read."""
        ...

    def writer_waits_on_me(self) -> bool:
        """A write is waiting for the read this thread holds, and releasing that one read would let
        it go (the thread holds no other read and not the write lock)."""
        ...

    def vectors_path(self, kind: str) -> Path | None:
        """Where vectors of ``kind`` are kept between runs beside the store (None: never kept)."""
        ...
