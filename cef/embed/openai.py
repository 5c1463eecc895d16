"""Embeddings from any server speaking OpenAI's ``POST /v1/embeddings``.

Works with OpenAI itself, Ollama's OpenAI-compatible endpoint
(``http://localhost:11434/v1``) and vLLM (``http://localhost:8000/v1``).
Vectors are re-normalized here, whatever the server returns.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cef.embed.base import BatchedEmbedder
from cef.errors import ConfigurationError, EmbeddingError
from cef.jsonhttp import JsonHttp, check_base_url, excerpt, redact_url

__all__ = ["OpenAIEmbedder"]

_DIM_PROBE = "dimension probe"


class OpenAIEmbedder(BatchedEmbedder):
    """An OpenAI-compatible embeddings endpoint.

    ``base_url`` is the API root (``https://api.openai.com/v1``); a URL with no
    path gets ``/v1``. ``dim``, when not given, is learned from the first
    response (reading :attr:`dim` before any call sends one short probe text).
    Every failure — unreachable server, timeout, HTTP error, a malformed
    answer — raises :class:`~cef.errors.EmbeddingError`. Transient errors
    (connection refused, 408/429/5xx) are retried ``max_retries`` times.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
        *,
        max_retries: int = 2,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(batch_size)
        if not model:
            raise ConfigurationError("model must name the embedding model, e.g. 'text-embedding-3-small'")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ConfigurationError(f"dim must be a positive integer, got {dim!r}")
        self.model = model
        self.name = model
        self._dim = dim
        self._dim_lock = threading.Lock()
        all_headers = dict(headers or {})
        if api_key:
            all_headers["Authorization"] = f"Bearer {api_key}"
        self._http = JsonHttp(
            check_base_url(base_url, default_path="/v1"),
            what="the embedding server",
            error=EmbeddingError,
            timeout_error=EmbeddingError,
            timeout=timeout,
            max_retries=max_retries,
            headers=all_headers,
        )

    @property
    def base_url(self) -> str:
        return self._http.base_url

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._embed_batch([_DIM_PROBE])
        assert self._dim is not None
        return self._dim

    def close(self) -> None:
        """Close the HTTP connections (the embedder reopens them if used again)."""
        self._http.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _embed_batch(self, texts: list[str]) -> NDArray[np.float32]:
        payload = {"model": self.model, "input": texts, "encoding_format": "float"}
        body = self._http.post_json("embeddings", payload)
        vectors = self._parse(body, len(texts))
        with self._dim_lock:
            if self._dim is None:
                self._dim = int(vectors.shape[1])
        if vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self._where()}: model {self.model!r} returned {vectors.shape[1]}-dimensional vectors, "
                f"expected {self._dim}"
            )
        return vectors

    def _where(self) -> str:
        return f"the embedding server at {redact_url(self._http.url('embeddings'))}"

    def _parse(self, body: Any, n: int) -> NDArray[np.float32]:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EmbeddingError(f"{self._where()}: the answer has no 'data' list: {excerpt(repr(body))}")
        if len(data) != n:
            raise EmbeddingError(f"{self._where()}: sent {n} texts, got {len(data)} embeddings back")
        rows: list[Any] = [None] * n
        for pos, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise EmbeddingError(f"{self._where()}: item {pos} has no 'embedding' list")
            index = item.get("index", pos)
            if not isinstance(index, int) or not 0 <= index < n or rows[index] is not None:
                raise EmbeddingError(f"{self._where()}: item {pos} has a bad or repeated index {index!r}")
            rows[index] = item["embedding"]
        lengths = {len(r) for r in rows}
        if len(lengths) != 1 or 0 in lengths:
            raise EmbeddingError(
                f"{self._where()}: embeddings have different or zero lengths {sorted(lengths)}"
            )
        try:
            return np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{self._where()}: embeddings are not lists of numbers: {exc}") from exc

    def __repr__(self) -> str:
        url = redact_url(self.base_url)
        return f"OpenAIEmbedder(base_url={url!r}, model={self.model!r}, dim={self._dim})"
