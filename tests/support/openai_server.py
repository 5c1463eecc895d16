"""A small OpenAI-compatible server: ``/v1/embeddings``, ``/v1/chat/completions`` (with SSE), ``/v1/models``.

It speaks the real wire protocol over loopback HTTP. Embeddings are
deterministic feature-hashing vectors of the text's words (so texts sharing
words are similar), deliberately *not* unit length. Chat answers
``"echo: <last user message>"``, cut to ``max_tokens`` words.

    with start_openai_server() as server:
        client = OpenAIEmbedder(server.url + "/v1", "hash-embed")
        server.state.fail_status = 503          # knobs: see OpenAIState
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from tests.support.http import JsonHandler, LoopbackServer, ServerState

DEFAULT_DIM = 32


def hash_embedding(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    """Signed feature hashing of lowercase words, scaled by 3 (so not unit length)."""
    vec = [0.0] * dim
    words = re.findall(r"\w+", text.lower()) or [text]
    for word in words:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dim
        sign = 1.0 if digest[4] & 1 else -1.0
        vec[bucket] += sign
    if not any(vec):
        vec[0] = 1.0
    return [3.0 * v for v in vec]


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@dataclass
class OpenAIState(ServerState):
    dim: int = DEFAULT_DIM
    # embeddings: "ok" | "reversed" (correct indexes, reversed order) | "missing_one" | "ragged"
    # | "wrong_dim_after_first" | "not_json" | "no_data" | "zero" | "nan_text"
    embed_mode: str = "ok"
    # chat streams: "ok" | "error_midway" | "stall_midway" | "no_done" | "cut"
    stream_mode: str = "ok"
    stream_gate: threading.Event | None = None  # when set, the stream waits on it after its first piece
    stall_seconds: float = 5.0  # how long "stall_midway" goes silent
    calls: int = 0


class OpenAIHandler(JsonHandler):
    state: OpenAIState

    def do_GET(self) -> None:
        if self.route == "/v1/models":
            if self.preflight():
                self.send_json(200, {"object": "list", "data": [{"id": "echo-1", "object": "model"}]})
            return
        self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        body = self.read_body()
        route = self.route
        if route not in ("/v1/embeddings", "/v1/chat/completions"):
            self.send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}}
            )
            return
        if not self.preflight():
            return
        if not isinstance(body, dict) or "model" not in body:
            self.send_json(
                400, {"error": {"message": "'model' is a required property", "type": "invalid_request_error"}}
            )
            return
        self.state.calls += 1
        if route == "/v1/embeddings":
            self.embeddings(body)
        elif body.get("stream"):
            self.chat_stream(body)
        else:
            self.chat(body)

    # ---------------------------------------------------------- embeddings
    def embeddings(self, body: dict[str, Any]) -> None:
        st = self.state
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            self.send_json(
                400,
                {
                    "error": {
                        "message": "'input' must be a string or a list of strings",
                        "type": "invalid_request_error",
                    }
                },
            )
            return
        dim = st.dim + 1 if st.embed_mode == "wrong_dim_after_first" and st.calls > 1 else st.dim
        data: list[dict[str, Any]] = [
            {"object": "embedding", "index": i, "embedding": hash_embedding(t, dim)}
            for i, t in enumerate(inputs)
        ]
        mode = st.embed_mode
        if mode == "reversed":
            data.reverse()
        elif mode == "missing_one":
            data = data[:-1]
        elif mode == "ragged" and data:
            data[0]["embedding"] = data[0]["embedding"][:-1]
        elif mode == "zero" and data:
            data[0]["embedding"] = [0.0] * dim
        elif mode == "nan_text" and data:
            data[0]["embedding"] = ["NaN-ish"] * dim
        elif mode == "not_json":
            self.send_raw(200, b"<html>proxy login</html>", "text/html")
            return
        elif mode == "no_data":
            self.send_json(200, {"object": "list", "result": []})
            return
        tokens = sum(len(t.split()) for t in inputs)
        self.send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    # ---------------------------------------------------------------- chat
    @staticmethod
    def reply_words(body: dict[str, Any]) -> tuple[list[str], str]:
        messages = body.get("messages") or []
        last_user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
        words = f"echo: {last_user}".split()
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        if isinstance(limit, int) and len(words) > limit:
            return words[:limit], "length"
        return words, "stop"

    def chat(self, body: dict[str, Any]) -> None:
        words, finish = self.reply_words(body)
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
        self.send_json(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": " ".join(words)},
                        "finish_reason": finish,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(words),
                    "total_tokens": prompt_tokens + len(words),
                },
            },
        )

    def _event(self, obj: Any) -> None:
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        self.send_chunk(f"data: {payload}\n\n".encode())

    def _delta(self, model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def chat_stream(self, body: dict[str, Any]) -> None:
        st = self.state
        words, finish = self.reply_words(body)
        model = body["model"]
        self.start_chunked(200, "text/event-stream")
        self.send_chunk(b": keep-alive comment\n\n")
        self._event(self._delta(model, {"role": "assistant", "content": ""}))
        for i, word in enumerate(words):
            piece = word if i == 0 else " " + word
            self._event(self._delta(model, {"content": piece}))
            if i == 0 and st.stream_gate is not None and not st.stream_gate.wait(10):
                return
            if i == 0 and st.stream_mode == "error_midway":
                self._event({"error": {"message": "the model crashed", "type": "server_error"}})
                self.end_chunked()
                return
            if i == 0 and st.stream_mode == "stall_midway":
                st.wait(st.stall_seconds)
                return
            if i == 0 and st.stream_mode == "cut":
                self.abort()
                return
        if st.stream_mode == "no_done":
            self.end_chunked()
            return
        self._event(self._delta(model, {}, finish))
        self._event("[DONE]")
        self.end_chunked()


def start_openai_server(state: OpenAIState | None = None) -> LoopbackServer[OpenAIState]:
    return LoopbackServer(OpenAIHandler, state or OpenAIState())
