"""ServerSettings: CEF_* variables, API key formats, limits."""

from __future__ import annotations

import pydantic
import pytest

from cef.server.settings import ApiKey, ServerSettings, parse_api_keys


def test_reads_env_only_when_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEF_MAX_DEPTH", "2")
    monkeypatch.setenv("CEF_API_KEYS", "reader-key-1:read, writer-key-1:write")
    monkeypatch.setenv("CEF_GRAPH_TIMEOUT_MS", "250")
    s = ServerSettings()
    assert s.max_depth == 2
    assert s.default_depth == 2  # clamped to max_depth
    assert s.api_keys == {"reader-key-1": ApiKey(access="read"), "writer-key-1": ApiKey(access="write")}
    assert s.auth_enabled
    assert s.graph_timeout_ms == 250


def test_explicit_values_beat_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEF_MAX_DEPTH", "2")
    assert ServerSettings(max_depth=4).max_depth == 4


def test_api_keys_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEF_API_KEYS", '{"a-long-key-1": "write"}')
    assert ServerSettings().api_keys == {"a-long-key-1": ApiKey(access="write")}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("no-scope-given-here", "needs its access"),
        ("short:read", "at least 8 characters"),
        ("long-enough-key:admin", "'key:read', 'key:write'"),
        ("{not json", "not valid JSON"),
    ],
)
def test_bad_api_keys_are_refused(raw: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_api_keys(raw)


def test_no_keys_means_open() -> None:
    assert not ServerSettings(api_keys="").auth_enabled


def test_required_fields_always_include_text_query(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEF_REQUIRED_FIELDS", "graphHints")
    assert ServerSettings().required_fields == ["textQuery", "graphHints"]
    with pytest.raises(pydantic.ValidationError):
        ServerSettings(required_fields=["nonsense"])
