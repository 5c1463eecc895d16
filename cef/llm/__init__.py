"""LLM clients: the :class:`LLMClient` port and its adapters.

::

    from cef.llm import ChatMessage, make_llm_client

    llm = make_llm_client("ollama", model="llama3.2")
    llm = make_llm_client("vllm", model="Qwen/Qwen2.5-7B-Instruct", base_url="http://gpu-box:8000/v1")
    llm = make_llm_client("mock")                     # offline and deterministic
    print(llm.generate("Why is the sky blue?", system="Answer in one sentence."))
    for piece in llm.stream([ChatMessage.user("Count to five.")]):
        print(piece, end="")
"""

from __future__ import annotations

import inspect
from typing import Any

from cef.errors import ConfigurationError
from cef.llm.base import (
    BaseLLMClient,
    ChatMessage,
    ChatResponse,
    GenerationOptions,
    LLMClient,
    MessageLike,
    Role,
    Usage,
)
from cef.llm.mock import MockLLMClient, summarize_messages
from cef.llm.ollama import OLLAMA_BASE_URL, OllamaClient
from cef.llm.openai import OPENAI_BASE_URL, OpenAIChatClient

__all__ = [
    "LLM_PROVIDERS",
    "OLLAMA_BASE_URL",
    "OPENAI_BASE_URL",
    "VLLM_BASE_URL",
    "BaseLLMClient",
    "ChatMessage",
    "ChatResponse",
    "GenerationOptions",
    "LLMClient",
    "MessageLike",
    "MockLLMClient",
    "OllamaClient",
    "OpenAIChatClient",
    "Role",
    "Usage",
    "make_llm_client",
    "summarize_messages",
]

VLLM_BASE_URL = "http://localhost:8000/v1"

#: provider name → (client class, default constructor options)
LLM_PROVIDERS: dict[str, tuple[type[BaseLLMClient], dict[str, Any]]] = {
    "mock": (MockLLMClient, {}),
    "ollama": (OllamaClient, {}),
    "openai": (OpenAIChatClient, {"provider": "openai"}),
    "vllm": (OpenAIChatClient, {"provider": "vllm", "base_url": VLLM_BASE_URL}),
}


def make_llm_client(provider: str, **options: Any) -> LLMClient:
    """A client by provider name: ``"openai"``, ``"vllm"``, ``"ollama"`` or ``"mock"``.

    ``options`` are the adapter's constructor arguments (``model`` is required
    except for ``"mock"``; ``base_url``, ``api_key``, ``timeout``,
    ``temperature``, ``max_tokens``...). ``"vllm"`` is the OpenAI-compatible
    client with vLLM's default address.
    """
    key = provider.strip().lower()
    entry = LLM_PROVIDERS.get(key)
    if entry is None:
        choices = ", ".join(sorted(LLM_PROVIDERS))
        raise ConfigurationError(f"unknown LLM provider {provider!r}: use one of {choices}")
    cls, defaults = entry
    merged = {**defaults, **options}
    try:
        inspect.signature(cls).bind(**merged)
    except TypeError as exc:
        raise ConfigurationError(f"bad options for the {key!r} LLM client: {exc}") from exc
    client: LLMClient = cls(**merged)
    return client
