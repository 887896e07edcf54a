"""Request handling state of ``vox serve``: the engine, its single worker thread, the queue depth.

:class:`Service` turns a validated :class:`~serving.openai_wire.ChatRequest` into a
:class:`~serving.prepared.Prepared` (or the 4xx it deserves), runs generations one after another
on one worker thread (FIFO; never interleaved in one model call), and cancels a non-streamed
generation whose client hung up. When the server is asked to stop (:meth:`Service.shut_down`), the
request in progress is finished and those still waiting are refused (503); asked again, the one in
progress is cancelled too.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from fastapi import Request
from fastapi.responses import JSONResponse

from serving.engine import MAX_CHOICES, Engine
from serving.errors import ServingError
from serving.openai_wire import ChatRequest, error_response
from serving.prepared import Completion, Prepared
from serving.probe import pass_rate

log = logging.getLogger(__name__)

#: seconds between checks for a vanished client while a non-streamed request waits or runs
DISCONNECT_POLL_S: Final = 0.1


class ShuttingDown(ServingError):
    """The server is stopping: a request that had not started is refused (503)."""

    def __init__(self) -> None:
        super().__init__("the server is shutting down: this request was not started; send it again "
                         "to another server or once this one is back")


class Service:
    """What the app's routes share.

    Args:
        engine: the loaded model.
        default_max_tokens: completion cap when a request gives no ``max_tokens``.
        max_queue: requests waiting or running beyond this get 429.
        max_n: most choices (``n``) per request (default :data:`serving.engine.MAX_CHOICES`).
    """

    def __init__(self, engine: Engine, default_max_tokens: int, max_queue: int, max_n: int = MAX_CHOICES) -> None:
        self.engine = engine
        self.default_max_tokens = default_max_tokens
        self.max_queue = max_queue
        self.max_n = max_n
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vox-generate")
        self.pending = 0  # requests submitted to the worker and not finished (event-loop only)
        self.created = int(time.time())
        self.closing = threading.Event()  # set by shut_down: requests not started are refused
        self._cancels: set[threading.Event] = set()  # the cancel event of each request submitted

    def shut_down(self, cancel_running: bool = False) -> int:
        """Stop taking work: requests that have not started are refused with :class:`ShuttingDown`
        when their turn comes; with ``cancel_running`` the one generating is cancelled too (it
        ends with ``finish_reason`` ``"cancelled"``). Thread-safe (called from a signal handler).
        Returns how many requests were waiting or running."""
        self.closing.set()
        if cancel_running:
            for cancel in list(self._cancels):
                cancel.set()
        return len(self._cancels)

    def guarded(self, cancel: threading.Event, fn: Any) -> Any:
        """``fn`` wrapped for the worker thread: it raises :class:`ShuttingDown` instead of running
        once :meth:`shut_down` was called, and ``cancel`` is known to :meth:`shut_down` until the
        request ends (call :meth:`release` then)."""
        self._cancels.add(cancel)

        def run(*args: Any) -> Any:
            if self.closing.is_set():
                raise ShuttingDown
            return fn(*args)

        return run

    def release(self, cancel: threading.Event) -> None:
        """Forget a finished request's ``cancel`` event (:meth:`guarded`)."""
        self._cancels.discard(cancel)

    def model_card(self) -> dict[str, Any]:
        """The ``/v1/models`` entry of the served model."""
        # max_model_len: context window in tokens (vLLM's field name), for routers that read it.
        # system_prompt_mode (vox_mens.json): "none" means system messages are dropped here.
        # vox_pass_at_1 (vox_mens.json "pass_at_1", when the export has one): the router's Vox
        # quality score, so that a catalog reads it from any client, wherever the export lives.
        card = {
            "id": self.engine.model_id,
            "object": "model",
            "created": self.created,
            "owned_by": "vox-mens",
            "max_model_len": self.engine.max_context,
            "system_prompt_mode": self.engine.info.system_prompt_mode,
        }
        score = pass_rate((getattr(self.engine.info, "meta", None) or {}).get("pass_at_1"))
        if score is not None:
            card["vox_pass_at_1"] = score
        return card

    def refuse(self, req: ChatRequest) -> JSONResponse | None:
        """The 4xx response for a well-formed request this server cannot honour, else ``None``."""
        if req.model != self.engine.model_id:
            return error_response(
                404,
                f"the model {req.model!r} does not exist here; this server serves {self.engine.model_id!r}",
                param="model",
                code="model_not_found",
            )
        n = req.n or 1
        if n > self.max_n:
            return error_response(
                400, f"n={n} is too many choices: this server generates at most {self.max_n} per request"
                     " (vox serve --max-n)", param="n")
        return None

    def prepare(self, req: ChatRequest) -> Prepared:
        """Render and check a request (:meth:`serving.engine.Engine.prepare`).

        Raises:
            RequestError: bad messages or parameters.
        """
        stop = [req.stop] if isinstance(req.stop, str) else list(req.stop or [])
        return self.engine.prepare(
            req.messages,
            max_tokens=req.max_completion_tokens or req.max_tokens,
            max_tokens_param="max_completion_tokens" if req.max_completion_tokens else "max_tokens",
            temperature=req.temperature,
            top_p=req.top_p,
            stop=stop,
            seed=req.seed,
            default_max_tokens=self.default_max_tokens,
            vox_constrained=req.vox_constrained,
            code_only=req.vox_code_only,
            vox_names=req.vox_names,
            vox_retries=req.vox_retries,
            stream=req.stream,
            n=req.n or 1,
            max_n=self.max_n,
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

    async def complete_unless_disconnected(self, request: Request, prepared: Prepared) -> list[Completion]:
        """Run ``engine.completions`` on the worker; if the client hangs up meanwhile, cancel it.

        A JSON (non-SSE) client that gives up used to keep the model busy to ``max_tokens`` while
        the next request waited (issue 14 item 13). The cancelled completions are still returned
        (nobody reads them); a queued request cancelled before it started generates nothing.

        Raises:
            ShuttingDown: the server began to stop before this request's turn came.
        """
        cancel = threading.Event()
        future = self.submit(self.guarded(cancel, self.engine.completions), prepared, cancel)
        try:
            while True:
                done, _ = await asyncio.wait({future}, timeout=DISCONNECT_POLL_S)
                if done:
                    return list(future.result())
                if await request.is_disconnected():
                    cancel.set()
                    log.info("client disconnected: cancelling its completion")
                    return list(await future)
        finally:
            cancel.set()
            self.release(cancel)
