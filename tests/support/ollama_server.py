"""A small Ollama-compatible server: ``/api/chat`` (JSON or NDJSON stream) and ``/api/tags``.

Like Ollama it streams unless the request says ``"stream": false``, answers
unknown models with 404 ``{"error": "model ... not found"}``, and reads
``options.num_predict`` as the token limit. The answer is
``"echo: <last user message>"``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.support.http import JsonHandler, LoopbackServer, ServerState


@dataclass
class OllamaState(ServerState):
    models: list[str] = field(default_factory=lambda: ["llama3.2:latest", "echo:latest"])
    # streams: "ok" | "error_midway" | "stall_midway" | "no_done"
    stream_mode: str = "ok"
    stream_gate: threading.Event | None = None
    stall_seconds: float = 5.0


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class OllamaHandler(JsonHandler):
    state: OllamaState

    def error_body(self, status: int) -> Any:
        return {"error": f"simulated failure (HTTP {status})"}

    def do_GET(self) -> None:
        if self.route == "/api/tags":
            if self.preflight():
                self.send_json(
                    200, {"models": [{"name": m, "model": m, "size": 1} for m in self.state.models]}
                )
            return
        self.send_raw(404, b"404 page not found", "text/plain")

    def do_POST(self) -> None:
        body = self.read_body()
        if self.route != "/api/chat":
            self.send_raw(404, b"404 page not found", "text/plain")
            return
        if not self.preflight():
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self.send_json(400, {"error": "invalid request: messages is required"})
            return
        model = str(body.get("model", ""))
        known = {m for name in self.state.models for m in (name, name.removesuffix(":latest"))}
        if model not in known:
            self.send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        words, reason = self.reply(body)
        if body.get("stream", True):
            self.stream(model, words, reason)
        else:
            self.send_json(
                200,
                {
                    "model": model,
                    "created_at": _now(),
                    "message": {"role": "assistant", "content": " ".join(words)},
                    "done": True,
                    "done_reason": reason,
                    "prompt_eval_count": self.prompt_tokens(body),
                    "eval_count": len(words),
                },
            )

    @staticmethod
    def prompt_tokens(body: dict[str, Any]) -> int:
        return sum(len(str(m.get("content", "")).split()) for m in body["messages"])

    @staticmethod
    def reply(body: dict[str, Any]) -> tuple[list[str], str]:
        last_user = next(
            (m.get("content", "") for m in reversed(body["messages"]) if m.get("role") == "user"), ""
        )
        words = f"echo: {last_user}".split()
        limit = (body.get("options") or {}).get("num_predict")
        if isinstance(limit, int) and limit >= 0 and len(words) > limit:
            return words[:limit], "length"
        return words, "stop"

    def _line(self, obj: Any) -> None:
        self.send_chunk(json.dumps(obj).encode() + b"\n")

    def stream(self, model: str, words: list[str], reason: str) -> None:
        st = self.state
        self.start_chunked(200, "application/x-ndjson")
        for i, word in enumerate(words):
            piece = word if i == 0 else " " + word
            self._line(
                {
                    "model": model,
                    "created_at": _now(),
                    "message": {"role": "assistant", "content": piece},
                    "done": False,
                }
            )
            if i == 0 and st.stream_gate is not None and not st.stream_gate.wait(10):
                return
            if i == 0 and st.stream_mode == "error_midway":
                self._line({"error": "an error was encountered while running the model"})
                self.end_chunked()
                return
            if i == 0 and st.stream_mode == "stall_midway":
                st.wait(st.stall_seconds)
                return
        if st.stream_mode == "no_done":
            self.end_chunked()
            return
        self._line(
            {
                "model": model,
                "created_at": _now(),
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": reason,
                "eval_count": len(words),
            }
        )
        self.end_chunked()


def start_ollama_server(state: OllamaState | None = None) -> LoopbackServer[OllamaState]:
    return LoopbackServer(OllamaHandler, state or OllamaState())
