"""Extractor contracts: entity mentions (and optional relation mentions) found in text.

Any extractor — the offline spaCy one here, a gazetteer, or an LLM later — returns
the same records, so the graph builder does not care where a mention came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Mention:
    """One entity mention in one text.

    ``start``/``end`` are character offsets into the text (``end`` exclusive);
    ``normalized`` is the match key (see :func:`cef.extract.normalize.normalize_name`);
    ``type`` is the entity type (spaCy label, ``TITLE``, or the gazetteer entry's type);
    ``source`` names the extractor (``spacy``, ``title``, ``gazetteer``, ``llm`` ...).
    """

    text: str
    normalized: str
    type: str
    start: int
    end: int
    confidence: float = 1.0
    source: str = ""


@dataclass(frozen=True, slots=True)
class RelationMention:
    """A (subject, predicate, object) statement found in one text."""

    subject: Mention
    predicate: str
    object: Mention
    confidence: float = 1.0
    source: str = ""
    evidence: str = ""


@dataclass(slots=True)
class Extraction:
    """Mentions and relations of one text."""

    mentions: list[Mention] = field(default_factory=list)
    relations: list[RelationMention] = field(default_factory=list)


@runtime_checkable
class EntityExtractor(Protocol):
    """Finds entity mentions in a batch of texts.

    ``titles`` (optional, aligned with ``texts``) are the texts' titles; an
    extractor may treat a title as an entity the text is about.
    Returns one list of mentions per text, in text order.
    """

    def extract(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[list[Mention]]: ...


@runtime_checkable
class RelationExtractor(Protocol):
    """Optional: extractors that also find relations implement this too."""

    def extract_relations(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[Extraction]: ...
