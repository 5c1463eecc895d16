"""API keys with read/write scopes, compared in constant time (shared by the REST API and MCP over HTTP)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cef.errors import CefError, NotFoundError
from cef.server.settings import ApiKey, Scope

if TYPE_CHECKING:
    from cef.model import GraphQuery

__all__ = [
    "API_KEY_HEADER",
    "OPEN",
    "Denied",
    "ForbiddenError",
    "KeyRing",
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
class ForbiddenError(CefError):
    """The API key may not use this scope (403 at the front doors)."""


def read_scope(grant: ApiKey | None, requested: str | None) -> str | None:
    """The scope a read runs in: the requested one if the key may read it; a single-scope key's own."""
    if grant is None or grant.scopes is None:
        return requested
    if requested is None:
        if len(grant.scopes) == 1:
            return grant.scopes[0]
        raise ForbiddenError(f"this API key reads only scopes {', '.join(grant.scopes)}: name one in 'scope'")
    if requested not in grant.scopes:
        raise ForbiddenError(f"this API key may not read scope {requested!r}")
    return requested


def scoped_query(grant: ApiKey | None, query: GraphQuery) -> GraphQuery:
    """``query`` run in the key's scope (:func:`read_scope`), its graph patterns too: a pattern of a
    scoped key walks only its scope's and shared records (a pattern naming a scope the key may not
    read is refused)."""
    from cef.model.patterns import QueryCombinator

    scope = read_scope(grant, query.scope)
    if grant is None or grant.scopes is None or not query.patterns:
        return query.model_copy(update={"scope": scope})
    patterns: list[Any] = []
    for item in query.patterns:
        inner = item.patterns if isinstance(item, QueryCombinator) else [item]
        for p in inner:
            if p.scope is not None and p.scope not in grant.scopes:
                raise ForbiddenError(f"pattern {p.pattern_id!r}: this API key may not read scope {p.scope!r}")
        bound = [p if p.scope is not None else p.model_copy(update={"scope": scope}) for p in inner]
        patterns.append(
            item.model_copy(update={"patterns": bound}) if isinstance(item, QueryCombinator) else bound[0]
        )
    return query.model_copy(update={"scope": scope, "patterns": patterns})


def visible(grant: ApiKey | None, scope: str | None) -> bool:
    """Whether a key sees a record of ``scope`` (unscoped records are shared)."""
    return grant is None or grant.scopes is None or scope is None or scope in grant.scopes


def write_scope(grant: ApiKey | None, scope: str | None, what: str) -> str | None:
    """The scope a new record gets: its own if the key may write there; a single-scope key's own."""
    if grant is None or grant.scopes is None:
        return scope
    if scope is None and len(grant.scopes) == 1:
        return grant.scopes[0]
    if scope is None or scope not in grant.scopes:
        raise ForbiddenError(f"this API key writes only {what}s of scopes {', '.join(grant.scopes)}")
    return scope


def owned(grant: ApiKey | None, record: Any, kind: str, ident: str) -> Any:
    """``record`` if the key may change it: NotFoundError when it cannot see it (or it does not exist),
    ForbiddenError for shared (unscoped) data and a scoped key."""
    if record is None or not visible(grant, record.scope):
        raise NotFoundError(f"{kind} {ident!r} does not exist")
    if grant is not None and grant.scopes is not None and record.scope is None:
        raise ForbiddenError(f"{kind} {ident!r} is shared (unscoped): this API key cannot change it")
    return record
