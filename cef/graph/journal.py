"""The graph index's change journal: what each recent change did, so caches can follow writes.

:class:`ChangeJournal` is mixed into :class:`~cef.graph.index.GraphIndex`: every change
notes the generation it started from, its kind and the positions it touched or appended;
:meth:`ChangeJournal.changes_since` replays those notes back to an older generation as
one :class:`GraphChanges`, or says (None) that they are not known.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ChangeJournal", "GraphChanges"]


class ChangeJournal:
    """The change journal of a :class:`~cef.graph.index.GraphIndex` (the index owns the state)."""

    _node_pos: dict[str, int]
    generation: int
    # what each recent change did, by the generation it ended on
    _journal: dict[int, tuple[int, str, tuple[int, ...], range]]

    def touch_nodes(self, node_ids: Iterable[str]) -> None:
        """Say that something kept outside the graph about these nodes changed (chunks linked to them):
        a new generation, so caches of the graph's nodes (the entity index) look at them again."""
        pos = [p for n in node_ids if (p := self._node_pos.get(n)) is not None]
        if pos:
            self.generation += 1
            self._note(self.generation - 1, "touched", tuple(pos))

    def lose_track(self) -> None:
        """Say that something outside the graph changed about nodes not known here (chunks deleted
        by id): a new generation that :meth:`changes_since` cannot describe, so caches start again."""
        self.generation += 1
        self._note(self.generation - 1, "removed")

    #: changes remembered for changes_since()
    JOURNAL_SIZE = 256

    def _note(self, since: int, kind: str, positions: tuple[int, ...] = (), added: range = range(0)) -> None:
        """Record that the change from generation ``since`` to now did ``kind`` to ``positions``
        (``added``: positions it appended)."""
        self._journal[self.generation] = (since, kind, positions, added)
        if len(self._journal) > self.JOURNAL_SIZE:
            for key in sorted(self._journal)[: len(self._journal) - self.JOURNAL_SIZE]:
                del self._journal[key]

    def changes_since(self, generation: int) -> GraphChanges | None:
        """What changed from ``generation`` to now, or None when that is not known (a bulk load, a
        snapshot read, changes older than the journal): then every cache must start again."""
        out = GraphChanges()
        cur = self.generation
        while cur != generation:
            entry = self._journal.get(cur)
            if entry is None or not generation <= entry[0] < cur:
                return None
            start, kind, positions, added = entry
            if kind == "nodes":
                out.updated_nodes.update(positions)
                out.new_nodes.update(added)
            elif kind == "edges":
                out.edges.update(positions)
                out.new_edges.update(added)
            elif kind == "touched":
                out.touched_nodes.update(positions)
            elif kind == "removed":
                out.removed = True
            cur = start
        return out


class GraphChanges:
    """What a run of graph changes did (:meth:`ChangeJournal.changes_since`): node positions added,
    node positions updated (label, scope or record), nodes whose chunks changed, edge positions updated
    and added, and whether anything was removed."""

    __slots__ = ("edges", "new_edges", "new_nodes", "removed", "touched_nodes", "updated_nodes")

    def __init__(self) -> None:
        self.new_nodes: set[int] = set()
        self.updated_nodes: set[int] = set()
        self.touched_nodes: set[int] = set()
        self.edges: set[int] = set()  # updated
        self.new_edges: set[int] = set()
        self.removed = False
