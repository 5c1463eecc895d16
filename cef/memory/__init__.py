"""Universal semantic memory: one API for every domain, extended by vocabulary, not code.

* :class:`SemanticMemory` — ``retrieve_context(query | [queries], constraints)``,
  ``ingest(content, content_type, metadata)``, ``update(observation)``,
  ``record_feedback``, ``supersede`` and ``changed_since``; :func:`open_memory`
  opens one on a SQLite file.
* :class:`SchemaRegistry` — the knowledge base's own registry (``kb.schema``):
  node types (under the universal :class:`NodeKind` kinds), edge types,
  vocabularies, ingestion pipelines; :class:`SemanticMemoryExtension` bundles
  them per domain; :func:`load_extension` loads one from a file, a module or an
  installed entry point.
* :class:`ContextBundle` — core facts, supporting facts, beliefs, temporal
  context and conflicts, packed into a token budget; ``to_text(format)``.
"""

from cef.context.facts import BeliefInfo, Conflict, Fact, ObservationRef, Relation, TemporalChange
from cef.memory.beliefs import Observation, ObservationSource, SourceType, UpdateResult
from cef.memory.bundle import ContextBundle, TemporalContext
from cef.memory.memory import IngestReport, SemanticMemory, SupersedeResult, open_memory
from cef.memory.plugins import load_extension
from cef.memory.retrieval import RetrievalConstraints
from cef.memory.temporal import FactChange, TemporalConstraint
from cef.schema.kinds import UNIVERSAL_RELATIONS, NodeKind
from cef.schema.pipelines import ContentParser, Decomposer, IngestContext
from cef.schema.registry import SchemaRegistry
from cef.schema.specs import EdgeTypeSpec, NodeTypeSpec, SemanticMemoryExtension, Vocabulary

__all__ = [
    "UNIVERSAL_RELATIONS",
    "BeliefInfo",
    "Conflict",
    "ContentParser",
    "ContextBundle",
    "Decomposer",
    "EdgeTypeSpec",
    "Fact",
    "FactChange",
    "IngestContext",
    "IngestReport",
    "NodeKind",
    "NodeTypeSpec",
    "Observation",
    "ObservationRef",
    "ObservationSource",
    "Relation",
    "RetrievalConstraints",
    "SchemaRegistry",
    "SemanticMemory",
    "SemanticMemoryExtension",
    "SourceType",
    "SupersedeResult",
    "TemporalChange",
    "TemporalConstraint",
    "TemporalContext",
    "UpdateResult",
    "Vocabulary",
    "load_extension",
    "open_memory",
]
