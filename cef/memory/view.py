"""What the memory's helpers read of a semantic memory, as Protocols defined low.

:mod:`~cef.memory.understand`, :mod:`~cef.memory.reconcile` and
:mod:`~cef.memory.retrieval` take one of these, not
:class:`~cef.memory.memory.SemanticMemory`: they depend on the few things
they use, and the facade depends on them, never the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import numpy as np

    from cef.context.tokens import TokenCounter
    from cef.engine.kb import KnowledgeBase
    from cef.schema.registry import SchemaRegistry

__all__ = ["FeedbackOutcome", "MemoryReader", "MemoryRetrievalView", "MemoryView"]

FeedbackOutcome = Literal["used", "helpful", "wrong"]


class MemoryReader(Protocol):
    """Names and the scope's own node, as question understanding reads them."""

    @property
    def kb(self) -> KnowledgeBase: ...

    @property
    def registry(self) -> SchemaRegistry: ...

    @property
    def extractor(self) -> Any: ...

    def names_in_text(self, text: str, scope: str | None) -> list[tuple[str, str, int, int]]: ...

    def self_id(self, scope: str | dict[str, str] | None) -> str: ...

    def node_label(self, node_id: str) -> str | None: ...


class MemoryView(MemoryReader, Protocol):
    """What reconciling observations reads besides: the clock and name resolution."""

    def now(self) -> datetime: ...

    def resolve_name(self, name: str, scope: str | None) -> str | None: ...


class MemoryRetrievalView(MemoryView, Protocol):
    """What ``retrieve_context`` uses besides: query vectors, the token counter, usage counts."""

    @property
    def token_counter(self) -> TokenCounter: ...

    def refresh(self) -> None: ...

    def embed_query(self, text: str) -> np.ndarray | None: ...

    def record_feedback(
        self, node_ids: str | Sequence[str], outcome: FeedbackOutcome, count: int = 1
    ) -> Sequence[Any]: ...
