"""API keys with read/write scopes, compared in constant time (shared by the REST API and MCP over HTTP)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cef.engine.access import EVERYTHING, Access
from cef.errors import ForbiddenError
from cef.server.settings import ApiKey, Scope

if TYPE_CHECKING:
    from cef.model import GraphQuery

__all__ = [
    "API_KEY_HEADER",
    "OPEN",
    "Denied",
    "ForbiddenError",
    "KeyRing",
    "access_of",
    "owned",
    "read_scope",
    "scoped_query",
    "visible",
    "write_scope",
]

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


# ------------------------------------------------------------------ data scopes of a key (REST and MCP)
# The rules live in the engine (cef.engine.access); these name them for a key's grant.


def access_of(grant: ApiKey | None) -> Access:
    """The data scopes ``grant`` holds (every scope for no key or an unscoped key)."""
    if grant is None or grant.scopes is None:
        return EVERYTHING
    return Access(tuple(grant.scopes))


def read_scope(grant: ApiKey | None, requested: str | None) -> str | None:
    """The scope a read runs in: the requested one if the key may read it; a single-scope key's own."""
    return access_of(grant).read_scope(requested)


def scoped_query(grant: ApiKey | None, query: GraphQuery) -> GraphQuery:
    """``query`` run in the key's scope, its graph patterns too (see :meth:`Access.bind`)."""
    return access_of(grant).bind(query)


def visible(grant: ApiKey | None, scope: str | None) -> bool:
    """Whether a key sees a record of ``scope`` (unscoped records are shared)."""
    return access_of(grant).sees(scope)


def write_scope(grant: ApiKey | None, scope: str | None, what: str) -> str | None:
    """The scope a new record gets: its own if the key may write there; a single-scope key's own."""
    return access_of(grant).write_scope(scope, what)


def owned(grant: ApiKey | None, record: Any, kind: str, ident: str) -> Any:
    """``record`` if the key may change it: NotFoundError when it cannot see it (or it does not exist),
    ForbiddenError for shared (unscoped) data and a scoped key."""
    return access_of(grant).owned(record, kind, ident)
