"""LLM clients against real OpenAI-compatible and Ollama-compatible HTTP servers on loopback, plus the mock."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import cef.llm
from cef.errors import ConfigurationError, LLMError, LLMTimeoutError, ValidationError
from cef.llm import (
    LLM_PROVIDERS,
    BaseLLMClient,
    ChatMessage,
    LLMClient,
    MockLLMClient,
    OllamaClient,
    OpenAIChatClient,
    make_llm_client,
)
from tests.support.http import LoopbackServer
from tests.support.ollama_server import OllamaState, start_ollama_server
from tests.support.openai_server import OpenAIState, start_openai_server

HELLO = [ChatMessage.system("You are terse."), ChatMessage.user("hello there friend")]


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def oai_server() -> Iterator[LoopbackServer[OpenAIState]]:
    with start_openai_server() as srv:
        yield srv


@pytest.fixture(scope="module")
def ollama_server() -> Iterator[LoopbackServer[OllamaState]]:
    with start_ollama_server() as srv:
        yield srv


@pytest.fixture
def oai_state(oai_server: LoopbackServer[OpenAIState]) -> OpenAIState:
    return oai_server.reset(OpenAIState())


@pytest.fixture
def ollama_state(ollama_server: LoopbackServer[OllamaState]) -> OllamaState:
    return ollama_server.reset(OllamaState())


@pytest.fixture
def clients() -> Iterator[list[BaseLLMClient]]:
    made: list[BaseLLMClient] = []
    yield made
    for c in made:
        c.close()


@pytest.fixture
def openai_client(
    oai_server: LoopbackServer[OpenAIState], oai_state: OpenAIState, clients: list[BaseLLMClient]
) -> Callable[..., OpenAIChatClient]:
    def build(**kwargs: Any) -> OpenAIChatClient:
        opts: dict[str, Any] = {
            "base_url": oai_server.url + "/v1",
            "max_retries": 0,
            "timeout": 5.0,
            **kwargs,
        }
        client = OpenAIChatClient(opts.pop("model", "echo-1"), **opts)
        clients.append(client)
        return client

    return build


@pytest.fixture
def ollama_client(
    ollama_server: LoopbackServer[OllamaState], ollama_state: OllamaState, clients: list[BaseLLMClient]
) -> Callable[..., OllamaClient]:
    def build(**kwargs: Any) -> OllamaClient:
        opts: dict[str, Any] = {"base_url": ollama_server.url, "max_retries": 0, "timeout": 5.0, **kwargs}
        client = OllamaClient(opts.pop("model", "llama3.2"), **opts)
        clients.append(client)
        return client

    return build


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------- OpenAI-compatible
def test_openai_chat(openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState) -> None:
    client = openai_client(temperature=0.2)
    resp = client.chat(HELLO)
    assert resp.text == "echo: hello there friend"
    assert resp.model == "echo-1"
    assert resp.finish_reason == "stop"
    assert (
        resp.usage.prompt_tokens == 6 and resp.usage.completion_tokens == 4 and resp.usage.total_tokens == 10
    )
    body = oai_state.requests[-1].body
    assert oai_state.requests[-1].path == "/v1/chat/completions"
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hello there friend"},
    ]
    assert body["stream"] is False
    assert body["temperature"] == 0.2  # the client's default
    assert "max_tokens" not in body


def test_openai_generate_and_max_tokens(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    client = openai_client(max_tokens=100)
    text = client.generate("one two three four five", system="be brief", max_tokens=3, temperature=0)
    assert text == "echo: one two"
    body = oai_state.requests[-1].body
    assert body["max_tokens"] == 3 and body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert client.chat([ChatMessage.user("a b")]).finish_reason == "stop"
    assert oai_state.requests[-1].body["max_tokens"] == 100


def test_openai_max_tokens_field_follows_the_host(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    assert OpenAIChatClient("gpt-4o-mini", api_key="k").max_tokens_param == "max_completion_tokens"
    assert openai_client().max_tokens_param == "max_tokens"
    client = openai_client(max_tokens_param="max_completion_tokens")
    assert client.chat(HELLO, max_tokens=2).text == "echo: hello"
    body = oai_state.requests[-1].body
    assert body["max_completion_tokens"] == 2 and "max_tokens" not in body


def test_openai_extra_body_and_dict_messages(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    client = openai_client(extra_body={"top_p": 0.9, "stop": ["\n\n"]})
    resp = client.chat([{"role": "user", "content": "from a dict"}])
    assert resp.text == "echo: from a dict"
    body = oai_state.requests[-1].body
    assert body["top_p"] == 0.9 and body["stop"] == ["\n\n"] and body["model"] == "echo-1"


def test_openai_stream_joins_to_the_chat_text(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    client = openai_client()
    pieces = list(client.stream(HELLO))
    assert len(pieces) == 4
    assert "".join(pieces) == client.chat(HELLO).text
    assert oai_state.requests[0].body["stream"] is True
    assert "".join(client.stream(HELLO, max_tokens=2)) == "echo: hello"


def test_openai_stream_is_incremental(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    """The server holds the rest of the answer until the test has seen the first piece."""
    gate = threading.Event()
    oai_state.stream_gate = gate
    it = openai_client().stream(HELLO)
    first = next(it)
    assert first == "echo:"
    gate.set()
    assert first + "".join(it) == "echo: hello there friend"


def test_openai_stream_is_lazy_but_validates_now(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    client = openai_client()
    with pytest.raises(ValidationError):
        client.stream([])
    it = client.stream(HELLO)
    assert oai_state.requests == []
    assert "".join(it).startswith("echo:")


@pytest.mark.parametrize(
    ("mode", "error", "message"),
    [
        ("error_midway", LLMError, "reported an error mid-stream: the model crashed"),
        ("no_done", LLMError, r"stream ended before \[DONE\]"),
        ("cut", LLMError, "cannot reach"),
    ],
)
def test_openai_broken_streams(
    openai_client: Callable[..., OpenAIChatClient],
    oai_state: OpenAIState,
    mode: str,
    error: type[Exception],
    message: str,
) -> None:
    oai_state.stream_mode = mode
    it = openai_client().stream(HELLO)
    assert next(it) == "echo:"
    with pytest.raises(error, match=message):
        list(it)


def test_openai_stream_that_stalls_times_out(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    oai_state.stream_mode = "stall_midway"
    it = openai_client(timeout=0.4).stream(HELLO)
    assert next(it) == "echo:"
    start = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"did not answer within 0.4 s"):
        list(it)
    assert time.monotonic() - start < 3


def test_openai_http_error_has_status_and_message(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    oai_state.fail_status = 500
    client = openai_client()
    with pytest.raises(LLMError) as info:
        client.chat(HELLO)
    assert not isinstance(info.value, LLMTimeoutError)
    assert "HTTP 500" in str(info.value) and "simulated failure (HTTP 500)" in str(info.value)
    assert "/v1/chat/completions" in str(info.value)
    with pytest.raises(LLMError, match="HTTP 500"):
        next(client.stream(HELLO))


def test_openai_bad_key(openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState) -> None:
    oai_state.api_key = "good"
    with pytest.raises(LLMError, match=r"HTTP 401: Incorrect API key provided") as info:
        openai_client(api_key="sk-wrong-123").generate("hi")
    assert "sk-wrong-123" not in str(info.value)
    assert openai_client(api_key="good").generate("hi") == "echo: hi"
    assert oai_state.requests[-1].headers["Authorization"] == "Bearer good"


def test_openai_retries_transient_errors(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState
) -> None:
    oai_state.fail_status = 429
    oai_state.fail_times = 2
    oai_state.retry_after = "0"
    client = openai_client(max_retries=2)
    assert client.generate("retry me") == "echo: retry me"
    assert len(oai_state.requests) == 3
    oai_state.fail_times = 1
    assert "".join(client.stream([ChatMessage.user("stream retry")])) == "echo: stream retry"


def test_openai_timeout(openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState) -> None:
    oai_state.delay = 3.0
    client = openai_client(timeout=0.3)
    start = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"did not answer within 0.3 s"):
        client.chat(HELLO)
    assert time.monotonic() - start < 2
    with pytest.raises(LLMTimeoutError):
        next(client.stream(HELLO))


def test_openai_availability(
    openai_client: Callable[..., OpenAIChatClient], oai_state: OpenAIState, clients: list[BaseLLMClient]
) -> None:
    assert openai_client().is_available()
    oai_state.delay = 3.0
    start = time.monotonic()
    assert openai_client(timeout=0.3).is_available() is False  # a slow server is not available
    assert time.monotonic() - start < 2
    oai_state.delay = 0.0
    oai_state.fail_status = 503
    assert openai_client().is_available() is False
    down = OpenAIChatClient("m", base_url=f"http://127.0.0.1:{closed_port()}/v1", max_retries=0, timeout=2)
    clients.append(down)
    assert down.is_available() is False
    with pytest.raises(LLMError, match="cannot reach the openai chat endpoint") as info:
        down.generate("x")
    assert not isinstance(info.value, LLMTimeoutError)


def test_vllm_is_the_openai_client_with_its_own_name(
    oai_server: LoopbackServer[OpenAIState], oai_state: OpenAIState, clients: list[BaseLLMClient]
) -> None:
    default = make_llm_client("vllm", model="Qwen/Qwen2.5-7B-Instruct")
    assert isinstance(default, OpenAIChatClient)
    assert default.provider == "vllm" and default.base_url == "http://localhost:8000/v1"
    assert default.max_tokens_param == "max_tokens"
    client = make_llm_client("vllm", model="Qwen/Qwen2.5-7B-Instruct", base_url=oai_server.url + "/v1")
    assert isinstance(client, OpenAIChatClient)
    clients.extend([default, client])
    assert client.chat(HELLO).model == "Qwen/Qwen2.5-7B-Instruct"
    oai_state.fail_status = 400
    with pytest.raises(LLMError, match="the vllm chat endpoint"):
        client.generate("x")


# ------------------------------------------------------------------ Ollama
def test_ollama_chat(ollama_client: Callable[..., OllamaClient], ollama_state: OllamaState) -> None:
    client = ollama_client(options={"num_ctx": 4096}, keep_alive="5m")
    resp = client.chat(HELLO, temperature=0.1, max_tokens=50)
    assert resp.text == "echo: hello there friend"
    assert resp.model == "llama3.2"
    assert resp.finish_reason == "stop"
    assert (
        resp.usage.prompt_tokens == 6 and resp.usage.completion_tokens == 4 and resp.usage.total_tokens == 10
    )
    req = ollama_state.requests[-1]
    assert req.path == "/api/chat"
    assert req.body["stream"] is False
    assert req.body["options"] == {"num_ctx": 4096, "temperature": 0.1, "num_predict": 50}
    assert req.body["keep_alive"] == "5m"
    assert req.body["messages"][0] == {"role": "system", "content": "You are terse."}


def test_ollama_generate_with_limit(
    ollama_client: Callable[..., OllamaClient], ollama_state: OllamaState
) -> None:
    client = ollama_client()
    assert client.generate("a b c d e", max_tokens=2) == "echo: a"
    assert client.chat([ChatMessage.user("a b c")], max_tokens=1).finish_reason == "length"
    assert "options" in ollama_state.requests[-1].body
    client.generate("no options")
    assert "options" not in ollama_state.requests[-1].body


def test_ollama_stream(ollama_client: Callable[..., OllamaClient], ollama_state: OllamaState) -> None:
    client = ollama_client()
    pieces = list(client.stream(HELLO))
    assert pieces == ["echo:", " hello", " there", " friend"]
    assert ollama_state.requests[-1].body["stream"] is True


def test_ollama_stream_is_incremental(
    ollama_client: Callable[..., OllamaClient], ollama_state: OllamaState
) -> None:
    gate = threading.Event()
    ollama_state.stream_gate = gate
    it = ollama_client().stream(HELLO)
    assert next(it) == "echo:"
    gate.set()
    assert "".join(it) == " hello there friend"


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("error_midway", "error was encountered while running the model"),
        ("no_done", "before a 'done' message"),
    ],
)
def test_ollama_broken_streams(
    ollama_client: Callable[..., OllamaClient], ollama_state: OllamaState, mode: str, message: str
) -> None:
    ollama_state.stream_mode = mode
    it = ollama_client().stream(HELLO)
    assert next(it) == "echo:"
    with pytest.raises(LLMError, match=message):
        list(it)


def test_ollama_unknown_model(ollama_client: Callable[..., OllamaClient]) -> None:
    client = ollama_client(model="no-such-model")
    with pytest.raises(LLMError, match=r"HTTP 404: model \"no-such-model\" not found, try pulling it first"):
        client.generate("hi")
    with pytest.raises(LLMError, match="HTTP 404"):
        list(client.stream(HELLO))


def test_ollama_timeouts(ollama_client: Callable[..., OllamaClient], ollama_state: OllamaState) -> None:
    ollama_state.delay = 3.0
    client = ollama_client(timeout=0.3)
    start = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"Ollama at .*/api/chat did not answer within 0.3 s"):
        client.generate("slow")
    assert time.monotonic() - start < 2
    ollama_state.delay = 0.0
    ollama_state.stream_mode = "stall_midway"
    it = client.stream(HELLO)
    assert next(it) == "echo:"
    with pytest.raises(LLMTimeoutError):
        list(it)


def test_ollama_error_status(ollama_client: Callable[..., OllamaClient], ollama_state: OllamaState) -> None:
    ollama_state.fail_status = 500
    with pytest.raises(LLMError, match=r"HTTP 500: simulated failure \(HTTP 500\)"):
        ollama_client().chat(HELLO)


def test_ollama_availability(
    ollama_client: Callable[..., OllamaClient], clients: list[BaseLLMClient]
) -> None:
    assert ollama_client().is_available()
    down = OllamaClient("m", base_url=f"http://127.0.0.1:{closed_port()}", timeout=2)
    clients.append(down)
    assert not down.is_available()


# -------------------------------------------------------------------- mock
def test_mock_describes_its_input_deterministically() -> None:
    llm = MockLLMClient()
    messages = [
        ChatMessage.system("Context:\n[1] Warfarin interacts with aspirin.\n[2] Aspirin thins blood."),
        ChatMessage.user("Which drugs interact with warfarin?"),
    ]
    answer = llm.chat(messages).text
    assert answer == MockLLMClient().chat(messages).text
    assert 'Question: "Which drugs interact with warfarin?"' in answer
    assert "1 message," in answer and 'beginning "Context: [1] Warfarin interacts with aspirin.' in answer
    assert llm.generate("hi") == '[mock] Question: "hi". Context: none.'
    assert len(llm.calls) == 2 and llm.calls[0] == messages


def test_mock_plays_a_script() -> None:
    llm = MockLLMClient(["first answer", "second answer"])
    assert llm.generate("a") == "first answer"
    assert llm.chat(HELLO).text == "second answer"
    with pytest.raises(LLMError, match="script of 2 responses is used up"):
        llm.generate("c")
    llm.reset()
    assert llm.generate("again") == "first answer" and len(llm.calls) == 1
    looping = MockLLMClient(["x", "y"], cycle=True)
    assert [looping.generate("q") for _ in range(5)] == ["x", "y", "x", "y", "x"]


def test_mock_responder_function_and_limits() -> None:
    llm = MockLLMClient(lambda msgs: " ".join(m.content.upper() for m in msgs), model="shouty", max_tokens=3)
    resp = llm.chat([ChatMessage.user("one two three four five")])
    assert resp.text == "ONE TWO THREE" and resp.finish_reason == "length" and resp.model == "shouty"
    assert resp.usage.prompt_tokens == 5 and resp.usage.completion_tokens == 3
    assert llm.chat([ChatMessage.user("a b")]).finish_reason == "stop"


def test_mock_stream_matches_chat() -> None:
    llm = MockLLMClient(["  Hello,   streaming\nworld!  "], cycle=True)
    pieces = list(llm.stream(HELLO))
    assert len(pieces) == 3
    assert "".join(pieces) == llm.chat(HELLO).text == "  Hello,   streaming\nworld!  "


def test_mock_rejects_bad_scripts() -> None:
    with pytest.raises(ConfigurationError):
        MockLLMClient([])
    with pytest.raises(ConfigurationError):
        MockLLMClient("not a list")


# ------------------------------------------------- validation and factory
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.chat([]), "messages is empty"),
        (lambda c: c.chat("hello"), "must be a list"),
        (lambda c: c.chat([{"role": "wizard", "content": "x"}]), "message 0 is not a valid chat message"),
        (lambda c: c.chat(HELLO, temperature=3), "temperature"),
        (lambda c: c.chat(HELLO, max_tokens=0), "max_tokens"),
        (lambda c: c.generate(42), "prompt must be a str"),
    ],
)
def test_every_client_validates_the_same_way(
    openai_client: Callable[..., OpenAIChatClient],
    ollama_client: Callable[..., OllamaClient],
    oai_state: OpenAIState,
    call: Callable[[LLMClient], object],
    message: str,
) -> None:
    for client in (openai_client(), ollama_client(), MockLLMClient()):
        with pytest.raises(ValidationError, match=message):
            call(client)
    assert oai_state.requests == []


def test_factory() -> None:
    assert set(LLM_PROVIDERS) == {"openai", "vllm", "ollama", "mock"}
    mock = make_llm_client("mock", responses=["ok"])
    assert isinstance(mock, MockLLMClient) and mock.generate("q") == "ok"
    ollama = make_llm_client("Ollama", model="llama3.2")
    assert isinstance(ollama, OllamaClient) and ollama.base_url == "http://localhost:11434"
    openai = make_llm_client("openai", model="gpt-4o-mini", api_key="k")
    assert isinstance(openai, OpenAIChatClient) and openai.base_url == "https://api.openai.com/v1"
    for client in (mock, ollama, openai):
        assert isinstance(client, LLMClient)
        client.close()
    with pytest.raises(
        ConfigurationError, match=r"unknown LLM provider 'gemini'.*mock, ollama, openai, vllm"
    ):
        make_llm_client("gemini")
    with pytest.raises(ConfigurationError, match="bad options for the 'ollama' LLM client"):
        make_llm_client("ollama", model="m", api_kee="x")
    with pytest.raises(ConfigurationError, match="bad options for the 'openai' LLM client"):
        make_llm_client("openai")  # no model
    with pytest.raises(ConfigurationError, match="temperature"):
        make_llm_client("mock", temperature=5)
    with pytest.raises(ConfigurationError, match="base_url"):
        make_llm_client("ollama", model="m", base_url="localhost:11434")


def test_llm_all_is_sorted() -> None:
    assert cef.llm.__all__ == sorted(cef.llm.__all__, key=lambda n: (not n.isupper(), n))
    for name in cef.llm.__all__:
        assert hasattr(cef.llm, name)
