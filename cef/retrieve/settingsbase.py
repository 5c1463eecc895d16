"""The base of every retrieval settings model (:mod:`cef.retrieve.presets`, re-exported there), and the
entity-linking settings several stages share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EntityLinkingSettings", "Settings"]


class Settings(BaseModel):
    """A retrieval stage's settings: frozen, unknown fields refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class EntityLinkingSettings(Settings):
    """How a question's entity mentions are matched to graph nodes.

    A mention matches by exact normalized name, then by alias key, then (with
    ``fuzzy``) by string similarity ≥ ``fuzzy_cutoff`` (best ``fuzzy_limit``
    names, link confidence = similarity × ``fuzzy_confidence``).
    ``entity_types``: keep only nodes whose label or extracted ``types`` is one
    of these (empty: all).
    """

    fuzzy: bool = True
    fuzzy_cutoff: float = Field(default=0.85, gt=0.0, le=1.0)
    fuzzy_limit: int = Field(default=2, ge=1, le=50)
    fuzzy_confidence: float = Field(default=0.9, gt=0.0, le=1.0)
    entity_types: list[str] = Field(default_factory=list)
