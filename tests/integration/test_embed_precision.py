"""The encoder's precision: bfloat16 vectors within the stated cosine of float32, chosen from the CPU's flags."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from cef.cli import app
from cef.config import CefConfig
from cef.embed import MiniLMEmbedder
from cef.embed.base import BatchedEmbedder
from cef.embed.cpu import auto_precision, cpu_flags, describe_cpu
from cef.embed.minilm import BFLOAT16_COSINE, BULK_FROM
from cef.errors import ConfigurationError
from cef.wiring import open_embedder
from tests.integration.test_embed_onnx import _varied_sentences

pytestmark = pytest.mark.slow

AMX = {"avx512f", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8"}


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    return _varied_sentences()


@pytest.fixture(scope="module")
def float32(sentences: list[str]) -> np.ndarray:
    return MiniLMEmbedder(runtime="torch", precision="float32").embed(sentences)


def test_bfloat16_vectors_are_within_the_stated_cosine_of_float32(
    sentences: list[str], float32: np.ndarray
) -> None:
    emb = MiniLMEmbedder(precision="bfloat16")
    assert emb.runtime == "torch" and emb.bulk == ("torch", "bfloat16")
    got = emb.embed(sentences)
    assert got.dtype == np.float32 and got.shape == float32.shape
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cos = (got * float32).sum(axis=1)
    worst = int(np.argmin(cos))
    assert cos[worst] >= BFLOAT16_COSINE, f"cosine {cos[worst]:.5f} on {sentences[worst][:80]!r}"
    single = np.stack([emb.embed_query(t) for t in sentences[:20]])  # one text a batch: the query path
    assert ((single * float32[:20]).sum(axis=1) >= BFLOAT16_COSINE).all()
    # the nearest neighbours of a text are the same texts
    agree = 0
    for q in range(0, len(sentences), 10):
        ref = set(np.argsort(-(float32 @ float32[q]))[1:6].tolist())
        fast = set(np.argsort(-(got @ got[q]))[1:6].tolist())
        agree += len(ref & fast)
    assert agree / (5 * len(range(0, len(sentences), 10))) >= 0.95


def test_onnx_float32_queries_meet_bfloat16_passages(sentences: list[str]) -> None:
    """What ``auto`` mixes on an AMX machine: ingest batches in bfloat16, single questions on ONNX float32."""
    passages = MiniLMEmbedder(precision="bfloat16").embed(sentences)
    queries = np.stack([MiniLMEmbedder(precision="float32").embed_query(t) for t in sentences[:30]])
    assert ((queries * passages[:30]).sum(axis=1) >= BFLOAT16_COSINE).all()


def test_auto_precision_follows_the_cpu_flags() -> None:
    assert auto_precision(AMX, torch_installed=True) == "bfloat16"
    assert auto_precision(AMX, torch_installed=False) == "float32"
    # AVX-512 BF16 without AMX: the bfloat16 model is slower than float32 there
    assert auto_precision({"avx512f", "avx512_bf16", "avx512_vnni"}, torch_installed=True) == "float32"
    assert auto_precision(set(), torch_installed=True) == "float32"
    assert "no AMX" in describe_cpu({"avx512_bf16"}) and "AMX-BF16" in describe_cpu(AMX)


def test_auto_uses_bfloat16_for_batches_only_where_the_cpu_has_amx() -> None:
    emb = MiniLMEmbedder()
    assert (emb.runtime, emb.precision) == ("onnx", "float32")  # single texts: the fast-loading runtime
    if cpu_flags() >= AMX_BF16:
        assert emb.bulk == ("torch", "bfloat16")
        assert emb.describe() == f"queries: onnx float32; batches of {BULK_FROM}+ texts: torch bfloat16"
    else:
        assert emb.bulk == ("onnx", "float32") and emb.describe() == "onnx float32"
    assert MiniLMEmbedder(precision="float32").bulk == ("onnx", "float32")  # forced: every batch
    assert MiniLMEmbedder(runtime="torch", precision="float32").describe() == "torch float32"


AMX_BF16 = frozenset({"amx_tile", "amx_bf16"})


def test_bad_precision_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown embedder precision 'fp8'"):
        MiniLMEmbedder(precision="fp8")
    with pytest.raises(ConfigurationError, match="bfloat16 runs on the torch runtime only"):
        MiniLMEmbedder(runtime="onnx", precision="bfloat16")
    with pytest.raises(ConfigurationError, match="int8 runs on the onnx runtime only"):
        MiniLMEmbedder(runtime="torch", precision="int8")


def test_the_precision_is_a_setting_and_cef_config_shows_what_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEF_EMBEDDER__PRECISION", "bfloat16")
    emb = open_embedder(CefConfig().embedder)
    assert isinstance(emb, MiniLMEmbedder) and emb.bulk == ("torch", "bfloat16")
    out = CliRunner().invoke(app, ["config", "--json"])
    assert out.exit_code == 0, out.output
    rows = {r["key"]: r for r in json.loads(out.output)}
    assert rows["embedder.active"]["value"] == "torch bfloat16"
    assert rows["embedder.active"]["source"] == "set by embedder.precision"
    monkeypatch.delenv("CEF_EMBEDDER__PRECISION")
    rows = {r["key"]: r for r in json.loads(CliRunner().invoke(app, ["config", "--json"]).output)}
    assert rows["embedder.active"]["value"] == MiniLMEmbedder().describe()
    assert rows["embedder.active"]["source"] == describe_cpu()


class _Lengths(BatchedEmbedder):
    """Records the texts of each batch (vectors: the text's length in the first coordinate)."""

    name = "lengths"
    sort_by_length = True

    def __init__(self, batch_size: int) -> None:
        super().__init__(batch_size)
        self.batches: list[list[str]] = []

    @property
    def dim(self) -> int:
        return 2

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.batches.append(texts)
        return np.array([[len(t), 1.0] for t in texts])


class _Wider(_Lengths):
    SHORT_BATCH_FACTOR = 4


def test_short_texts_go_in_larger_batches_long_ones_in_batch_size() -> None:
    names = [f"Name {i}" for i in range(300)]
    passages = [("a passage of text " * 20) + str(i) for i in range(100)]
    default = _Lengths(batch_size=16)
    default.embed([*passages, *names])
    assert max(len(b) for b in default.batches) == 16  # the factor is off by default: batch_size holds
    emb = _Wider(batch_size=16)
    got = emb.embed([*passages, *names])
    sizes = [len(b) for b in emb.batches]
    assert max(sizes) == 16 * 4  # names: four times the batch size
    assert all(len(b) <= 16 for b in emb.batches if len(b[0]) > 300)  # passages: the batch size
    assert sum(sizes) == 400
    expect = np.array([[len(t), 1.0] for t in [*passages, *names]])
    np.testing.assert_allclose(got, expect / np.linalg.norm(expect, axis=1, keepdims=True), rtol=1e-6)
