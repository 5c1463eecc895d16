"""Entities and relations found by an LLM, through the same records as the offline extractor.

:class:`LLMExtractor` asks a chat model, one passage at a time, for the
entities the passage names and the relations it states, each with a
confidence, as one JSON object. The answer is validated item by item: a name
the passage does not contain is dropped (a model may paraphrase or invent;
every kept mention has real character offsets), confidences are clamped to
[0, 1] (missing: :attr:`LLMExtractor.default_confidence`), and an answer that is
not JSON, or an LLM error, costs that passage its LLM mentions and leaves a
warning (:meth:`LLMExtractor.take_warnings`) — never the document.

Thresholds on the confidences are the graph builder's business
(:class:`cef.ingest.enrich.EntityEnricher` ``min_entity_confidence`` /
``min_relation_confidence``). ::

    from cef.llm import make_llm_client
    extractor = LLMExtractor(make_llm_client("ollama", model="llama3.2"))
    enricher = EntityEnricher(extractor, min_entity_confidence=0.6)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cef.errors import CefError
from cef.extract.base import Extraction, Mention, RelationMention
from cef.extract.normalize import normalize_name

if TYPE_CHECKING:
    from cef.llm.base import LLMClient

__all__ = ["SYSTEM_PROMPT", "LLMExtractor"]

log = logging.getLogger(__name__)

SYSTEM_PROMPT = """\
You extract a knowledge graph from one passage of text.

Answer with ONE JSON object and nothing else:
{{"entities": [{{"name": "<as written in the passage>", "type": "<entity type>", "confidence": <0.0-1.0>}}],
 "relations": [{{"subject": "<entity name>", "predicate": "<relation, e.g. works_for>", "object": "<entity name>",
                "confidence": <0.0-1.0>}}]}}

Rules:
- entities: the specific people, organizations, places, works, products, concepts... the passage names,
  copied exactly as they appear in it; at most {max_entities}.{types}
- relations: only what the passage states between two of those entities; predicate in snake_case;
  at most {max_relations}.
- confidence: how sure you are that the passage supports the item.
- Nothing found: {{"entities": [], "relations": []}}."""


class _Entity(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=300)
    type: str = Field(default="ENTITY", max_length=64)
    confidence: float | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, v: Any) -> Any:
        return "ENTITY" if v is None or (isinstance(v, str) and not v.strip()) else v


class _Relation(BaseModel):
    model_config = ConfigDict(extra="ignore")

    subject: str = Field(min_length=1, max_length=300)
    predicate: str = Field(min_length=1, max_length=128)
    object: str = Field(min_length=1, max_length=300)
    confidence: float | None = None


class LLMExtractor:
    """An :class:`~cef.extract.base.EntityExtractor` and :class:`~cef.extract.base.RelationExtractor` on an LLM.

    ``entity_types``: the types the model should use (free when omitted).
    ``max_chars``: passage characters sent per call (the rest is not read).
    ``default_confidence``: confidence of an item the model gave none for.
    """

    source = "llm"

    def __init__(
        self,
        client: LLMClient,
        *,
        entity_types: Sequence[str] | None = None,
        max_chars: int = 6000,
        max_entities: int = 40,
        max_relations: int = 40,
        max_mentions_per_entity: int = 20,
        default_confidence: float = 0.7,
        temperature: float | None = 0.0,
    ) -> None:
        if not 0.0 <= default_confidence <= 1.0:
            raise ValueError("default_confidence must be in [0, 1]")
        if max_chars < 1:
            raise ValueError("max_chars must be >= 1")
        self.client = client
        self.entity_types = list(entity_types or [])
        self.max_chars = max_chars
        self.max_entities = max_entities
        self.max_relations = max_relations
        self.max_mentions_per_entity = max_mentions_per_entity
        self.default_confidence = default_confidence
        self.temperature = temperature
        self._warnings: list[str] = []

    # ------------------------------------------------------------------ protocol
    def extract(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[list[Mention]]:
        return [x.mentions for x in self.extract_relations(texts, titles)]

    def extract_relations(
        self, texts: Sequence[str], titles: Sequence[str | None] | None = None
    ) -> list[Extraction]:
        out = []
        for i, text in enumerate(texts):
            title = titles[i] if titles is not None and i < len(titles) else None
            out.append(self._one(text, title))
        return out

    def take_warnings(self) -> list[str]:
        """Warnings since the last call (passages the LLM could not be read for), then forgets them."""
        warnings, self._warnings = self._warnings, []
        return warnings

    # ------------------------------------------------------------------ one passage
    def system_prompt(self) -> str:
        types = f"\n  type: one of {', '.join(self.entity_types)}." if self.entity_types else ""
        return SYSTEM_PROMPT.format(
            max_entities=self.max_entities, max_relations=self.max_relations, types=types
        )

    def _one(self, text: str, title: str | None) -> Extraction:
        if not text.strip():
            return Extraction()
        prompt = (f"Title: {title}\n\n" if title else "") + f"Passage:\n{text[: self.max_chars]}"
        where = f"passage {_excerpt(title or text)!r}"
        try:
            answer = self.client.generate(prompt, system=self.system_prompt(), temperature=self.temperature)
        except CefError as exc:
            self._warn(f"LLM extraction failed for {where}: {exc}")
            return Extraction()
        from cef.llm.base import extract_json_object

        obj = extract_json_object(answer)
        if obj is None:
            self._warn(f"LLM answer for {where} is not a JSON object: {_excerpt(answer)!r}")
            return Extraction()
        entities = self._entities(obj.get("entities"), where)
        mentions: list[Mention] = []
        first: dict[str, Mention] = {}
        for ent in entities[: self.max_entities]:
            found = self._locate(text, ent)
            if not found:
                log.debug("LLM entity %r is not in %s: dropped", ent.name, where)
                continue
            first.setdefault(found[0].normalized, found[0])
            mentions.extend(found)
        if title:  # the passage's title may be named as an endpoint without being in the text
            key = normalize_name(title)
            if key:
                first.setdefault(key, Mention(title, key, "TITLE", -1, -1, 1.0, self.source))
        relations = []
        for rel in self._relations(obj.get("relations"), where)[: self.max_relations]:
            subj = first.get(normalize_name(rel.subject))
            obj_m = first.get(normalize_name(rel.object))
            if subj is None or obj_m is None or subj.normalized == obj_m.normalized:
                log.debug("LLM relation %s is not between two entities of %s: dropped", rel, where)
                continue
            relations.append(
                RelationMention(
                    subj,
                    rel.predicate.strip(),
                    obj_m,
                    self._confidence(rel.confidence),
                    self.source,
                    f"{rel.subject} {rel.predicate} {rel.object}",
                )
            )
        return Extraction(mentions, relations)

    def _entities(self, raw: Any, where: str) -> list[_Entity]:
        return self._items(raw, _Entity, "entities", where)  # type: ignore[return-value]

    def _relations(self, raw: Any, where: str) -> list[_Relation]:
        return self._items(raw, _Relation, "relations", where)  # type: ignore[return-value]

    def _items(self, raw: Any, model: type[BaseModel], field: str, where: str) -> list[BaseModel]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self._warn(f"LLM answer for {where}: {field!r} is not a list")
            return []
        out, bad = [], 0
        for item in raw:
            try:
                out.append(model.model_validate(item))
            except ValidationError:
                bad += 1
        if bad:
            log.debug("%d malformed %s in the LLM answer for %s", bad, field, where)
        return out

    def _locate(self, text: str, ent: _Entity) -> list[Mention]:
        name = ent.name.strip()
        key = normalize_name(name)
        if not key:
            return []
        pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
        conf = self._confidence(ent.confidence)
        return [
            Mention(m.group(0), key, ent.type.strip().upper(), m.start(), m.end(), conf, self.source)
            for m in list(pattern.finditer(text))[: self.max_mentions_per_entity]
        ]

    def _confidence(self, value: float | None) -> float:
        if value is None or value != value:  # missing or NaN
            return self.default_confidence
        return min(1.0, max(0.0, float(value)))

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        self._warnings.append(message)


def _excerpt(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
