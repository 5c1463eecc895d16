"""Settings of the front doors (REST and MCP), read from ``CEF_*`` environment variables.

Only the edges build a :class:`ServerSettings` (``cef serve``, ``cef tools``);
nothing reads the environment at import. Library users pass a settings
object, e.g. ``ServerSettings(api_keys={"k1": "write"}, max_depth=2)``.

``CEF_API_KEYS`` takes ``key:access`` pairs separated by commas
(``"reader-key:read,admin-key:write"``; ``"tenant-key:read@tenant-a|tenant-b"`` limits
a key to data scopes) or a JSON object
(``{"reader-key": "read"}``). A ``write`` key may also read. With no keys the
REST API is open, and the server says so loudly when it starts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from cef.config import SERVER_TABLE, TomlTableSource, read_config_file, setting_sources, toml_values
from cef.errors import ConfigurationError, format_validation_error

Scope = Literal["read", "write"]
RequiredField = Literal["textQuery", "graphHints", "semanticKeywords"]

__all__ = ["ApiKey", "RequiredField", "Scope", "ServerSettings", "load_server_settings"]


class ApiKey(BaseModel):
    """What a key grants: ``read`` or ``write`` (which also reads), within ``scopes`` (None: every scope).

    A key limited to scopes sees only data of those scopes and unscoped (shared)
    data, and writes only into its scopes.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    access: Scope
    scopes: tuple[str, ...] | None = Field(default=None, min_length=1)


def _grant(value: Any) -> ApiKey:
    if isinstance(value, ApiKey):
        return value
    if isinstance(value, str):
        access, at, scopes = value.strip().partition("@")
        if access not in ("read", "write"):
            raise ValueError(f"API key access must be 'read' or 'write', got {access!r}")
        names = tuple(s.strip() for s in scopes.split("|") if s.strip()) if at else None
        if at and not names:
            raise ValueError("an API key's '@' must be followed by scopes separated by '|'")
        return ApiKey(access=access, scopes=names)  # type: ignore[arg-type]  # checked above
    if isinstance(value, dict):
        return ApiKey.model_validate(value)
    raise ValueError(f"an API key maps to 'read', 'write', 'read@scope1|scope2' or an object, not {value!r}")


def parse_api_keys(value: Any) -> dict[str, ApiKey]:
    """``"k1:read,k2:write@tenant-a|tenant-b"``, a JSON object or a mapping → ``{key: ApiKey}``.

    JSON values may be ``"read"`` or ``{"access": "read", "scopes": ["tenant-a"]}``
    (the form for scope names that contain ``,`` or ``|``).
    """
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"CEF_API_KEYS is not valid JSON: {exc}") from exc
        else:
            pairs: dict[str, Any] = {}
            for item in filter(None, (p.strip() for p in text.split(","))):
                m = re.fullmatch(r"(.+?):((?:read|write)(?:@.*)?)", item)
                if m is None:
                    raise ValueError(
                        "each API key needs its access: write 'key:read', 'key:write' or "
                        "'key:read@scope1|scope2', separated by commas"
                    )
                pairs[m.group(1).strip()] = m.group(2).strip()
            value = pairs
    if not isinstance(value, dict):
        raise ValueError("api_keys must map each key to 'read' or 'write'")
    out: dict[str, ApiKey] = {}
    for key, grant in value.items():
        raw = key.get_secret_value() if isinstance(key, SecretStr) else str(key)
        if len(raw) < 8:
            raise ValueError("API keys must be at least 8 characters long")
        out[raw] = _grant(grant)
    return out


def _default_required() -> list[RequiredField]:
    return ["textQuery"]


class ServerSettings(BaseSettings):
    """Everything the REST and MCP servers can be configured with (env prefix ``CEF_``)."""

    model_config = SettingsConfigDict(env_prefix="CEF_", extra="ignore", validate_default=True)

    # where to listen (what to serve — store, embedder — is cef.config.CefConfig)
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)

    # REST security
    api_keys: Annotated[dict[str, ApiKey], NoDecode] = Field(
        default_factory=dict,
        repr=False,
        description="key -> access (read/write) and data scopes; empty means the REST API is open",
    )

    # request limits
    max_depth: int = Field(
        default=3, ge=0, le=10, description="deepest graph traversal a request may ask for"
    )
    default_depth: int = Field(default=2, ge=0, le=10)
    max_limit: int = Field(default=100, ge=1, le=1000, description="most results one request may ask for")
    max_query_length: int = Field(
        default=1000, ge=1, le=10_000, description="longest query text, in characters"
    )
    max_batch: int = Field(default=1000, ge=1, description="most records one write call may carry")
    max_body_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=1024,
        description="largest request body in bytes; a larger one is refused with 413 before it is read",
    )

    # search behaviour
    graph_timeout_ms: int = Field(
        default=5000, ge=0, description="graph exploration time limit; then vector search answers (0: none)"
    )
    cache_ttl_seconds: float = Field(default=300.0, ge=0, description="search cache lifetime (0: no cache)")
    cache_max_entries: int = Field(default=1024, ge=0)

    # answers (POST /api/v1/answer and the answer_question tool)
    llm: str | None = Field(
        default=None,
        description="LLM provider for answers: openai, vllm, ollama or mock (none: answers hold the passages only)",
    )
    llm_model: str | None = Field(default=None, description="the LLM model name")
    llm_base_url: str | None = Field(default=None, description="API root of the LLM server")
    llm_api_key: SecretStr | None = Field(default=None, repr=False, description="API key of the LLM server")

    # tools (MCP and `cef tools`)
    required_fields: Annotated[list[RequiredField], NoDecode] = Field(
        default_factory=lambda: _default_required(),
        description="which retrieve_context fields are required (textQuery always is)",
    )
    schema_samples: int = Field(
        default=2, ge=0, le=10, description="example node names per label in tool texts"
    )
    schema_poll_seconds: float = Field(
        default=2.0, ge=0, description="how often the MCP server looks for schema changes by other processes"
    )
    writable: bool = Field(
        default=False,
        description="accept writes: the MCP write tools and the REST write endpoints of `cef serve http` "
        "(off: read-only, whatever the API keys grant)",
    )

    #: where each setting came from (set by :func:`load_server_settings`)
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def sources(self) -> dict[str, str]:
        return dict(self._sources)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, TomlTableSource(settings_cls, SERVER_TABLE)

    @field_validator("api_keys", mode="before")
    @classmethod
    def _keys(cls, value: Any) -> dict[str, ApiKey]:
        return parse_api_keys(value)

    @field_validator("required_fields", mode="before")
    @classmethod
    def _fields(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            return (
                json.loads(text)
                if text.startswith("[")
                else [p.strip() for p in text.split(",") if p.strip()]
            )
        return value

    @model_validator(mode="after")
    def _check(self) -> ServerSettings:
        if self.default_depth > self.max_depth:
            self.default_depth = self.max_depth
        if "textQuery" not in self.required_fields:
            self.required_fields = ["textQuery", *self.required_fields]
        self.required_fields = list(dict.fromkeys(self.required_fields))
        return self

    @property
    def auth_enabled(self) -> bool:
        return bool(self.api_keys)


def load_server_settings(
    path: str | Path | None = None, *, flags: dict[str, str] | None = None, **overrides: Any
) -> ServerSettings:
    """The servers' settings, resolved like :func:`cef.config.load_config`: flags (``overrides``), then
    ``CEF_*`` variables (``CEF_PORT``, ``CEF_API_KEYS`` ...), then the file's ``[cef.server]`` table."""
    import pydantic

    data, file = read_config_file(path)
    overrides = {k: v for k, v in overrides.items() if v is not None}
    try:
        with toml_values(data):
            settings = ServerSettings(**overrides)
    except pydantic.ValidationError as exc:
        where = f"{file} [cef.server], " if file else ""
        raise ConfigurationError(
            f"invalid server settings (in {where}CEF_* variables or options): {format_validation_error(exc)}"
        ) from None
    table = data.get(SERVER_TABLE)
    settings._sources = setting_sources(
        settings,
        file_data=table if isinstance(table, dict) else {},
        file=file,
        overrides=overrides,
        flags=flags,
    )
    return settings
