"""Answer a question from the knowledge base with an LLM, citing the chunks it used.

:func:`answer_question` is behind :meth:`KnowledgeBase.answer` (and so the
``cef ask`` command, ``POST /api/v1/answer`` and the ``answer_question`` MCP
tool): optionally let the LLM turn the question into a graph query with the
live schema, retrieve, give the LLM the retrieved passages headed by their
ids, and keep the ids its answer cites (only ids that were in the context).
Without an LLM the result carries the retrieved context, no answer, and a
note saying why and what to configure (:data:`NO_LLM_NOTE`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict, Field

from cef.engine.policy import QueryPolicy
from cef.model import GraphQuery, SearchResult, TraversalHint
from cef.schema.discovery import KnowledgeSource, discover_schema

if TYPE_CHECKING:
    from cef.llm.base import LLMClient

__all__ = [
    "ANSWER_SYSTEM",
    "NO_LLM_NOTE",
    "Answer",
    "AnswerSource",
    "answer_question",
    "build_context",
    "cited_ids",
]

ANSWER_SYSTEM = (
    "Answer the question using only the context passages below. After each statement, cite the "
    "passages it comes from by their id in square brackets, e.g. [note-1]. If the context does not "
    "answer the question, say so plainly."
)


class Retrieving(KnowledgeSource, Protocol):
    """What answering reads: the live schema and retrieval (a :class:`~cef.engine.kb.KnowledgeBase` is one)."""

    def retrieve(self, query: GraphQuery) -> SearchResult: ...


#: the note of an answer made without an LLM
NO_LLM_NOTE = (
    "no LLM configured, so there is no written answer: the retrieved passages are in 'sources' and "
    "'context'. To get one, set CEF_LLM (openai, vllm, ollama, or mock for an offline extractive "
    "stand-in) with CEF_LLM_MODEL and CEF_LLM_BASE_URL, or pass --llm to `cef ask`"
)

#: most characters of passages given to the LLM
CONTEXT_CHARS = 12_000


class AnswerSource(BaseModel):
    """A retrieved chunk the answer could cite."""

    model_config = ConfigDict(extra="forbid")

    id: str
    score: float
    content: str
    node_id: str | None = None
    cited: bool = False


class Answer(BaseModel):
    """An answer with the chunk ids it cites; ``answer`` is None when no LLM was given."""

    model_config = ConfigDict(extra="forbid")

    question: str
    answer: str | None = None
    citations: list[str] = Field(default_factory=list, description="chunk ids the answer cites, in order")
    sources: list[AnswerSource] = Field(default_factory=list, description="the retrieved chunks, best first")
    context: str = Field(default="", description="the passages as given to the LLM")
    understood: bool = Field(default=False, description="the LLM turned the question into the graph query")
    notes: list[str] = Field(default_factory=list)
    query: GraphQuery


def build_context(result: SearchResult, max_chars: int = CONTEXT_CHARS) -> str:
    """The retrieved chunks as passages headed by their ids (and the path that found them)."""
    parts: list[str] = []
    used = 0
    for r in result.results:
        head = f"[{r.chunk.id}]"
        path = r.explanation.path
        if path is not None and path.length:
            head += f" (graph: {path.describe()})"
        text = f"{head}\n{r.chunk.content.strip()}"
        if used + len(text) > max_chars and parts:
            break
        parts.append(text)
        used += len(text)
    return "\n\n".join(parts)


def cited_ids(answer: str, known: list[str]) -> list[str]:
    """Chunk ids the answer cites in square brackets (only ids that were in the context), in order."""
    found: list[str] = []
    for group in re.findall(r"\[([^\[\]]{1,600})\]", answer):
        for ident in (p.strip() for p in group.split(",")):
            if ident in known and ident not in found:
                found.append(ident)
    return found


def answer_question(
    kb: Retrieving,
    question: str | GraphQuery,
    llm: LLMClient | None = None,
    *,
    understand: bool = True,
    top_k: int = 6,
    depth: int = 2,
    max_tokens: int = 512,
    scope: str | None = None,
    policy: QueryPolicy | None = None,
) -> Answer:
    """Retrieve for ``question`` and let ``llm`` answer from the passages, citing their ids.

    This is :meth:`KnowledgeBase.answer <cef.engine.kb.KnowledgeBase.answer>` (``kb`` is the knowledge base).

    Args:
        question: a text (a query is built with ``top_k``, ``depth`` and ``scope``) or a ready
            :class:`GraphQuery`.
        llm: the model that writes the answer; None: no answer, only the retrieved context and a note
            saying what to configure.
        understand: with an LLM, let it first turn a text question into a graph query over the live
            schema (:class:`cef.llm.understand.QueryUnderstanding`); a failure there falls back to the
            plain question and says so in ``notes``.
        top_k: how many chunks to retrieve.
        depth: how many hops the graph traversal may take.
        max_tokens: the most tokens of the written answer.
        scope: see only that scope's records and shared ones.
        policy: the calling door's :class:`~cef.engine.policy.QueryPolicy` (its time limit, applied to
            the query unless it sets its own ``deadline_ms``).

    Returns:
        The answer (None without an LLM), the chunk ids it cites, the retrieved sources, the context
        given to the LLM, and notes.

    Raises:
        LLMError: the LLM call failed.
        UnknownRelationTypeError: a given query's traversal names an unregistered relation type.
    """
    if isinstance(question, GraphQuery):
        query, text = question, question.query
    else:
        text = question
        query = GraphQuery(
            query=text,
            top_k=top_k,
            traversal=TraversalHint(depth=depth),
            scope=scope,
        )
    notes: list[str] = []
    understood = False
    if llm is not None and understand and not isinstance(question, GraphQuery):
        from cef.llm.understand import QueryUnderstanding

        got = QueryUnderstanding(llm).understand(text, discover_schema(kb), base=query)
        query, understood, notes = got.query, got.used_llm, list(got.notes)
    result = kb.retrieve(policy.bound(query) if policy is not None else query)
    if result.metadata.get("timed_out"):  # the passages are what vector search found: say so
        notes.append(result.fallbacks[0])
    context = build_context(result)
    reply: str | None = None
    if llm is None:
        notes.append(NO_LLM_NOTE)
    else:
        prompt = f"Context:\n\n{context or '(no passages found)'}\n\nQuestion: {text}"
        reply = llm.generate(prompt, system=ANSWER_SYSTEM, max_tokens=max_tokens)
    ids = [r.chunk.id for r in result.results]
    citations = cited_ids(reply, ids) if reply is not None else []
    sources = [
        AnswerSource(
            id=r.chunk.id,
            score=r.score,
            content=r.chunk.content,
            node_id=r.chunk.node_id,
            cited=r.chunk.id in citations,
        )
        for r in result.results
    ]
    return Answer(
        question=text,
        answer=reply,
        citations=citations,
        sources=sources,
        context=context,
        understood=understood,
        notes=notes,
        query=query,
    )
