"""Finding the node names a text mentions: one name finder for the route's anchors and the memory.

:func:`name_finder` is an engine's :class:`NameFinder`: a
:class:`~cef.extract.spacy_ner.Gazetteer` (normalized n-gram lookup) over the
names and aliases of every node except records of what was said or believed
(observations and beliefs), built on first use from the store, kept current by
the engine's writes (a write listener), and rebuilt when the graph changed in a
way this process did not see (another process's commit, a reload). The route's
:func:`~cef.retrieve.anchors.implicit_targets` and the memory (question
understanding, reconciling observations, resolving a name) read it. The node
full-text index is not used for this: its BM25 query drops words that many
nodes share, and a name can be such a word (a small memory's people, a
conversation's speakers).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable

from cef.extract.normalize import normalize_name
from cef.extract.spacy_ner import Gazetteer
from cef.model import Node
from cef.retrieve.ports import EngineView
from cef.schema.kinds import NodeKind
from cef.store.base import WriteSet

__all__ = ["NameFinder", "name_finder"]

#: kinds whose nodes are records, not things with names
_SKIP_KINDS = (NodeKind.BELIEF, NodeKind.OBSERVATION)
GLOBAL = ""
#: a matched name shorter than this (normalized) is not a mention
MIN_CHARS = 3


class NameFinder:
    """Node names → node ids, scope-aware, for one engine."""

    def __init__(self, state: EngineView) -> None:
        self._state = weakref.ref(state)
        self._gaz: Gazetteer | None = None
        self._graph: object = None
        self._generation = -1
        self._lock = threading.RLock()
        state.listeners.append(self._on_write)

    @property
    def state(self) -> EngineView:
        st = self._state()
        if st is None:  # pragma: no cover - the finder lives only as long as its engine
            raise RuntimeError("the engine of this name finder was closed and collected")
        return st

    def _add(self, gaz: Gazetteer, nodes: Iterable[Node]) -> None:
        kind_of = self.state.schema.kind_of
        for node in nodes:
            if kind_of(node.label) in _SKIP_KINDS:
                continue
            scope = node.scope or GLOBAL
            for name in dict.fromkeys(node.names):
                gaz.add(name, type=scope, ref=node.id, aliases=False)

    def _fresh(self) -> Gazetteer:
        st = self.state
        g = st.graph
        with self._lock:
            if self._gaz is None or self._graph is not g or self._generation != g.generation:
                gaz = Gazetteer(require_capital=False)
                self._add(gaz, st.store.iter_nodes())
                self._gaz, self._graph, self._generation = gaz, g, g.generation
            return self._gaz

    def _on_write(self, writes: WriteSet) -> None:
        st = self._state()
        if st is None:
            return
        with self._lock:
            g = st.graph
            if self._gaz is None or self._graph is not g:
                return
            if writes.nodes or writes.updated_nodes:
                self._add(self._gaz, [*writes.nodes, *writes.updated_nodes])
            self._generation = g.generation

    def find(self, text: str, scope: str | None) -> list[tuple[str, str, int, int]]:
        """Node names in ``text`` (on word boundaries, any case), seen from ``scope`` (its nodes and
        unscoped ones; every node when None): (node id, matched text, start, end), longest first per
        position."""
        gaz = self._fresh()
        out: list[tuple[str, str, int, int]] = []
        graph = self.state.graph
        for m in gaz.match(text, case_sensitive=False, overlapping=True):
            if len(m.normalized) < MIN_CHARS:
                continue
            for entry in gaz.entries(m.normalized):
                if scope is not None and entry.type not in (GLOBAL, scope):
                    continue
                if entry.ref is not None and graph.has_node(entry.ref):
                    out.append((entry.ref, m.text, m.start, m.end))
        return out

    def lookup(self, name: str, scope: str | None) -> list[str]:
        """Node ids with exactly this name or alias (after normalization), seen from ``scope``."""
        gaz = self._fresh()
        key = normalize_name(name)
        graph = self.state.graph
        return [
            e.ref
            for e in gaz.entries(key)
            if e.ref is not None and graph.has_node(e.ref) and (scope is None or e.type in (GLOBAL, scope))
        ]


_finders: weakref.WeakKeyDictionary[EngineView, NameFinder] = weakref.WeakKeyDictionary()
_finders_lock = threading.Lock()


def name_finder(state: EngineView) -> NameFinder:
    """The engine's :class:`NameFinder` (made on first use, one per engine)."""
    with _finders_lock:
        finder = _finders.get(state)
        if finder is None:
            finder = _finders[state] = NameFinder(state)
        return finder
