"""Ollama's native chat API: ``POST {base_url}/api/chat``, streaming as newline-delimited JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from cef.errors import LLMError, LLMTimeoutError
from cef.jsonhttp import JsonHttp, check_base_url, excerpt, redact_url
from cef.llm.base import BaseLLMClient, ChatMessage, ChatResponse, GenerationOptions, Usage

__all__ = ["OLLAMA_BASE_URL", "OllamaClient"]

OLLAMA_BASE_URL = "http://localhost:11434"


class OllamaClient(BaseLLMClient):
    """A model served by Ollama, through its native ``/api/chat``.

    ``max_tokens`` is sent as ``options.num_predict``; ``options`` adds any
    other Ollama model option (``num_ctx``, ``top_k``, ``seed``...);
    ``keep_alive`` says how long Ollama keeps the model loaded (``"5m"``).
    Errors as for every client: :class:`~cef.errors.LLMError` with the status
    and Ollama's ``error`` message, :class:`~cef.errors.LLMTimeoutError` when
    Ollama is silent for ``timeout`` seconds (loading a model can take long:
    the default is generous).
    """

    provider = "ollama"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OLLAMA_BASE_URL,
        timeout: float = 120.0,
        max_retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
        options: Mapping[str, Any] | None = None,
        keep_alive: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(model, temperature=temperature, max_tokens=max_tokens)
        self.options = dict(options or {})
        self.keep_alive = keep_alive
        self._http = JsonHttp(
            check_base_url(base_url),
            what="Ollama",
            error=LLMError,
            timeout_error=LLMTimeoutError,
            timeout=timeout,
            max_retries=max_retries,
            headers=headers,
        )

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def close(self) -> None:
        self._http.close()

    def is_available(self) -> bool:
        return self._http.get_ok("api/tags")

    def _payload(
        self, messages: list[ChatMessage], options: GenerationOptions, stream: bool
    ) -> dict[str, Any]:
        opts = dict(self.options)
        if options.temperature is not None:
            opts["temperature"] = options.temperature
        if options.max_tokens is not None:
            opts["num_predict"] = options.max_tokens
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "stream": stream,  # Ollama streams unless told not to
        }
        if opts:
            payload["options"] = opts
        if self.keep_alive is not None:
            payload["keep_alive"] = self.keep_alive
        return payload

    def _where(self) -> str:
        return f"Ollama at {redact_url(self._http.url('api/chat'))}"

    def _chat(self, messages: list[ChatMessage], options: GenerationOptions) -> ChatResponse:
        body = self._http.post_json("api/chat", self._payload(messages, options, stream=False))
        if not isinstance(body, dict):
            raise LLMError(f"{self._where()} answered with an unexpected body: {excerpt(repr(body))}")
        if "error" in body:
            raise LLMError(f"{self._where()} reported an error: {excerpt(str(body['error']))}")
        message = body.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(text, str):
            raise LLMError(f"{self._where()} answered without message.content: {excerpt(repr(body))}")
        return ChatResponse(
            text=text,
            model=str(body.get("model") or self.model),
            usage=Usage.of(body.get("prompt_eval_count"), body.get("eval_count")),
            finish_reason=body.get("done_reason"),
        )

    def _stream(self, messages: list[ChatMessage], options: GenerationOptions) -> Iterator[str]:
        with self._http.stream("api/chat", self._payload(messages, options, stream=True)) as response:
            for line in response.iter_lines():
                if not line.strip():
                    continue
                try:
                    chunk = json.loads(line)
                except ValueError as exc:
                    raise LLMError(
                        f"{self._where()} streamed a line that is not JSON: {excerpt(line)!r}"
                    ) from exc
                if not isinstance(chunk, dict):
                    raise LLMError(f"{self._where()} streamed an unexpected line: {excerpt(line)!r}")
                if "error" in chunk:
                    detail = excerpt(str(chunk["error"]))
                    raise LLMError(f"{self._where()} reported an error mid-stream: {detail}")
                message = chunk.get("message")
                piece = message.get("content") if isinstance(message, dict) else None
                if isinstance(piece, str) and piece:
                    yield piece
                if chunk.get("done"):
                    return
            raise LLMError(f"{self._where()}: the stream ended before a 'done' message")
