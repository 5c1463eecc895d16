"""OpenAIEmbedder against a real OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from cef.embed import Embedder, OpenAIEmbedder
from cef.errors import ConfigurationError, EmbeddingError, ValidationError
from tests.support.http import LoopbackServer
from tests.support.openai_server import DEFAULT_DIM, OpenAIState, cosine, hash_embedding, start_openai_server


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer[OpenAIState]]:
    with start_openai_server() as srv:
        yield srv


@pytest.fixture
def state(server: LoopbackServer[OpenAIState]) -> OpenAIState:
    return server.reset(OpenAIState())


@pytest.fixture
def make(server: LoopbackServer[OpenAIState]) -> Iterator[Callable[..., OpenAIEmbedder]]:
    """Builds embedders (base_url defaults to the test server) and closes them after the test."""
    made: list[OpenAIEmbedder] = []

    def build(base_url: str | None = None, model: str = "hash-embed", **kwargs: Any) -> OpenAIEmbedder:
        emb = OpenAIEmbedder(base_url or server.url + "/v1", model, **kwargs)
        made.append(emb)
        return emb

    yield build
    for emb in made:
        emb.close()


@pytest.fixture
def embedder(make: Callable[..., OpenAIEmbedder], state: OpenAIState) -> OpenAIEmbedder:
    return make(max_retries=0, timeout=5)


def test_vectors_are_unit_float32_rows_in_input_order(embedder: OpenAIEmbedder, state: OpenAIState) -> None:
    texts = ["alpha beta", "gamma delta", "epsilon"]
    out = embedder.embed(texts)
    assert out.dtype == np.float32
    assert out.shape == (3, DEFAULT_DIM)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    for row, text in zip(out, texts, strict=True):
        expected = np.asarray(hash_embedding(text), dtype=np.float64)
        np.testing.assert_allclose(row, expected / np.linalg.norm(expected), rtol=1e-5, atol=1e-6)
    # the request is the real protocol
    req = state.requests[-1]
    assert req.path == "/v1/embeddings"
    assert req.body == {"model": "hash-embed", "input": texts, "encoding_format": "float"}
    assert "Authorization" not in req.headers


def test_rows_follow_the_index_field_not_the_answer_order(
    embedder: OpenAIEmbedder, state: OpenAIState
) -> None:
    state.embed_mode = "reversed"
    texts = ["one", "two", "three", "four"]
    out = embedder.embed(texts)
    for row, text in zip(out, texts, strict=True):
        expected = np.asarray(hash_embedding(text))
        assert float(row @ (expected / np.linalg.norm(expected))) == pytest.approx(1.0, abs=1e-5)


def test_similar_texts_score_higher(embedder: OpenAIEmbedder) -> None:
    a, b, c = embedder.embed(
        ["the cat sat on the mat", "the cat sat on a mat", "quarterly revenue grew in Europe"]
    )
    assert float(a @ b) > float(a @ c)
    assert float(a @ b) == pytest.approx(
        cosine(hash_embedding("the cat sat on the mat"), hash_embedding("the cat sat on a mat")), abs=1e-5
    )


def test_batches_and_progress(make: Callable[..., OpenAIEmbedder], state: OpenAIState) -> None:
    seen: list[tuple[int, int]] = []
    with make(batch_size=64) as emb:
        out = emb.embed([f"text number {i}" for i in range(150)], progress=lambda d, t: seen.append((d, t)))
    assert out.shape == (150, DEFAULT_DIM)
    assert [len(r.body["input"]) for r in state.requests] == [64, 64, 22]
    assert seen == [(64, 150), (128, 150), (150, 150)]


def test_empty_input_with_known_dim_sends_nothing(
    make: Callable[..., OpenAIEmbedder], state: OpenAIState
) -> None:
    emb = make(dim=DEFAULT_DIM)
    out = emb.embed([])
    assert out.shape == (0, DEFAULT_DIM) and out.dtype == np.float32
    assert state.requests == []


def test_dim_is_discovered_from_the_first_answer(embedder: OpenAIEmbedder, state: OpenAIState) -> None:
    state.dim = 48
    assert embedder.dim == 48  # one probe request
    assert len(state.requests) == 1
    assert embedder.embed([]).shape == (0, 48)
    assert embedder.embed_query("hello").shape == (48,)
    assert len(state.requests) == 2


def test_a_declared_dim_that_the_server_contradicts_is_an_error(
    make: Callable[..., OpenAIEmbedder], state: OpenAIState
) -> None:
    emb = make(dim=16)
    with pytest.raises(EmbeddingError, match=r"32-dimensional vectors, expected 16"):
        emb.embed(["hello"])


def test_dimension_change_between_batches_is_an_error(embedder: OpenAIEmbedder, state: OpenAIState) -> None:
    state.embed_mode = "wrong_dim_after_first"
    embedder.embed(["first call"])
    with pytest.raises(EmbeddingError, match="33-dimensional"):
        embedder.embed(["second call"])


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("missing_one", r"sent 3 texts, got 2 embeddings"),
        ("ragged", r"different or zero lengths"),
        ("zero", r"all zeros"),
        ("nan_text", r"not lists of numbers"),
        ("not_json", r"invalid JSON.*proxy login"),
        ("no_data", r"no 'data' list"),
    ],
)
def test_malformed_answers_are_embedding_errors(
    embedder: OpenAIEmbedder, state: OpenAIState, mode: str, message: str
) -> None:
    state.embed_mode = mode
    with pytest.raises(EmbeddingError, match=message):
        embedder.embed(["a b", "c d", "e f"])


def test_http_error_names_status_message_and_url_without_secrets(
    make: Callable[..., OpenAIEmbedder], server: LoopbackServer[OpenAIState], state: OpenAIState
) -> None:
    state.fail_status = 500
    url = server.url.replace("http://", "http://user:hunter2@") + "/v1?api-key=sekret"
    emb = make(url, max_retries=0)
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["hello"])
    message = str(info.value)
    assert "HTTP 500" in message
    assert "simulated failure" in message
    assert f"127.0.0.1:{server.port}/v1/embeddings" in message
    for secret in ("hunter2", "sekret", "user:"):
        assert secret not in message
    # the query string stays on the request, the user info becomes basic auth
    assert state.requests[-1].path == "/v1/embeddings?api-key=sekret"
    assert state.requests[-1].headers["Authorization"].startswith("Basic ")


def test_api_key_is_a_bearer_token_and_never_in_messages(
    make: Callable[..., OpenAIEmbedder], state: OpenAIState
) -> None:
    state.fail_status = 503
    emb = make(api_key="sk-secret-key", max_retries=0)
    with pytest.raises(EmbeddingError, match="HTTP 503") as info:
        emb.embed(["hello"])
    assert "sk-secret-key" not in str(info.value) and "sk-secret-key" not in repr(emb)
    assert state.requests[-1].headers["Authorization"] == "Bearer sk-secret-key"


def test_html_error_bodies_are_quoted_in_short(
    make: Callable[..., OpenAIEmbedder], state: OpenAIState
) -> None:
    state.fail_status = 502
    state.fail_body = b"<html><body>" + b"Bad gateway " * 200 + b"</body></html>"
    emb = make(max_retries=0)
    with pytest.raises(EmbeddingError, match="HTTP 502") as info:
        emb.embed(["x"])
    assert "Bad gateway" in str(info.value)
    assert len(str(info.value)) < 500


def test_wrong_api_key_is_reported(make: Callable[..., OpenAIEmbedder], state: OpenAIState) -> None:
    state.api_key = "right-key"
    with pytest.raises(EmbeddingError, match=r"HTTP 401: Incorrect API key"):
        make(api_key="wrong-key").embed(["x"])
    ok = make(api_key="right-key").embed(["x"])
    assert ok.shape == (1, DEFAULT_DIM)


def test_transient_failures_are_retried(make: Callable[..., OpenAIEmbedder], state: OpenAIState) -> None:
    state.fail_status = 503
    state.fail_times = 1
    state.retry_after = "0"
    emb = make(max_retries=1)
    assert emb.embed(["hello"]).shape == (1, DEFAULT_DIM)
    assert len(state.requests) == 2


def test_client_errors_are_not_retried(make: Callable[..., OpenAIEmbedder], state: OpenAIState) -> None:
    state.fail_status = 400
    emb = make(max_retries=3)
    with pytest.raises(EmbeddingError, match="HTTP 400"):
        emb.embed(["hello"])
    assert len(state.requests) == 1


def test_timeout_is_an_embedding_error(make: Callable[..., OpenAIEmbedder], state: OpenAIState) -> None:
    # the server answers after 3 s: a client that waited for it would get vectors, not this error
    state.delay = 3.0
    emb = make(timeout=0.3, max_retries=0)
    with pytest.raises(EmbeddingError, match=r"did not answer within 0.3 s"):
        emb.embed(["slow"])


def test_unreachable_server_is_an_embedding_error(make: Callable[..., OpenAIEmbedder]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    emb = make(f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=2)
    with pytest.raises(EmbeddingError, match=r"cannot reach the embedding server"):
        emb.embed(["x"])


def test_base_url_without_a_path_gets_v1(
    make: Callable[..., OpenAIEmbedder], server: LoopbackServer[OpenAIState], state: OpenAIState
) -> None:
    emb = make(server.url + "/")
    assert emb.base_url == server.url + "/v1"
    emb.embed(["x"])
    assert state.requests[-1].path == "/v1/embeddings"


@pytest.mark.parametrize("bad", ["localhost:8000", "ftp://host/v1", ""])
def test_bad_base_urls_are_configuration_errors(bad: str) -> None:
    with pytest.raises(ConfigurationError, match="base_url"):
        OpenAIEmbedder(bad, "m")


@pytest.mark.parametrize(
    "kwargs", [{"dim": 0}, {"batch_size": 0}, {"timeout": 0}, {"max_retries": -1}, {"model": ""}]
)
def test_bad_settings_are_configuration_errors(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"base_url": "http://127.0.0.1:9/v1", "model": "m", **kwargs}
    with pytest.raises(ConfigurationError):
        OpenAIEmbedder(**args)  # type: ignore[arg-type]


def test_input_validation(embedder: OpenAIEmbedder, state: OpenAIState) -> None:
    with pytest.raises(ValidationError, match="embed_query"):
        embedder.embed("a single string")
    with pytest.raises(ValidationError, match="text 1 is a int"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(ValidationError):
        embedder.embed_query(["list"])  # type: ignore[arg-type]
    assert state.requests == []


def test_protocol_and_thread_safety(embedder: OpenAIEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    texts = [f"thread text {i}" for i in range(20)]
    expected = embedder.embed(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed(texts))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 8
    for r in results:
        np.testing.assert_array_equal(r, expected)
