"""The extension registry: node types, edge types, vocabularies and ingestion pipelines.

Domains extend the vocabulary, never the API::

    reg = memory.get_extension_registry()
    reg.register_node_type("medication", parent_kind=NodeKind.CLASS, schema={"generic_name": "string"})
    reg.register_edge_type("prescribed_to", source_types=["medication"], target_types=["patient"], inverse="takes")
    reg.register_vocabulary("pharma", synonyms={"patient": ["client", "subject"]})

Every write to the knowledge base is checked against what is registered (the
registry plugs into ``KnowledgeIndexer.validators`` and its ``is_a`` hook, so
``source_types=["instance"]`` accepts any node type under the instance kind).
Registrations persist in the store's meta table (``memory.registry.*``) and are
reloaded on open. Callables (validation functions, parsers, extensions) persist
by import path and are restored when they can be imported; an extension class
restored on open registers its callables again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as PydanticValidationError

from cef.errors import UnknownNodeTypeError, ValidationError
from cef.model import Batch, Edge, Node, RelationSemantics
from cef.schema.kinds import NodeKind
from cef.schema.lookups import PendingRegistrations, RegistryState, TypeLookups
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
    check_properties,
    import_path,
    instantiate,
    load_object,
    merge_endpoint_types,
    property_schema,
    relation_key,
    run_validation,
)

if TYPE_CHECKING:
    from cef.engine.indexer import KnowledgeIndexer
    from cef.engine.kb import KnowledgeBase
    from cef.schema.pipelines import ContentParser, Decomposer

__all__ = ["META_PREFIX", "ExtensionRegistry"]

log = logging.getLogger(__name__)

META_PREFIX = "memory.registry."


class ExtensionRegistry(TypeLookups):
    """Registered node types, edge types, vocabularies and pipelines of one knowledge base."""

    def __init__(self, kb: KnowledgeBase, owner: Any = None) -> None:
        self.kb = kb
        self.owner = owner  # what extensions receive in register() (the SemanticMemory)
        self._state = RegistryState()
        self._pending: PendingRegistrations | None = None
        self._is_a_cache: dict[tuple[str, str], bool] = {}
        self._synonym_index: dict[str, set[str]] | None = None
        self._version: Any = None

    # ------------------------------------------------------------ hooks
    def install(self) -> None:
        """Plug the registry into the knowledge base's indexer (validators and ``is_a``)."""
        indexer = self.kb.indexer
        if not any(getattr(v, "__self__", None) is self for v in indexer.validators):
            indexer.validators.append(self.validate)
        indexer.is_a = self.is_a  # type: ignore[attr-defined]

    def uninstall(self) -> None:
        indexer = self.kb.indexer
        indexer.validators[:] = [v for v in indexer.validators if getattr(v, "__self__", None) is not self]
        if getattr(indexer, "is_a", None) == self.is_a:
            del indexer.is_a  # type: ignore[attr-defined]

    # ------------------------------------------------------------ batching
    @contextmanager
    def batch(self) -> Iterator[ExtensionRegistry]:
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
            meta = dict(pending.meta)
            meta[META_PREFIX + "version"] = (self.kb.store.get_meta(META_PREFIX + "version") or 0) + 1
            self.kb.indexer.upsert_batch(
                Batch(relation_types=list(pending.relation_types.values())), meta=meta
            )
            self._version = meta[META_PREFIX + "version"]
        self._state = pending.state
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
        """Register (or widen) a node type under a universal kind or another registered node type.

        ``schema`` maps property names to a type (``string``, ``int``, ``float``,
        ``bool``, ``date``, ``datetime``, ``list``, ``dict``, ``any``) or to
        ``{"type": ..., "required": True}``; ``required`` names required
        properties. ``validation`` is called with each written node and refuses
        it by raising ``ValueError`` or returning ``False`` or a message.
        ``parent_type`` is an alias of ``parent_kind`` (the seed's spelling).
        """
        parent = str(parent_type if parent_type is not None else parent_kind)
        what = f"node type {name!r}"
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise ValidationError(f"{what}: a type name is letters, digits and underscores")
        kinds = {k.value for k in NodeKind}
        s = self._s
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
            if old is not None and old.parent != parent:
                raise ValidationError(
                    f"{what} is already registered under {old.parent!r}; it cannot move under {parent!r}"
                )
            merged = dict(old.properties) if old else {}
            for key, spec in props.items():
                prev = merged.get(key)
                if prev is not None and prev.type != spec.type and "any" not in (prev.type, spec.type):
                    raise ValidationError(
                        f"{what}: property {key!r} is already registered as {prev.type}, not {spec.type}"
                    )
                merged[key] = spec
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
        """Register (or widen) an edge type; it becomes a relation type of the knowledge base.

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
        g = self.kb.state.graph
        inverse_of = {rt.inverse: rt.name for rt in g.rel_types.values() if rt.inverse}
        if name in inverse_of:
            raise ValidationError(
                f"{what}: {name!r} is already the inverse of {inverse_of[name]!r}; write edges under that name"
            )
        with self.batch():
            s = self._s
            old = s.edge_types.get(name)
            existing_rt = g.rel_types.get(name)
            if old is None and existing_rt is not None:
                # a relation type registered outside the memory: adopt its attributes
                old = EdgeTypeSpec(
                    name=name,
                    source_types=list(existing_rt.source_types),
                    target_types=list(existing_rt.target_types),
                    inverse=existing_rt.inverse,
                    semantics=existing_rt.semantics,
                    bidirectional=existing_rt.bidirectional,
                    description=existing_rt.description,
                )
            if old is not None:
                if inverse is not None and old.inverse is not None and inverse != old.inverse:
                    raise ValidationError(
                        f"{what}: already registered with inverse {old.inverse!r}, not {inverse!r}"
                    )
                merged = dict(old.properties)
                for key, spec in props.items():
                    prev = merged.get(key)
                    if prev is not None and prev.type != spec.type and "any" not in (prev.type, spec.type):
                        raise ValidationError(
                            f"{what}: property {key!r} is already registered as {prev.type}, not {spec.type}"
                        )
                    merged[key] = spec
                spec_new = EdgeTypeSpec(
                    name=name,
                    source_types=merge_endpoint_types(old.source_types, list(source_types or [])),
                    target_types=merge_endpoint_types(old.target_types, list(target_types or [])),
                    properties=merged,
                    inverse=old.inverse or inverse,
                    semantics=old.semantics,
                    bidirectional=old.bidirectional or bidirectional,
                    description=old.description or description,
                    domain=old.domain or domain,
                )
            else:
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
            if spec_new != s.edge_types.get(name):
                s.edge_types[name] = spec_new
                self._put(f"edge.{name}", spec_new.model_dump(mode="json"))
            rt = spec_new.relation_type()
            if existing_rt is None or relation_key(existing_rt) != relation_key(rt):
                assert self._pending is not None
                self._pending.relation_types[name] = rt
        return self._s.edge_types[name]

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
    def register_extension(self, extension: SemanticMemoryExtension | Registers) -> None:
        """Run an extension's ``register`` in one batch (all of it is registered, or none)."""
        name = getattr(extension, "name", "")
        if not isinstance(name, str) or not name:
            raise ValidationError(f"extension {extension!r} needs a non-empty name")
        if not callable(getattr(extension, "register", None)):
            raise ValidationError(f"extension {name!r} needs a register(memory) method")
        with self.batch():
            extension.register(self.owner if self.owner is not None else self)
            s = self._s
            path = import_path(type(extension))
            if s.extensions.get(name, "") != path:
                s.extensions[name] = path
                self._put(f"extension.{name}", path)

    def set_strict(self, strict: bool) -> None:
        """Strict: nodes whose label is neither a kind nor a registered type are refused."""
        with self.batch():
            if self._s.strict != strict:
                self._s.strict = strict
                self._put("strict", strict)

    # -------------------------------------------------------------- loading
    def load(self, *, restore: bool = True) -> None:
        """Read registrations from the store; with ``restore``, re-import extensions and parsers."""
        state = RegistryState()
        for key, value in self.kb.store.meta_items(META_PREFIX):
            kind, _, name = key[len(META_PREFIX) :].partition(".")
            try:
                if kind == "node":
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
                    self._version = value
            except PydanticValidationError as exc:
                log.warning("ignoring unreadable registry entry %s: %s", key, exc)
        # keep live objects registered in this process
        state.validations = dict(self._state.validations)
        state.parsers = dict(self._state.parsers)
        self._state = state
        self._changed()
        if restore:
            self._restore()

    def refresh(self) -> None:
        """Reload if another process changed the registry."""
        if self._pending is None and self.kb.store.get_meta(META_PREFIX + "version") != self._version:
            self.load(restore=False)

    def _restore(self) -> None:
        s = self._state
        for name, path in list(s.extensions.items()):
            if not path:
                continue
            try:
                cls = load_object(path)
                if not isinstance(cls, type) or not issubclass(cls, SemanticMemoryExtension):
                    raise TypeError(f"{path} is not a SemanticMemoryExtension")
                self.register_extension(cls())
            except Exception as exc:
                log.warning("extension %r (%s) could not be restored: %s", name, path, exc)
        for ctype, spec in list(s.pipelines.items()):
            if ctype in self._state.parsers or spec.parser is None:
                continue
            try:
                parser = instantiate(spec.parser, "parse")
                decomposer = instantiate(spec.decomposer, "decompose") if spec.decomposer else None
            except Exception as exc:
                log.warning("pipeline %r could not be restored: %s", ctype, exc)
                continue
            self._state.parsers[ctype] = (parser, decomposer)
        for name, ntype in s.node_types.items():
            if ntype.validation and name not in self._state.validations:
                try:
                    fn = load_object(ntype.validation)
                    if callable(fn):
                        self._state.validations[name] = fn
                except Exception as exc:
                    log.warning("validation of node type %r could not be restored: %s", name, exc)

    # ----------------------------------------------------------- validation
    def validate(
        self, nodes: Sequence[Node], edges: Sequence[Edge], indexer: KnowledgeIndexer | None = None
    ) -> None:
        """Check writes against registered types (the ``KnowledgeIndexer.validators`` hook)."""
        s = self._s
        kinds = {k.value for k in NodeKind}
        for i, node in enumerate(nodes):
            where = f"node {node.id!r} (nodes[{i}], type {node.label!r})"
            spec = s.node_types.get(node.label)
            if spec is None:
                if s.strict and node.label not in kinds:
                    raise UnknownNodeTypeError(
                        f"{where}: type {node.label!r} is not registered (strict registry); "
                        f"register it with register_node_type or use a universal kind"
                    )
            else:
                for label in self.ancestors(node.label):
                    parent_spec = s.node_types.get(label)
                    if parent_spec is not None:
                        check_properties(node.properties, parent_spec.properties, where)
                for label in self.ancestors(node.label):
                    check = s.validations.get(label)
                    if check is not None:
                        run_validation(check, node, where)
            if node.version > 1 and self.is_a(node.label, NodeKind.OBSERVATION.value):
                raise ValidationError(
                    f"{where}: observations are immutable; record a new observation instead"
                )
        for i, edge in enumerate(edges):
            espec = s.edge_types.get(edge.relation_type)
            if espec is not None and espec.properties:
                check_properties(
                    edge.properties, espec.properties, f"edge {edge.id!r} (edges[{i}], {edge.relation_type})"
                )
