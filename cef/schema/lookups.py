"""The registry's state and the read-only questions asked of it: types, hierarchy, kinds, synonyms."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cef.extract.normalize import normalize_name
from cef.model import RelationType
from cef.schema.kinds import UNKNOWN_KIND, NodeKind, infer_kind
from cef.schema.specs import (
    ClassExtension,
    EdgeTypeSpec,
    NodeTypeSpec,
    NodeValidation,
    PipelineSpec,
    Vocabulary,
)

if TYPE_CHECKING:
    from cef.schema.pipelines import ContentParser, Decomposer

__all__ = ["PendingRegistrations", "RegistryState", "TypeLookups"]


@dataclass
class RegistryState:
    """What is registered: node types (declared or first written), the extra attributes of edge types
    (their relation type records live in the store's relation-type table), vocabularies, pipelines."""

    node_types: dict[str, NodeTypeSpec] = field(default_factory=dict)
    edge_types: dict[str, EdgeTypeSpec] = field(default_factory=dict)
    vocabularies: dict[str, Vocabulary] = field(default_factory=dict)
    pipelines: dict[str, PipelineSpec] = field(default_factory=dict)
    extensions: dict[str, str | None] = field(default_factory=dict)  # name -> import path
    strict: bool = False
    # live objects (not persisted as such)
    validations: dict[str, NodeValidation] = field(default_factory=dict)
    parsers: dict[str, tuple[ContentParser, Decomposer | None]] = field(default_factory=dict)

    def copy(self) -> RegistryState:
        return RegistryState(
            dict(self.node_types),
            dict(self.edge_types),
            dict(self.vocabularies),
            dict(self.pipelines),
            dict(self.extensions),
            self.strict,
            dict(self.validations),
            dict(self.parsers),
        )


@dataclass
class PendingRegistrations:
    state: RegistryState
    relation_types: dict[str, RelationType] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


class TypeLookups:
    """Read-only lookups over a :class:`RegistryState` and the relation types (mixed into the registry)."""

    _state: RegistryState
    _pending: PendingRegistrations | None
    _is_a_cache: dict[tuple[str, str], bool]
    _synonym_index: dict[str, set[str]] | None

    def _relations(self) -> Mapping[str, RelationType]:
        """The registered relation types by name (the store's records, as the graph index holds them)."""
        raise NotImplementedError

    @property
    def _s(self) -> RegistryState:
        """The state being read: the pending one inside :meth:`SchemaRegistry.batch`, else the current one."""
        return self._pending.state if self._pending is not None else self._state

    # -------------------------------------------------------------- node types
    @property
    def node_types(self) -> dict[str, NodeTypeSpec]:
        """Every registered node type: declared ones and labels registered when first written."""
        return dict(self._s.node_types)

    @property
    def declared_node_types(self) -> dict[str, NodeTypeSpec]:
        """The node types a declaration placed (``register_node_type``), not only written."""
        return {k: v for k, v in self._s.node_types.items() if v.declared}

    def node_type(self, name: str) -> NodeTypeSpec | None:
        return self._s.node_types.get(name)

    # -------------------------------------------------------------- relation types
    @property
    def relation_types(self) -> dict[str, RelationType]:
        """Every registered relation type by name."""
        if self._pending is not None:
            return {**self._relations(), **self._pending.relation_types}
        return dict(self._relations())

    def relation_type(self, name: str) -> RelationType | None:
        if self._pending is not None and name in self._pending.relation_types:
            return self._pending.relation_types[name]
        return self._relations().get(name)

    @property
    def edge_types(self) -> dict[str, EdgeTypeSpec]:
        """Every relation type as an edge type spec (with the property schema a registration gave it)."""
        extra = self._s.edge_types
        return {name: EdgeTypeSpec.of(rt, extra.get(name)) for name, rt in self.relation_types.items()}

    def edge_type(self, name: str) -> EdgeTypeSpec | None:
        rt = self.relation_type(name)
        return EdgeTypeSpec.of(rt, self._s.edge_types.get(name)) if rt is not None else None

    # -------------------------------------------------------------- the rest
    @property
    def vocabularies(self) -> dict[str, Vocabulary]:
        return dict(self._s.vocabularies)

    @property
    def pipelines(self) -> dict[str, PipelineSpec]:
        return dict(self._s.pipelines)

    @property
    def extensions(self) -> list[str]:
        return sorted(self._s.extensions)

    @property
    def strict(self) -> bool:
        return self._s.strict

    def pipeline(self, content_type: str) -> tuple[ContentParser, Decomposer | None] | None:
        return self._s.parsers.get(content_type.strip().lower())

    def content_type_for_suffix(self, suffix: str) -> str | None:
        suffix = suffix.lower()
        for ctype, spec in self._s.pipelines.items():
            if suffix in spec.extensions:
                return ctype
        return None

    # -------------------------------------------------------------- hierarchy
    @staticmethod
    def _parent(s: RegistryState, label: str) -> str | None:
        """The parent of a label: its registered one, else the kind its name infers (a kind label and
        an unknown one have none)."""
        spec = s.node_types.get(label)
        parent = spec.parent if spec is not None else (k.value if (k := infer_kind(label)) else None)
        return None if parent in (label, UNKNOWN_KIND) else parent

    @classmethod
    def _walk_is_a(cls, s: RegistryState, label: str, ancestor: str) -> bool:
        seen: set[str] = set()
        cur: str | None = label
        while cur is not None and cur not in seen:
            if cur == ancestor:
                return True
            seen.add(cur)
            cur = cls._parent(s, cur)
        return False

    def is_a(self, label: str, ancestor: str) -> bool:
        """``label`` is ``ancestor`` or below it (through registered parents, up to the universal kind)."""
        if label == ancestor:
            return True
        if self._pending is not None:
            return self._walk_is_a(self._pending.state, label, ancestor)
        key = (label, ancestor)
        hit = self._is_a_cache.get(key)
        if hit is None:
            hit = self._is_a_cache[key] = self._walk_is_a(self._state, label, ancestor)
        return hit

    def kind_of(self, label: str) -> NodeKind | None:
        """The universal kind above a label (a kind label is its own kind); None when unknown."""
        top = self.ancestors(label)[-1]
        try:
            return NodeKind(top)
        except ValueError:
            return None

    def ancestors(self, label: str) -> list[str]:
        """``label`` and every parent above it, nearest first."""
        out: list[str] = []
        cur: str | None = label
        while cur is not None and cur not in out:
            out.append(cur)
            cur = self._parent(self._s, cur)
        return out

    def _synonyms(self) -> dict[str, set[str]]:
        if self._synonym_index is None:
            index: dict[str, set[str]] = {}
            for vocab in self._s.vocabularies.values():
                for term, words in vocab.synonyms.items():
                    canon = normalize_name(term)
                    for w in [term, *words]:
                        index.setdefault(normalize_name(w), set()).add(canon)
                for ext in vocab.class_extensions:
                    index.setdefault(normalize_name(ext.term), set()).add(normalize_name(ext.term))
            self._synonym_index = index
        return self._synonym_index

    def canonical_terms(self, word: str) -> set[str]:
        """The canonical terms a word (or phrase) stands for (itself excluded unless canonical)."""
        return set(self._synonyms().get(normalize_name(word), set()))

    def synonyms_of(self, term: str) -> list[str]:
        """Every other word registered for a canonical term."""
        canon = normalize_name(term)
        out: list[str] = []
        for vocab in self._s.vocabularies.values():
            for t, words in vocab.synonyms.items():
                if normalize_name(t) == canon:
                    out.extend(words)
        return list(dict.fromkeys(out))

    def vocabulary_words(self) -> dict[str, set[str]]:
        """Normalized word or phrase → canonical terms (for query understanding)."""
        return {k: set(v) for k, v in self._synonyms().items()}

    def class_of_term(self, term: str) -> ClassExtension | None:
        key = normalize_name(term)
        for vocab in self._s.vocabularies.values():
            for ext in vocab.class_extensions:
                if normalize_name(ext.term) == key:
                    return ext
        return None
