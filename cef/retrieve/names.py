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

A node's naming property value (:attr:`~cef.model.Node.value_names`: a brand, a code) is a name of
that node only when it tells the node apart (:meth:`NameFinder.tells_apart`): no other node holds
it as a name or value and it is no label. "Eliquis", held by apixaban alone, names apixaban;
``language: Python``, held by two services, names a category they share and neither of them.
"""

from __future__ import annotations

import re
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
_WORD = re.compile(r"[^\W_]+")
#: a matched name shorter than this (normalized) is not a mention
MIN_CHARS = 3


class NameFinder:
    """Node names → node ids, scope-aware, for one engine."""

    def __init__(self, state: EngineView) -> None:
        self._state = weakref.ref(state)
        self._gaz: Gazetteer | None = None
        self._graph: object = None
        self._generation = -1
        #: normalized name -> the nodes it names (by name, alias or value), and by name or alias
        self._holders: dict[str, set[str]] = {}
        self._own: dict[str, set[str]] = {}
        self._labels: set[str] = set()
        #: normalized naming value -> its text and the nodes holding it as a value
        self._valued: dict[str, tuple[str, set[str]]] = {}
        self._category: frozenset[str] | None = None
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
            self._category = None
            self._labels.add(normalize_name(node.label))
            for name in dict.fromkeys([node.name, *node.aliases]):
                self._own.setdefault(normalize_name(name), set()).add(node.id)
            for value in node.value_names:
                self._valued.setdefault(normalize_name(value), (value, set()))[1].add(node.id)
            for name in dict.fromkeys(node.names):
                self._holders.setdefault(normalize_name(name), set()).add(node.id)
                gaz.add(name, type=scope, ref=node.id, aliases=False)

    def _names(self, key: str, node_id: str) -> bool:
        """Whether the normalized name ``key`` names ``node_id`` (its name or alias, or a value of
        it that no other node holds and that is no label)."""
        if node_id in self._own.get(key, ()):
            return True
        return self._holders.get(key, set()) <= {node_id} and key not in self._labels

    def tells_apart(self, value: str, node_id: str) -> bool:
        """Whether a property ``value`` of node ``node_id`` names it: no other node holds the value
        as a name or value, and it is no node label (``language: Python`` on two services names
        neither; ``brand: Eliquis`` on apixaban alone names apixaban). A later write that gives the
        value to a second node makes it a name of neither from then on."""
        with self._lock:
            self._fresh()
            return self._names(normalize_name(value), node_id)

    def category_words(self) -> frozenset[str]:
        """The lowercase words of the naming values that name a category rather than a node (held
        by more than one node, or a label: :meth:`tells_apart`), e.g. ``{"python"}``."""
        with self._lock:
            self._fresh()
            if self._category is None:
                self._category = frozenset(
                    word
                    for key, (text, ids) in self._valued.items()
                    if any(not self._names(key, i) for i in ids)
                    for word in _WORD.findall(text.lower())
                )
            return self._category

    def names_of(self, node: Node) -> list[str]:
        """What a question may call ``node`` by: its name, aliases, and the naming property values
        (:attr:`~cef.model.Node.value_names`) that tell it apart (:meth:`tells_apart`)."""
        own = [node.name, *node.aliases]
        return own + [v for v in node.value_names if self.tells_apart(v, node.id)]

    def _fresh(self) -> Gazetteer:
        st = self.state
        g = st.graph
        with self._lock:
            if self._gaz is None or self._graph is not g or self._generation != g.generation:
                gaz = Gazetteer(require_capital=False)
                self._holders, self._own, self._labels, self._valued = {}, {}, set(), {}
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
                if entry.ref is not None and not self._names(m.normalized, entry.ref):
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
            if e.ref is not None
            and graph.has_node(e.ref)
            and (scope is None or e.type in (GLOBAL, scope))
            and self._names(key, e.ref)
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
