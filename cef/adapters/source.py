"""Where the framework retrievers get their results: a knowledge base in this process, or a cef server.

:func:`open_source` turns what a user hands a retriever into a
:class:`KnowledgeSource` — one ``GraphQuery`` in, one ``SearchResult`` out,
sync and async:

* an open :class:`~cef.KnowledgeBase` — used as it is, never closed here;
* a file path, ``sqlite:///path`` or ``postgresql://...`` — opened with
  :func:`cef.open` on first use (a file that does not exist is an error, not
  a new empty knowledge base) and closed by :meth:`KnowledgeSource.close`;
* ``http://`` / ``https://`` — the REST API of ``cef serve http``
  (``POST /api/v1/retrieve``), with the API key in ``X-API-Key``.

Errors are cef errors (:mod:`cef.errors`): a server's refusal, an unreachable
server or a missing file each name what failed and how to fix it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio.to_thread
import httpx

from cef.errors import (
    CefError,
    ConfigurationError,
    QueryTimeoutError,
    RetryableStoreError,
    StoreError,
    ValidationError,
)
from cef.model import GraphQuery, SearchResult

if TYPE_CHECKING:
    from cef.embed.base import Embedder
    from cef.engine.kb import KnowledgeBase

__all__ = ["KnowledgeSource", "LocalSource", "RestSource", "is_server_url", "open_source"]

RETRIEVE_PATH = "/api/v1/retrieve"
API_KEY_HEADER = "X-API-Key"  # cef.server.auth.API_KEY_HEADER, without importing the server's extra


class KnowledgeSource(Protocol):
    """One retrieval call, sync or async, against some knowledge base."""

    def retrieve(self, query: GraphQuery) -> SearchResult: ...

    async def aretrieve(self, query: GraphQuery) -> SearchResult: ...

    def close(self) -> None: ...


def is_server_url(location: object) -> bool:
    return isinstance(location, str) and location.lower().startswith(("http://", "https://"))


def open_source(
    knowledge_base: KnowledgeBase | str | Path,
    *,
    api_key: str | None = None,
    embedder: Embedder | str | None = "default",
    timeout: float = 30.0,
) -> KnowledgeSource:
    """The source ``knowledge_base`` names; nothing is opened or connected until the first query."""
    if is_server_url(knowledge_base):
        assert isinstance(knowledge_base, str)
        return RestSource(knowledge_base, api_key=api_key, timeout=timeout)
    if api_key is not None:
        raise ConfigurationError(
            "api_key is for a cef server URL (http:// or https://); a knowledge base opened in this "
            f"process ({knowledge_base!s}) needs none: drop api_key"
        )
    return LocalSource(knowledge_base, embedder=embedder)


class LocalSource:
    """A knowledge base in this process: an open one, or one opened (and owned) from a path or URL."""

    def __init__(
        self, knowledge_base: KnowledgeBase | str | Path, *, embedder: Embedder | str | None = "default"
    ) -> None:
        from cef.engine.kb import KnowledgeBase

        self._kb: KnowledgeBase | None = None
        self._location: str | Path | None = None
        if isinstance(knowledge_base, KnowledgeBase):
            self._kb = knowledge_base
        else:
            self._location = knowledge_base
        self._embedder = embedder
        self._lock = threading.Lock()

    @property
    def owned(self) -> bool:
        """Whether this source opened the knowledge base (and so closes it)."""
        return self._location is not None

    def knowledge_base(self) -> KnowledgeBase:
        """The knowledge base, opened on first use."""
        with self._lock:
            if self._kb is None:
                self._kb = self._open()
            return self._kb

    def _open(self) -> KnowledgeBase:
        import cef
        from cef.wiring import store_location

        assert self._location is not None
        scheme, target = store_location(self._location)
        if scheme == "sqlite" and target == ":memory:":
            raise ConfigurationError(
                "an in-memory knowledge base opened by the retriever would be empty: pass the open "
                "cef.KnowledgeBase itself"
            )
        if scheme == "sqlite" and not Path(target).is_file():
            raise ConfigurationError(
                f"knowledge base file {target!r} does not exist: build it first (cef ingest FILE --db "
                f"{target}), or pass an open cef.KnowledgeBase, a postgresql:// URL or a cef server URL"
            )
        return cef.open(self._location, embedder=self._embedder)

    def retrieve(self, query: GraphQuery) -> SearchResult:
        return self.knowledge_base().retrieve(query)

    async def aretrieve(self, query: GraphQuery) -> SearchResult:
        # the engine is synchronous and thread-safe (the REST API serves it the same way)
        return await anyio.to_thread.run_sync(self.retrieve, query)

    def close(self) -> None:
        with self._lock:
            if self.owned and self._kb is not None:
                self._kb.close()
                self._kb = None


class RestSource:
    """The REST API of a running ``cef serve http`` (``POST /api/v1/retrieve``)."""

    def __init__(self, url: str, *, api_key: str | None = None, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._headers = {API_KEY_HEADER: api_key} if api_key else {}
        self._timeout = timeout
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def _sync_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(base_url=self.url, headers=self._headers, timeout=self._timeout)
            return self._client

    @staticmethod
    def _body(query: GraphQuery) -> dict[str, Any]:
        return query.model_dump(mode="json", exclude_defaults=True)

    def retrieve(self, query: GraphQuery) -> SearchResult:
        try:
            response = self._sync_client().post(RETRIEVE_PATH, json=self._body(query))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        return self._result(response)

    async def aretrieve(self, query: GraphQuery) -> SearchResult:
        # a client per call: an AsyncClient is bound to the event loop it first ran on
        try:
            async with httpx.AsyncClient(
                base_url=self.url, headers=self._headers, timeout=self._timeout
            ) as client:
                response = await client.post(RETRIEVE_PATH, json=self._body(query))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        return self._result(response)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # ------------------------------------------------------------ errors
    def _transport_error(self, exc: httpx.HTTPError) -> CefError:
        if isinstance(exc, httpx.TimeoutException):
            return QueryTimeoutError(
                f"the cef server at {self.url} did not answer within {self._timeout} s ({type(exc).__name__}); "
                "raise timeout= or ask for less (smaller k, depth or token budget)"
            )
        return RetryableStoreError(
            f"cannot reach the cef server at {self.url}: {exc or type(exc).__name__}; "
            "is `cef serve http` running there?"
        )

    def _result(self, response: httpx.Response) -> SearchResult:
        if response.is_success:
            try:
                return SearchResult.model_validate(response.json())
            except ValueError as exc:
                raise StoreError(
                    f"the server at {self.url} answered {RETRIEVE_PATH} with something that is not a cef "
                    f"search result: {str(exc)[:300]}"
                ) from None
        raise self._refusal(response)

    def _refusal(self, response: httpx.Response) -> CefError:
        status = response.status_code
        try:
            data = response.json()
            kind, message = str(data["error"]), str(data["message"])
        except (ValueError, KeyError, TypeError):
            kind, message = "http_error", response.text[:300] or response.reason_phrase
        where = f"the cef server at {self.url}"
        if status in (401, 403):
            return ConfigurationError(
                f"{where} refused the API key ({status} {kind}: {message}); pass api_key= a key with read "
                "scope (the server's CEF_API_KEYS)"
            )
        if status == 404:
            return ConfigurationError(
                f"{where} has no {RETRIEVE_PATH} ({status} {kind}: {message}): give the root URL of a "
                "`cef serve http`"
            )
        if status in (409, 422):  # 409: valid JSON that names what the graph does not hold
            return ValidationError(f"{where} refused the query: {message}")
        if status == 503:
            return RetryableStoreError(f"{where} is busy ({kind}): {message}; retry")
        if status == 504:
            return QueryTimeoutError(f"{where} ran out of time: {message}")
        return StoreError(f"{where} failed ({status} {kind}): {message}")
