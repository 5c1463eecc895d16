"""The one exception tree of cef.

Every error cef raises on purpose derives from :class:`CefError`::

    CefError
    ├── ValidationError          bad input from the caller (4xx at the front doors)
    │   ├── ConflictError              well-formed input the knowledge base's current state refuses (409)
    │   │   ├── UnknownRelationTypeError   an edge names a relation type nobody registered
    │   │   ├── UnknownNodeTypeError       a write names a node type the registry refuses
    │   │   ├── DuplicateIdError           an id that already exists (or twice in one batch)
    │   │   └── MissingNodeError           an edge or chunk points to a node that does not exist
    │   ├── InvalidPropertyError       a property that is not JSON-serializable or breaks a schema
    │   ├── ParseError                 a malformed input file (names file and line)
    │   └── UnsupportedFileError       a file no parser reads (ingest skips it and says so)
    ├── NotFoundError             a lookup by id found nothing
    ├── PathEscapeError           a data-source path that would leave its root
    ├── ConfigurationError        a setting that cannot work (missing extra, bad URL, ...)
    │   ├── MissingExtraError          an optional dependency is not installed
    │   ├── StoreNotFoundError         a read names a knowledge base that does not exist
    │   └── NotAKnowledgeBaseError     the location holds something else (not SQLite, another app's tables)
    ├── StoreError                a backend failed; adapters translate driver errors to this
    │   └── RetryableStoreError        a transient failure (lock, connection) worth retrying
    ├── EmbeddingError            the embedding model failed or returned the wrong shape
    ├── LLMError                  an LLM call failed
    │   └── LLMTimeoutError
    └── QueryTimeoutError         a time limit was exceeded (patterns, graph exploration)

Front doors map ``ValidationError``/``NotFoundError`` to client errors and the
rest to server errors, always with the message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pydantic


class CefError(Exception):
    """Root of every error cef raises on purpose."""


class ValidationError(CefError):
    """The caller's input is invalid; nothing was written."""


class ConflictError(ValidationError):
    """The input is well formed but conflicts with what the knowledge base holds now (an unknown
    relation type, a missing node, an existing id, a node that still has edges); nothing was written."""


class UnknownRelationTypeError(ConflictError):
    def __init__(self, relation_type: str, where: str = "", known: list[str] | None = None) -> None:
        self.relation_type = relation_type
        hint = ""
        if known is not None:
            shown = ", ".join(sorted(known)[:20]) or "(none registered)"
            hint = f"; registered relation types: {shown}"
        loc = f" ({where})" if where else ""
        super().__init__(
            f"unknown relation type {relation_type!r}{loc}: declare it first (in the relation_types of the "
            "same batch or graph file, KnowledgeBase.register_relation_type, or kb.schema.register_edge_type)"
            f"{hint}"
        )


class UnknownNodeTypeError(ConflictError):
    pass


class DuplicateIdError(ConflictError):
    def __init__(self, kind: str, id: str, where: str = "") -> None:
        self.kind = kind
        self.id = id
        loc = f" ({where})" if where else ""
        super().__init__(
            f"duplicate {kind} id {id!r}{loc}: ids must be unique; use update_{kind}() to change an existing {kind}"
        )


class MissingNodeError(ConflictError):
    def __init__(self, node_id: str, where: str = "") -> None:
        self.node_id = node_id
        loc = f" referenced by {where}" if where else ""
        super().__init__(f"node {node_id!r}{loc} does not exist: index the node first or in the same batch")


class InvalidPropertyError(ValidationError):
    pass


class ParseError(ValidationError):
    def __init__(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        self.file = file
        self.line = line
        where = ""
        if file is not None:
            where = f"{file}:{line}: " if line is not None else f"{file}: "
        super().__init__(f"{where}{message}")


class UnsupportedFileError(ValidationError):
    """A file that is not for any parser: an unknown extension, or a YAML/JSON file with none of a
    graph file's keys (a question set, a memory domain). Ingest reports it as skipped."""


class NotFoundError(CefError):
    pass


class ForbiddenError(CefError):
    """The caller's API key may not use this data scope, or change this shared record (403 at the front doors)."""


class PathEscapeError(CefError):
    pass


class ConfigurationError(CefError):
    pass


class MissingExtraError(ConfigurationError):
    def __init__(self, what: str, extra: str, module: str) -> None:
        self.extra = extra
        super().__init__(
            f"{what} needs the optional dependency {module!r}: pip install 'cef-context[{extra}]'"
        )


class StoreNotFoundError(ConfigurationError):
    """A read-only open (``create=False``) named a knowledge base that does not exist; nothing was created."""

    def __init__(self, location: str, detail: str = "no such file", *, hint: str = "") -> None:
        self.location = location
        self.detail = detail
        super().__init__(
            f"knowledge base {location!r} does not exist ({detail})" + (f": {hint}" if hint else "")
        )


class NotAKnowledgeBaseError(ConfigurationError):
    """The location names a file that is not a cef knowledge base; it was left as it was."""

    def __init__(self, location: str, detail: str) -> None:
        self.location = location
        super().__init__(
            f"{location!r} is not a cef knowledge base ({detail}); it was left untouched: "
            "point --db at a knowledge base, or at a new file to create one"
        )


class StoreError(CefError):
    pass


class RetryableStoreError(StoreError):
    pass


class EmbeddingError(CefError):
    pass


class LLMError(CefError):
    pass


class LLMTimeoutError(LLMError):
    pass


class QueryTimeoutError(CefError):
    pass


def format_validation_error(exc: pydantic.ValidationError, limit: int = 8) -> str:
    """A pydantic error as one readable line per problem: ``field.path: message``."""
    lines = []
    for err in exc.errors(include_url=False, include_input=False)[:limit]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
        lines.append(f"{loc}: {err.get('msg', 'invalid')}")
    more = exc.error_count() - limit
    if more > 0:
        lines.append(f"... and {more} more problem(s)")
    return "; ".join(lines)
