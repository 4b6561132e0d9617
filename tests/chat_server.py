"""A real HTTP server on 127.0.0.1 that speaks OpenAI's chat-completions protocol (and
Anthropic's Messages API on ``.../messages``) from a script.

Each POST takes the next scripted reply: an answer text (with or
without usage) or an HTTP error status. Every request body is kept for the test to inspect.
With ``respond`` set, each reply is computed from the request body instead (for concurrent
callers, whose order is not fixed); ``delay_s`` makes the endpoint slow, and ``arrivals``,
``in_flight_max`` record when requests came and how many were answered at once.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    usage: tuple[int, int] | None = (100, 50)
    delay_s: float = 0.0
    # Headers of an error reply; a scripted error says retry-after-ms: 10 unless told otherwise.
    headers: dict[str, str] | None = None


@dataclass
class ChatServer:
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    respond: Callable[[dict[str, Any]], Reply] | None = None
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each request
    in_flight_max: int = 0

    def __enter__(self) -> "ChatServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.arrivals.append(time.monotonic())
                    if server.respond is not None:
                        reply = server.respond(body)
                    else:
                        reply = server.script.pop(0) if server.script else Reply(status=500)
                    server._in_flight += 1
                    server.in_flight_max = max(server.in_flight_max, server._in_flight)
                # Out of flight before the reply is written: a caller that has its answer may
                # send its next request at once, which must not find this one still counted.
                try:
                    time.sleep(reply.delay_s)
                finally:
                    with server._lock:
                        server._in_flight -= 1
                self._reply(body, reply)

            def _reply(self, body: dict[str, Any], reply: Reply) -> None:
                if reply.status != 200:
                    payload = {"error": {"message": f"scripted {reply.status}",
                                         "type": "scripted"}}
                    headers = {"retry-after-ms": "10"} if reply.headers is None else reply.headers
                    self._send(reply.status, payload, headers)
                    return
                if self.path.endswith("/messages"):  # Anthropic's Messages API
                    self._send(200, self._anthropic(body, reply), {})
                    return
                payload: dict[str, Any] = {
                    "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion",
                    "created": 0, "model": body.get("model", "?"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.text}}],
                }
                if reply.usage is not None:
                    payload["usage"] = {"prompt_tokens": reply.usage[0],
                                        "completion_tokens": reply.usage[1],
                                        "total_tokens": sum(reply.usage)}
                self._send(200, payload, {})

            def _anthropic(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
                payload: dict[str, Any] = {
                    "id": f"msg_{len(server.requests)}", "type": "message", "role": "assistant",
                    "model": body.get("model", "?"), "stop_reason": "end_turn",
                    "stop_sequence": None, "content": [{"type": "text", "text": reply.text}],
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                }
                if reply.usage is not None:
                    payload["usage"] = {"input_tokens": reply.usage[0],
                                        "output_tokens": reply.usage[1]}
                return payload

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._lock = threading.Lock()
        self._in_flight = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
