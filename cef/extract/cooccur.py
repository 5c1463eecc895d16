"""Co-occurrence statistics of entities within passages (for CO_OCCURS edges)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cef.extract.base import Mention

_WORD_START = re.compile(r"\S+")


@dataclass(slots=True)
class CoOccurrence:
    """How two normalized names co-occur: ``count`` mention pairs, in ``doc_count``
    passages, ``avg_proximity`` = mean distance in words between the two mentions
    (closest pair per passage; a title mention sits at word 0)."""

    count: int = 0
    doc_count: int = 0
    proximity_sum: float = 0.0

    @property
    def avg_proximity(self) -> float:
        return self.proximity_sum / self.doc_count if self.doc_count else 0.0


def cooccurrence(
    texts: Sequence[str], mentions: Sequence[Sequence[Mention]], *, max_distance: int | None = None
) -> dict[tuple[str, str], CoOccurrence]:
    """Pair statistics over passages; keys are ``(a, b)`` with ``a < b`` (normalized names).
    ``max_distance`` (words) ignores pairs farther apart than that."""
    if len(texts) != len(mentions):
        raise ValueError(f"{len(texts)} texts but {len(mentions)} mention lists")
    stats: dict[tuple[str, str], CoOccurrence] = {}
    for text, ms in zip(texts, mentions, strict=True):
        starts = [m.start() for m in _WORD_START.finditer(text)]
        pos: dict[str, list[int]] = {}
        for m in ms:
            if not m.normalized:
                continue
            w = 0 if m.start < 0 else max(0, bisect.bisect_right(starts, m.start) - 1)
            pos.setdefault(m.normalized, []).append(w)
        names = sorted(pos)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                best = min(abs(x - y) for x in pos[a] for y in pos[b])
                if max_distance is not None and best > max_distance:
                    continue
                st = stats.setdefault((a, b), CoOccurrence())
                st.count += len(pos[a]) * len(pos[b])
                st.doc_count += 1
                st.proximity_sum += best
    return stats
