"""Bi-temporal facts: validity (when true in the world) and knowledge (when we learned it).

Every edge has ``valid_from``/``valid_to`` (world time) and ``recorded_at``
(when it was written). Superseding a fact never deletes it: the edge version
we had is marked ``superseded_at`` (the end of its transaction time) and a
copy with the closed validity is recorded. Three kinds of question follow:

* current state — edges valid now, as we know them now;
* as of T — edges valid at T, as we knew them at T (``recorded_at <= T <
  superseded_at``), so a fact closed later still reads as open;
* changed since T — edges recorded or superseded after T.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from cef.graph.filter import POS_INF, SUPERSEDED_AT
from cef.graph.index import GraphIndex
from cef.model import Edge, new_id

__all__ = [
    "FactChange",
    "TemporalConstraint",
    "TemporalHint",
    "changed_edges",
    "parse_temporal_hints",
    "supersession",
]

#: edge property pointing from a closed copy to the edge version it replaced
SUPERSEDES_EDGE = "supersedes_edge"
#: edge property holding the id of the first version of a fact (stable across versions)
VERSION_OF = "version_of"

TemporalMode = Literal["current", "as_of", "history"]


def aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


class TemporalConstraint(BaseModel):
    """When to look: the current state (default), the state as known at ``as_of``, or all history.

    ``since`` (and optional ``until``) select what changed in a window for the
    temporal section of a context.
    """

    model_config = ConfigDict(extra="forbid")

    mode: TemporalMode = "current"
    as_of: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None

    @model_validator(mode="after")
    def _check(self) -> TemporalConstraint:
        for name in ("as_of", "since", "until"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, aware(value))
        if self.as_of is not None and self.mode == "current":
            self.mode = "as_of"
        if self.mode == "as_of" and self.as_of is None:
            raise ValueError("mode 'as_of' needs an as_of time")
        if self.since and self.until and self.until < self.since:
            raise ValueError(f"until {self.until} is before since {self.since}")
        return self

    @classmethod
    def current(cls) -> TemporalConstraint:
        return cls()

    @classmethod
    def at(cls, when: datetime) -> TemporalConstraint:
        return cls(mode="as_of", as_of=when)

    @classmethod
    def changed_since(cls, since: datetime, until: datetime | None = None) -> TemporalConstraint:
        return cls(since=since, until=until)


def supersession(old: Edge, *, at: datetime, valid_to: datetime | None) -> tuple[Edge, Edge]:
    """The two records that supersede ``old`` at transaction time ``at``.

    Returns ``(old version marked superseded_at=at, copy with valid_to closed and recorded_at=at)``.
    ``valid_to`` defaults to ``at``; it may lie before ``at`` (a retroactive correction).
    """
    at = aware(at)
    end = aware(valid_to) if valid_to is not None else at
    if old.valid_from is not None and end < old.valid_from:
        end = old.valid_from
    marked = old.model_copy(update={"properties": {**old.properties, SUPERSEDED_AT: at.isoformat()}})
    props = {k: v for k, v in old.properties.items() if k != SUPERSEDED_AT}
    props[SUPERSEDES_EDGE] = old.id
    props.setdefault(VERSION_OF, old.properties.get(VERSION_OF, old.id))
    closed = old.model_copy(update={"id": new_id(), "valid_to": end, "recorded_at": at, "properties": props})
    return marked, closed


@dataclass
class TemporalHint:
    """What a question says about time."""

    mode: TemporalMode = "current"
    as_of: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None
    phrases: list[str] = field(default_factory=list)

    def constraint(self) -> TemporalConstraint:
        return TemporalConstraint(mode=self.mode, as_of=self.as_of, since=self.since, until=self.until)


_ISO = r"(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?)"
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTH_YEAR = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?\s+(\d{4})"
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365}
_HISTORY = re.compile(
    r"\b(history|historical|over time|progress(?:ed|ion)?|trend|used to|previous(?:ly)?|formerly|ever|all time)\b"
)
_CURRENT = re.compile(r"\b(current(?:ly)?|now|right now|today|at present|presently|active|still)\b")


def _parse_date(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace(" ", "T"))
    return aware(value)


def _month_start(d: datetime) -> datetime:
    return d.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def parse_temporal_hints(text: str, now: datetime) -> TemporalHint:
    """Temporal hints in a question: "as of 2025-03-01", "in March 2025", "since last week",
    "this month", "currently", "over time"... (rule-based, English)."""
    low = text.lower()
    now = aware(now)
    hint = TemporalHint()
    m = re.search(r"\b(?:as of|as at|on|at)\s+" + _ISO, low)
    if m:
        hint.mode, hint.as_of = "as_of", _parse_date(m.group(1))
        hint.phrases.append(m.group(0))
    m = re.search(r"\b(?:as of|in|during)\s+" + _MONTH_YEAR, low)
    if m and hint.as_of is None:
        month, year = _MONTHS[m.group(1)], int(m.group(2))
        last = calendar.monthrange(year, month)[1]
        hint.mode = "as_of"
        hint.as_of = datetime(year, month, last, 23, 59, 59, tzinfo=UTC)
        hint.since = datetime(year, month, 1, tzinfo=UTC)
        hint.phrases.append(m.group(0))
    m = re.search(r"\bsince\s+" + _ISO, low)
    if m:
        hint.since = _parse_date(m.group(1))
        hint.phrases.append(m.group(0))
    m = re.search(
        r"\b(?:in the |over the |during the )?(?:last|past)\s+(\d+)\s+(days?|weeks?|months?|years?)\b", low
    )
    if m:
        hint.since = now - timedelta(days=int(m.group(1)) * _UNITS[m.group(2)])
        hint.phrases.append(m.group(0))
    else:
        m = re.search(
            r"\b(?:since |in the |over the |during the )?(last|past)\s+(day|week|month|year)\b", low
        )
        if m:
            hint.since = now - timedelta(days=_UNITS[m.group(2)])
            hint.phrases.append(m.group(0))
    m = re.search(r"\bthis\s+(week|month|year)\b", low)
    if m:
        unit = m.group(1)
        if unit == "month":
            hint.since = _month_start(now)
        elif unit == "year":
            hint.since = _month_start(now).replace(month=1)
        else:
            hint.since = (now - timedelta(days=now.weekday())).replace(
                hour=0, minute=0, second=0, microsecond=0
            )
        hint.phrases.append(m.group(0))
    if re.search(r"\b(today)\b", low) and hint.since is None:
        hint.since = now.replace(hour=0, minute=0, second=0, microsecond=0)
        hint.phrases.append("today")
    if re.search(r"\byesterday\b", low) and hint.since is None:
        hint.since = (now - timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        hint.phrases.append("yesterday")
    if re.search(r"\b(recent(?:ly)?|lately|what changed|changes?|new)\b", low) and hint.since is None:
        hint.since = now - timedelta(days=30)
        hint.phrases.append("recent")
    if hint.mode != "as_of":
        h = _HISTORY.search(low)
        if h:
            hint.mode = "history"
            hint.phrases.append(h.group(0))
        c = _CURRENT.search(low)
        if c:
            hint.mode = "current"
            hint.phrases.append(c.group(0))
    return hint


@dataclass(frozen=True)
class FactChange:
    """One change to the facts in a time window."""

    edge_id: str
    kind: Literal["added", "ended", "superseded"]
    at: datetime
    source: str
    relation: str
    target: str
    valid_from: datetime | None
    valid_to: datetime | None


def _dt(x: float) -> datetime | None:
    return datetime.fromtimestamp(x, UTC) if np.isfinite(x) else None


def changed_edges(
    graph: GraphIndex,
    since: datetime,
    until: datetime | None = None,
    *,
    scope: str | None = None,
    node_positions: np.ndarray | None = None,
    limit: int = 1000,
) -> list[FactChange]:
    """Edges recorded, or superseded, in ``(since, until]`` — newest first.

    A supersession shows once, as the closed copy (``ended``: its validity was
    closed) — the superseded version it replaces is not listed again.
    ``node_positions`` restricts the changes to edges touching those nodes.
    """
    lo = aware(since).timestamp()
    hi = aware(until).timestamp() if until is not None else POS_INF
    n = len(graph.edge_ids)
    if n == 0:
        return []
    rec = graph.e_rec.view[:n]
    if node_positions is not None:
        # the edges around these nodes (scope and current knowledge filtered by the graph)
        edges, _, _, _ = graph.step(
            np.asarray(node_positions, dtype=np.int64), graph.edge_filter(scope=scope)
        )
        idx = np.unique(edges).astype(np.int64)
        idx = idx[(rec[idx] > lo) & (rec[idx] <= hi)]
    else:
        # the graph's one edge filter: the scope, and current knowledge only (the superseded
        # versions are history, their closed copies say what changed)
        idx = graph.allowed_edges(graph.edge_filter(scope=scope))
        idx = idx[(rec[idx] > lo) & (rec[idx] <= hi)]
    idx = idx[np.argsort(-rec[idx], kind="stable")][:limit]
    out: list[FactChange] = []
    for p in idx.tolist():
        valid_to = _dt(float(graph.e_to[p]))
        kind: Literal["added", "ended", "superseded"] = "ended" if valid_to is not None else "added"
        at = _dt(float(rec[p]))
        assert at is not None
        out.append(
            FactChange(
                edge_id=graph.edge_ids[p],
                kind=kind,
                at=at,
                source=graph.node_ids[int(graph.e_src[p])],
                relation=graph.relations.names[int(graph.e_rel[p])],
                target=graph.node_ids[int(graph.e_dst[p])],
                valid_from=_dt(float(graph.e_from[p])) if np.isfinite(graph.e_from[p]) else None,
                valid_to=valid_to,
            )
        )
    return out
