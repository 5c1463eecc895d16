"""Ingest embeds each distinct text once, in order of length, and gives vectors back in the texts' order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cef.embed.base import Progress, Vectors
from cef.engine.embedding import embed_texts
from tests.conformance.embedder import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """The conformance embedder, remembering every call it got."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str], *, progress: Progress | None = None) -> Vectors:
        self.calls.append(list(texts))
        return super().embed(texts, progress=progress)


words = st.text(alphabet="abc de", min_size=1, max_size=30).filter(lambda t: t.strip())


@settings(max_examples=80, deadline=None)
@given(texts=st.lists(words, max_size=40), step=st.integers(1, 9))
def test_vectors_come_back_in_order_each_distinct_text_embedded_once_by_length(
    texts: list[str], step: int
) -> None:
    emb = CountingEmbedder()
    reports: list[tuple[int, int]] = []
    got = embed_texts(emb, texts, "texts", lambda what, done, total: reports.append((done, total)), step=step)
    assert got.shape == (len(texts), 16)
    plain = HashEmbedder(dim=16)
    for text, vec in zip(texts, got, strict=True):
        assert np.allclose(vec, plain.embed([text])[0], atol=1e-6)
    sent = [t for call in emb.calls for t in call]
    assert sorted(sent) == sorted(set(texts))  # each distinct text once
    assert [len(t) for t in sent] == sorted(len(t) for t in sent)  # shortest first
    assert all(len(call) <= step for call in emb.calls)
    if texts:
        assert reports[-1] == (len(set(texts)), len(set(texts)))


@pytest.mark.slow
def test_the_default_model_gives_the_same_vectors_in_length_order() -> None:
    from cef.embed import get_default_embedder

    emb = get_default_embedder()
    texts = [
        "Ada Lovelace",
        "Charles Babbage designed the Analytical Engine, a mechanical general-purpose computer, in 1837.",
        "London",
        "Ada Lovelace",
        "The Difference Engine was never finished in his lifetime.",
    ]
    ref = emb.embed(texts)
    got = embed_texts(emb, texts, "texts", step=2)
    assert np.min(np.sum(ref * got, axis=1)) > 0.995  # int8 ONNX quantizes activations per batch
