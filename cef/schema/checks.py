"""Every write checked against the registry: one check, below every door.

:meth:`WriteChecks.check_write` is what the engine's indexer runs on each
write (``index_batch``, ``upsert_batch``, node and edge updates) before its
one transaction: relation types a batch declares must not clash with the
registered ones, each edge must name a registered relation type (or its
inverse: the edge is then stored under the base name, reversed), its ends
must have the types the relation allows, nodes and edges must fit the
property schemas and validations of their types, and in a strict registry
every label must be declared. Labels written for the first time come back as
registrations to commit with the write, so a refused write registers nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cef.errors import DuplicateIdError, UnknownNodeTypeError, UnknownRelationTypeError, ValidationError
from cef.model import Batch, Edge, Node, RelationType
from cef.schema.kinds import UNKNOWN_KIND, NodeKind, infer_kind
from cef.schema.lookups import RegistryState, TypeLookups
from cef.schema.specs import NodeTypeSpec, NodeValidation, PropertySpec, check_properties, run_validation

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["META_PREFIX", "LabelOf", "NodeChecks", "WriteChecks", "seen_key"]

#: the label of a node an edge names, as the writer may see it (None: no such node for this writer)
LabelOf = Callable[[str], "str | None"]

#: meta keys of the registry's entries (``schema.node.<label>``, ``schema.version``...)
META_PREFIX = "schema."

_KINDS = frozenset(k.value for k in NodeKind)
_OBSERVATION = NodeKind.OBSERVATION.value


def seen_key(label: str) -> str:
    """Where a label registered by its first write is kept: apart from declarations
    (``schema.node.<label>``), so a write racing a declaration in another process never replaces it."""
    return f"{META_PREFIX}seen.{label}"


@dataclass(frozen=True)
class NodeChecks:
    """What a write of one label is checked against: property schemas and validations along its
    ancestors, and whether it is an observation (immutable)."""

    schemas: tuple[Mapping[str, PropertySpec], ...] = ()
    validations: tuple[NodeValidation, ...] = ()
    observation: bool = False

    @property
    def quiet(self) -> bool:
        """Nothing to check for a node of this label."""
        return not (self.schemas or self.validations or self.observation)


class WriteChecks(TypeLookups):
    """The write checks of the registry (mixed into :class:`~cef.schema.registry.SchemaRegistry`)."""

    #: the checks of each label, for one state (a new state, as every change makes, starts afresh)
    _node_checks: tuple[RegistryState, dict[str, NodeChecks]]
    _version: int

    # ------------------------------------------------------------------ the one check
    def check_write(self, batch: Batch, label_of: LabelOf) -> dict[str, Any]:
        """Check a write; return the registrations to commit with it (meta entries, often none).

        Edges written under an inverse name are replaced in ``batch.edges`` by the base edge.
        ``label_of`` gives the label of a node the batch does not hold, or None when the writer
        may not see it (a type check is then left to the missing-node error)."""
        self.check_relation_types(batch.relation_types)
        relations = {**self._relations(), **{r.name: r for r in batch.relation_types}}
        inverses = {r.inverse: r for r in relations.values() if r.inverse}
        labels = {n.id: n.label for n in batch.nodes}
        for i, e in enumerate(batch.edges):
            if e.relation_type not in relations:
                base = inverses.get(e.relation_type)
                if base is None:
                    raise UnknownRelationTypeError(
                        e.relation_type, f"edge {e.id!r} (edges[{i}])", list(relations)
                    )
                # written under the inverse name: stored once, under the base relation
                batch.edges[i] = e = e.model_copy(
                    update={"relation_type": base.name, "source": e.target, "target": e.source}
                )
            rt = relations[e.relation_type]
            if rt.source_types or rt.target_types:
                where = f"edge {e.id!r} (edges[{i}])"
                self._check_ends(e, rt, lambda n: labels.get(n) or label_of(n), where)
        self.validate(batch.nodes, batch.edges)
        return self._new_node_types(batch.nodes)

    def check_relation_types(self, declared: Sequence[RelationType]) -> None:
        """Relation types a write declares: each name once, no inverse name that is already a relation."""
        names = Counter(r.name for r in declared)
        twice = [n for n, c in names.items() if c > 1]
        if twice:
            raise DuplicateIdError("relation_type", twice[0], "twice in one batch")
        relations = {**self._relations(), **{r.name: r for r in declared}}
        for r in declared:
            if r.inverse and r.inverse in relations and r.inverse != r.name:
                raise ValidationError(
                    f"relation type {r.name!r} declares inverse {r.inverse!r}, which is already a relation type"
                )

    def validate(self, nodes: Sequence[Node], edges: Sequence[Edge], _indexer: Any = None) -> None:
        """Check nodes and edges against their types' property schemas and validations (registers nothing)."""
        s = self._s
        by_label: dict[str, NodeChecks] = {}
        for i, node in enumerate(nodes):
            checks = by_label.get(node.label)
            if checks is None:
                checks = by_label[node.label] = self._checks_of(s, node.label)
            if s.strict and node.label not in _KINDS:
                spec = s.node_types.get(node.label)
                if spec is None or not spec.declared:
                    raise UnknownNodeTypeError(
                        f"node {node.id!r} (nodes[{i}], type {node.label!r}): type {node.label!r} is not "
                        "registered (strict registry); declare it with kb.schema.register_node_type or use "
                        "a universal kind"
                    )
            if checks.quiet:
                continue
            where = f"node {node.id!r} (nodes[{i}], type {node.label!r})"
            for schema in checks.schemas:
                check_properties(node.properties, schema, where)
            for check in checks.validations:
                run_validation(check, node, where)
            if checks.observation and node.version > 1:
                raise ValidationError(
                    f"{where}: observations are immutable; record a new observation instead"
                )
        if not any(spec.properties for spec in s.edge_types.values()):
            return
        for i, edge in enumerate(edges):
            extra = s.edge_types.get(edge.relation_type)
            if extra is not None and extra.properties:
                check_properties(
                    edge.properties, extra.properties, f"edge {edge.id!r} (edges[{i}], {edge.relation_type})"
                )

    # ------------------------------------------------------------------ parts
    def _check_ends(self, e: Edge, rt: RelationType, label_of: LabelOf, where: str) -> None:
        for end, allowed, role in (
            (e.source, rt.source_types, "source"),
            (e.target, rt.target_types, "target"),
        ):
            if not allowed:
                continue
            label = label_of(end)
            if label is None or label in allowed or any(self.is_a(label, a) for a in allowed):
                continue
            raise ValidationError(
                f"{where}: {role} {end!r} has type {label!r} but relation {rt.name!r} "
                f"allows {role} types {sorted(allowed)}"
            )

    def _checks_of(self, s: RegistryState, label: str) -> NodeChecks:
        cache: dict[str, NodeChecks] | None = None
        if self._pending is None:  # a batch's state changes in place: never cached
            owner, cache = self._node_checks
            if owner is not s:
                cache = {}
                self._node_checks = (s, cache)
            hit = cache.get(label)
            if hit is not None:
                return hit
        schemas: list[Mapping[str, PropertySpec]] = []
        validations: list[NodeValidation] = []
        observation = False
        seen: set[str] = set()
        cur: str | None = label
        while cur is not None and cur not in seen:
            seen.add(cur)
            spec = s.node_types.get(cur)
            if spec is not None and spec.properties:
                schemas.append(spec.properties)
            if (check := s.validations.get(cur)) is not None:
                validations.append(check)
            observation = observation or cur == _OBSERVATION
            cur = self._parent(s, cur)
        found = NodeChecks(tuple(schemas), tuple(validations), observation)
        if cache is not None:
            cache[label] = found
        return found

    def _new_node_types(self, nodes: Sequence[Node]) -> dict[str, Any]:
        """Registrations of the labels written for the first time (their kind inferred from the name)."""
        known = self._s.node_types
        meta: dict[str, Any] = {}
        for label in dict.fromkeys(n.label for n in nodes if n.label not in known):
            kind = infer_kind(label)
            spec = NodeTypeSpec(name=label, parent=kind.value if kind else UNKNOWN_KIND, declared=False)
            meta[seen_key(label)] = spec.model_dump(mode="json", exclude_defaults=True)
        if meta:
            meta[META_PREFIX + "version"] = self._version + 1
        return meta
