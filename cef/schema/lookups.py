"""The registry's state and the read-only questions asked of it: type hierarchy, kinds, synonyms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cef.extract.normalize import normalize_name
from cef.model import RelationType
from cef.schema.kinds import NodeKind
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
    """Read-only lookups over a :class:`RegistryState` (mixed into the registry)."""

    _state: RegistryState
    _pending: PendingRegistrations | None
    _is_a_cache: dict[tuple[str, str], bool]
    _synonym_index: dict[str, set[str]] | None

    @property
    def _s(self) -> RegistryState:
        """The state being read: the pending one inside :meth:`ExtensionRegistry.batch`, else the current one."""
        return self._pending.state if self._pending is not None else self._state

    # -------------------------------------------------------------- lookups
    @property
    def node_types(self) -> dict[str, NodeTypeSpec]:
        return dict(self._s.node_types)

    @property
    def edge_types(self) -> dict[str, EdgeTypeSpec]:
        return dict(self._s.edge_types)

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

    def node_type(self, name: str) -> NodeTypeSpec | None:
        return self._s.node_types.get(name)

    def edge_type(self, name: str) -> EdgeTypeSpec | None:
        return self._s.edge_types.get(name)

    def pipeline(self, content_type: str) -> tuple[ContentParser, Decomposer | None] | None:
        return self._s.parsers.get(content_type.strip().lower())

    def content_type_for_suffix(self, suffix: str) -> str | None:
        suffix = suffix.lower()
        for ctype, spec in self._s.pipelines.items():
            if suffix in spec.extensions:
                return ctype
        return None

    @staticmethod
    def _walk_is_a(s: RegistryState, label: str, ancestor: str) -> bool:
        seen: set[str] = set()
        cur: str | None = label
        while cur is not None and cur not in seen:
            if cur == ancestor:
                return True
            seen.add(cur)
            spec = s.node_types.get(cur)
            cur = spec.parent if spec is not None else None
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
        """The universal kind above a label (a kind label is its own kind); None when unregistered."""
        s = self._s
        seen: set[str] = set()
        cur: str | None = label
        while cur is not None and cur not in seen:
            seen.add(cur)
            spec = s.node_types.get(cur)
            if spec is None:
                break
            cur = spec.parent
            if cur == spec.name:
                break
        try:
            return NodeKind(cur) if cur is not None else None
        except ValueError:
            return None

    def ancestors(self, label: str) -> list[str]:
        """``label`` and every registered parent above it, nearest first."""
        out: list[str] = []
        cur: str | None = label
        while cur is not None and cur not in out:
            out.append(cur)
            spec = self._s.node_types.get(cur)
            cur = spec.parent if spec is not None else None
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
