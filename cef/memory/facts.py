"""The memory's facts over time and feedback: assert, supersede, what changed, usage counters.

:class:`FactsOverTime` holds these methods of :class:`~cef.memory.memory.SemanticMemory`
(a mixin, so the memory's module stays one concern per file); they write
through the memory's knowledge base, one transaction each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cef.errors import NotFoundError, ValidationError
from cef.graph.filter import SUPERSEDED_AT
from cef.memory.beliefs import USAGE, Usage, importance
from cef.memory.retrieval import normalize_scope
from cef.memory.temporal import FactChange, aware, changed_edges, supersession
from cef.memory.view import FeedbackOutcome
from cef.model import Batch, Edge, Node

if TYPE_CHECKING:
    from cef.engine.kb import KnowledgeBase

__all__ = ["FactsOverTime", "SupersedeResult"]


@dataclass
class SupersedeResult:
    """The records a supersession wrote: the old version (now history), its closed copy, the replacement."""

    superseded: Edge
    closed: Edge
    replacement: Edge | None = None


class FactsOverTime:
    """Bi-temporal facts and feedback of a semantic memory (mixed into :class:`SemanticMemory`)."""

    kb: KnowledgeBase

    def now(self) -> datetime:  # the memory's clock (SemanticMemory.now)
        raise NotImplementedError

    def changed_since(
        self, since: datetime, until: datetime | None = None, *, scope: str | dict[str, str] | None = None
    ) -> list[FactChange]:
        """Facts recorded or ended in the window ``(since, until]``, newest first.

        Args:
            since: the window's start (exclusive).
            until: its end (inclusive; default: no end).
            scope: only facts of this scope and shared ones.

        Returns:
            One change per fact that began, ended or was recorded in the window.
        """
        with self.kb.state.reading():
            return changed_edges(
                self.kb.state.graph,
                aware(since),
                aware(until) if until else None,
                scope=normalize_scope(scope),
            )

    def assert_fact(
        self,
        source: str,
        relation: str,
        target: str,
        *,
        properties: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None,
        confidence: float = 1.0,
        scope: str | dict[str, str] | None = None,
        at: datetime | None = None,
    ) -> Edge:
        """Record a fact, an edge ``source -relation-> target``, learned at ``at`` and true from ``valid_from``.

        Args:
            source: the subject node's id.
            relation: a registered edge type (or its inverse).
            target: the object node's id.
            properties: the fact's properties (a dosage, a note...).
            valid_from: when it became true (default: open).
            confidence: how sure the source is (0..1).
            scope: the scope it belongs to.
            at: when it was learned (default: now).

        Returns:
            The edge as written.

        Raises:
            ValidationError: a field is invalid (confidence out of range, a bad scope).
            MissingNodeError: ``source`` or ``target`` does not exist.
            UnknownRelationTypeError: ``relation`` is not registered.
        """
        try:
            edge = Edge(
                relation_type=relation,
                source=source,
                target=target,
                properties=dict(properties or {}),
                valid_from=valid_from,
                confidence=confidence,
                scope=normalize_scope(scope),
                recorded_at=aware(at) if at else self.now(),
            )
        except ValueError as exc:
            raise ValidationError(f"assert_fact: {exc}") from exc
        return self.kb.index_edge(edge)

    def supersede(
        self,
        edge_id: str,
        *,
        valid_to: datetime | None = None,
        at: datetime | None = None,
        replacement: Edge | None = None,
    ) -> SupersedeResult:
        """Close a fact's validity without deleting it, optionally writing what replaces it (one transaction).

        The version we knew is kept as history (``superseded_at`` = ``at``), so "as of" an earlier
        time still reads it as open; a closed copy is recorded at ``at``.

        Args:
            edge_id: the fact (edge) to close.
            valid_to: when it stopped being true (default: now).
            at: when that was learned (default: now).
            replacement: the new fact (e.g. the new dosage), valid from ``valid_to`` unless it says otherwise.

        Returns:
            The superseded version, its closed copy and the replacement as written.

        Raises:
            NotFoundError: no edge has id ``edge_id``.
            ValidationError: the edge was already superseded, or is already closed at ``valid_to``.
        """
        at = aware(at) if at else self.now()
        with self.kb.state.lock:
            found = self.kb.store.get_edges([edge_id])
            if not found:
                raise NotFoundError(f"edge {edge_id!r} does not exist")
            old = found[0]
            if SUPERSEDED_AT in old.properties:
                raise ValidationError(
                    f"edge {edge_id!r} was already superseded; supersede its current version"
                )
            if old.valid_to is not None and (valid_to is None or aware(valid_to) >= old.valid_to):
                raise ValidationError(f"edge {edge_id!r} is already closed at {old.valid_to.isoformat()}")
            marked, closed = supersession(old, at=at, valid_to=valid_to)
            edges = [marked, closed]
            if replacement is not None:
                updates: dict[str, Any] = {"recorded_at": at}
                if replacement.valid_from is None:
                    updates["valid_from"] = closed.valid_to
                replacement = replacement.model_copy(update=updates)
                edges.append(replacement)
            self.kb.indexer.upsert_batch(Batch(edges=edges))
        return SupersedeResult(superseded=marked, closed=closed, replacement=replacement)

    def record_feedback(
        self, node_ids: str | Sequence[str], outcome: FeedbackOutcome, count: int = 1
    ) -> list[Node]:
        """Count a use of nodes, or a judgment that they were helpful or wrong (one transaction).

        The counters feed each node's importance at retrieval time.

        Args:
            node_ids: the node, or nodes, the feedback is about.
            outcome: ``"used"``, ``"helpful"`` or ``"wrong"``.
            count: how many times (at least 1).

        Returns:
            The nodes as written (their usage counters and importance updated).

        Raises:
            ValidationError: an unknown outcome, or a count below 1.
            NotFoundError: a node does not exist (nothing is written).
        """
        ids = [node_ids] if isinstance(node_ids, str) else list(dict.fromkeys(node_ids))
        if outcome not in ("used", "helpful", "wrong"):
            raise ValidationError(f"feedback outcome must be used, helpful or wrong, not {outcome!r}")
        if count < 1:
            raise ValidationError("feedback count must be >= 1")
        with self.kb.state.lock:
            nodes = self.kb.store.get_nodes(ids)
            missing = set(ids) - {n.id for n in nodes}
            if missing:
                raise NotFoundError(f"node(s) {sorted(missing)[:5]} do not exist")
            now = self.now()
            updated = []
            for n in nodes:
                usage = Usage.of(n.properties).add(outcome, count)
                props = {**n.properties, USAGE: usage.as_dict()}
                props["importance"] = importance(props, now, now)
                updated.append(n.model_copy(update={"properties": props}))
            self.kb.indexer.upsert_batch(Batch(nodes=updated))
            return self.kb.store.get_nodes(ids)
