"""The LLM port: chat messages in, text out (whole, or streamed as it is generated).

:class:`LLMClient` is what callers depend on. :class:`BaseLLMClient` is the
shared base of the adapters: it validates messages and sampling options,
applies the client's defaults and derives :meth:`~BaseLLMClient.generate`
from :meth:`~BaseLLMClient.chat`; an adapter implements ``_chat``, ``_stream``
and ``is_available``.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from cef.errors import ConfigurationError, ValidationError

__all__ = [
    "UNDERSTANDING_PROMPT_HEAD",
    "BaseLLMClient",
    "ChatMessage",
    "ChatResponse",
    "GenerationOptions",
    "LLMClient",
    "MessageLike",
    "Role",
    "Usage",
    "extract_json_object",
]

Role = Literal["system", "user", "assistant", "tool"]


class ChatMessage(BaseModel):
    """One message of a conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str) -> ChatMessage:
        return cls(role="assistant", content=content)


class Usage(BaseModel):
    """Token counts as reported by the server (``None`` when it does not say)."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None

    @classmethod
    def of(cls, prompt: Any, completion: Any, total: Any = None) -> Usage:
        """Usage from a server's raw fields: non-integers become ``None``; a missing total is the sum."""

        def as_int(v: Any) -> int | None:
            return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

        p, c, t = as_int(prompt), as_int(completion), as_int(total)
        if t is None and p is not None and c is not None:
            t = p + c
        return cls(prompt_tokens=p, completion_tokens=c, total_tokens=t)


class ChatResponse(BaseModel):
    """The answer to a chat call."""

    model_config = ConfigDict(frozen=True)

    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = Field(default=None, description="'stop', 'length', ... as the server says")


#: a ChatMessage, or a mapping with ``role`` and ``content`` that validates as one
MessageLike = ChatMessage | Mapping[str, Any]


@runtime_checkable
class LLMClient(Protocol):
    """A chat model behind some API."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def generate(
        self,
        prompt: str,
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """The model's answer to one user prompt (with an optional system prompt)."""
        ...

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """The model's next message after ``messages``."""
        ...

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[str]:
        """The next message as it is generated, in pieces whose concatenation is the text."""
        ...

    def is_available(self) -> bool:
        """Whether the server answers (a quick health check; never raises)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class GenerationOptions:
    """Sampling options of one call after defaults are applied (``None``: the server's default)."""

    temperature: float | None = None
    max_tokens: int | None = None


def _check_temperature(value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 2.0:
        raise ValidationError(f"temperature must be a number between 0 and 2, got {value!r}")
    return float(value)


def _check_max_tokens(value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"max_tokens must be an integer >= 1, got {value!r}")
    return value


def to_messages(messages: Sequence[MessageLike]) -> list[ChatMessage]:
    """Validate ``messages`` into :class:`ChatMessage` objects (at least one)."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise ValidationError("messages must be a list of ChatMessage (use generate() for a single prompt)")
    if not messages:
        raise ValidationError("messages is empty: give at least one message")
    out: list[ChatMessage] = []
    for i, m in enumerate(messages):
        if isinstance(m, ChatMessage):
            out.append(m)
            continue
        try:
            out.append(ChatMessage.model_validate(m))
        except pydantic.ValidationError as exc:
            raise ValidationError(f"message {i} is not a valid chat message: {exc}") from exc
    return out


class BaseLLMClient(ABC):
    """Validation, defaults and ``generate`` for every adapter.

    ``temperature`` and ``max_tokens`` given here are the defaults of every
    call; a call's own values win.
    """

    provider: str = "base"

    def __init__(
        self, model: str, *, temperature: float | None = None, max_tokens: int | None = None
    ) -> None:
        if not model:
            raise ConfigurationError("model must name the model to call")
        self._model = model
        try:
            self.defaults = GenerationOptions(_check_temperature(temperature), _check_max_tokens(max_tokens))
        except ValidationError as exc:
            raise ConfigurationError(str(exc)) from exc

    @property
    def model(self) -> str:
        return self._model

    def _options(self, temperature: float | None, max_tokens: int | None) -> GenerationOptions:
        return GenerationOptions(
            _check_temperature(temperature if temperature is not None else self.defaults.temperature),
            _check_max_tokens(max_tokens if max_tokens is not None else self.defaults.max_tokens),
        )

    def generate(
        self,
        prompt: str,
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str:
        if not isinstance(prompt, str):
            raise ValidationError(f"prompt must be a str, got {type(prompt).__name__}")
        messages = [ChatMessage.system(system)] if system else []
        messages.append(ChatMessage.user(prompt))
        return self.chat(messages, temperature=temperature, max_tokens=max_tokens).text

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        return self._chat(to_messages(messages), self._options(temperature, max_tokens))

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[str]:
        """Validates now; the request is sent when iteration starts."""
        return self._stream(to_messages(messages), self._options(temperature, max_tokens))

    @abstractmethod
    def _chat(self, messages: list[ChatMessage], options: GenerationOptions) -> ChatResponse: ...

    @abstractmethod
    def _stream(self, messages: list[ChatMessage], options: GenerationOptions) -> Iterator[str]: ...

    @abstractmethod
    def is_available(self) -> bool: ...

    def close(self) -> None:
        """Release connections (a no-op for clients without any)."""
        return None

    def __enter__(self) -> BaseLLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self._model!r})"


#: the first line of the query-understanding prompt (cef.llm.understand), by which the offline mock knows it
UNDERSTANDING_PROMPT_HEAD = "You turn a user's question into a JSON query for a knowledge graph."


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in an LLM's answer (bare, or inside a ```json fence, or amid prose)."""
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
