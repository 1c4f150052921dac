"""A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions, with fault injection.

It plays a perfect filter model: for each request it reads the passage and question of the
last user message and answers from a table of planted facts (or `N/A`). Faults queued in
`faults` are applied to the next requests, one each: `500`, `429` (with Retry-After), `timeout`
(answers only after the client gave up), `truncated` (the body stops mid-JSON and the connection
closes), `nonjson` (an HTML page with status 200), `badjson` (JSON without `choices`), `kill`
(SIGKILL the client process, then answer 500).
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT = re.compile(r"\APassage:\n(?P<passage>.*)\n\nQuestion: (?P<question>.*)\Z", re.DOTALL)


@dataclass
class Seen:
    question: str
    passage: str
    fault: str | None
    authorization: str
    at: float


@dataclass
class StubState:
    facts: dict[str, list[tuple[str, str]]]
    faults: list[str] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    answered: Counter[tuple[str, str]] = field(default_factory=Counter)
    kill_pid: int | None = None
    delay: float = 0.0
    retry_after: str = "1"
    hang: float = 3.0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, question: str, passage: str) -> str:
        for phrase, reply in self.facts.get(question, []):
            if phrase in passage:
                return reply
        return "N/A"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def _send(
        self, status: int, body: bytes, content_type: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200, json.dumps({"object": "list", "data": [{"id": "stub", "object": "model"}]}).encode())

    def do_POST(self) -> None:
        state = self.server.state
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        if not self.path.endswith("/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        match = PROMPT.match(body["messages"][-1]["content"])
        assert match, body["messages"][-1]["content"]
        question, passage = match["question"], match["passage"]
        with state.lock:
            fault = state.faults.pop(0) if state.faults else None
            state.seen.append(Seen(question, passage, fault, self.headers.get("Authorization", ""), time.monotonic()))
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            self._reply(state, fault, body["model"], question, passage)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _reply(self, state: StubState, fault: str | None, model: str, question: str, passage: str) -> None:
        if state.delay:
            time.sleep(state.delay)
        if fault == "500":
            self._send(500, b'{"error": {"message": "the stub had a bad day", "type": "server_error"}}')
        elif fault == "429":
            self._send(
                429,
                b'{"error": {"message": "slow down", "type": "rate_limit"}}',
                headers={"Retry-After": state.retry_after},
            )
        elif fault == "timeout":
            time.sleep(state.hang)
            self._send(500, b'{"error": {"message": "too late"}}')
        elif fault == "truncated":
            whole = self._completion(model, "N/A")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(whole)))
            self.end_headers()
            self.wfile.write(whole[: len(whole) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
        elif fault == "nonjson":
            self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
        elif fault == "badjson":
            self._send(200, b'{"object": "chat.completion", "choices": []}')
        elif fault == "kill":
            assert state.kill_pid is not None
            os.kill(state.kill_pid, signal.SIGKILL)
            self._send(500, b'{"error": {"message": "client killed"}}')
        else:
            with state.lock:
                state.answered[(question, passage)] += 1
            self._send(200, self._completion(model, state.answer(question, passage)))

    @staticmethod
    def _completion(model: str, content: str) -> bytes:
        return json.dumps(
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: StubState


class StubServer:
    """Start with a table of facts `{question: [(phrase in passage, reply), ...]}`; `close()` stops it."""

    def __init__(self, facts: dict[str, list[tuple[str, str]]]) -> None:
        self.state = StubState(facts)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = self.state
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[Seen]:
        return list(self.state.seen)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
