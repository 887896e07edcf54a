"""A tiny OpenAI-compatible server on loopback that replays scripted answers (test helper).

Each ``POST /v1/chat/completions`` pops the next :class:`Scripted` answer (the last one repeats)
and records the request body, so tests can assert exactly what the client sent. Answers can
fail with an HTTP status, stream a few chunks and then drop the connection (a provider dying
mid-stream), answer 200 with a body that is no chat completion (a web page on the wrong port), or
reset the connection. ``GET /v1/models`` lists the served model id. Standard library only.

A client that hangs up (a timeout, an abandoned stream, a pooled keep-alive connection closed
later) ends its connection quietly, as real servers treat it, instead of printing a traceback
into whatever test is running then; and leaving the ``with`` block closes every connection and
waits for its handler, so no handler thread outlives the test that started the server.

Load it from a test with::

    replay = load_replay_module()   # see the test files; plain import works too when on sys.path
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Scripted:
    """One scripted answer.

    Attributes:
        text: the assistant content.
        status: HTTP status to answer with instead (e.g. 429, 500); ``text`` is the error message.
        drop_after: when streaming, send this many content chunks and then drop the connection.
        chunk_chars: characters per streamed chunk.
        delay_s: wait this long before answering (timeouts).
        no_choices: answer 200 with ``"choices": []`` (no chunk with a choice when streaming).
        content_type: answer 200 with ``text`` as the whole body of this type instead (streaming or not).
        reset: reset the connection (TCP RST) instead of answering.
    """

    text: str
    status: int = 200
    drop_after: int | None = None
    chunk_chars: int = 12
    delay_s: float = 0.0
    no_choices: bool = False
    content_type: str | None = None
    reset: bool = False


class ReplayServer:
    """Serve ``script`` on ``127.0.0.1:<free port>`` in a daemon thread; ``base_url`` ends in ``/v1``."""

    def __init__(self, script: list[Scripted | str], model: str = "replay-model",
                 card: dict[str, Any] | None = None) -> None:
        self.script = [s if isinstance(s, Scripted) else Scripted(s) for s in script]
        self.model = model
        self.card = card or {}  # extra fields of the /v1/models item (e.g. max_model_len)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()  # set on exit: scripted delays end at once
        self._connections: list[socket.socket] = []
        self._handlers: list[threading.Thread] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            connections, handlers = list(self._connections), list(self._handlers)
        for conn in connections:  # unblocks a handler waiting for the next request on a kept-alive connection
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the client or the handler
        for thread in handlers:
            thread.join(5)

    def _next(self, body: dict[str, Any]) -> Scripted:
        with self._lock:
            self.requests.append(body)
            return self.script[min(len(self.requests) - 1, len(self.script) - 1)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.append(self.connection)
                    server._handlers.append(threading.current_thread())

            def handle_one_request(self) -> None:
                try:
                    super().handle_one_request()
                except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError):
                    self.close_connection = True  # the client hung up: end this connection quietly

            def finish(self) -> None:
                try:
                    super().finish()
                except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError):
                    pass  # flushing to a client that hung up

            def _json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    card = {"id": server.model, "object": "model", **server.card}
                    self._json(200, {"object": "list", "data": [card]})
                elif self.path.rstrip("/").endswith("/health"):
                    self._json(200, {"status": "ok"})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                answer = server._next(body)
                if answer.delay_s:
                    server._closing.wait(answer.delay_s)
                if answer.status != 200:
                    self._json(answer.status, {"error": {"message": answer.text, "code": answer.status}})
                    return
                if answer.reset:  # linger 0: close() sends RST; the handler's files hold the socket open
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.rfile.close()
                    self.wfile.close()
                    self.connection.close()
                    self.close_connection = True
                    return
                if answer.content_type is not None:
                    data = answer.text.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", answer.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                usage = {"prompt_tokens": 10, "completion_tokens": max(1, len(answer.text) // 4)}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                if not body.get("stream"):
                    self._json(200, {
                        "id": "chatcmpl-replay", "object": "chat.completion", "created": int(time.time()),
                        "model": server.model, "usage": usage,
                        "choices": [] if answer.no_choices else [
                            {"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": answer.text}}],
                    })
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                pieces = [answer.text[i:i + answer.chunk_chars]
                          for i in range(0, len(answer.text), answer.chunk_chars)] or [""]
                if answer.no_choices:
                    self._event({"choices": [], "usage": usage})
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                    return
                for n, piece in enumerate(pieces):
                    if answer.drop_after is not None and n >= answer.drop_after:
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)  # mid-stream death: no terminating chunk
                        return
                    self._event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
                self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage})
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")

            def _event(self, payload: dict[str, Any]) -> None:
                payload = {"id": "chatcmpl-replay", "object": "chat.completion.chunk",
                           "created": int(time.time()), "model": server.model, **payload}
                self._chunk(f"data: {json.dumps(payload)}\n\n".encode())

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler
