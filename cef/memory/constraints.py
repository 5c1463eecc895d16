"""The memory query: its constraints, and the working set one ``retrieve_context`` call shares
between its stages (:mod:`cef.memory.walk`, :mod:`cef.memory.assemble`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from cef.context.formats import ContextFormat
from cef.graph.filter import EdgeFilter
from cef.memory.temporal import TemporalConstraint
from cef.memory.understand import QueryUnderstanding
from cef.retrieve.bestfirst import Reached

if TYPE_CHECKING:
    from cef.memory.view import MemoryRetrievalView


__all__ = ["Reached", "RetrievalConstraints", "Run", "normalize_scope"]


class RetrievalConstraints(BaseModel):
    """What to retrieve and how much.

    ``scope`` is a scope name or a mapping (``{"user_id": "u1"}`` → ``user_id=u1``);
    a scoped query sees that scope's records and unscoped ones, never another
    scope's. ``temporal`` picks current state (default), as-of T, or history,
    and the window of the "what changed" section.
    """

    model_config = ConfigDict(extra="forbid")

    temporal: TemporalConstraint | None = None
    confidence_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    scope: str | dict[str, str] | None = None
    max_tokens: int = Field(default=4000, ge=1, le=1_000_000)
    max_nodes: int = Field(default=100, ge=1, le=100_000)
    max_depth: int = Field(default=5, ge=0, le=10)
    max_anchors: int = Field(default=10, ge=1, le=200)
    include_beliefs: bool = True
    include_temporal_context: bool = True
    include_conflicts: bool = True
    format: ContextFormat = ContextFormat.MARKDOWN
    record_usage: bool = False

    @field_validator("scope")
    @classmethod
    def _scope(cls, v: str | dict[str, str] | None) -> str | dict[str, str] | None:
        normalize_scope(v)
        return v


def normalize_scope(scope: str | dict[str, str] | None) -> str | None:
    """A scope mapping as one stable string (``a=1;b=2``); strings pass through."""
    if scope is None:
        return None
    if isinstance(scope, dict):
        if not scope:
            return None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in scope.items()):
            raise ValueError("scope mappings hold strings")
        return ";".join(f"{k}={scope[k]}" for k in sorted(scope))
    if not isinstance(scope, str) or not scope.strip():
        raise ValueError("a scope is a non-empty string or a mapping of strings")
    return scope


@dataclass
class Run:
    memory: MemoryRetrievalView
    constraints: RetrievalConstraints
    scope: str | None
    now: datetime
    temporal: TemporalConstraint
    understandings: list[QueryUnderstanding]
    flt: EdgeFilter
    query_text: str
    timings: dict[str, float] = field(default_factory=dict)
    embed_ms: float = 0.0

    def embed(self, text: str) -> np.ndarray | None:
        t0 = time.perf_counter()
        vec = self.memory.embed_query(text)
        self.embed_ms += (time.perf_counter() - t0) * 1000
        return vec
