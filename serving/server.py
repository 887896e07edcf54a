"""OpenAI-compatible HTTP server over one :class:`~serving.engine.Engine` (FastAPI + uvicorn).

Routes: ``GET /health``, ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions``
(JSON or SSE streaming, with usage). Bad requests get OpenAI-style error bodies
(``{"error": {"message", "type", "param", "code"}}``) with 4xx codes; a failing request never
takes the server down. Generation runs on one worker thread, so concurrent requests queue and
are answered one after another (never interleaved in one model call). Imported only by
``vox serve`` and tests, so FastAPI is imported at module level here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from serving.engine import Engine, Prepared, StreamEvent
from serving.errors import RequestError, ServingError

log = logging.getLogger(__name__)

_END = object()  # marks the end of a streamed generation on the event queue


class ChatRequest(BaseModel):
    """The subset of OpenAI's chat-completions request that we honour (other fields ignored).

    FastAPI validates the body against this model; :func:`validation_error_response` turns a
    failure into the OpenAI-style 400 body naming the field (``param``).
    """

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    stop: str | list[str] | None = None
    n: int | None = Field(default=None, ge=1)
    seed: int | None = None
    stream_options: dict[str, Any] | None = None
    # Vox extensions: grammar-constrained decoding of ```vox blocks (default on), and code-only answers.
    vox_constrained: bool | None = None
    vox_code_only: bool = False
    vox_names: bool | None = None  # name- and request-aware masking (default on with the constraint)


def error_response(status: int, message: str, *, param: str | None = None, code: str | None = None) -> JSONResponse:
    """An OpenAI-style error body (``type`` follows the status: 4xx invalid request, 5xx server)."""
    kind = {401: "authentication_error", 404: "invalid_request_error", 429: "rate_limit_error"}.get(
        status, "invalid_request_error" if status < 500 else "server_error"
    )
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status)


#: plain-words rule per parameter, for fields whose pydantic message would confuse (union branch
#: names such as ``stop.str``, "less than or equal to 2" for a NaN)
_FIELD_RULES = {
    "temperature": "must be a number in [0, 2]",
    "top_p": "must be a number in (0, 1]",
    "stop": "must be a string or a list of strings",
}


#: pydantic error types meaning "the body is not a JSON object" (e.g. ``[1, 2]`` or a bare string)
_NOT_AN_OBJECT = frozenset({"model_attributes_type", "model_type", "dict_type"})


def validation_error_response(exc: RequestValidationError) -> JSONResponse:
    """The OpenAI-style 400 for a body FastAPI could not parse or validate against :class:`ChatRequest`.

    The message names the first bad field (``param``), "(and N more)" when there are others;
    malformed JSON and a body that is not an object get their own plain-words messages.
    """
    errors = list(exc.errors())
    first = errors[0] if errors else {}
    parts = tuple(first.get("loc", ()))
    if parts[:1] == ("body",):
        parts = parts[1:]
    kind = first.get("type")
    if kind == "json_invalid":
        doc = exc.body if isinstance(exc.body, str) else ""
        pos = parts[0] if parts and isinstance(parts[0], int) else 0
        reason = str(json.JSONDecodeError(str(first.get("ctx", {}).get("error", "invalid JSON")), doc, pos))
        return error_response(400, f"could not parse the JSON body of your request: {reason}")
    if not parts and kind in _NOT_AN_OBJECT:
        if isinstance(first.get("input"), bytes | bytearray):  # a Content-Type other than JSON
            return error_response(400, "the request body must be JSON (Content-Type: application/json)")
        return error_response(400, "the request body must be a JSON object")
    if not parts and kind == "missing":
        return error_response(400, "the request has no body; send a JSON object")
    field = str(parts[0]) if parts else None
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    if field in _FIELD_RULES:
        got = json.dumps(first.get("input"), default=str)[:60]
        return error_response(400, f"{field}: {_FIELD_RULES[field]}, got {got}", param=field)
    loc = ".".join(str(part) for part in parts)
    message = f"{loc}: {first.get('msg', 'invalid value')}{more}" if loc else str(first.get("msg"))
    return error_response(400, message, param=loc or None)


class _Service:
    """Request handling state: the engine, its single worker thread and the queue depth."""

    def __init__(self, engine: Engine, default_max_tokens: int, max_queue: int) -> None:
        self.engine = engine
        self.default_max_tokens = default_max_tokens
        self.max_queue = max_queue
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vox-generate")
        self.pending = 0  # requests submitted to the worker and not finished (event-loop only)
        self.created = int(time.time())

    def model_card(self) -> dict[str, Any]:
        # max_model_len: context window in tokens (vLLM's field name), for routers that read it.
        # system_prompt_mode (vox_mens.json): "none" means system messages are dropped here.
        return {
            "id": self.engine.model_id,
            "object": "model",
            "created": self.created,
            "owned_by": "vox-mens",
            "max_model_len": self.engine.max_context,
            "system_prompt_mode": self.engine.info.system_prompt_mode,
        }

    def refuse(self, req: ChatRequest) -> JSONResponse | None:
        """The 4xx response for a well-formed request this server cannot honour, else ``None``."""
        if req.model != self.engine.model_id:
            return error_response(
                404,
                f"the model {req.model!r} does not exist here; this server serves {self.engine.model_id!r}",
                param="model",
                code="model_not_found",
            )
        if (req.n or 1) != 1:
            return error_response(400, "only n=1 is supported", param="n")
        return None

    def prepare(self, req: ChatRequest) -> Prepared:
        stop = [req.stop] if isinstance(req.stop, str) else list(req.stop or [])
        return self.engine.prepare(
            req.messages,
            max_tokens=req.max_completion_tokens or req.max_tokens,
            temperature=req.temperature,
            top_p=req.top_p,
            stop=stop,
            seed=req.seed,
            default_max_tokens=self.default_max_tokens,
            vox_constrained=req.vox_constrained,
            code_only=req.vox_code_only,
            vox_names=req.vox_names,
        )

    def submit(self, fn: Any, *args: Any) -> asyncio.Future[Any]:
        """Run ``fn(*args)`` on the worker thread (FIFO), tracking the queue depth."""
        loop = asyncio.get_running_loop()
        self.pending += 1
        future = loop.run_in_executor(self.executor, fn, *args)

        def done(_: Any) -> None:
            self.pending -= 1

        future.add_done_callback(done)
        return future


def _usage(event: StreamEvent) -> dict[str, int]:
    total = event.prompt_tokens + event.completion_tokens
    return {"prompt_tokens": event.prompt_tokens, "completion_tokens": event.completion_tokens, "total_tokens": total}


def create_app(engine: Engine, *, default_max_tokens: int = 512, max_queue: int = 32) -> FastAPI:
    """Build the FastAPI app serving ``engine``.

    Args:
        engine: the loaded model.
        default_max_tokens: completion cap when a request gives no ``max_tokens``.
        max_queue: requests waiting or running beyond this get 429 (server busy).
    """
    service = _Service(engine, default_max_tokens, max_queue)
    # strict_content_type=False: a body sent without a Content-Type header is still read as JSON
    app = FastAPI(title="vox-mens local model server", docs_url=None, redoc_url=None, strict_content_type=False)
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
            "queued": service.pending,
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
            events = _stream(service, prepared, completion_id, include_usage)
            return StreamingResponse(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        try:
            result = await _complete_unless_disconnected(service, request, prepared)
        except ServingError as exc:
            return error_response(500, f"generation failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - one request's failure must not take the server down
            log.exception("generation failed")
            return error_response(500, f"generation failed: {type(exc).__name__}: {exc}")
        usage = {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        }
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": engine.model_id,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": result.text},
                        "finish_reason": result.finish_reason,
                        "logprobs": None,
                    }
                ],
                "usage": usage,
                "vox_constraint": result.constraint,
            }
        )

    return app


#: seconds between checks for a vanished client while a non-streamed request waits or runs
DISCONNECT_POLL_S = 0.1


async def _complete_unless_disconnected(service: _Service, request: Request, prepared: Prepared) -> Any:
    """Run ``engine.complete`` on the worker; if the client hangs up meanwhile, cancel it.

    A JSON (non-SSE) client that gives up used to keep the model busy to ``max_tokens`` while the
    next request waited (issue 14 item 13). The cancelled completion's result is still returned
    (nobody reads it); a queued request cancelled before it started generates nothing.
    """
    cancel = threading.Event()
    future = service.submit(service.engine.complete, prepared, cancel)
    try:
        while True:
            done, _ = await asyncio.wait({future}, timeout=DISCONNECT_POLL_S)
            if done:
                return future.result()
            if await request.is_disconnected():
                cancel.set()
                log.info("client disconnected: cancelling its completion")
                return await future
    finally:
        cancel.set()


async def _stream(service: _Service, prepared: Prepared, completion_id: str, include_usage: bool) -> AsyncIterator[str]:
    """SSE events for one streamed completion; client disconnect cancels the generation."""
    engine = service.engine
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    cancel = threading.Event()
    created = int(time.time())

    def put(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone (server shutting down)
            cancel.set()

    def work() -> None:
        try:
            if cancel.is_set():
                return
            for event in engine.stream(prepared, cancel):
                put(event)
        except Exception as exc:  # noqa: BLE001 - reported to the client as an SSE error event
            put(exc)
        finally:
            put(_END)

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        body = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": engine.model_id,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            **extra,
        }
        return f"data: {json.dumps(body)}\n\n"

    service.submit(work)
    try:
        yield chunk({"role": "assistant", "content": ""})
        while (item := await queue.get()) is not _END:
            if isinstance(item, Exception):
                log.error("streamed generation failed: %s", item)
                error = {"message": f"generation failed: {type(item).__name__}: {item}", "type": "server_error"}
                yield f"data: {json.dumps({'error': error})}\n\n"
                continue
            if item.text:
                yield chunk({"content": item.text})
            if item.finish_reason is not None:
                finish = "stop" if item.finish_reason == "cancelled" else item.finish_reason
                if include_usage:
                    yield chunk({}, finish)
                    usage_chunk = {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": engine.model_id,
                        "choices": [],
                        "usage": _usage(item),
                        "vox_constraint": item.constraint,
                    }
                    yield f"data: {json.dumps(usage_chunk)}\n\n"
                else:
                    yield chunk({}, finish, usage=_usage(item), vox_constraint=item.constraint)
        yield "data: [DONE]\n\n"
    finally:
        cancel.set()  # client went away or we finished: stop generating, free the queue


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket bound to ``host:port`` (port 0: any free port).

    Raises:
        ServingError: the address is in use or cannot be bound (message names it).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServingError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


class ServerThread:
    """Serve an engine from a background thread (tests, benchmarks, embedding).

    ``start()`` returns once the server accepts connections; ``base_url`` is then
    ``http://<host>:<port>/v1``; ``stop()`` shuts it down.
    """

    def __init__(self, engine: Engine, host: str = "127.0.0.1", port: int = 0, **app_kwargs: Any) -> None:
        import uvicorn

        self.host = host
        self._sock = bind_socket(host, port)
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(create_app(engine, **app_kwargs), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
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
    import uvicorn

    sock = sock if sock is not None else bind_socket(host, port)
    config = uvicorn.Config(create_app(engine, **app_kwargs), log_level="info", lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
