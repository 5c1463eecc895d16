"""The one packer: context items into a token budget, counted on the rendered text.

:func:`pack` takes candidate items in priority order and fills a
:class:`~cef.context.formats.ContextFrame` — the providers'
:class:`~cef.context.formats.ContextDocument` or the memory's
:class:`~cef.memory.bundle.ContextBundle` — so that the rendered text, in the
chosen format and counted by the chosen :class:`~cef.context.tokens.TokenCounter`,
never exceeds the budget:

1. Each candidate costs the tokens of its rendered fragment plus a small
   allowance for the join (for the shipped counters, tokens of a concatenation
   never exceed the parts' tokens plus two). Candidates are taken in order while
   they fit their group's cap and the budget; a candidate whose requirements
   (e.g. the entities a relationship connects) are not selected waits. Once
   :data:`MAX_MISSES` candidates of a group did not fit (counted, or surely too
   big), a pass stops looking at that group (its items are ranked among
   themselves).
2. An item that does not fit whole may go in shorter: a text item (a chunk, a
   claim) cut at a sentence boundary — or, when not even one sentence fits, at a
   word boundary — and marked with :data:`TRUNCATION_MARKER`, which counts
   against the budget; an item kind with shorter forms (a fact without its
   excerpt, with fewer relations) in the longest form that fits. Under a cap
   nothing is shortened (a later pass may offer room for the whole item) unless
   ``shorten_first_under_cap`` lets the first item of each capped group go in
   shortened.
3. Room the join allowances left (joins mostly cost nothing) is offered to the
   skipped items once. Then the document is rendered and counted exactly; if
   the count exceeds the budget, the last items are removed until it fits, so
   the budget holds for any counter.

Each section lists its items in the order of the candidates (priority order),
whichever pass placed them. A header that reports the total tokens of the
rendered text states the count of that very text (a fixed point).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from cef.context.cuts import TRUNCATION_MARKER, TextCuts, first_fit
from cef.context.formats import ContextFormat, ContextFrame, renderer_for
from cef.context.items import ContextItem
from cef.context.tokens import TokenCounter
from cef.errors import ValidationError

__all__ = ["TRUNCATION_MARKER", "BudgetTooSmallError", "Candidate", "Packed", "pack"]

#: tokens allowed for each join of two fragments
JOIN_SLACK = 2
#: do not bother cutting a text to fit fewer tokens than this
MIN_CUT_TOKENS = 12
#: stop trying to cut a group's texts after this many failures in one pass
MAX_FAILED_CUTS = 3
#: an item's cost moves by at most this many tokens with its position (its number in the section)
INDEX_SLACK = 3
#: a pass stops looking at a group after this many of its candidates did not fit
MAX_MISSES = 40
#: a text longer than this many characters per token of room is not even counted (no tokenizer
#: in use packs more than ~5 characters of prose into a token on average)
MAX_CHARS_PER_TOKEN = 16

F = TypeVar("F", bound=ContextFrame)


class BudgetTooSmallError(ValidationError):
    """The token budget cannot hold even the empty frame of the chosen format."""

    def __init__(self, budget: int, needed: int, fmt: str, counter: str) -> None:
        self.budget = budget
        self.needed = needed
        super().__init__(
            f"token budget {budget} is too small: the empty {fmt} context frame alone takes {needed} "
            f"tokens ({counter}); raise the budget or use the plain format"
        )


#: how many characters of each query a shortened header echoes
SHORT_QUERY_CHARS = 40


def _headers(base: F) -> list[F]:
    """The frame as given, then with its echo of the queries shortened, then without it."""
    queries = getattr(base, "queries", None)
    if not queries:
        return [base]
    short = [q if len(q) <= SHORT_QUERY_CHARS else q[: SHORT_QUERY_CHARS - 1] + "…" for q in queries]
    return [base, base.model_copy(update={"queries": short}), base.model_copy(update={"queries": []})]


# -------------------------------------------------------------------- packing
@dataclass(frozen=True)
class Candidate:
    """One item that may go into the context.

    ``key`` identifies it (``"entity:<id>"``...); ``requires_all`` /
    ``requires_any`` name keys that must already be selected (a relationship
    needs its entities). ``text_field`` names a text field that may be cut to
    fit (``content`` for chunks, ``statement`` for claims); without it, the
    item kind's own :meth:`~cef.context.items.ContextItem.shortenings` are its
    shorter forms. ``group`` is what caps apply to (defaults to the section).
    """

    section: str
    item: Any
    key: str
    requires_all: frozenset[str] = frozenset()
    requires_any: frozenset[str] = frozenset()
    text_field: str | None = None
    group: str | None = None

    @property
    def cap_group(self) -> str:
        return self.group or self.section

    @property
    def shortens(self) -> bool:
        """Whether the item has shorter forms (a text to cut, or its kind's own)."""
        if self.text_field is not None:
            return True
        own = getattr(type(self.item), "shortenings", None)
        return own is not None and own is not ContextItem.shortenings

    def shorter_forms(self) -> Sequence[Any]:
        """The item's shorter forms, longest first."""
        if self.text_field is not None:
            return TextCuts(self.item, self.text_field)
        forms: Sequence[Any] = self.item.shortenings()
        return forms


@dataclass
class Packed(Generic[F]):
    """The outcome of :func:`pack`."""

    document: F
    text: str
    total_tokens: int
    truncated: bool
    #: the selected candidates in the order they were selected (shortened ones as placed)
    selected: list[Candidate] = field(default_factory=list)
    dropped: list[Candidate] = field(default_factory=list)
    #: keys of the selected candidates placed in a shorter form
    cut: list[str] = field(default_factory=list)
    tokens_by_key: dict[str, int] = field(default_factory=dict)
    #: tokens of the text beyond its empty frame (the header and section syntax of no items)
    content_tokens: int = 0


class _State:
    def __init__(
        self, base: ContextFrame, fmt: ContextFormat, counter: TokenCounter, order: Mapping[str, int]
    ) -> None:
        self.base = base
        self.fmt = fmt
        self.renderer = renderer_for(fmt)
        self.counter = counter
        self.order = order
        self.selected: list[Candidate] = []
        self.keys: set[str] = set()
        self.cost: dict[str, int] = {}
        self.group_used: dict[str, int] = {}
        self.in_section: dict[str, int] = {}
        self.cut: set[str] = set()
        self.open_cost: dict[str, int] = {}
        self.rendered_truncated = False
        # the fragment each selected item was costed with: key -> (index, text)
        self.fragments: dict[str, tuple[int, str]] = {}
        self.last_fragment: tuple[int, str] = (0, "")
        self.frame_tokens: int | None = None
        self.cost_cache: dict[tuple[str, int] | None, tuple[int, str]] = {}
        self.seen_cost: dict[str, int] = {}
        # the cost of each candidate's shortest form (its section opener left out), once costed
        self.shortest_cost: dict[str, int] = {}
        self.last_item_cost = 0
        self.counted: dict[str, int] = {}
        self.removed = 0  # items the exact count removed
        self.empty_costs: dict[str, int] = {}
        self.forms: dict[str, Sequence[Any]] = {}  # each candidate's shorter forms, once built

    def fragment_cost(self, c: Candidate, item: Any) -> int:
        """Tokens ``item`` adds as the next item of its section (an upper bound for the join)."""
        index = self.in_section.get(c.section, 0) + 1
        # an item that does not show its number reads the same at any position
        position = index if getattr(item, "NUMBERED", False) else 0
        cache_key = (c.key, position) if item is c.item else None
        hit = self.cost_cache.get(cache_key) if cache_key else None
        if hit is None:
            text = self.renderer.item(self.base, c.section, item, index)
            hit = (self.counter.count(text) + JOIN_SLACK, text)
            if cache_key:
                self.cost_cache[cache_key] = hit
                self.seen_cost[c.key] = hit[0]
        self.last_fragment = (index, hit[1])
        self.last_item_cost = hit[0]
        return hit[0] + (self.section_open_cost(c.section) if index == 1 else 0)

    def count(self, text: str) -> int:
        """Tokens of a whole rendering, remembered (a frame that does not state its status renders the
        same text for every status)."""
        known = self.counted.get(text)
        if known is None:
            known = self.counted[text] = self.counter.count(text)
        return known

    def surely_too_big(self, c: Candidate, room: int) -> bool:
        """True when ``c`` was costed before (at another position) well above ``room``."""
        seen = self.seen_cost.get(c.key)
        return seen is not None and seen - INDEX_SLACK > room

    def section_open_cost(self, section: str) -> int:
        if section not in self.open_cost:
            r, b = self.renderer, self.base
            self.open_cost[section] = (
                self.counter.count(r.open(b, section) + r.close(b, section)) + JOIN_SLACK
            )
        return self.open_cost[section]

    def empty_cost(self, section: str) -> int:
        """Tokens of the section's empty form (what an opened section replaces in the frame)."""
        if section not in self.empty_costs:
            empty = self.renderer.empty(section)
            self.empty_costs[section] = self.counter.count(empty) if empty else 0
        return self.empty_costs[section]

    def requirements_met(self, c: Candidate) -> bool:
        if c.requires_all and not c.requires_all <= self.keys:
            return False
        return not (c.requires_any and not (c.requires_any & self.keys))

    def add(self, c: Candidate, cost: int) -> None:
        """Select ``c``; its fragment is the one :meth:`fragment_cost` rendered last."""
        self.selected.append(c)
        self.keys.add(c.key)
        self.cost[c.key] = cost
        self.fragments[c.key] = self.last_fragment
        self.group_used[c.cap_group] = self.group_used.get(c.cap_group, 0) + cost
        self.in_section[c.section] = self.in_section.get(c.section, 0) + 1

    def _drop(self, c: Candidate) -> None:
        self.selected.remove(c)
        self.keys.discard(c.key)
        self.group_used[c.cap_group] -= self.cost.pop(c.key)
        self.fragments.pop(c.key, None)
        self.in_section[c.section] -= 1
        self.cut.discard(c.key)

    def remove_last(self) -> Candidate:
        c = self.selected[-1]
        self._drop(c)
        self.removed += 1
        # anything that depended on it goes too
        while True:
            orphan = next((s for s in self.selected if not self.requirements_met(s)), None)
            if orphan is None:
                return c
            self._drop(orphan)

    def in_order(self) -> list[Candidate]:
        """The selected candidates in priority (candidate) order."""
        return sorted(self.selected, key=lambda c: self.order[c.key])

    def document(self, truncated: bool, total: int | None) -> ContextFrame:
        items: dict[str, list[Any]] = {}
        for c in self.in_order():
            items.setdefault(c.section, []).append(c.item)
        return self.base.with_status(truncated, total).filled(items)

    def text(self, truncated: bool, total: int | None) -> str:
        """The rendered document, reusing the fragments the items were costed with."""
        frags: dict[str, list[str]] = {}
        head = self.base.with_status(truncated, total)
        for c in self.in_order():
            lst = frags.setdefault(c.section, [])
            index = len(lst) + 1
            cached = self.fragments.get(c.key)
            lst.append(
                cached[1]
                if cached and cached[0] == index
                else self.renderer.item(head, c.section, c.item, index)
            )
        return self.renderer.compose(head, frags)


def pack(
    base: F,
    candidates: Sequence[Candidate],
    *,
    counter: TokenCounter,
    fmt: ContextFormat | str,
    budget: int,
    caps: Mapping[str, int] | None = None,
    allow_cut: bool = True,
    shorten_first_under_cap: bool = False,
) -> Packed[F]:
    """Fill ``base`` with ``candidates`` (in priority order) so the rendered text fits ``budget`` tokens.

    ``caps`` limit the tokens of a group (a section, or a candidate's ``group``)
    in a first pass; a second pass lets skipped candidates use whatever the
    budget still has. ``allow_cut`` False places items whole or not at all;
    ``shorten_first_under_cap`` lets the first item of a capped group go in
    shortened in the first pass. ``base`` gives the header (title, queries...);
    its items are ignored. Raises :class:`BudgetTooSmallError` when the empty
    frame alone does not fit.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValidationError(f"token budget must be an integer >= 1, got {budget!r}")
    fmt = ContextFormat(fmt)
    order = {c.key: n for n, c in enumerate(candidates)}
    if len(order) != len(candidates):
        keys = [c.key for c in candidates]
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValidationError(f"candidate key {dup!r} appears twice")
    unknown = next((c for c in candidates if c.section not in base.SECTIONS), None)
    if unknown is not None:
        raise ValidationError(
            f"candidate {unknown.key!r} is in section {unknown.section!r}, which a "
            f"{type(base).__name__} does not have; sections: {', '.join(base.SECTIONS)}"
        )
    # the frame, with the header as it will read at the end (truncated, full-width count); a header that
    # echoes many long queries is shortened before a budget is refused (the caller knows its queries)
    for header in _headers(base):
        st = _State(header.with_budget(budget), fmt, counter, order)
        frame = st.text(truncated=True, total=budget)
        frame_cost = st.count(frame)  # each item's cost holds the allowance for its join
        if frame_cost <= budget:
            break
    else:
        raise BudgetTooSmallError(budget, frame_cost, fmt.value, counter.name)
    st.frame_tokens = frame_cost

    used = frame_cost
    pending = list(candidates)
    passes: list[Mapping[str, int] | None] = [caps, None] if caps else [None]
    for pass_caps in passes:
        used, pending = _fill(st, pending, used, budget, pass_caps, allow_cut, shorten_first_under_cap)

    # one refill: the join allowances over-estimate, so room may remain; it is judged from the sum
    # of the items' own tokens (joins mostly cost nothing) and the exact count below settles it
    if pending:
        estimate = _guess_total(st) + JOIN_SLACK
        if estimate < budget - MIN_CUT_TOKENS // 2:
            _, pending = _fill(st, pending, estimate, budget, None, allow_cut, False)
    text, total, stated = _finish(st, budget, truncated=bool(pending) or bool(st.cut))
    if st.removed and total < budget - MIN_CUT_TOKENS // 2:
        # the estimate was too hopeful and the count removed items: refill once from the count
        pending = [c for c in candidates if c.key not in st.keys]
        before = len(st.selected)
        _, pending = _fill(st, pending, total, budget, None, allow_cut, False)
        if len(st.selected) != before:
            text, total, stated = _finish(st, budget, truncated=bool(pending) or bool(st.cut))
    dropped = [c for c in candidates if c.key not in st.keys]
    truncated = bool(dropped) or bool(st.cut)
    if truncated != st.rendered_truncated:  # a removal in _finish set the flag after the last render
        text, total, stated = _finish(st, budget, truncated=truncated)
    doc: F = st.document(truncated, stated)  # type: ignore[assignment]
    empty = st.renderer.compose(st.base.with_status(truncated, stated), {})
    content = max(0, total - st.count(empty))
    return Packed(
        document=doc,
        text=text,
        total_tokens=total,
        truncated=truncated,
        selected=list(st.selected),
        dropped=dropped,
        cut=[c.key for c in st.selected if c.key in st.cut],
        tokens_by_key=dict(st.cost),
        content_tokens=content,
    )


def _fill(
    st: _State,
    pending: list[Candidate],
    used: int,
    budget: int,
    caps: Mapping[str, int] | None,
    allow_cut: bool,
    shorten_first_under_cap: bool,
) -> tuple[int, list[Candidate]]:
    """One greedy pass; returns the tokens used and the candidates still waiting."""
    waiting: list[Candidate] = []
    # per group (its items are ranked among themselves): candidates counted that did not fit,
    # and shortenings that failed
    misses: dict[str, int] = {}
    failed_cuts: dict[str, int] = {}
    for c in pending:
        group = c.cap_group
        if misses.get(group, 0) >= MAX_MISSES:  # far down the group's ranking, nothing fits any more
            waiting.append(c)
            continue
        cap = caps.get(group) if caps is not None else None
        room = budget - used if cap is None else min(budget - used, cap - st.group_used.get(group, 0))
        if room <= JOIN_SLACK or not st.requirements_met(c):
            waiting.append(c)
            continue
        # under a cap only the first of a group, if at all: a later pass may offer room for the whole
        can_cut = (
            allow_cut
            and c.shortens
            and (cap is None or (shorten_first_under_cap and not st.group_used.get(group)))
            and (
                c.text_field is None  # an item kind's own shortest form costs one count to rule out
                or (room >= MIN_CUT_TOKENS and failed_cuts.get(group, 0) < MAX_FAILED_CUTS)
            )
        )
        if not can_cut and _hopeless(st, c, room):
            misses[group] = misses.get(group, 0) + 1
            waiting.append(c)
            continue
        cost = st.fragment_cost(c, c.item)
        if cost <= room:
            st.add(c, cost)
            used += cost
            continue
        misses[group] = misses.get(group, 0) + 1
        if can_cut:
            shorter = _shorten(st, c, room)
            if shorter is None and c.text_field is not None:
                failed_cuts[group] = failed_cuts.get(group, 0) + 1
            if shorter is not None:
                item, cost = shorter
                cut_c = Candidate(
                    section=c.section,
                    item=item,
                    key=c.key,
                    requires_all=c.requires_all,
                    requires_any=c.requires_any,
                    text_field=None,
                    group=c.group,
                )
                st.add(cut_c, cost)
                st.cut.add(c.key)
                used += cost
                continue
        waiting.append(c)
    return used, waiting


def _hopeless(st: _State, c: Candidate, room: int) -> bool:
    """Whether ``c`` surely cannot fit ``room`` whole, judged without rendering or counting it.

    True when it was counted before (at another position) well above the room,
    or when its text is longer than :data:`MAX_CHARS_PER_TOKEN` characters per
    token of room. A heuristic that only ever skips work: the budget holds either way.
    """
    if st.surely_too_big(c, room):
        return True
    if c.text_field is not None:
        text = getattr(c.item, c.text_field)
        return isinstance(text, str) and len(text) > MAX_CHARS_PER_TOKEN * room
    return False


def _shorten(st: _State, c: Candidate, room: int) -> tuple[Any, int] | None:
    """The longest shorter form of ``c`` that fits ``room``, with its cost; None if none does."""
    shortest = st.shortest_cost.get(c.key)
    if shortest is not None and shortest - INDEX_SLACK > room:  # not even its shortest form fits
        return None
    forms = st.forms.get(c.key)
    if forms is None:
        forms = st.forms[c.key] = c.shorter_forms()
    tried: dict[int, tuple[int, tuple[int, str]]] = {}  # form -> (cost, fragment)

    def fits(i: int) -> bool:
        cost = st.fragment_cost(c, forms[i])
        tried[i] = (cost, st.last_fragment)
        if i == len(forms) - 1:
            st.shortest_cost[c.key] = st.last_item_cost
        return cost <= room

    best = first_fit(len(forms), fits)
    if best is None:
        return None
    cost, st.last_fragment = tried[best]  # the fragment it goes in with
    return forms[best], cost


def _finish(st: _State, budget: int, *, truncated: bool) -> tuple[str, int, int | None]:
    """Render with the exact total in the header; drop the last items until it fits.

    Returns the text, its token count and the total the header states.
    """
    while True:
        text, total, stated = _render_counted(st, truncated)
        if total <= budget or not st.selected:
            st.rendered_truncated = truncated
            return text, total, stated
        st.remove_last()
        truncated = True


def _render_counted(st: _State, truncated: bool) -> tuple[str, int, int | None]:
    """Render, then find the total that equals the count of the text that states it."""
    guess = _guess_total(st)
    seen: set[int] = set()
    text = st.text(truncated, guess)
    for _ in range(4):
        total = st.count(text)
        if total == guess:
            return text, total, total
        seen.add(guess)
        if total in seen:
            break
        guess = total
        again = st.text(truncated, guess)
        if again == text:  # the header does not state the total: the count is the count
            return text, total, total
        text = again
    # no fixed point (a rare tokenizer edge case): state no number rather than a wrong one
    text = st.text(truncated, None)
    return text, st.count(text), None


def _guess_total(st: _State) -> int:
    """The tokens of the text, estimated from its parts: the frame, each item without its join
    allowance, each open section without its allowance and without the empty form it replaces."""
    if st.frame_tokens is None:
        st.frame_tokens = st.count(st.renderer.compose(st.base, {}))
    opened = sum(st.empty_cost(s) + JOIN_SLACK for s, n in st.in_section.items() if n)
    return st.frame_tokens + sum(st.cost.values()) - JOIN_SLACK * len(st.cost) - opened
