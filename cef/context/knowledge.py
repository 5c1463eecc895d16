"""What the graph context provider takes and gives: options, ranked entities, the context."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cef.context.formats import (
    SECTIONS,
    ContextAxiom,
    ContextChunk,
    ContextClaim,
    ContextDocument,
    ContextEntity,
    ContextFormat,
    ContextRelationship,
)
from cef.model import Node

__all__ = ["DEFAULT_SHARES", "DocumentInput", "KnowledgeContext", "KnowledgeContextOptions", "RankedEntity"]


#: default share of the budget each section may take before leftovers are shared
DEFAULT_SHARES: dict[str, float] = {
    "entities": 0.45,
    "relationships": 0.25,
    "axioms": 0.12,
    "claims": 0.12,
    "chunks": 0.15,
}


class KnowledgeContextOptions(BaseModel):
    """What a graph context may hold and how it is rendered."""

    model_config = ConfigDict(extra="forbid")

    max_tokens: int = Field(
        default=2000, ge=1, le=2_000_000, description="token budget of the rendered context"
    )
    max_entities: int = Field(default=20, ge=1, le=1000)
    include_relationships: bool = True
    relationship_depth: int = Field(default=1, ge=1, le=4, description="hops around the selected entities")
    max_relationships: int = Field(default=60, ge=0, le=10_000)
    include_axioms: bool = True
    include_claims: bool = False
    max_claims_per_entity: int = Field(default=3, ge=0, le=100)
    include_chunks: bool = False
    max_chunks_per_entity: int = Field(default=2, ge=0, le=100)
    entity_types: list[str] | None = Field(
        default=None, description="only entities of these types (None: all)"
    )
    min_relevance: float = Field(default=0.1, ge=0.0)
    max_properties_per_entity: int = Field(default=10, ge=0, le=1000)
    format: ContextFormat = ContextFormat.MARKDOWN
    as_of: datetime | None = Field(
        default=None, description="relationships valid at this time (default: now)"
    )
    scope: str | None = None
    section_shares: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_SHARES),
        description="share of the budget per section in the first pass; leftovers are shared after",
    )

    @field_validator("section_shares")
    @classmethod
    def _shares(cls, value: dict[str, float]) -> dict[str, float]:
        for name, share in value.items():
            if name not in SECTIONS:
                raise ValueError(
                    f"unknown section {name!r} in section_shares; sections: {', '.join(SECTIONS)}"
                )
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"section share of {name!r} must be between 0 and 1, got {share}")
        return value


class RankedEntity(BaseModel):
    """A node with its relevance to a query and the query terms it matched."""

    node: Node
    score: float
    lexical_score: float = 0.0
    vector_score: float = 0.0
    matched_terms: list[str] = Field(default_factory=list)


class KnowledgeContext(BaseModel):
    """Graph knowledge for a prompt: what was selected, and the rendered text."""

    entities: list[ContextEntity] = Field(default_factory=list)
    relationships: list[ContextRelationship] = Field(default_factory=list)
    axioms: list[ContextAxiom] = Field(default_factory=list)
    claims: list[ContextClaim] = Field(default_factory=list)
    chunks: list[ContextChunk] = Field(default_factory=list)
    formatted_context: str = ""
    token_count: int = 0
    token_budget: int = 0
    format: ContextFormat = ContextFormat.MARKDOWN
    original_query: str | None = None
    truncated: bool = False
    skipped_ids: list[str] = Field(default_factory=list, description="entity ids that do not exist")
    warnings: list[str] = Field(default_factory=list)
    reason: str | None = Field(default=None, description="why the context is empty, when it is")
    metadata: dict[str, Any] = Field(default_factory=dict)
    document: ContextDocument = Field(
        default_factory=ContextDocument,
        exclude=True,
        description="the content, to render again in another format",
    )

    @property
    def is_empty(self) -> bool:
        return not (self.entities or self.relationships or self.axioms or self.claims or self.chunks)

    @classmethod
    def empty(
        cls,
        reason: str,
        *,
        query: str | None = None,
        options: KnowledgeContextOptions | None = None,
        skipped_ids: Sequence[str] = (),
        warnings: Sequence[str] = (),
    ) -> KnowledgeContext:
        """No knowledge and why (no text: :class:`GraphContextProvider` adds the format's empty frame)."""
        opts = options or KnowledgeContextOptions()
        return cls(
            token_budget=opts.max_tokens,
            format=opts.format,
            original_query=query,
            skipped_ids=list(skipped_ids),
            warnings=list(warnings),
            reason=reason,
            metadata={"reason": reason},
        )


class DocumentInput(BaseModel):
    """A document to find context for: its text and the entities already linked to it."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1)
    linked_entities: list[str] = Field(default_factory=list)
    title: str | None = None
