"""An offline, deterministic LLM for demos, examples and tests of code that calls an LLM.

With no script, :class:`MockLLMClient` answers by describing what it was
given: the question (the last user message) and the beginning of the
context. With ``responses`` it plays a script: a list of answers in order,
or a function of the messages. Every call is recorded in ``calls``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence

from cef.errors import ConfigurationError, LLMError
from cef.llm.base import BaseLLMClient, ChatMessage, ChatResponse, GenerationOptions, Usage

__all__ = ["MockLLMClient", "summarize_messages"]

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

    ``responses``: ``None`` (describe the input, see :func:`summarize_messages`),
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
        return summarize_messages(messages)

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
