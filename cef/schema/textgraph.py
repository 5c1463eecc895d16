"""The built-in text-graph vocabulary: the labels, relation types and ids ingest writes from plain text.

:class:`~cef.ingest.enrich.EntityEnricher` writes these records and the
retrieval stages (:mod:`cef.retrieve`) read them:

* ``Passage`` nodes (id ``passage:<chunk id>``) for chunks without a node of their own;
* ``Entity`` nodes (id ``entity:<normalized name>``) for names found in text;
* ``MENTIONS`` edges (passage → entity; inverse ``MENTIONED_IN``), ``CO_OCCURS_WITH``
  edges between entities of one passage and ``SYNONYM`` edges between names that embed alike.
"""

from __future__ import annotations

import re

from cef.model import Node, RelationSemantics, RelationType, stable_id

__all__ = [
    "CONTAINER_LABELS",
    "CONTAINER_RELATIONS",
    "CO_OCCURS_WITH",
    "ENTITY_LABEL",
    "MENTIONED_IN",
    "MENTIONS",
    "PASSAGE_LABEL",
    "RELATION_TYPES",
    "SHARED_LABELS",
    "SYNONYM",
    "TEXT_GRAPH_RELATIONS",
    "TITLE_TYPE",
    "entity_id",
    "is_extracted",
    "passage_id",
    "relation_type_name",
]

ENTITY_LABEL = "Entity"
PASSAGE_LABEL = "Passage"
MENTIONS = "MENTIONS"
MENTIONED_IN = "MENTIONED_IN"
CO_OCCURS_WITH = "CO_OCCURS_WITH"
SYNONYM = "SYNONYM"
#: mention type of a chunk's title entity
TITLE_TYPE = "TITLE"
#: labels of nodes extracted from text: many files may mention one, and ingest removes it only when
#: nothing references it any more
SHARED_LABELS = frozenset({ENTITY_LABEL})
#: labels of nodes that stand for text containers: never merge targets, never answers of a relation walk.
#: A user's domain may use the same words for things ("Section" of an orchestra, a "Document" of a
#: contract): such a node holds a relation of its domain and is no container (see
#: :data:`CONTAINER_RELATIONS`, :func:`cef.retrieve.entityparts.is_text_container`)
CONTAINER_LABELS = frozenset({PASSAGE_LABEL, "Document", "Section"})
#: the typed relations ingest writes between text containers (a note's heading sections, its links:
#: :mod:`cef.ingest.notelinks`); any other typed relation makes a node of a container label a thing
CONTAINER_RELATIONS = frozenset({"HAS_SECTION", "LINKS_TO"})

#: relations ingest derives from text: walked by PPR, never as facts between things
TEXT_GRAPH_RELATIONS = frozenset({MENTIONS, CO_OCCURS_WITH, SYNONYM})

RELATION_TYPES = (
    RelationType(
        name=MENTIONS,
        semantics=RelationSemantics.REFERENCE,
        inverse=MENTIONED_IN,
        description="a passage mentions an entity (offsets, mention text and type in the properties)",
    ),
    RelationType(
        name=CO_OCCURS_WITH,
        semantics=RelationSemantics.ASSOCIATION,
        bidirectional=True,
        description="two entities are mentioned in the same passage (count, doc_count, avg_proximity)",
    ),
    RelationType(
        name=SYNONYM,
        semantics=RelationSemantics.ASSOCIATION,
        bidirectional=True,
        description="two entity names that embed alike (confidence = cosine similarity)",
    ),
)

_MAX_ID = 480


def entity_id(key: str, scope: str | None = None) -> str:
    """The id of the ``Entity`` node of a normalized name (hashed when very long); text of a scope
    makes its entities in that scope's namespace (``<scope>:entity:...``), so two tenants that name
    the same thing never share, or see, each other's entity."""
    base = f"entity:{key}" if len(key) <= _MAX_ID else stable_id("entity", key)
    return base if scope is None else f"{scope}:{base}"


def passage_id(chunk_id: str) -> str:
    """The id of the ``Passage`` node of a chunk that has no node of its own."""
    return f"passage:{chunk_id}" if len(chunk_id) <= _MAX_ID else stable_id("passage", chunk_id)


def is_extracted(node: Node) -> bool:
    """A node ingest made from text (an ``Entity`` node with an ``entity:`` id), not one a user wrote."""
    return node.label == ENTITY_LABEL and node.id.startswith("entity:")


def relation_type_name(predicate: str) -> str | None:
    """A relation type name for an extracted predicate: ``works for`` → ``WORKS_FOR`` (None if nothing is left)."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", predicate.strip()).strip("_").upper()[:100]
    if not name:
        return None
    return name if not name[0].isdigit() else f"R_{name}"
