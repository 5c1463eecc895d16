"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama's ``/v1``, llama.cpp server...).

``POST {base_url}/chat/completions``; streaming reads the server-sent events
(``data: {...}`` lines, ending with ``data: [DONE]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from cef.errors import LLMError, LLMTimeoutError
from cef.jsonhttp import JsonHttp, check_base_url, excerpt, redact_url
from cef.llm.base import BaseLLMClient, ChatMessage, ChatResponse, GenerationOptions, Usage

__all__ = ["OPENAI_BASE_URL", "OpenAIChatClient"]

OPENAI_BASE_URL = "https://api.openai.com/v1"

MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]


class OpenAIChatClient(BaseLLMClient):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` is the API root (a URL with no path gets ``/v1``).
    ``max_tokens_param`` is the request field that carries ``max_tokens``:
    OpenAI's own API wants ``max_completion_tokens`` (its reasoning models
    refuse ``max_tokens``), most compatible servers ``max_tokens``; by default
    it is chosen from the host. ``extra_body`` is merged into every request
    (``top_p``, ``stop``, vLLM's sampling parameters...). HTTP errors raise
    :class:`~cef.errors.LLMError` with the status and the server's message;
    no answer within ``timeout`` seconds (between two streamed pieces, too)
    raises :class:`~cef.errors.LLMTimeoutError`.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OPENAI_BASE_URL,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_tokens_param: MaxTokensParam | None = None,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        provider: str = "openai",
    ) -> None:
        super().__init__(model, temperature=temperature, max_tokens=max_tokens)
        self.provider = provider
        url = check_base_url(base_url, default_path="/v1")
        if max_tokens_param is None:
            host = urlsplit(url).hostname or ""
            max_tokens_param = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"
        self.max_tokens_param: MaxTokensParam = max_tokens_param
        self.extra_body = dict(extra_body or {})
        all_headers = dict(headers or {})
        if api_key:
            all_headers["Authorization"] = f"Bearer {api_key}"
        self._http = JsonHttp(
            url,
            what=f"the {provider} chat endpoint",
            error=LLMError,
            timeout_error=LLMTimeoutError,
            timeout=timeout,
            max_retries=max_retries,
            headers=all_headers,
        )

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def close(self) -> None:
        self._http.close()

    def is_available(self) -> bool:
        return self._http.get_ok("models")

    def _payload(
        self, messages: list[ChatMessage], options: GenerationOptions, stream: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {**self.extra_body, "model": self.model, "stream": stream}
        payload["messages"] = [m.model_dump() for m in messages]
        if options.temperature is not None:
            payload["temperature"] = options.temperature
        if options.max_tokens is not None:
            payload[self.max_tokens_param] = options.max_tokens
        return payload

    def _where(self) -> str:
        return f"the {self.provider} chat endpoint at {redact_url(self._http.url('chat/completions'))}"

    def _chat(self, messages: list[ChatMessage], options: GenerationOptions) -> ChatResponse:
        body = self._http.post_json("chat/completions", self._payload(messages, options, stream=False))
        try:
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
            if not isinstance(text, str):
                raise TypeError("message content is not a string")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(
                f"{self._where()} answered without choices[0].message: {excerpt(repr(body))}"
            ) from exc
        usage = body.get("usage") or {}
        return ChatResponse(
            text=text,
            model=str(body.get("model") or self.model),
            usage=Usage.of(
                usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")
            ),
            finish_reason=choice.get("finish_reason"),
        )

    def _stream(self, messages: list[ChatMessage], options: GenerationOptions) -> Iterator[str]:
        payload = self._payload(messages, options, stream=True)
        with self._http.stream("chat/completions", payload) as response:
            finished = False
            for event in _sse_events(response):
                if event == "[DONE]":
                    return
                piece, finish = self._parse_chunk(event)
                finished = finished or finish is not None
                if piece:
                    yield piece
            if not finished:
                raise LLMError(f"{self._where()}: the stream ended before [DONE]")

    def _parse_chunk(self, data: str) -> tuple[str, str | None]:
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise LLMError(f"{self._where()} streamed invalid JSON: {excerpt(data)!r}") from exc
        if not isinstance(chunk, dict):
            raise LLMError(f"{self._where()} streamed an unexpected event: {excerpt(data)!r}")
        if "error" in chunk:
            err = chunk["error"]
            message = err.get("message", err) if isinstance(err, dict) else err
            raise LLMError(f"{self._where()} reported an error mid-stream: {excerpt(str(message))}")
        choices = chunk.get("choices") or []
        if not choices:  # e.g. the usage-only chunk of stream_options.include_usage
            return "", None
        choice = choices[0] if isinstance(choices[0], dict) else {}
        delta = choice.get("delta") or {}
        content = delta.get("content") if isinstance(delta, dict) else None
        return (content if isinstance(content, str) else ""), choice.get("finish_reason")


def _sse_events(response: httpx.Response) -> Iterator[str]:
    """The ``data`` of each server-sent event (multi-line data joined with newlines)."""
    data: list[str] = []
    for line in response.iter_lines():
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)
