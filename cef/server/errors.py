"""How cef errors look at the front doors: one HTTP status and one JSON body per kind of error.

============================  ======  =====================================
error                         status  meaning
============================  ======  =====================================
request validation (pydantic)  422    the request does not match the schema
ValidationError                422    the engine refused the input
LimitExceededError             422    more than the server allows
ConflictError                  409    valid input the knowledge base's state refuses: an
                                      existing id, a missing node, an unknown relation type,
                                      a node that still has edges or chunks
NotFoundError                  404    no such node / edge / chunk
missing or unknown API key     401
key without the needed scope   403
ForbiddenError                 403    the key may not use that data scope
MissingExtraError              501    an optional dependency is missing
RetryableStoreError            503    transient; retry (Retry-After)
QueryTimeoutError              504
any other error                500    the message is kept; details logged
============================  ======  =====================================
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from cef.errors import (
    CefError,
    ConflictError,
    MissingExtraError,
    NotFoundError,
    QueryTimeoutError,
    RetryableStoreError,
    ValidationError,
)
from cef.server.auth import ForbiddenError

__all__ = ["ErrorBody", "ErrorDetail", "error_kind", "status_for"]


class ErrorDetail(BaseModel):
    field: str = Field(description="where the problem is, e.g. 'body.traversal.depth'")
    message: str


class ErrorBody(BaseModel):
    """Every error response of the REST API."""

    error: str = Field(description="kind of error, e.g. 'validation_error', 'not_found', 'unauthorized'")
    message: str = Field(description="what went wrong, for a human")
    details: list[ErrorDetail] = Field(default_factory=list)


def status_for(exc: BaseException) -> int:
    if isinstance(exc, ConflictError):
        return 409
    if isinstance(exc, ForbiddenError):
        return 403
    if isinstance(exc, ValidationError):
        return 422
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, MissingExtraError):
        return 501
    if isinstance(exc, RetryableStoreError):
        return 503
    if isinstance(exc, QueryTimeoutError):
        return 504
    return 500


def error_kind(exc: BaseException) -> str:
    """``DuplicateIdError`` → ``duplicate_id``; non-cef errors → ``internal_error``."""
    if not isinstance(exc, CefError):
        return "internal_error"
    name = type(exc).__name__.removesuffix("Error") or "cef"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() + (
        "_error" if name in ("Validation", "Store") else ""
    )


def body(kind: str, message: str, details: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return ErrorBody(
        error=kind, message=message, details=[ErrorDetail(**d) for d in details or []]
    ).model_dump(mode="json")
