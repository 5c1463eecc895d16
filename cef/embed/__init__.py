"""Embeddings: the :class:`Embedder` port and its adapters.

::

    from cef.embed import make_embedder

    emb = make_embedder()                      # all-MiniLM-L6-v2, offline, shared per process
    emb = make_embedder("openai", base_url="http://localhost:11434/v1", model="nomic-embed-text")
    vectors = emb.embed(["first text", "second text"])   # float32, (2, emb.dim), unit rows
"""

from __future__ import annotations

import inspect
from typing import Any

from cef.embed.base import BatchedEmbedder, Embedder, Progress, Vectors, normalize_rows
from cef.embed.minilm import MiniLMEmbedder, get_default_embedder
from cef.embed.openai import OpenAIEmbedder
from cef.errors import ConfigurationError

__all__ = [
    "EMBEDDING_PROVIDERS",
    "BatchedEmbedder",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "Progress",
    "Vectors",
    "get_default_embedder",
    "make_embedder",
    "normalize_rows",
]

EMBEDDING_PROVIDERS: dict[str, type[BatchedEmbedder]] = {
    "minilm": MiniLMEmbedder,
    "openai": OpenAIEmbedder,
}


def make_embedder(provider: str = "minilm", **options: Any) -> Embedder:
    """An embedder by provider name: ``"minilm"`` (default, offline) or ``"openai"`` (any compatible server).

    ``options`` are the adapter's constructor arguments. ``make_embedder()``
    with no options returns the process-wide MiniLM instance, so the model
    loads once.
    """
    key = provider.strip().lower()
    cls = EMBEDDING_PROVIDERS.get(key)
    if cls is None:
        raise ConfigurationError(
            f"unknown embedding provider {provider!r}: use one of {', '.join(sorted(EMBEDDING_PROVIDERS))}"
        )
    if cls is MiniLMEmbedder and not options:
        return get_default_embedder()
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise ConfigurationError(f"bad options for the {key!r} embedder: {exc}") from exc
    embedder: Embedder = cls(**options)
    return embedder
