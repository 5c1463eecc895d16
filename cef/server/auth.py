"""API keys with read/write scopes, compared in constant time (shared by the REST API and MCP over HTTP)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from cef.server.settings import ApiKey, Scope

__all__ = ["API_KEY_HEADER", "OPEN", "Denied", "KeyRing"]

#: the grant of every request when no keys are configured
OPEN = ApiKey(access="write")

API_KEY_HEADER = "X-API-Key"


@dataclass(frozen=True)
class Denied:
    """Why a request may not go on: an HTTP status, an error kind and a message."""

    status: int
    kind: str
    message: str


class KeyRing:
    """The configured keys. Every key is compared (``hmac.compare_digest``), with no early exit."""

    def __init__(self, keys: dict[str, ApiKey] | dict[str, Scope]) -> None:
        self._keys = [
            (k.encode(), grant if isinstance(grant, ApiKey) else ApiKey(access=grant))
            for k, grant in keys.items()
        ]

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def grant_of(self, presented: str | bytes | None) -> ApiKey | None:
        if presented is None:
            return None
        given = presented.encode("utf-8", "surrogateescape") if isinstance(presented, str) else presented
        found: ApiKey | None = None
        for key, grant in self._keys:
            if hmac.compare_digest(given, key):
                found = grant
        return found

    def scope_of(self, presented: str | bytes | None) -> Scope | None:
        grant = self.grant_of(presented)
        return grant.access if grant is not None else None

    def check(self, presented: str | bytes | None, needed: Scope) -> Denied | None:
        """None when ``presented`` grants ``needed`` (a write key also reads), else why not."""
        if not self.enabled:
            return None
        if not presented:
            return Denied(401, "unauthorized", f"missing API key: send it in the {API_KEY_HEADER} header")
        scope = self.scope_of(presented)
        if scope is None:
            return Denied(401, "unauthorized", "unknown API key")
        if needed == "write" and scope != "write":
            return Denied(
                403, "forbidden", "this API key has read scope; writing needs a key with write scope"
            )
        return None
