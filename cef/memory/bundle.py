"""The universal context output: core facts, supporting facts, beliefs, temporal context, conflicts.

A :class:`ContextBundle` is the semantic memory's context frame: it keeps
every candidate the retrieval found, in priority order, and packs them with
the one packer (:func:`cef.context.budget.pack`) into its token budget for
each format it is rendered in: ``to_text("markdown" | "yaml" | "json" |
"plain")`` never returns more than ``max_tokens`` tokens as counted by the
bundle's :class:`~cef.context.tokens.TokenCounter`. The item kinds (facts,
beliefs, conflicts, changes) are those of :mod:`cef.context.facts`; what is the
memory's own here is the sections, their shares of the budget and the time
frame of the context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from cef.context.budget import BudgetTooSmallError, Candidate, pack
from cef.context.facts import BeliefInfo, Conflict, Fact, ObservationRef, Relation, TemporalChange
from cef.context.formats import ContextFormat, ContextFrame
from cef.context.items import ContextChunk, ContextItem
from cef.context.markup import date_text, md_inline, plain_inline
from cef.context.tokens import TokenCounter

__all__ = [
    "BeliefInfo",
    "Conflict",
    "ContextBundle",
    "Fact",
    "ObservationRef",
    "Relation",
    "Section",
    "TemporalChange",
    "TemporalContext",
]

Section = Literal["core_facts", "passages", "beliefs", "conflicts", "temporal", "supporting"]
#: sections in the order they are rendered
SECTIONS: tuple[Section, ...] = ("core_facts", "passages", "beliefs", "conflicts", "temporal", "supporting")
TITLES: dict[str, str] = {
    "core_facts": "Core facts",
    "passages": "Said in conversations",
    "beliefs": "Beliefs",
    "conflicts": "Conflicts",
    "temporal": "What changed",
    "supporting": "Supporting facts",
}
#: share of the budget each section may take before the others had their turn
QUOTAS: dict[str, float] = {
    "core_facts": 0.6,
    "passages": 0.5,
    "conflicts": 0.1,
    "beliefs": 0.15,
    "temporal": 0.1,
    "supporting": 0.2,
}
#: the order sections are offered room in
PRIORITY: tuple[Section, ...] = ("core_facts", "passages", "conflicts", "beliefs", "supporting", "temporal")


class TemporalContext(BaseModel):
    """The time frame of the context and what changed in the window."""

    model_config = ConfigDict(extra="forbid")

    mode: str = "current"
    reference_time: datetime
    as_of: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None
    changes: list[TemporalChange] = Field(default_factory=list)

    def note(self) -> str:
        parts = []
        if self.mode == "as_of" and self.as_of is not None:
            parts.append(f"as known on {self.as_of.isoformat(timespec='minutes')}")
        elif self.mode == "history":
            parts.append("history included")
        else:
            parts.append(f"current as of {self.reference_time.isoformat(timespec='minutes')}")
        if self.since is not None:
            parts.append(f"changes since {date_text(self.since)}")
        return "; ".join(parts)


class ContextBundle(ContextFrame):
    """Structured context for one retrieval — the same shape for every domain.

    The list fields hold what fits ``max_tokens`` in the bundle's ``format``;
    :meth:`to_text` packs again for another format.
    """

    model_config = ConfigDict(extra="forbid")

    SECTIONS: ClassVar[tuple[str, ...]] = SECTIONS
    SECTION_TITLES: ClassVar[Mapping[str, str]] = TITLES
    YAML_FLOW_LISTS: ClassVar[bool] = False

    query: list[str]
    core_facts: list[Fact] = Field(default_factory=list)
    passages: list[ContextChunk] = Field(
        default_factory=list,
        description="conversation turns the engine's retrieval (kb.retrieve) ranks first for the questions",
    )
    supporting: list[Fact] = Field(default_factory=list)
    beliefs: list[BeliefInfo] = Field(default_factory=list)
    temporal: TemporalContext | None = None
    conflicts: list[Conflict] = Field(default_factory=list)
    estimated_tokens: int = 0
    max_tokens: int
    format: ContextFormat = ContextFormat.MARKDOWN
    token_counter: str = ""
    truncated: bool = False
    scope: str | None = None
    understanding: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    _candidates: list[Candidate] = PrivateAttr(default_factory=list)
    _counter: TokenCounter | None = PrivateAttr(default=None)
    _packed: dict[str, tuple[str, int, ContextBundle | None]] = PrivateAttr(default_factory=dict)

    # ------------------------------------------------------------ building
    @classmethod
    def assemble(
        cls,
        *,
        query: list[str],
        candidates: Sequence[tuple[Section, ContextItem]],
        temporal: TemporalContext | None,
        max_tokens: int,
        counter: TokenCounter,
        fmt: ContextFormat | str = ContextFormat.MARKDOWN,
        **fields: Any,
    ) -> ContextBundle:
        """Pack ``candidates`` (each section's items in priority order) into ``max_tokens``."""
        bundle = cls(
            query=query,
            temporal=temporal.model_copy(update={"changes": []}) if temporal is not None else None,
            max_tokens=max_tokens,
            format=ContextFormat(fmt),
            token_counter=counter.name,
            **fields,
        )
        rank = {s: n for n, s in enumerate(PRIORITY)}
        numbered = sorted(enumerate(candidates), key=lambda x: rank[x[1][0]])  # stable within a section
        bundle._candidates = [Candidate(section=s, item=item, key=f"{s}:{n}") for n, (s, item) in numbered]
        bundle._counter = counter
        _, tokens, packed = bundle._pack(bundle.format)
        if packed is not None:
            bundle.core_facts = packed.core_facts
            bundle.passages = packed.passages
            bundle.supporting = packed.supporting
            bundle.beliefs = packed.beliefs
            bundle.conflicts = packed.conflicts
            if bundle.temporal is not None and packed.temporal is not None:
                bundle.temporal.changes = packed.temporal.changes
        bundle.estimated_tokens = tokens
        bundle.truncated = packed.truncated if packed is not None else bool(bundle._candidates)
        return bundle

    def _pack(self, fmt: ContextFormat) -> tuple[str, int, ContextBundle | None]:
        """The text in ``fmt``, its tokens, and the bundle as packed (None when not even the frame fits)."""
        hit = self._packed.get(fmt.value)
        if hit is not None:
            return hit
        counter = self._counter
        if counter is None:  # a bundle rebuilt from data: render what it holds
            raise RuntimeError(
                "this bundle has no token counter; use the bundle returned by retrieve_context"
            )
        caps = {s: int(share * self.max_tokens) for s, share in QUOTAS.items()}
        try:
            packed = pack(
                self,
                self._candidates,
                counter=counter,
                fmt=fmt,
                budget=self.max_tokens,
                caps=caps,
                shorten_first_under_cap=True,
            )
        except BudgetTooSmallError:
            out: tuple[str, int, ContextBundle | None] = ("", 0, None)
        else:
            doc = packed.document.model_copy(update={"truncated": packed.truncated})
            out = (packed.text, packed.total_tokens, doc)
        self._packed[fmt.value] = out
        return out

    # ------------------------------------------------------------ the frame
    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"query": list(self.query), "max_tokens": self.max_tokens}
        if self.scope is not None:
            meta["scope"] = self.scope
        if self.temporal is not None:
            meta["temporal_note"] = self.temporal.note()
        return meta

    def heading(self) -> str:
        return "Context"

    def head_lines(self, markdown: bool) -> list[str]:
        esc = md_inline if markdown else plain_inline
        return ["Query: " + " · ".join(esc(q) for q in self.query)]

    def section_title(self, section: str) -> str:
        title = TITLES[section]
        if section == "temporal" and self.temporal is not None:
            title += f" ({self.temporal.note()})"
        return title

    def items(self, section: str) -> list[Any]:
        if section == "temporal":
            return list(self.temporal.changes) if self.temporal is not None else []
        items: list[Any] = getattr(self, section)
        return items

    def filled(self, items: Mapping[str, Sequence[Any]]) -> Self:
        update: dict[str, Any] = {s: list(items.get(s, ())) for s in SECTIONS if s != "temporal"}
        if self.temporal is not None:
            update["temporal"] = self.temporal.model_copy(update={"changes": list(items.get("temporal", ()))})
        return self.model_copy(update=update)

    # ------------------------------------------------------------ output
    def to_text(self, format: ContextFormat | str | None = None) -> str:
        """The context as text in ``format`` (markdown, yaml, json or plain), within ``max_tokens``."""
        return self._pack(ContextFormat(format) if format is not None else self.format)[0]

    def tokens(self, format: ContextFormat | str | None = None) -> int:
        """Tokens of :meth:`to_text` in ``format``, as counted by the bundle's counter."""
        return self._pack(ContextFormat(format) if format is not None else self.format)[1]

    def to_structured(self) -> dict[str, Any]:
        """The bundle as JSON-compatible data (what fits the budget in the bundle's format)."""
        data: dict[str, Any] = self.model_dump(mode="json")
        return data

    def facts(self) -> list[Fact]:
        """Core then supporting facts."""
        return [*self.core_facts, *self.supporting]

    def node_ids(self) -> set[str]:
        """Every node id the bundle mentions (facts, relation ends, belief subjects)."""
        out: set[str] = set()
        for f in self.facts():
            out.add(f.node_id)
            for r in f.relations:
                out.update((r.source_id, r.target_id))
        for b in self.beliefs:
            out.add(b.belief_id)
            if b.subject_id:
                out.add(b.subject_id)
        for c in self.conflicts:
            out.add(c.belief_id)
        return out
