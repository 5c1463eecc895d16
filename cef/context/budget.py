"""Packing context items into a token budget, counted on the rendered text.

:func:`pack` takes candidate items in priority order and fills a
:class:`~cef.context.formats.ContextDocument` so that the rendered text, in the
chosen format and counted by the chosen :class:`~cef.context.tokens.TokenCounter`,
never exceeds the budget:

1. Each candidate costs the tokens of its rendered fragment plus a small
   allowance for the join (for the shipped counters, tokens of a concatenation
   never exceed the parts' tokens plus two). Candidates are taken in order while
   they fit their group's cap and the budget; a candidate whose requirements
   (e.g. the entities a relationship connects) are not selected waits. Once
   :data:`MAX_MISSES` candidates were counted and did not fit, a pass stops.
2. A text item (a chunk, a claim) that does not fit whole is cut at a sentence
   boundary — or, when not even one sentence fits, at a word boundary — and
   marked with :data:`TRUNCATION_MARKER`, which counts against the budget.
3. The document is rendered and counted exactly. If a counter breaks the join
   allowance, the last items are removed until the count fits, so the budget
   holds for any counter; remaining room is then offered to skipped items once.

The header of every format reports the total tokens of the rendered text itself
(a fixed point: the count of the text that contains the count).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cef.context.formats import (
    SECTIONS,
    ContextDocument,
    ContextFormat,
    Section,
    renderer_for,
)
from cef.context.tokens import TokenCounter
from cef.errors import ValidationError

__all__ = [
    "TRUNCATION_MARKER",
    "BudgetTooSmallError",
    "Candidate",
    "Packed",
    "cut_text",
    "pack",
    "split_sentences",
]

#: appended to a text cut to fit the budget (counted in the budget)
TRUNCATION_MARKER = " …[truncated]"
#: tokens allowed for each join of two fragments
JOIN_SLACK = 2
#: do not bother cutting a text to fit fewer tokens than this
MIN_CUT_TOKENS = 12
#: stop trying to cut texts after this many failures in one pass (each costs a few counts)
MAX_FAILED_CUTS = 3
#: an item's cost moves by at most this many tokens with its position (its number in the section)
INDEX_SLACK = 3
#: a pass stops after this many candidates were counted and did not fit
MAX_MISSES = 40
#: a text longer than this many characters per token of room is not even counted (no tokenizer
#: in use packs more than ~5 characters of prose into a token on average)
MAX_CHARS_PER_TOKEN = 16


class BudgetTooSmallError(ValidationError):
    """The token budget cannot hold even the empty frame of the chosen format."""

    def __init__(self, budget: int, needed: int, fmt: str, counter: str) -> None:
        self.budget = budget
        self.needed = needed
        super().__init__(
            f"token budget {budget} is too small: the empty {fmt} context frame alone takes {needed} "
            f"tokens ({counter}); raise the budget or use the plain format"
        )


# ------------------------------------------------------------------ sentences
_ABBREVIATIONS = frozenset(
    [
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "cf",
        "fig",
        "no",
        "approx",
        "dept",
        "inc",
        "ltd",
        "co",
        "al",
    ]
)
_BOUNDARY = re.compile(r"([.!?…]+[\"'”’)\]]*)(\s+)|(\n\s*)")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences; ``"".join(result) == text``.

    A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with closing quotes or
    brackets) followed by whitespace, unless the word before the dot is a
    common abbreviation (``Dr.``, ``e.g.``) or a single letter; a line break
    also ends one. Each piece keeps the whitespace that follows it.
    """
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end()
        if m.group(3) is None:
            punct_start = m.start(1)
            word = re.search(r"([\w.]+)$", text[start:punct_start] + m.group(1).rstrip("\"'”’)]"))
            w = (word.group(1) if word else "").lower().rstrip(".")
            if m.group(1).startswith(".") and (w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha())):
                continue
            nxt = text[end : end + 1]
            if nxt and nxt.islower():
                continue
        if end > start and text[start:end].strip():
            pieces.append(text[start:end])
            start = end
    if start < len(text):
        if pieces and not text[start:].strip():
            pieces[-1] += text[start:]
        else:
            pieces.append(text[start:])
    return pieces


def cut_text(text: str, fits: Callable[[str], bool], *, words_fallback: bool = True) -> str | None:
    """The longest marked prefix of ``text`` for which ``fits`` holds, or None.

    Tries whole sentences first; when not even the first sentence fits, whole
    words. The result ends with :data:`TRUNCATION_MARKER`.
    """
    sentences = split_sentences(text)

    def candidate(prefix: str) -> str:
        return prefix.rstrip() + TRUNCATION_MARKER

    best = _largest(len(sentences) - 1, lambda k: fits(candidate("".join(sentences[:k]))))
    if best > 0:
        return candidate("".join(sentences[:best]))
    if not words_fallback:
        return None
    first = sentences[0] if sentences else text
    words = list(re.finditer(r"\S+", first))
    if len(words) < 2:
        return None
    best = _largest(len(words) - 1, lambda k: fits(candidate(first[: words[k - 1].end()])))
    if best > 0:
        return candidate(first[: words[best - 1].end()])
    return None


def _largest(n: int, ok: Callable[[int], bool]) -> int:
    """The largest k in 1..n with ok(k), assuming ok is monotone (0 if none)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


# -------------------------------------------------------------------- packing
@dataclass(frozen=True)
class Candidate:
    """One item that may go into the context.

    ``key`` identifies it (``"entity:<id>"``...); ``requires_all`` /
    ``requires_any`` name keys that must already be selected (a relationship
    needs its entities). ``text_field`` names the field that may be cut to fit
    (``content`` for chunks, ``statement`` for claims); ``group`` is what caps
    apply to (defaults to the section).
    """

    section: Section
    item: Any
    key: str
    requires_all: frozenset[str] = frozenset()
    requires_any: frozenset[str] = frozenset()
    text_field: str | None = None
    group: str | None = None

    @property
    def cap_group(self) -> str:
        return self.group or self.section


@dataclass
class Packed:
    """The outcome of :func:`pack`."""

    document: ContextDocument
    text: str
    total_tokens: int
    truncated: bool
    selected: list[Candidate] = field(default_factory=list)
    dropped: list[Candidate] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    tokens_by_key: dict[str, int] = field(default_factory=dict)
    #: tokens of the text beyond its empty frame (the header and section syntax of no items)
    content_tokens: int = 0


class _State:
    def __init__(self, base: ContextDocument, fmt: ContextFormat, counter: TokenCounter) -> None:
        self.base = base
        self.fmt = fmt
        self.renderer = renderer_for(fmt)
        self.counter = counter
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
        self._last_fragment: tuple[int, str] = (0, "")
        self.frame_tokens: int | None = None
        self.cost_cache: dict[tuple[str, int] | None, tuple[int, str]] = {}
        self.seen_cost: dict[str, int] = {}

    def fragment_cost(self, c: Candidate, item: Any) -> int:
        """Tokens ``item`` adds as the next item of its section (an upper bound for the join)."""
        index = self.in_section.get(c.section, 0) + 1
        cache_key = (c.key, index) if item is c.item else None
        hit = self.cost_cache.get(cache_key) if cache_key else None
        if hit is None:
            text = self.renderer.item(c.section, item, index)
            hit = (self.counter.count(text) + JOIN_SLACK, text)
            if cache_key:
                self.cost_cache[cache_key] = hit
                self.seen_cost[c.key] = hit[0]
        self._last_fragment = (index, hit[1])
        return hit[0] + (self.section_open_cost(c.section) if index == 1 else 0)

    def surely_too_big(self, c: Candidate, room: int) -> bool:
        """True when ``c`` was costed before (at another position) well above ``room``."""
        seen = self.seen_cost.get(c.key)
        return seen is not None and seen - INDEX_SLACK > room

    def section_open_cost(self, section: Section) -> int:
        if section not in self.open_cost:
            r = self.renderer
            self.open_cost[section] = self.counter.count(r.open(section) + r.close(section)) + JOIN_SLACK
        return self.open_cost[section]

    def requirements_met(self, c: Candidate) -> bool:
        if c.requires_all and not c.requires_all <= self.keys:
            return False
        return not (c.requires_any and not (c.requires_any & self.keys))

    def add(self, c: Candidate, cost: int) -> None:
        """Select ``c``; its fragment is the one :meth:`fragment_cost` rendered last."""
        self.selected.append(c)
        self.keys.add(c.key)
        self.cost[c.key] = cost
        self.fragments[c.key] = self._last_fragment
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
        # anything that depended on it goes too
        while True:
            orphan = next((s for s in self.selected if not self.requirements_met(s)), None)
            if orphan is None:
                return c
            self._drop(orphan)

    def document(self, truncated: bool, total: int | None) -> ContextDocument:
        parts: dict[str, Any] = {name: [] for name in SECTIONS}
        for c in self.selected:
            if c.section == "keywords":
                parts["keywords"] = list(c.item)
            else:
                parts[c.section].append(c.item)
        return self.base.model_copy(update={**parts, "truncated": truncated, "total_tokens": total})

    def text(self, truncated: bool, total: int | None) -> str:
        """The rendered document, reusing the fragments the items were costed with."""
        frags: dict[Section, list[str]] = {}
        for c in self.selected:
            lst = frags.setdefault(c.section, [])
            index = len(lst) + 1
            cached = self.fragments.get(c.key)
            lst.append(
                cached[1] if cached and cached[0] == index else self.renderer.item(c.section, c.item, index)
            )
        head = self.base.model_copy(update={"truncated": truncated, "total_tokens": total})
        return self.renderer.compose(head, frags)


def pack(
    base: ContextDocument,
    candidates: Sequence[Candidate],
    *,
    counter: TokenCounter,
    fmt: ContextFormat | str,
    budget: int,
    caps: Mapping[str, int] | None = None,
    allow_cut: bool = True,
) -> Packed:
    """Fill ``base`` with ``candidates`` (in priority order) so the rendered text fits ``budget`` tokens.

    ``caps`` limit the tokens of a group (a section, or a candidate's ``group``)
    in a first pass; a second pass lets skipped candidates use whatever the
    budget still has. ``base`` gives the title and queries of the
    header; its items are ignored. Raises :class:`BudgetTooSmallError` when the
    empty frame alone does not fit.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValidationError(f"token budget must be an integer >= 1, got {budget!r}")
    fmt = ContextFormat(fmt)
    st = _State(base.model_copy(update={"token_budget": budget}), fmt, counter)
    keys = [c.key for c in candidates]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValidationError(f"candidate key {dup!r} appears twice")

    # the frame, with the header as it will read at the end (truncated, full-width count)
    frame = st.text(truncated=True, total=budget)
    frame_cost = counter.count(frame) + JOIN_SLACK
    if frame_cost - JOIN_SLACK > budget:
        raise BudgetTooSmallError(budget, frame_cost - JOIN_SLACK, fmt.value, counter.name)

    used = frame_cost
    pending = list(candidates)
    passes: list[Mapping[str, int] | None] = [caps, None] if caps else [None]
    for pass_caps in passes:
        used, pending = _fill(st, pending, used, budget, pass_caps, allow_cut)

    text, total, stated = _finish(st, budget, truncated=bool(pending) or bool(st.cut))
    # one refill: the join allowance over-estimates, so exact room may remain
    if pending and total < budget - MIN_CUT_TOKENS // 2:
        before = len(st.selected)
        _, pending = _fill(st, pending, total + JOIN_SLACK, budget, None, allow_cut)
        if len(st.selected) != before:
            text, total, stated = _finish(st, budget, truncated=bool(pending) or bool(st.cut))
    dropped = [c for c in candidates if c.key not in st.keys]
    truncated = bool(dropped) or bool(st.cut)
    if truncated != st.rendered_truncated:  # a removal in _finish set the flag after the last render
        text, total, stated = _finish(st, budget, truncated=truncated)
    doc = st.document(truncated, stated)
    empty = st.renderer.compose(
        st.base.model_copy(update={"truncated": truncated, "total_tokens": stated}), {}
    )
    content = max(0, total - counter.count(empty))
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
) -> tuple[int, list[Candidate]]:
    """One greedy pass; returns the tokens used and the candidates still waiting."""
    waiting: list[Candidate] = []
    failed_cuts = 0
    misses = 0
    for n, c in enumerate(pending):
        if misses >= MAX_MISSES:  # far down the ranking and nothing fits any more: stop looking
            waiting.extend(pending[n:])
            break
        room = budget - used
        if caps is not None and c.cap_group in caps:
            room = min(room, caps[c.cap_group] - st.group_used.get(c.cap_group, 0))
        if room <= JOIN_SLACK or not st.requirements_met(c):
            waiting.append(c)
            continue
        # cut only where no cap applies, so a later pass cannot offer more room
        can_cut = (
            allow_cut
            and c.text_field is not None
            and (caps is None or c.cap_group not in caps)
            and room >= MIN_CUT_TOKENS
            and failed_cuts < MAX_FAILED_CUTS
        )
        if not can_cut and _hopeless(st, c, room):
            waiting.append(c)
            continue
        cost = st.fragment_cost(c, c.item)
        if cost <= room:
            st.add(c, cost)
            used += cost
            continue
        misses += 1
        if can_cut:
            shorter = _cut(st, c, room)
            failed_cuts += shorter is None
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


def _cut(st: _State, c: Candidate, room: int) -> tuple[Any, int] | None:
    assert c.text_field is not None
    text = getattr(c.item, c.text_field)
    costs: dict[str, int] = {}
    # the item with no text at all: if even that does not fit, no cut will
    if st.fragment_cost(c, c.item.model_copy(update={c.text_field: TRUNCATION_MARKER.strip()})) > room:
        return None

    def fits(candidate_text: str) -> bool:
        item = c.item.model_copy(update={c.text_field: candidate_text, "truncated": True})
        cost = st.fragment_cost(c, item)
        costs[candidate_text] = cost
        return cost <= room

    shorter = cut_text(text, fits)
    if shorter is None:
        return None
    item = c.item.model_copy(update={c.text_field: shorter, "truncated": True})
    return item, costs[shorter]


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
    for _ in range(4):
        text = st.text(truncated, guess)
        total = st.counter.count(text)
        if total == guess:
            return text, total, total
        seen.add(guess)
        if total in seen:
            break
        guess = total
    # no fixed point (a rare tokenizer edge case): state no number rather than a wrong one
    text = st.text(truncated, None)
    return text, st.counter.count(text), None


def _guess_total(st: _State) -> int:
    if st.frame_tokens is None:
        st.frame_tokens = st.counter.count(st.renderer.compose(st.base, {}))
    base = st.frame_tokens
    return base + sum(st.cost.values()) - JOIN_SLACK * len(st.cost)
