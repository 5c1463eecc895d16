"""Embeddings: the :class:`Embedder` port and its adapters.

::

    from cef.embed import make_embedder

    emb = make_embedder()                      # all-MiniLM-L6-v2, offline, shared per process
    emb = make_embedder("openai", base_url="http://localhost:11434/v1", model="nomic-embed-text")
    vectors = emb.embed(["first text", "second text"])   # float32, (2, emb.dim), unit rows
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any

from cef.embed.base import BatchedEmbedder, Embedder, Progress, Vectors, normalize_rows
from cef.embed.minilm import MiniLMEmbedder, get_default_embedder
from cef.errors import ConfigurationError

if TYPE_CHECKING:
    from cef.embed.openai import OpenAIEmbedder

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

#: provider name -> (module, class); a provider's module (and its HTTP client) is imported when used
_PROVIDERS: dict[str, tuple[str, str]] = {
    "minilm": ("cef.embed.minilm", "MiniLMEmbedder"),
    "openai": ("cef.embed.openai", "OpenAIEmbedder"),
}


def _provider(key: str) -> type[BatchedEmbedder]:
    module, name = _PROVIDERS[key]
    cls: type[BatchedEmbedder] = getattr(importlib.import_module(module), name)
    return cls


def __getattr__(name: str) -> Any:
    """``OpenAIEmbedder`` and ``EMBEDDING_PROVIDERS`` on first use (a cold ``cef query`` never imports httpx)."""
    if name == "OpenAIEmbedder":
        return _provider("openai")
    if name == "EMBEDDING_PROVIDERS":
        return {key: _provider(key) for key in _PROVIDERS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_embedder(provider: str = "minilm", **options: Any) -> Embedder:
    """An embedder by provider name: ``"minilm"`` (default, offline) or ``"openai"`` (any compatible server).

    ``options`` are the adapter's constructor arguments. ``make_embedder()``
    with no options returns the process-wide MiniLM instance, so the model
    loads once.
    """
    key = provider.strip().lower()
    if key not in _PROVIDERS:
        raise ConfigurationError(
            f"unknown embedding provider {provider!r}: use one of {', '.join(sorted(_PROVIDERS))}"
        )
    cls = _provider(key)
    if cls is MiniLMEmbedder and not options:
        return get_default_embedder()
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise ConfigurationError(f"bad options for the {key!r} embedder: {exc}") from exc
    embedder: Embedder = cls(**options)
    return embedder
