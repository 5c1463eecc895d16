"""JSON-over-HTTP plumbing shared by cef's HTTP adapters (LLM clients, remote embedders).

One place translates httpx's errors into cef's: a timeout becomes the
adapter's timeout error, an unreachable server or an HTTP error status its
error class, each message naming the URL without credentials or query string
and quoting the server's own error message (or an excerpt of the body).
Transient failures (connection refused, 408/429/5xx) are retried with
exponential backoff, honouring ``Retry-After``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from cef.errors import CefError, ConfigurationError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
EXCERPT_CHARS = 300
MAX_RETRY_WAIT = 20.0
HEALTH_TIMEOUT = 5.0


def redact_url(url: str | httpx.URL) -> str:
    """``url`` without user info, query string or fragment (they may hold secrets)."""
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def check_base_url(url: str, *, default_path: str = "") -> str:
    """A validated base URL without a trailing slash; ``default_path`` is added when the URL has no path."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"base_url must be an http(s) URL such as http://localhost:8000/v1, got {url!r}"
        )
    path = parts.path.rstrip("/") or default_path
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_detail(response: httpx.Response) -> str:
    """The server's message: ``error.message``, ``error`` or ``detail`` of a JSON body, else an excerpt."""
    try:
        text = response.text
    except httpx.ResponseNotRead:
        return "(body not read)"
    try:
        body = json.loads(text)
    except ValueError:
        return excerpt(text) or "(empty body)"
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        if err is not None:
            return excerpt(err if isinstance(err, str) else json.dumps(err))
    return excerpt(text)


class JsonHttp:
    """One lazily opened ``httpx.Client`` for a base URL, translating errors to ``error``/``timeout_error``.

    ``what`` names the caller in messages ("the embedding server", "the LLM").
    Constructing it opens nothing; the client is created on first use and is
    safe to share between threads.
    """

    def __init__(
        self,
        base_url: str,
        *,
        what: str,
        error: type[CefError],
        timeout_error: type[CefError],
        timeout: float,
        max_retries: int = 2,
        backoff: float = 0.5,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {max_retries}")
        self.base_url = base_url
        self.what = what
        self.error = error
        self.timeout_error = timeout_error
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.headers = dict(headers or {})
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ lifecycle
    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = httpx.Client(timeout=self.timeout, headers=self.headers)
        return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def url(self, path: str) -> str:
        """``base_url`` + ``/path``, keeping the base URL's query string (e.g. ``?api-version=...``) last."""
        parts = urlsplit(self.base_url)
        return urlunsplit((parts.scheme, parts.netloc, f"{parts.path}/{path.lstrip('/')}", parts.query, ""))

    # ------------------------------------------------------------- requests
    def post_json(self, path: str, payload: Mapping[str, Any]) -> Any:
        """POST ``payload`` as JSON and return the decoded JSON answer."""
        url = self.url(path)
        with self.translate(url):
            response = self._send_with_retries("POST", url, payload)
        self.raise_for_status(response, url)
        try:
            return response.json()
        except ValueError as exc:
            raise self.error(
                f"{self.what} at {redact_url(url)} answered with invalid JSON: {excerpt(response.text)!r}"
            ) from exc

    def get_ok(self, path: str, timeout: float = HEALTH_TIMEOUT) -> bool:
        """True when GET ``path`` answers 2xx within ``timeout`` (capped by the client's); never raises."""
        try:
            return self.client.get(self.url(path), timeout=min(timeout, self.timeout)).is_success
        except httpx.HTTPError:
            return False

    @contextmanager
    def stream(self, path: str, payload: Mapping[str, Any]) -> Iterator[httpx.Response]:
        """POST and yield the streaming response once its status is known to be a success.

        Errors raised while the caller reads the body are translated too.
        """
        url = self.url(path)
        with self.translate(url):
            attempt = 0
            while True:
                with self.client.stream("POST", url, json=payload) as response:
                    if response.is_success:
                        yield response
                        return
                    if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                        response.close()
                        self._wait(attempt, response)
                        attempt += 1
                        continue
                    response.read()
                    self.raise_for_status(response, url)

    def _send_with_retries(self, method: str, url: str, payload: Mapping[str, Any]) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = self.client.request(method, url, json=payload)
            except (httpx.ConnectError, httpx.RemoteProtocolError) as exc:
                if attempt >= self.max_retries:
                    raise
                log.debug("%s: %s, retrying", redact_url(url), exc)
                self._wait(attempt, None)
                attempt += 1
                continue
            if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                log.debug("%s answered %s, retrying", redact_url(url), response.status_code)
                self._wait(attempt, response)
                attempt += 1
                continue
            return response

    def _wait(self, attempt: int, response: httpx.Response | None) -> None:
        delay = self.backoff * (2**attempt)
        if response is not None:
            retry_after = response.headers.get("retry-after", "")
            with suppress(ValueError):
                delay = max(delay, float(retry_after))
        time.sleep(min(delay, MAX_RETRY_WAIT))

    # --------------------------------------------------------------- errors
    def raise_for_status(self, response: httpx.Response, url: str) -> None:
        if response.is_success:
            return
        raise self.error(
            f"{self.what} at {redact_url(url)} answered HTTP {response.status_code}: {error_detail(response)}"
        )

    @contextmanager
    def translate(self, url: str) -> Iterator[None]:
        """Turn httpx exceptions raised inside the block into cef errors."""
        try:
            yield
        except httpx.TimeoutException as exc:
            raise self.timeout_error(
                f"{self.what} at {redact_url(url)} did not answer within {self.timeout:g} s "
                f"({type(exc).__name__})"
            ) from exc
        except httpx.HTTPError as exc:
            raise self.error(
                f"cannot reach {self.what} at {redact_url(url)}: {type(exc).__name__}: {exc}"
            ) from exc
