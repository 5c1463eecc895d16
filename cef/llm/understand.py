"""Query understanding with an LLM: turn a question into a :class:`~cef.model.GraphQuery`.

The LLM sees the graph schema (node types with properties, relation types
with their endpoints) and answers with a small JSON object naming the
entities of the question (→ :class:`~cef.model.ResolutionTarget` with a node
type hint) and the relations to follow (→ traversal relation types). The
answer is validated with the GraphQuery model; names the schema does not know
are dropped, and anything unusable falls back to the plain question, so a bad
or absent LLM never breaks retrieval::

    understanding = QueryUnderstanding(make_llm_client("ollama", model="llama3.2"))
    result = understanding.understand("Which drugs interact with warfarin?", schema)
    kb.retrieve(result.query)
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pydantic

from cef.errors import LLMError
from cef.llm.base import UNDERSTANDING_PROMPT_HEAD, ChatMessage, LLMClient, extract_json_object
from cef.model import GraphQuery

if TYPE_CHECKING:
    from cef.schema.discovery import GraphSchema

log = logging.getLogger(__name__)

__all__ = ["QueryUnderstanding", "Understanding", "extract_json_object"]

SYSTEM_PROMPT = (
    UNDERSTANDING_PROMPT_HEAD
    + """

{schema}

Answer with ONE JSON object and nothing else:
{{"targets": [{{"description": "<entity as named in the question>", "type_hint": "<node type or null>"}}],
 "relation_types": ["<relation type to follow>"],
 "depth": <hops to walk from the targets, 0-{max_depth}>}}

Rules:
- targets: the specific entities the question is about (people, things, places...), at most {max_targets};
  type_hint must be one of the node types above, or null when unsure. No entity: an empty list.
- relation_types: only names from the relation types above that lead from the targets toward the
  answer; an empty list means "follow every relation".
- depth: 1 for direct relations, 2 when the answer is two hops away.

Example: {example}"""
)


@dataclass
class Understanding:
    """What query understanding produced: the query to run, and how it was obtained."""

    query: GraphQuery
    used_llm: bool
    raw: str | None = None
    notes: list[str] = field(default_factory=list)


class QueryUnderstanding:
    """Asks an LLM to structure a question as a GraphQuery, validating what comes back."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        max_targets: int = 5,
        max_depth: int = 3,
        max_tokens: int = 400,
        temperature: float = 0.0,
    ) -> None:
        self.llm = llm
        self.max_targets = max_targets
        self.max_depth = max_depth
        self.max_tokens = max_tokens
        self.temperature = temperature

    def messages(self, question: str, schema: GraphSchema) -> list[ChatMessage]:
        """The prompt: the schema and the output format in the system message, the question as the user's."""
        from cef.schema.discovery import describe_schema

        system = SYSTEM_PROMPT.format(
            schema=describe_schema(schema),
            max_depth=self.max_depth,
            max_targets=self.max_targets,
            example=json.dumps(self._example(schema)),
        )
        return [ChatMessage.system(system), ChatMessage.user(question)]

    def understand(
        self, question: str, schema: GraphSchema, *, base: GraphQuery | None = None
    ) -> Understanding:
        """The question as a GraphQuery; ``base`` supplies the other settings (top_k, strategy...).

        Falls back to ``base`` (or the plain question) when the LLM fails or answers
        with something that is not a valid query; the reason is in ``notes``.
        """
        plain = (
            base.model_copy(update={"query": question}) if base is not None else GraphQuery(query=question)
        )
        try:
            reply = self.llm.chat(
                self.messages(question, schema), temperature=self.temperature, max_tokens=self.max_tokens
            ).text
        except LLMError as exc:
            log.warning("query understanding failed, using the plain question: %s", exc)
            return Understanding(plain, used_llm=False, notes=[f"LLM failed: {exc}"])
        data = extract_json_object(reply)
        if data is None:
            return Understanding(plain, used_llm=False, raw=reply, notes=["LLM answer is not a JSON object"])
        notes: list[str] = []
        try:
            candidate = self._candidate(question, data, schema, plain, notes)
            query = GraphQuery.model_validate(candidate)
        except (pydantic.ValidationError, TypeError, ValueError) as exc:
            short = str(exc).splitlines()[0][:200]
            return Understanding(
                plain, used_llm=False, raw=reply, notes=[*notes, f"invalid query from the LLM: {short}"]
            )
        return Understanding(query, used_llm=True, raw=reply, notes=notes)

    # ------------------------------------------------------------------ internals
    def _candidate(
        self, question: str, data: dict[str, Any], schema: GraphSchema, plain: GraphQuery, notes: list[str]
    ) -> dict[str, Any]:
        labels = set(schema.labels())
        relations = set(schema.relation_names()) | {r.inverse for r in schema.relation_types if r.inverse}
        given = data.get("traversal")
        traversal: dict[str, Any] = given if isinstance(given, dict) else {}
        raw_targets = data.get("targets") or []
        if not isinstance(raw_targets, list):
            raise TypeError("targets must be a list")
        targets = []
        for t in raw_targets[: self.max_targets]:
            if isinstance(t, str):
                t = {"description": t}
            if not isinstance(t, dict):
                raise TypeError("each target must be an object with a description")
            hint = t.get("type_hint")
            if hint is not None and hint not in labels:
                notes.append(f"dropped unknown node type {hint!r}")
                hint = None
            targets.append({"description": t.get("description"), "type_hint": hint})
        rels = traversal.get("relation_types", data.get("relation_types")) or []
        if not isinstance(rels, list):
            raise TypeError("relation_types must be a list")
        known = [r for r in rels if isinstance(r, str) and r in relations]
        for r in rels:
            if r not in known:
                notes.append(f"dropped unknown relation type {r!r}")
        depth = traversal.get("depth", data.get("depth", plain.traversal.depth))
        if isinstance(depth, int) and not isinstance(depth, bool):
            depth = max(0, min(depth, self.max_depth))
        base = plain.model_dump(exclude={"query", "targets"})
        base["traversal"] = {**base["traversal"], "relation_types": known, "depth": depth}
        return {**base, "query": question, "targets": targets}

    @staticmethod
    def _example(schema: GraphSchema) -> dict[str, Any]:
        for r in schema.relation_types:
            for e in r.endpoints:
                node = schema.node_type(e.source)
                if node is not None and node.examples:
                    return {
                        "targets": [{"description": node.examples[0], "type_hint": e.source}],
                        "relation_types": [r.name],
                        "depth": 1,
                    }
        return {
            "targets": [{"description": "Ada Lovelace", "type_hint": None}],
            "relation_types": [],
            "depth": 1,
        }
