"""An in-process index of node names and aliases, for finding names in questions and observations.

It is a :class:`~cef.extract.spacy_ner.Gazetteer` (normalized n-gram lookup)
over every node except observations and beliefs, built on first use from the
store, kept current by this process's writes (an engine write listener), and
rebuilt when the graph changed in a way this process did not see (another
process's commit, a reload). The full-text index is not used for this: its
BM25 query drops words that many nodes share, and a name can be such a word
in a small memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from cef.extract.normalize import normalize_name
from cef.extract.spacy_ner import Gazetteer
from cef.model import Node
from cef.schema.kinds import NodeKind
from cef.store.base import WriteSet

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = ["NameIndex"]

_SKIP_KINDS = (NodeKind.BELIEF, NodeKind.OBSERVATION)
GLOBAL = ""


class NameIndex:
    """Node names → node ids, scope-aware."""

    def __init__(self, kb: KnowledgeBase, kind_of: Callable[[str], NodeKind | None]) -> None:
        """``kind_of``: a node label's kind (observations and beliefs are not indexed)."""
        self.kb = kb
        self.kind_of = kind_of
        self._gaz: Gazetteer | None = None
        self._graph: object = None
        self._generation = -1
        self._lock = threading.RLock()
        kb.state.listeners.append(self._on_write)

    def detach(self) -> None:
        listeners = self.kb.state.listeners
        if self._on_write in listeners:
            listeners.remove(self._on_write)

    def _skip(self, node: Node) -> bool:
        return self.kind_of(node.label) in _SKIP_KINDS

    def _add(self, gaz: Gazetteer, nodes: Iterable[Node]) -> None:
        for node in nodes:
            if self._skip(node):
                continue
            scope = node.scope or GLOBAL
            for name in dict.fromkeys([node.name, *node.aliases]):
                gaz.add(name, type=scope, ref=node.id, aliases=False)

    def _fresh(self) -> Gazetteer:
        g = self.kb.state.graph
        with self._lock:
            if self._gaz is None or self._graph is not g or self._generation != g.generation:
                gaz = Gazetteer(require_capital=False)
                self._add(gaz, self.kb.store.iter_nodes())
                self._gaz, self._graph, self._generation = gaz, g, g.generation
            return self._gaz

    def _on_write(self, writes: WriteSet) -> None:
        with self._lock:
            g = self.kb.state.graph
            if self._gaz is None or self._graph is not g:
                return
            if writes.nodes or writes.updated_nodes:
                self._add(self._gaz, [*writes.nodes, *writes.updated_nodes])
            self._generation = g.generation

    def find(self, text: str, scope: str | None) -> list[tuple[str, str, int, int]]:
        """Node names in ``text``: (node id, matched text, start, end), longest first per position."""
        gaz = self._fresh()
        out: list[tuple[str, str, int, int]] = []
        graph = self.kb.state.graph
        for m in gaz.match(text, case_sensitive=False, overlapping=True):
            if len(m.normalized) < 3:
                continue
            for entry in gaz.entries(m.normalized):
                if scope is not None and entry.type not in (GLOBAL, scope):
                    continue
                if entry.ref is not None and graph.has_node(entry.ref):
                    out.append((entry.ref, m.text, m.start, m.end))
        return out

    def lookup(self, name: str, scope: str | None) -> list[str]:
        """Node ids with exactly this name or alias (after normalization), in scope."""
        gaz = self._fresh()
        key = normalize_name(name)
        graph = self.kb.state.graph
        return [
            e.ref
            for e in gaz.entries(key)
            if e.ref is not None and graph.has_node(e.ref) and (scope is None or e.type in (GLOBAL, scope))
        ]
