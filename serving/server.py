"""OpenAI-compatible HTTP server over one :class:`~serving.engine.Engine` (FastAPI + uvicorn).

Routes: ``GET /health``, ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions``
(JSON or SSE streaming, with usage; ``n`` choices generated in one batch). Bad requests get
OpenAI-style error bodies with 4xx codes (:mod:`serving.openai_wire`); a failing request never
takes the server down. Generation runs on one worker thread (:mod:`serving.service`), so
concurrent requests queue and are answered one after another (never interleaved in one model
call); streaming is :mod:`serving.sse`. This module wires the app and hosts it
(:class:`ServerThread`, :func:`serve`). Imported only by ``vox serve``, benchmarks and tests, so
FastAPI is imported at module level here.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Message

from serving.engine import MAX_CHOICES, Engine
from serving.errors import RequestError, ServingError, UsageError
from serving.openai_wire import (
    ChatRequest,
    completion_body,
    error_response,
    non_utf8_body_response,
    validation_error_response,
)
from serving.service import Service, ShuttingDown
from serving.sse import stream_events

log = logging.getLogger(__name__)


#: largest request body accepted, in bytes (a 413 beyond it): a 128k-token conversation is about
#: 0.5 MB of text; a new-user trial's 12 MB body took 12 s of tokenizing and 1.7 GB of memory
#: before its 400 context_length_exceeded
MAX_BODY_BYTES: Final = 4 * 1024 * 1024


def _too_large(size: int | None) -> JSONResponse:
    """The 413 for a body over :data:`MAX_BODY_BYTES` (``size``: its length, ``None`` when it was
    not read to its end); ``Connection: close``, so that the server reads none of the rest."""
    said = f"{size} bytes" if size is not None else f"more than {MAX_BODY_BYTES} bytes"
    response = error_response(413, f"the request body is {said}; this server accepts at most {MAX_BODY_BYTES}",
                              code="request_too_large")
    response.headers["Connection"] = "close"
    return response


async def _read_body(request: Request) -> bytes | None:
    """The body of ``request``, or ``None`` once more than :data:`MAX_BODY_BYTES` have arrived: a
    chunked upload (no ``Content-Length``) is read no further than that, however long it is."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _replaying(request: Request, body: bytes) -> Request:
    """``request`` with its already read ``body`` to be read again (FastAPI parses it), then the
    connection's own messages (a disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        return pending.pop() if pending else await request.receive()

    return Request(request.scope, receive)


def _reads_json(request: Request) -> bool:
    """Whether FastAPI reads the body as JSON: no ``Content-Type`` (``strict_content_type=False``),
    ``application/json`` or ``application/*+json``; any other is validated as bytes (a 400)."""
    declared = request.headers.get("content-type")
    if not declared:
        return True
    kind = declared.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


async def _unparsable_json(request: Request) -> JSONResponse | None:
    """The 400 for a JSON body that ``json.loads`` refuses with something other than a syntax
    error (which FastAPI reports with its position, :func:`validation_error_response`): nesting
    deeper than its recursion allows, or an integer longer than Python converts. ``None``
    otherwise; a parsed body is kept on ``request``, so FastAPI does not parse it again.
    """
    if not _reads_json(request):
        return None
    try:
        await request.json()
    except json.JSONDecodeError:
        return None
    except RecursionError:
        reason = (f"arrays and objects are nested too deeply (this server's JSON parser reads fewer than "
                  f"{sys.getrecursionlimit()} levels)")
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        digits = sys.get_int_max_str_digits()
        reason = f"a number has more than {digits} digits" if "digits" in str(exc) else str(exc)
    else:
        return None
    return error_response(400, f"could not parse the JSON body of your request: {reason}")


class Utf8BodyRoute(APIRoute):
    """A route that refuses, before FastAPI parses it, a body larger than :data:`MAX_BODY_BYTES`
    (413: by its ``Content-Length`` before reading it when one is sent, else once that many bytes
    have arrived), not UTF-8 (400: FastAPI's ``json.loads`` of the bytes would read a UTF-16 or
    UTF-32 body as well), or JSON that ``json.loads`` cannot read for want of recursion or digits
    (400 naming which, where FastAPI said only "There was an error parsing the body")."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        parse_and_run = super().get_route_handler()

        async def handler(request: Request) -> Response:
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                return _too_large(int(declared))
            body = await _read_body(request)
            if body is None:  # chunked, without a Content-Length
                return _too_large(None)
            refused = non_utf8_body_response(body)
            if refused is not None:
                return refused
            request = _replaying(request, body)
            refused = await _unparsable_json(request)
            return refused if refused is not None else await parse_and_run(request)

        return handler


def create_app(engine: Engine, *, default_max_tokens: int = 512, max_queue: int = 32,
               max_n: int = MAX_CHOICES) -> FastAPI:
    """Build the FastAPI app serving ``engine``.

    Args:
        engine: the loaded model.
        default_max_tokens: completion cap when a request gives no ``max_tokens``.
        max_queue: requests waiting or running beyond this get 429 (server busy).
        max_n: most choices (``n``) per request; more is a 400 naming ``n``.
    """
    service = Service(engine, default_max_tokens, max_queue, max_n)
    # strict_content_type=False: a body sent without a Content-Type header is still read as JSON
    app = FastAPI(title="vox-mens local model server", docs_url=None, redoc_url=None, strict_content_type=False)
    app.router.route_class = Utf8BodyRoute
    app.state.service = service

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return validation_error_response(exc)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "model": engine.model_id,
            "device": engine.device,
            "kv_cache": engine.use_cache,
            "busy": engine.busy,
            "queued": max(0, service.pending - int(bool(engine.busy))),  # waiting, the one running left out
        }

    @app.get("/v1/models")
    async def list_models() -> dict[str, Any]:
        return {"object": "list", "data": [service.model_card()]}

    @app.get("/v1/models/{model_id:path}", response_model=None)
    async def get_model(model_id: str) -> dict[str, Any] | JSONResponse:
        if model_id != engine.model_id:
            return error_response(404, f"the model {model_id!r} does not exist", param="model", code="model_not_found")
        return service.model_card()

    @app.post("/v1/chat/completions", response_model=None)
    async def chat_completions(parsed: ChatRequest, request: Request) -> Response:
        refused = service.refuse(parsed)
        if refused is not None:
            return refused
        try:
            # Off the event loop: tokenizing a multi-MB prompt takes seconds and would stall /health.
            prepared = await asyncio.to_thread(service.prepare, parsed)
        except RequestError as exc:
            return error_response(400, str(exc), param=exc.param, code=exc.code)
        if service.pending >= service.max_queue:
            return error_response(429, f"server busy: {service.pending} requests queued; retry later")
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        if parsed.stream:
            include_usage = bool((parsed.stream_options or {}).get("include_usage"))
            events = stream_events(service, prepared, completion_id, include_usage)
            return StreamingResponse(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        try:
            choices = await service.complete_unless_disconnected(request, prepared)
        except ShuttingDown as exc:
            return error_response(503, str(exc), code="shutting_down")
        except ServingError as exc:
            return error_response(500, f"generation failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - one request's failure must not take the server down
            log.exception("generation failed")
            return error_response(500, f"generation failed: {type(exc).__name__}: {exc}")
        return JSONResponse(completion_body(completion_id, int(time.time()), engine.model_id, choices))

    return app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket bound to ``host:port`` (port 0: any free port).

    Raises:
        UsageError: ``host`` is not a name or an address of this machine (the caller's mistake).
        ServingError: the address is in use or cannot be bound for another reason (message names it).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        bad_host = isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL
        error = UsageError if bad_host else ServingError
        raise error(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.listen(128)  # connections wait in the backlog from now on, not refused while the model loads
    return sock


def uvicorn_server(app: FastAPI, log_level: str) -> Any:
    """The ``uvicorn.Server`` of an app from :func:`create_app` (``lifespan`` off). On the first
    Ctrl-C or ``SIGTERM`` the request in progress is finished and the waiting ones are refused
    (503, :meth:`serving.service.Service.shut_down`; before, every queued request ran first); on a
    second Ctrl-C the one in progress is cancelled too, and the tasks uvicorn then cancels are not
    logged as application errors (they were two tracebacks)."""
    import uvicorn

    service: Service = app.state.service

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            force = self.should_exit and sig == signal.SIGINT
            count = service.shut_down(cancel_running=force)
            if not self.should_exit and count:
                waiting = f", {count - 1} waiting refused" if count > 1 else ""
                _UVICORN_LOG.info("Stopping: the request in progress is finished%s (Ctrl-C again to cancel it)",
                                  waiting)
            super().handle_exit(sig, frame)

    server = Server(uvicorn.Config(app, log_level=log_level, lifespan="off"))
    _UVICORN_LOG.addFilter(_not_a_cancelled_task)
    return server


#: uvicorn's own logger (its startup/shutdown lines and "Exception in ASGI application")
_UVICORN_LOG: Final = logging.getLogger("uvicorn.error")


def _not_a_cancelled_task(record: logging.LogRecord) -> bool:
    """Leave out uvicorn's traceback of a request task it cancelled while forced to stop."""
    kind = record.exc_info[0] if record.exc_info else None
    return not (kind is not None and issubclass(kind, (asyncio.CancelledError, KeyboardInterrupt)))


class ServerThread:
    """Serve an engine from a background thread (tests, benchmarks, embedding).

    ``start()`` returns once the server accepts connections; ``base_url`` is then
    ``http://<host>:<port>/v1``; ``stop()`` shuts it down.
    """

    def __init__(self, engine: Engine, host: str = "127.0.0.1", port: int = 0, **app_kwargs: Any) -> None:
        self.host = host
        self._sock = bind_socket(host, port)
        self.port: int = self._sock.getsockname()[1]
        self.app = create_app(engine, **app_kwargs)
        self._server = uvicorn_server(self.app, "warning")
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name=f"vox-serve-{self.port}", daemon=True
        )

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://<host>:<port>/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout: float = 30.0) -> None:
        """Start serving; raise ``ServingError`` if the server is not up within ``timeout`` s."""
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ServingError(f"server on {self.host}:{self.port} did not start")
            time.sleep(0.01)

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to exit and wait for its thread (at most ``timeout`` s)."""
        self._server.should_exit = True
        self._thread.join(timeout)
        self._sock.close()


def serve(
    engine: Engine, host: str = "127.0.0.1", port: int = 8000, *, sock: socket.socket | None = None,
    **app_kwargs: Any,
) -> None:
    """Serve ``engine`` in the foreground until interrupted (Ctrl-C).

    ``sock``: an already bound socket (from :func:`bind_socket`) to serve on instead of binding
    ``host:port`` (so a caller can report the real port of ``port=0``); it is closed on return.

    Raises:
        ServingError: ``host:port`` cannot be bound.
    """
    sock = sock if sock is not None else bind_socket(host, port)
    server = uvicorn_server(create_app(engine, **app_kwargs), "info")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
