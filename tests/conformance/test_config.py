"""Configuration: cef.toml, CEF_ environment variables, URLs, missing extras."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cef.config import CefConfig, load_config
from cef.errors import ConfigurationError, MissingExtraError
from cef.wiring import open_from_config, open_store, store_location


def test_toml_env_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in __import__("os").environ if k.startswith("CEF_")]:
        monkeypatch.delenv(key)
    toml = tmp_path / "cef.toml"
    toml.write_text(
        '[cef.store]\nurl = "postgresql://cef@db/cef"\n[cef.vectors]\nbackend = "qdrant"\nurl = "http://q:6333"\n'
        '[cef.graph]\nbackend = "falkordb"\nurl = "redis://g:6379"\npassword = "pw"\n[cef.embedder]\nprovider = "none"\n'
    )
    cfg = load_config(toml)
    assert cfg.store.url == "postgresql://cef@db/cef"
    assert (cfg.vectors.backend, cfg.vectors.url) == ("qdrant", "http://q:6333")
    assert cfg.graph.password is not None and cfg.graph.password.get_secret_value() == "pw"
    assert "pw" not in repr(cfg)
    monkeypatch.setenv("CEF_VECTORS__BACKEND", "duckdb")
    monkeypatch.setenv("CEF_EMBEDDER", "default")
    cfg = load_config(toml, store={"url": "other.db"})
    assert (cfg.vectors.backend, cfg.vectors.url) == ("duckdb", "http://q:6333")  # env over file, key by key
    assert cfg.embedder.provider == "minilm" and cfg.store.url == "other.db"
    monkeypatch.setenv("CEF_DB", "short.db")
    assert load_config(toml).store.url == "short.db"
    (tmp_path / "top.toml").write_text('store = "top.db"\nembed_nodes = "content"\n')
    monkeypatch.delenv("CEF_DB")
    cfg = load_config(tmp_path / "top.toml")
    assert (cfg.store.url, cfg.embed_nodes) == ("top.db", "content")


def test_invalid_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_config(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("[cef.vectors]\nbackend = 'faiss'\n")
    with pytest.raises(ConfigurationError, match="backend"):
        load_config(tmp_path / "bad.toml")
    (tmp_path / "typo.toml").write_text("[cef.stor]\nurl = 'x'\n")
    with pytest.raises(ConfigurationError, match="stor"):
        load_config(tmp_path / "typo.toml")
    (tmp_path / "broken.toml").write_text("[cef\n")
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_config(tmp_path / "broken.toml")
    with pytest.raises(ConfigurationError, match="scheme"):
        open_store("mysql://x/y")
    cfg = CefConfig(store={"url": str(tmp_path / "k.db")}, vectors={"backend": "store"})
    with pytest.raises(ConfigurationError, match="native vector search"):
        open_from_config(cfg, embedder=None)


def test_locations() -> None:
    assert store_location("kb.db") == ("sqlite", "kb.db")
    assert store_location("sqlite:///tmp/kb.db") == ("sqlite", "/tmp/kb.db")
    assert store_location("sqlite://") == ("sqlite", ":memory:")
    assert store_location("postgres://u@h/db") == ("postgresql", "postgres://u@h/db")
    assert store_location(Path("postgresql://u@/db?host=/run/pg")) == (
        "postgresql",
        "postgresql://u@/db?host=/run/pg",
    )
    assert store_location(Path("postgresql-notes/kb.db")) == ("sqlite", "postgresql-notes/kb.db")


def test_missing_extra_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "qdrant_client", None)
    cfg = CefConfig(store={"url": str(tmp_path / "k.db")}, vectors={"backend": "qdrant"})
    with pytest.raises(MissingExtraError, match=r"cef-context\[qdrant\]"):
        open_from_config(cfg, embedder=None)
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtraError, match=r"cef-context\[postgres\]"):
        open_store("postgresql://u@/db")
