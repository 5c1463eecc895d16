"""An offline, deterministic LLM for demos, examples and tests of code that calls an LLM.

With no script, :class:`MockLLMClient` reads cef's own prompts the way a
careful extractive reader would (:func:`mock_reply`): asked to turn a question
into a JSON graph query it answers with an empty one (no hints: the plain
question is searched), asked to answer from passages headed by their ids it
quotes the sentence that shares the most words with the question and cites
its passage, and any other prompt is described (the question and the
beginning of the context). With ``responses`` it plays a script: a list of
answers in order, or a function of the messages. Every call is recorded in
``calls``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence

from cef.errors import ConfigurationError, LLMError
from cef.llm.base import (
    UNDERSTANDING_PROMPT_HEAD,
    BaseLLMClient,
    ChatMessage,
    ChatResponse,
    GenerationOptions,
    Usage,
)

__all__ = ["MockLLMClient", "mock_reply", "summarize_messages"]

Responder = Callable[[list[ChatMessage]], str]

QUESTION_CHARS = 200
CONTEXT_CHARS = 240


def _squeeze(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def summarize_messages(messages: Sequence[ChatMessage]) -> str:
    """The mock's default answer: the question, and how much context came with it and how it begins."""
    question_at = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    question = messages[question_at].content if question_at is not None else ""
    context = [m.content for i, m in enumerate(messages) if i != question_at and m.content.strip()]
    parts = [f'[mock] Question: "{_squeeze(question, QUESTION_CHARS)}".']
    if context:
        chars = sum(len(c) for c in context)
        parts.append(
            f"Context: {len(context)} message{'s' if len(context) != 1 else ''}, {chars} characters, "
            f'beginning "{_squeeze(context[0], CONTEXT_CHARS)}".'
        )
    else:
        parts.append("Context: none.")
    return " ".join(parts)


#: a passage header of cef's answer prompt: ``[chunk-id]`` or ``[chunk-id] (graph: A -[R]-> B)``
_PASSAGE = re.compile(r"^\[([^\[\]\n]{1,600})\](?: \(graph: .*\))?$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _passages(prompt: str) -> tuple[list[tuple[str, str]], str] | None:
    """``(passages, question)`` of an answer prompt (``Context:`` passages headed by ids, then
    ``Question:``), or None when the prompt is not one."""
    if not prompt.startswith("Context:") or "\nQuestion: " not in prompt:
        return None
    body, question = prompt[len("Context:") :].rsplit("\nQuestion: ", 1)
    passages: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        head = _PASSAGE.match(line.strip())
        if head is not None:
            passages.append((head.group(1), []))
        elif passages:
            passages[-1][1].append(line)
    return [(pid, "\n".join(lines).strip()) for pid, lines in passages], question.strip()


def _extractive_answer(passages: list[tuple[str, str]], question: str) -> str:
    """The sentence of the passages that shares the most content words with the question, citing its
    passage (the best-ranked passage wins ties); or that the passages do not say."""
    from cef.text import stem, terms

    wanted = {stem(w) for w in terms(question)}
    best: tuple[int, int, str, str] | None = None
    for rank, (pid, text) in enumerate(passages):
        for sentence in _SENTENCE.split(re.sub(r"\s+", " ", text).strip()):
            shared = len(wanted & {stem(w) for w in terms(sentence)})
            if shared and (best is None or (shared, -rank) > (best[0], best[1])):
                best = (shared, -rank, sentence.lstrip("# ").strip(), pid)
    if best is None:
        return "[mock] The passages do not answer the question."
    return f"[mock] {_squeeze(best[2], CONTEXT_CHARS)} [{best[3]}]"


def mock_reply(messages: Sequence[ChatMessage]) -> str:
    """The mock's default answer (see the module docstring)."""
    system = " ".join(m.content for m in messages if m.role == "system")
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    if system.startswith(UNDERSTANDING_PROMPT_HEAD):  # query understanding
        return '{"targets": [], "relation_types": []}'  # no hints: the plain question is searched
    parsed = _passages(user)
    if parsed is not None:
        return _extractive_answer(*parsed)
    return summarize_messages(messages)


def _words(text: str) -> list[str]:
    """``text`` in pieces of one word plus the whitespace after it (they join back to ``text``)."""
    head = re.match(r"\s*", text)
    lead = head.group(0) if head else ""
    pieces = re.findall(r"\S+\s*", text[len(lead) :])
    if lead:
        pieces = [lead + pieces[0], *pieces[1:]] if pieces else [lead]
    return pieces


class MockLLMClient(BaseLLMClient):
    """A deterministic LLM that needs no server.

    ``responses``: ``None`` (read cef's prompts, else describe the input: :func:`mock_reply`),
    a list of answers given in order (``cycle=True`` starts over at the end,
    otherwise running out raises :class:`~cef.errors.LLMError`), or a function
    from the messages to the answer. ``max_tokens`` cuts an answer to that many
    words (``finish_reason="length"``); usage counts are word counts.
    ``stream`` yields the same answer word by word.
    """

    provider = "mock"

    def __init__(
        self,
        responses: Sequence[str] | Responder | None = None,
        *,
        model: str = "mock",
        cycle: bool = False,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(model, temperature=temperature, max_tokens=max_tokens)
        self._responder: Responder | None = None
        self._script: list[str] | None = None
        if callable(responses):
            self._responder = responses
        elif responses is not None:
            if isinstance(responses, str) or not all(isinstance(r, str) for r in responses):
                raise ConfigurationError("responses must be a list of strings or a function of the messages")
            if not responses:
                raise ConfigurationError("responses is empty: give at least one scripted answer, or None")
            self._script = list(responses)
        self.cycle = cycle
        self.calls: list[list[ChatMessage]] = []
        self._next = 0
        self._lock = threading.Lock()

    def is_available(self) -> bool:
        return True

    def reset(self) -> None:
        """Forget the recorded calls and restart the script."""
        with self._lock:
            self.calls.clear()
            self._next = 0

    def _answer(self, messages: list[ChatMessage]) -> str:
        with self._lock:
            self.calls.append(list(messages))
            if self._script is not None:
                if self._next >= len(self._script):
                    if not self.cycle:
                        raise LLMError(
                            f"MockLLMClient: the script of {len(self._script)} responses is used up "
                            "(pass cycle=True to repeat it)"
                        )
                    self._next = 0
                answer = self._script[self._next]
                self._next += 1
                return answer
        if self._responder is not None:
            answer = self._responder(messages)
            if not isinstance(answer, str):
                raise LLMError(f"MockLLMClient: the responder returned {type(answer).__name__}, not str")
            return answer
        return mock_reply(messages)

    def _chat(self, messages: list[ChatMessage], options: GenerationOptions) -> ChatResponse:
        answer = self._answer(messages)
        pieces = _words(answer)
        finish = "stop"
        if options.max_tokens is not None and len(pieces) > options.max_tokens:
            answer = "".join(pieces[: options.max_tokens]).rstrip()
            finish = "length"
        prompt_words = sum(len(m.content.split()) for m in messages)
        return ChatResponse(
            text=answer,
            model=self.model,
            usage=Usage.of(prompt_words, len(answer.split())),
            finish_reason=finish,
        )

    def _stream(self, messages: list[ChatMessage], options: GenerationOptions) -> Iterator[str]:
        def pieces() -> Iterator[str]:
            yield from _words(self._chat(messages, options).text)

        return pieces()
