"""The real all-MiniLM-L6-v2, loaded offline from its PyPI package, on both runtimes (ONNX and torch)."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from cef.embed import Embedder, MiniLMEmbedder, get_default_embedder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env_before() -> dict[str, str | None]:
    return {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}


@pytest.fixture(scope="module", params=["onnx", "torch"])
def minilm(request: pytest.FixtureRequest, env_before: dict[str, str | None]) -> MiniLMEmbedder:
    emb = get_default_embedder() if request.param == "onnx" else MiniLMEmbedder(runtime=request.param)
    assert emb.runtime == request.param
    emb.load()
    return emb


def test_loading_leaves_the_environment_as_it_was(
    minilm: MiniLMEmbedder, env_before: dict[str, str | None]
) -> None:
    assert minilm.loaded
    assert {k: os.environ.get(k) for k in env_before} == env_before


def test_vectors_are_384_dim_unit_float32(minilm: MiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    out = minilm.embed(["The quick brown fox.", "A second sentence.", ""])
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_similar_sentences_score_higher_than_unrelated(minilm: MiniLMEmbedder) -> None:
    q, para, other = minilm.embed(
        [
            "Which drugs interact with warfarin?",
            "Aspirin increases the bleeding risk of patients taking warfarin.",
            "The football match ended in a draw after extra time.",
        ]
    )
    assert float(q @ para) > float(q @ other) + 0.2
    cat, kitten, stock = minilm.embed(
        ["A cat sits on the mat.", "A kitten is lying on a rug.", "Stocks fell."]
    )
    assert float(cat @ kitten) > 0.5 > float(cat @ stock)


def test_embed_query_matches_embed(minilm: MiniLMEmbedder) -> None:
    text = "graph retrieval for agents"
    q = minilm.embed_query(text)
    assert q.shape == (384,)
    np.testing.assert_allclose(q, minilm.embed([text])[0], atol=1e-6)


def test_batch_size_does_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    texts = [f"sentence number {i} about topic {i % 7}" for i in range(25)]
    small = MiniLMEmbedder(batch_size=4, runtime=minilm.runtime)
    assert small.loaded  # shares the loaded model: no second load
    seen: list[tuple[int, int]] = []
    a = small.embed(texts, progress=lambda done, total: seen.append((done, total)))
    b = minilm.embed(texts)
    # int8 activations are quantized per run, so batch mates move a vector slightly
    assert float((a * b).sum(axis=1).min()) >= (0.99 if minilm.runtime == "onnx" else 1 - 1e-5)
    assert seen[0] == (4, 25) and seen[-1] == (25, 25) and len(seen) == 7


def test_long_texts_are_truncated_by_the_model_not_rejected(minilm: MiniLMEmbedder) -> None:
    head = "Kidney function affects drug clearance. " * 80  # 480 word pieces, past the 256 read
    long_a = head + "Completely different ending about sailing boats."
    long_b = head + "Another unrelated ending about mountain climbing."
    a, b = minilm.embed([long_a, long_b])
    assert float(a @ b) == pytest.approx(1.0, abs=1e-5)  # only the first 256 tokens count


def test_concurrent_use_is_safe(minilm: MiniLMEmbedder) -> None:
    texts = ["thread safety check", "another text"]
    expected = minilm.embed(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(MiniLMEmbedder(runtime=minilm.runtime).embed(texts))
        except BaseException as exc:  # pragma: no cover - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 4
    for r in results:
        np.testing.assert_allclose(r, expected, atol=1e-5)


def test_throughput_on_short_sentences(minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]) -> None:
    texts = [f"Patient {i} was prescribed drug {i % 50} for condition {i % 13}." for i in range(1000)]
    minilm.embed(texts[:64])  # warm up
    start = time.perf_counter()
    out = minilm.embed(texts)
    elapsed = time.perf_counter() - start
    assert out.shape == (1000, 384)
    rate = len(texts) / elapsed
    with capsys.disabled():
        print(
            f"\nall-MiniLM-L6-v2 ({minilm.runtime}): {rate:.0f} texts/s (1,000 short sentences, batch {minilm.batch_size})"
        )
    assert rate > 20  # a floor that only catches pathological slowness
