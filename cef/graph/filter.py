"""What a traversal may walk: edge filters (relations, direction, time, confidence, scope) and expansion results.

Times are epoch seconds in the graph index; :data:`SUPERSEDED_AT` marks a
superseded edge version (transaction-time end).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

__all__ = ["NEG_INF", "POS_INF", "SUPERSEDED_AT", "EdgeFilter", "Expansion", "ts", "tx_end_ts"]

NEG_INF = -math.inf
POS_INF = math.inf


#: edge property marking a superseded edge version: when it stopped being what we knew
#: (transaction-time end; an ISO datetime or epoch seconds). Queries "as known at T" see the
#: version while ``recorded_at <= T < superseded_at``; other queries skip superseded versions.
SUPERSEDED_AT = "superseded_at"


def ts(value: datetime | None, default: float) -> float:
    """Epoch seconds of ``value``, or ``default`` when it is None."""
    return value.timestamp() if value is not None else default


def tx_end_ts(value: object) -> float:
    """Epoch seconds of a :data:`SUPERSEDED_AT` value; ``+inf`` when absent or unreadable."""
    if value is None or isinstance(value, bool):
        return POS_INF
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else POS_INF
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return POS_INF
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    return POS_INF


@dataclass
class EdgeFilter:
    """Which edges a traversal may follow, and in which direction.

    Built with :meth:`GraphIndex.edge_filter`; ``forward_ok``/``backward_ok`` are
    per-relation-code masks that already encode direction, relation names
    (inverse names included), semantics and bidirectional relations.
    """

    forward_ok: np.ndarray
    backward_ok: np.ndarray
    min_confidence: float = 0.0
    valid_at: float | None = None
    known_at: float | None = None  # recorded_at <= known_at < superseded_at (see SUPERSEDED_AT)
    scope: int | None = None  # scope code; None = all scopes
    scope_strict: bool = False  # True: only the scope (plus unscoped); False: everything
    #: one flag per label code: the nodes a walk may enter (None: every label)
    label_ok: np.ndarray | None = None


@dataclass
class Expansion:
    """Result of a breadth-first expansion from seed nodes.

    ``nodes`` are positions in discovery order (seeds first); for each,
    ``depth``, ``parent_edge`` (-1 for seeds), ``parent`` (-1 for seeds),
    ``forward`` (True when the edge was walked source→target) and the path
    confidence product ``confidence``.
    """

    nodes: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    parent_edge: np.ndarray
    forward: np.ndarray
    confidence: np.ndarray
    truncated: bool = False
    _order: np.ndarray | None = None
    _sorted: np.ndarray | None = None

    def position(self, node: int) -> int:
        """Index of ``node`` in ``nodes`` (KeyError when the expansion did not reach it)."""
        if self._order is None or self._sorted is None:
            self._order = np.argsort(self.nodes, kind="stable")
            self._sorted = self.nodes[self._order]
        k = int(self._sorted.searchsorted(node))
        if k >= len(self._sorted) or int(self._sorted[k]) != node:
            raise KeyError(node)
        return int(self._order[k])

    def path_to(self, node: int) -> tuple[list[int], list[int], list[bool]]:
        """(node positions seed→node, edge positions, forward flags)."""
        nodes = [node]
        edges: list[int] = []
        fwd: list[bool] = []
        i = self.position(node)
        while self.parent_edge[i] >= 0:
            edges.append(int(self.parent_edge[i]))
            fwd.append(bool(self.forward[i]))
            node = int(self.parent[i])
            nodes.append(node)
            i = self.position(node)
        nodes.reverse()
        edges.reverse()
        fwd.reverse()
        return nodes, edges, fwd
