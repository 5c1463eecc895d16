"""The schema registry: the vocabulary of a knowledge base, and the one check of every write.

Every knowledge base owns one (``kb.schema``). It holds

* node types: each label with its parent (a universal kind, another node type,
  or ``unknown``), description, property schema and validation. A label is
  registered when first written (its kind inferred from its name,
  :func:`~cef.schema.kinds.infer_kind`) or when declared::

      kb.schema.register_node_type("medication", parent_kind=NodeKind.CLASS, schema={"generic_name": "string"})

* relation types (semantics, inverse, endpoint types, description): the store's
  relation-type records; a batch's ``relation_types`` or a declaration registers one::

      kb.schema.register_edge_type("prescribed_to", source_types=["medication"], inverse="takes")

* vocabularies and ingestion pipelines a domain registers (the semantic memory's
  extensions register into this same registry).

The engine's indexer runs :meth:`~cef.schema.checks.WriteChecks.check_write`
on every write, in its transaction. Registrations persist in the store's meta
table (``schema.*``, read on open and followed through the change feed, so
every process sees them); callables (validations, parsers, extensions) persist
by import path and come back only through :meth:`SchemaRegistry.restore` (the
semantic memory opening with ``restore_extensions``): opening a knowledge base
never runs code named in its store.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError as PydanticValidationError

from cef.errors import UnknownNodeTypeError, ValidationError
from cef.model import RelationSemantics, RelationType
from cef.schema.checks import META_PREFIX, WriteChecks
from cef.schema.kinds import NodeKind
from cef.schema.lookups import PendingRegistrations, RegistryState
from cef.schema.specs import (
    NAME_PATTERN,
    ClassExtension,
    EdgeTypeSpec,
    NodeTypeSpec,
    NodeValidation,
    PipelineSpec,
    Registers,
    SemanticMemoryExtension,
    Vocabulary,
    import_path,
    instantiate,
    load_object,
    merge_endpoint_types,
    property_schema,
    relation_key,
)
from cef.store.base import WriteSet

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.schema.pipelines import ContentParser, Decomposer
    from cef.store.base import RecordStore

__all__ = ["LEGACY_PREFIX", "META_PREFIX", "SchemaHost", "SchemaRegistry"]

log = logging.getLogger(__name__)

#: where registrations were kept before the registry was the knowledge base's (read on open)
LEGACY_PREFIX = "memory.registry."


class SchemaHost(Protocol):
    """What the registry reads and writes through (:class:`~cef.engine.state.EngineState` is one)."""

    @property
    def store(self) -> RecordStore: ...

    @property
    def graph(self) -> GraphIndex: ...

    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    def sync(self) -> None: ...

    def reading(self) -> AbstractContextManager[None]: ...

    def commit(self, writes: WriteSet) -> None: ...


class SchemaRegistry(WriteChecks):
    """The node types, relation types, vocabularies and pipelines of one knowledge base."""

    def __init__(self, host: SchemaHost) -> None:
        self.host = host
        self._state = RegistryState()
        self._local = threading.local()  # a registration batch belongs to the thread that opened it
        self._is_a_cache: dict[tuple[str, str], bool] = {}
        self._synonym_index: dict[str, set[str]] | None = None
        self._node_checks = (self._state, {})
        self._version = 0

    def _relations(self) -> Mapping[str, RelationType]:
        return self.host.graph.rel_types

    @property
    def _pending(self) -> PendingRegistrations | None:
        """This thread's open registration batch (a write in another thread never reads it)."""
        return getattr(self._local, "pending", None)

    @_pending.setter
    def _pending(self, value: PendingRegistrations | None) -> None:
        self._local.pending = value

    # ------------------------------------------------------------ batching
    @contextmanager
    def batch(self) -> Iterator[SchemaRegistry]:
        """Group registrations into one transaction: all are written, or none (and none apply)."""
        if self._pending is not None:
            yield self
            return
        self._pending = PendingRegistrations(self._state.copy())
        try:
            yield self
            pending = self._pending
        finally:
            self._pending = None
        self._flush(pending)

    def _flush(self, pending: PendingRegistrations) -> None:
        if pending.relation_types or pending.meta:
            host = self.host
            with host.lock:
                host.sync()
                declared = list(pending.relation_types.values())
                self.check_relation_types(declared)
                meta = {**pending.meta, META_PREFIX + "version": self._version + 1}
                host.commit(WriteSet(relation_types=declared, meta=meta))  # the engine absorbs the meta
                self._version = meta[META_PREFIX + "version"]
        # what was written is in the state now (with any other thread's commits); add the live objects
        state = self._state.copy()
        state.validations.update(pending.state.validations)
        state.parsers.update(pending.state.parsers)
        self._state = state
        self._changed()

    def _changed(self) -> None:
        self._is_a_cache.clear()
        self._synonym_index = None

    def _put(self, key: str, value: Any) -> None:
        assert self._pending is not None
        self._pending.meta[META_PREFIX + key] = value

    # ----------------------------------------------------------- node types
    def register_node_type(
        self,
        name: str,
        parent_kind: NodeKind | str = NodeKind.INSTANCE,
        schema: Mapping[str, Any] | None = None,
        validation: NodeValidation | None = None,
        *,
        required: Sequence[str] = (),
        description: str = "",
        domain: str | None = None,
        parent_type: NodeKind | str | None = None,
    ) -> NodeTypeSpec:
        """Declare (or widen) a node type under a universal kind or another registered node type.

        ``schema`` maps property names to a type (``string``, ``int``, ``float``,
        ``bool``, ``date``, ``datetime``, ``list``, ``dict``, ``any``) or to
        ``{"type": ..., "required": True}``; ``required`` names required
        properties. ``validation`` is called with each written node and refuses
        it by raising ``ValueError`` or returning ``False`` or a message.
        ``parent_type`` is an alias of ``parent_kind`` (the seed's spelling). A
        label registered only by being written is placed by its first declaration.
        """
        parent = str(parent_type if parent_type is not None else parent_kind)
        what = f"node type {name!r}"
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise ValidationError(f"{what}: a type name is letters, digits and underscores")
        kinds = {k.value for k in NodeKind}
        s = self._s
        if name in kinds and parent != name:
            raise ValidationError(
                f"{what}: a universal kind is the root of its types, never under {parent!r}"
            )
        if parent not in kinds and parent not in s.node_types:
            raise UnknownNodeTypeError(
                f"{what}: parent {parent!r} is neither a universal kind ({', '.join(sorted(kinds))}) "
                "nor a registered node type"
            )
        if parent != name and parent in s.node_types and self._walk_is_a(s, parent, name):
            raise ValidationError(f"{what}: parent {parent!r} is already a subtype of {name!r}")
        props = property_schema(schema, required, what)
        with self.batch():
            s = self._s
            old = s.node_types.get(name)
            if old is not None and old.declared and old.parent != parent:
                raise ValidationError(
                    f"{what} is already registered under {old.parent!r}; it cannot move under {parent!r}"
                )
            merged = _merged_properties(what, old.properties if old else {}, props)
            path = import_path(validation) if validation is not None else None
            spec_new = NodeTypeSpec(
                name=name,
                parent=parent,
                properties=merged,
                description=description or (old.description if old else ""),
                validation=path or (old.validation if old else None),
                domain=domain or (old.domain if old else None),
            )
            if validation is not None:
                s.validations[name] = validation
            if spec_new != old:
                s.node_types[name] = spec_new
                self._put(f"node.{name}", spec_new.model_dump(mode="json"))
        return self._s.node_types[name]

    # ----------------------------------------------------------- edge types
    def register_edge_type(
        self,
        name: str,
        source_types: Sequence[str] | None = None,
        target_types: Sequence[str] | None = None,
        properties_schema: Mapping[str, Any] | None = None,
        inverse: str | None = None,
        semantics: RelationSemantics | str = RelationSemantics.ASSOCIATION,
        *,
        bidirectional: bool = False,
        required: Sequence[str] = (),
        description: str = "",
        domain: str | None = None,
    ) -> EdgeTypeSpec:
        """Declare (or widen) a relation type, with a property schema for its edges.

        Registering a name again widens it: endpoint types are united (an empty
        list on either side means any) and property schemas merged. The graph
        walks ``inverse`` automatically and edges may be written under it.
        """
        what = f"edge type {name!r}"
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise ValidationError(f"{what}: a type name is letters, digits and underscores")
        if inverse is not None and (not NAME_PATTERN.match(inverse) or inverse == name):
            raise ValidationError(f"{what}: inverse {inverse!r} must be another valid name")
        try:
            sem = RelationSemantics(str(semantics).upper())
        except ValueError:
            raise ValidationError(
                f"{what}: unknown semantics {semantics!r}; use one of {[s.value for s in RelationSemantics]}"
            ) from None
        props = property_schema(properties_schema, required, what)
        inverse_of = {rt.inverse: rt.name for rt in self.relation_types.values() if rt.inverse}
        if name in inverse_of:
            raise ValidationError(
                f"{what}: {name!r} is already the inverse of {inverse_of[name]!r}; write edges under that name"
            )
        with self.batch():
            existing = self.relation_type(name)
            if existing is None:
                spec_new = EdgeTypeSpec(
                    name=name,
                    source_types=list(dict.fromkeys(source_types or [])),
                    target_types=list(dict.fromkeys(target_types or [])),
                    properties=props,
                    inverse=inverse,
                    semantics=sem,
                    bidirectional=bidirectional,
                    description=description,
                    domain=domain,
                )
            else:
                spec_new = self._widened(
                    EdgeTypeSpec.of(existing, self._s.edge_types.get(name)),
                    list(source_types or []),
                    list(target_types or []),
                    props,
                    inverse=inverse,
                    bidirectional=bidirectional,
                    description=description,
                    domain=domain,
                )
            if spec_new != self._s.edge_types.get(name):
                self._s.edge_types[name] = spec_new
                self._put(f"edge.{name}", spec_new.model_dump(mode="json"))
            rt = spec_new.relation_type()
            if existing is not None:  # keep what the record says beyond the spec (parent end, metadata)
                kept = ("source_types", "target_types", "inverse", "bidirectional", "description")
                rt = existing.model_copy(update={k: getattr(rt, k) for k in kept})
            if existing is None or relation_key(existing) != relation_key(rt):
                assert self._pending is not None
                self._pending.relation_types[name] = rt
        return spec_new

    @staticmethod
    def _widened(
        old: EdgeTypeSpec,
        source_types: list[str],
        target_types: list[str],
        props: Mapping[str, Any],
        *,
        inverse: str | None,
        bidirectional: bool,
        description: str,
        domain: str | None,
    ) -> EdgeTypeSpec:
        what = f"edge type {old.name!r}"
        if inverse is not None and old.inverse is not None and inverse != old.inverse:
            raise ValidationError(f"{what}: already registered with inverse {old.inverse!r}, not {inverse!r}")
        merged = _merged_properties(what, old.properties, props)
        return EdgeTypeSpec(
            name=old.name,
            source_types=merge_endpoint_types(old.source_types, source_types),
            target_types=merge_endpoint_types(old.target_types, target_types),
            properties=merged,
            inverse=old.inverse or inverse,
            semantics=old.semantics,
            bidirectional=old.bidirectional or bidirectional,
            description=old.description or description,
            domain=old.domain or domain,
        )

    # ---------------------------------------------------------- vocabulary
    def register_vocabulary(
        self,
        domain: str,
        synonyms: Mapping[str, Sequence[str]] | None = None,
        class_extensions: Sequence[tuple[str, str, str] | tuple[str, str] | ClassExtension] | None = None,
        *,
        wordnet_extensions: Sequence[tuple[str, str, str] | tuple[str, str]] | None = None,
    ) -> Vocabulary:
        """Register (or extend) a domain's synonyms and class extensions.

        ``synonyms`` maps a canonical term to other words for it; query
        understanding maps those words back to the term (and to its node type,
        if the term names one), and anchor resolution tries the term's names.
        ``class_extensions`` (alias ``wordnet_extensions``) are ``(term,
        class_id, gloss)`` triples such as ``("metformin", "medication.n.01",
        "Diabetes medication")``.
        """
        if not isinstance(domain, str) or not domain.strip():
            raise ValidationError("register_vocabulary: domain must be a non-empty string")
        syn: dict[str, list[str]] = {}
        for term, words in (synonyms or {}).items():
            if not isinstance(term, str) or not term.strip():
                raise ValidationError(f"vocabulary {domain!r}: terms must be non-empty strings, got {term!r}")
            if isinstance(words, str) or not all(isinstance(w, str) and w.strip() for w in words):
                raise ValidationError(f"vocabulary {domain!r}: synonyms of {term!r} must be a list of words")
            syn[term.strip()] = [w.strip() for w in words]
        ext: list[ClassExtension] = []
        for item in [*(class_extensions or []), *(wordnet_extensions or [])]:
            if isinstance(item, ClassExtension):
                ext.append(item)
                continue
            if not isinstance(item, tuple | list) or len(item) not in (2, 3):
                raise ValidationError(
                    f"vocabulary {domain!r}: class extensions are (term, class_id, gloss) tuples, got {item!r}"
                )
            ext.append(
                ClassExtension(term=item[0], class_id=item[1], gloss=item[2] if len(item) == 3 else "")
            )
        with self.batch():
            s = self._s
            old = s.vocabularies.get(domain)
            merged = {k: list(v) for k, v in (old.synonyms if old else {}).items()}
            for term, words in syn.items():
                merged[term] = list(dict.fromkeys([*merged.get(term, []), *words]))
            exts = list(dict.fromkeys([*(old.class_extensions if old else []), *ext]))
            vocab = Vocabulary(domain=domain, synonyms=merged, class_extensions=exts)
            if vocab != old:
                s.vocabularies[domain] = vocab
                self._put(f"vocab.{domain}", vocab.model_dump(mode="json"))
        return self._s.vocabularies[domain]

    # ----------------------------------------------------------- pipelines
    def register_ingestion_pipeline(
        self,
        content_type: str,
        parser: ContentParser,
        decomposer: Decomposer | None = None,
        *,
        extensions: Sequence[str] = (),
        domain: str | None = None,
    ) -> PipelineSpec:
        """Register the parser (and optional decomposer) ``ingest`` runs for ``content_type``.

        ``parser.parse(content, context)`` returns a :class:`~cef.model.Batch`;
        ``decomposer.decompose(batch, context)`` may add to it (entities,
        mentions). ``extensions`` are the file suffixes a folder ingest picks
        for this content type (``.py``).
        """
        if not isinstance(content_type, str) or not content_type.strip():
            raise ValidationError("register_ingestion_pipeline: content_type must be a non-empty string")
        if not callable(getattr(parser, "parse", None)):
            raise ValidationError(
                f"pipeline {content_type!r}: the parser needs a parse(content, context) method"
            )
        if decomposer is not None and not callable(getattr(decomposer, "decompose", None)):
            raise ValidationError(
                f"pipeline {content_type!r}: the decomposer needs a decompose(batch, context) method"
            )
        bad = [e for e in extensions if not e.startswith(".")]
        if bad:
            raise ValidationError(f"pipeline {content_type!r}: file suffixes start with '.': {bad}")
        key = content_type.strip().lower()
        with self.batch():
            s = self._s
            spec = PipelineSpec(
                content_type=key,
                parser=import_path(type(parser)),
                decomposer=import_path(type(decomposer)) if decomposer is not None else None,
                extensions=[e.lower() for e in extensions],
                domain=domain,
            )
            s.parsers[key] = (parser, decomposer)
            if spec != s.pipelines.get(key):
                s.pipelines[key] = spec
                self._put(f"pipeline.{key}", spec.model_dump(mode="json"))
        return self._s.pipelines[key]

    # ----------------------------------------------------------- extensions
    def register_extension(self, extension: SemanticMemoryExtension | Registers, owner: Any = None) -> None:
        """Run an extension's ``register(owner)`` in one batch (all of it is registered, or none).

        ``owner`` is what the extension registers through (the semantic memory); None: this registry."""
        name = getattr(extension, "name", "")
        if not isinstance(name, str) or not name:
            raise ValidationError(f"extension {extension!r} needs a non-empty name")
        if not callable(getattr(extension, "register", None)):
            raise ValidationError(f"extension {name!r} needs a register(memory) method")
        with self.batch():
            extension.register(owner if owner is not None else self)
            s = self._s
            path = import_path(type(extension))
            if s.extensions.get(name, "") != path:
                s.extensions[name] = path
                self._put(f"extension.{name}", path)

    def get_extension_registry(self) -> SchemaRegistry:
        """This registry (what an extension registered without a memory asks for)."""
        return self

    def set_strict(self, strict: bool) -> None:
        """Strict: nodes whose label is neither a kind nor a declared type are refused."""
        with self.batch():
            if self._s.strict != strict:
                self._s.strict = strict
                self._put("strict", strict)

    # -------------------------------------------------------------- loading
    def load(self) -> None:
        """Read the registrations from the store (on open, and when another process changed them).

        Declarative parts (types, property schemas, vocabularies) apply at once; callables named by
        import path (validations, parsers, extensions) only once :meth:`restore` imported them."""
        state = RegistryState()
        store = self.host.store
        for prefix in (LEGACY_PREFIX, META_PREFIX):
            for key, value in store.meta_items(prefix):
                self._read_entry(state, key[len(prefix) :], value)
        # keep the live objects registered in this process
        state.validations = dict(self._state.validations)
        state.parsers = dict(self._state.parsers)
        self._state = state
        self._changed()

    def absorb(self, meta: Mapping[str, Any]) -> None:
        """Take in the registry entries of a commit of this process (the engine calls it)."""
        entries = [(k[len(META_PREFIX) :], v) for k, v in meta.items() if k.startswith(META_PREFIX)]
        if not entries:
            return
        state = self._state.copy()
        for key, value in entries:
            self._read_entry(state, key, value)
        self._state = state
        self._changed()

    def _read_entry(self, state: RegistryState, key: str, value: Any) -> None:
        kind, _, name = key.partition(".")
        try:
            if kind == "node":  # a declaration
                state.node_types[name] = NodeTypeSpec.model_validate(value)
            elif kind == "seen":  # a first write: never over a declaration
                known = state.node_types.get(name)
                if known is None or not known.declared:
                    state.node_types[name] = NodeTypeSpec.model_validate(value)
            elif kind == "edge":
                state.edge_types[name] = EdgeTypeSpec.model_validate(value)
            elif kind == "vocab":
                state.vocabularies[name] = Vocabulary.model_validate(value)
            elif kind == "pipeline":
                state.pipelines[name] = PipelineSpec.model_validate(value)
            elif kind == "extension":
                state.extensions[name] = value
            elif kind == "strict":
                state.strict = bool(value)
            elif kind == "version":
                self._version = max(self._version, int(value or 0))
        except (PydanticValidationError, TypeError, ValueError) as exc:
            log.warning("ignoring unreadable registry entry %s: %s", key, exc)

    def refresh(self) -> None:
        """Catch up with registrations other processes made (they come with the change feed)."""
        with self.host.reading():
            pass

    def restore(self, owner: Any = None) -> None:
        """Register the persisted extensions again (their callables come back), re-create the
        persisted pipelines' parsers and re-import the node types' validations; ``owner`` is what the
        extensions register through. Only this imports code named in the store (the semantic memory
        calls it when it opens with ``restore_extensions``); opening a knowledge base never does."""
        state = self._state.copy()
        self._restore_validations(state)
        self._state = state
        self._changed()
        s = self._state
        for name, path in list(s.extensions.items()):
            if not path:
                continue
            try:
                cls = load_object(path)
                if not isinstance(cls, type) or not issubclass(cls, SemanticMemoryExtension):
                    raise TypeError(f"{path} is not a SemanticMemoryExtension")
                self.register_extension(cls(), owner)
            except Exception as exc:
                log.warning("extension %r (%s) could not be restored: %s", name, path, exc)
        for ctype, spec in list(self._state.pipelines.items()):
            if ctype in self._state.parsers or spec.parser is None:
                continue
            try:
                parser = instantiate(spec.parser, "parse")
                decomposer = instantiate(spec.decomposer, "decompose") if spec.decomposer else None
            except Exception as exc:
                log.warning("pipeline %r could not be restored: %s", ctype, exc)
                continue
            self._state.parsers[ctype] = (parser, decomposer)

    @staticmethod
    def _restore_validations(state: RegistryState) -> None:
        for name, ntype in state.node_types.items():
            if ntype.validation and name not in state.validations:
                try:
                    fn = load_object(ntype.validation)
                    if callable(fn):
                        state.validations[name] = fn
                except Exception as exc:
                    log.warning("validation of node type %r could not be restored: %s", name, exc)


def _merged_properties(what: str, existing: Mapping[str, Any], props: Mapping[str, Any]) -> dict[str, Any]:
    """``existing`` property specs with ``props`` added; a property registered with another type is refused
    (``any`` fits every type)."""
    merged = dict(existing)
    for key, spec in props.items():
        prev = merged.get(key)
        if prev is not None and prev.type != spec.type and "any" not in (prev.type, spec.type):
            raise ValidationError(
                f"{what}: property {key!r} is already registered as {prev.type}, not {spec.type}"
            )
        merged[key] = spec
    return merged
