"""Entity extraction: contracts, name normalization, spaCy NER, gazetteer, co-occurrence."""

from cef.extract.base import EntityExtractor, Extraction, Mention, RelationExtractor, RelationMention
from cef.extract.cooccur import CoOccurrence, cooccurrence
from cef.extract.normalize import (
    SynonymPair,
    alias_keys,
    dedupe_mentions,
    group_pairs,
    near_duplicates,
    normalize_name,
    strip_disambiguation,
)

__all__ = [
    "CoOccurrence",
    "EntityExtractor",
    "Extraction",
    "Mention",
    "RelationExtractor",
    "RelationMention",
    "SynonymPair",
    "alias_keys",
    "cooccurrence",
    "dedupe_mentions",
    "group_pairs",
    "near_duplicates",
    "normalize_name",
    "strip_disambiguation",
]
