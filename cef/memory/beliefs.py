"""Observations, beliefs and usage: what sources said, what we believe, and how useful it was.

An :class:`Observation` is an immutable record of what a source said. The
memory reconciles each one into a belief about a subject node:

* **reinforce** — the same claim again: one more supporting source;
* **supersede** — the claim changed in the world ("no longer", "now", a new
  value of an attribute) and the source is credible enough: the old belief's
  validity is closed and a new belief replaces it;
* **contradict** — the opposite claim without a change: the belief keeps its
  place, records ``contradicted_by`` and loses confidence.

A belief's confidence combines its sources in log-odds: each supporting
source of credibility ``c`` adds ``log(c / (1 - c))``, each contradicting one
subtracts it (credibility is clipped to 0.5..0.99, so an uninformative source
adds nothing). One source of credibility 0.7 gives 0.7; two agreeing give
0.84; 0.7 for and 0.9 against give 0.21.

Usage counters (``used`` / ``helpful`` / ``wrong``) live on any node and feed
its importance at retrieval time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cef.memory.temporal import aware
from cef.text import FUNCTION_WORDS, REPORTING_WORDS, stem

__all__ = [
    "DEFAULT_CREDIBILITY",
    "Claim",
    "Observation",
    "ObservationSource",
    "SourceType",
    "UpdateResult",
    "Usage",
    "combine_confidence",
    "importance",
    "parse_claim",
]


class SourceType(StrEnum):
    """Who or what made an observation."""

    USER_STATED = "user_stated"
    OBSERVED = "observed"
    INFERRED = "inferred"
    EXTERNAL_API = "external_api"
    DOCUMENT = "document"


#: credibility of a source type when the observation does not give one
DEFAULT_CREDIBILITY: dict[SourceType, float] = {
    SourceType.USER_STATED: 0.7,
    SourceType.OBSERVED: 0.9,
    SourceType.INFERRED: 0.6,
    SourceType.EXTERNAL_API: 0.85,
    SourceType.DOCUMENT: 0.8,
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObservationSource(_Model):
    """A source: its type, optional id (``player:aria``, ``lab-system``) and credibility (0..1)."""

    type: SourceType = SourceType.USER_STATED
    id: str | None = Field(default=None, max_length=256)
    credibility: float | None = Field(default=None, ge=0.0, le=1.0)

    @property
    def weight(self) -> float:
        return self.credibility if self.credibility is not None else DEFAULT_CREDIBILITY[self.type]


class Observation(_Model):
    """What a source said. Only ``text`` is needed; the rest is parsed from it when absent.

    ``subject`` is a node id or name the claim is about; ``attribute``/``value``
    state a single-valued property (``dosage`` = ``20 mg``); ``negated`` says
    the text denies the claim; ``change`` says it reports a change in the world
    (superseding what was believed); ``valid_from`` is when the claim became
    true (default: ``observed_at``, default: now).
    """

    text: str = Field(min_length=1, max_length=10_000)
    source: ObservationSource = Field(default_factory=ObservationSource)
    subject: str | None = Field(default=None, max_length=512)
    attribute: str | None = Field(default=None, max_length=256)
    value: str | None = Field(default=None, max_length=2000)
    negated: bool | None = None
    change: bool | None = None
    observed_at: datetime | None = None
    valid_from: datetime | None = None
    scope: str | None = Field(default=None, max_length=256)

    @field_validator("observed_at", "valid_from")
    @classmethod
    def _tz(cls, v: datetime | None) -> datetime | None:
        return aware(v) if v is not None else None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("an observation needs some text")
        return v


class UpdateResult(_Model):
    """What :meth:`SemanticMemory.update` did with an observation."""

    observation_id: str
    belief_id: str
    subject_id: str
    action: Literal["created", "reinforced", "superseded", "contradicted"]
    confidence: float
    claim: str
    superseded: list[str] = Field(default_factory=list, description="beliefs whose validity was closed")
    contradicted: list[str] = Field(default_factory=list, description="beliefs this observation contradicts")


# --------------------------------------------------------------------- claims
_NEGATIONS = frozenset(
    {"not", "no", "never", "cannot", "nobody", "nothing", "neither", "nor", "without", "stopped", "quit"}
)
_NEG_PHRASES = ("no longer", "not anymore", "any more", "anymore", "discontinued", "stopped", "quit")
_CHANGE = re.compile(
    r"\b(no longer|anymore|any more|now|stopped|started|switched|changed|became|become|quit|discontinued|"
    r"began|begun|ended|has been moved|moved to)\b"
)
_CLAIM_STOP = FUNCTION_WORDS | REPORTING_WORDS
_WORD = re.compile(r"[a-z0-9][a-z0-9'’\-]*")
_ATTRIBUTE = re.compile(
    r"^\s*(?:'s|’s|s'|')\s+([a-z0-9 _\-]{1,60}?)\s+(?:is|are|was|were|=|:|has changed to|changed to|is now|are now)\s+(.+?)\s*[.!]?$"
)


@dataclass(frozen=True)
class Claim:
    """A claim parsed from an observation: its key (what it is about), value and polarity."""

    key: str
    value: str | None
    negated: bool
    functional: bool  # one value at a time (an attribute): a different value conflicts
    change: bool

    def same_claim(self, other_key: str) -> bool:
        return self.key == other_key


def _negated(text: str) -> bool:
    low = text.lower().replace("’", "'")
    if "n't" in low or any(p in low for p in _NEG_PHRASES):
        return True
    return any(w in _NEGATIONS for w in _WORD.findall(low))


def parse_claim(
    text: str,
    subject_span: tuple[int, int] | None = None,
    *,
    attribute: str | None = None,
    value: str | None = None,
    negated: bool | None = None,
    change: bool | None = None,
) -> Claim:
    """The claim of an observation text, with the subject mention (``subject_span``) left out.

    ``Raven's disposition is hostile`` → key ``disposition``, value ``hostile``
    (functional). ``Raven is not trustworthy`` → key ``trustworthy``, negated.
    ``Patient 12345 no longer takes ibuprofen`` → key ``tak ibuprofen``,
    negated, a change.
    """
    rest = text
    if subject_span is not None:
        a, b = subject_span
        if attribute is None:
            m = _ATTRIBUTE.match(text[b:].lower().replace("’", "'"))
            if m:
                attribute, value = m.group(1).strip(), value if value is not None else m.group(2).strip()
        rest = text[:a] + " " + text[b:]
    is_change = change if change is not None else bool(_CHANGE.search(text.lower()))
    if attribute is not None:
        key = (
            " ".join(stem(w) for w in _WORD.findall(attribute.lower()) if w not in _CLAIM_STOP)
            or attribute.lower()
        )
        return Claim(
            key=f"attr:{key}",
            value=(value or "").strip().lower() or None,
            negated=bool(negated),
            functional=True,
            change=is_change,
        )
    neg = negated if negated is not None else _negated(rest)
    low = rest.lower().replace("’", "'")
    for phrase in _NEG_PHRASES:
        low = low.replace(phrase, " ")
    words = [w.strip("'") for w in _WORD.findall(low)]
    words = [w for w in words if w and not w.endswith("n't") and w not in _CLAIM_STOP and w not in _NEGATIONS]
    words = [w for w in words if not _CHANGE.fullmatch(w)]
    key = " ".join(stem(w) for w in words) or low.strip()
    return Claim(
        key=key,
        value=value.strip().lower() if value else None,
        negated=neg,
        functional=False,
        change=is_change,
    )


# ----------------------------------------------------------------- confidence
def _logit(c: float) -> float:
    c = min(max(c, 0.5), 0.99)
    return math.log(c / (1.0 - c))


def combine_confidence(support: Sequence[float], contra: Sequence[float] = ()) -> float:
    """Belief confidence from the credibilities of supporting and contradicting sources (log-odds sum)."""
    x = sum(_logit(c) for c in support) - sum(_logit(c) for c in contra)
    return round(1.0 / (1.0 + math.exp(-x)), 6)


# ---------------------------------------------------------------------- usage
USAGE = "usage"


@dataclass(frozen=True)
class Usage:
    """How often a node was used in a context, and judged helpful or wrong."""

    used: int = 0
    helpful: int = 0
    wrong: int = 0

    @classmethod
    def of(cls, properties: Mapping[str, Any]) -> Usage:
        raw = properties.get(USAGE)
        if not isinstance(raw, dict):
            return cls()
        return cls(
            used=int(raw.get("used", 0) or 0),
            helpful=int(raw.get("helpful", 0) or 0),
            wrong=int(raw.get("wrong", 0) or 0),
        )

    def add(self, outcome: str, count: int = 1) -> Usage:
        if outcome not in ("used", "helpful", "wrong"):
            raise ValueError(f"feedback outcome must be used, helpful or wrong, not {outcome!r}")
        values = {"used": self.used, "helpful": self.helpful, "wrong": self.wrong}
        values[outcome] += count
        return Usage(**values)

    def as_dict(self) -> dict[str, int]:
        return {"used": self.used, "helpful": self.helpful, "wrong": self.wrong}


def importance(properties: Mapping[str, Any], updated: datetime | None, now: datetime) -> float:
    """Importance in 0..1 from usage (helpful vs wrong, how often used) and recency.

    ``0.6 * quality + 0.2 * familiarity + 0.2 * recency`` where quality is the
    Laplace-smoothed share of helpful judgments, familiarity grows with use,
    and recency halves every 30 days since the node last changed. A node never
    used nor judged scores 0.3 plus its recency share (0.5 when just written).
    """
    u = Usage.of(properties)
    quality = (u.helpful + 1.0) / (u.helpful + u.wrong + 2.0)
    familiarity = math.log1p(u.used) / (1.0 + math.log1p(u.used))
    age_days = max(0.0, (aware(now) - aware(updated)).total_seconds() / 86400.0) if updated else 365.0
    recency = 0.5 ** (age_days / 30.0)
    return round(0.6 * quality + 0.2 * familiarity + 0.2 * recency, 6)
