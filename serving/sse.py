"""Server-sent events for one streamed chat completion of ``n`` choices (OpenAI's format).

The stream opens with a role chunk per choice, then content chunks as text becomes final (each
names its choice: ``choices[0].index``), a finish chunk per choice (``finish_reason``, and the
choice's ``vox_constraint`` report), the usage (the prompt once plus every choice's tokens: on
its own last chunk with ``stream_options.include_usage``, else on the last finish chunk) and
``data: [DONE]``. The generation runs on the service's worker thread; a client that goes away
cancels it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

from serving.openai_wire import chunk_body, usage
from serving.prepared import Prepared, StreamEvent
from serving.service import Service, ShuttingDown

log = logging.getLogger(__name__)

_END = object()  # marks the end of a streamed generation on the event queue


async def stream_events(service: Service, prepared: Prepared, completion_id: str,
                        include_usage: bool) -> AsyncIterator[str]:
    """SSE ``data:`` lines for one streamed completion; client disconnect cancels the generation."""
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

    def generate() -> None:
        if not cancel.is_set():
            for event in engine.stream(prepared, cancel):
                put(event)

    run = service.guarded(cancel, generate)  # refused (ShuttingDown) if the server stops first

    def work() -> None:
        try:
            run()
        except Exception as exc:  # noqa: BLE001 - reported to the client as an SSE error event
            put(exc)
        finally:
            put(_END)

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None, report: Any = None,
              **extra: Any) -> str:
        choice: dict[str, Any] = {"index": index, "delta": delta, "finish_reason": finish, "logprobs": None}
        if finish is not None:
            choice["vox_constraint"] = report
        return chunk_body(completion_id, created, engine.model_id, [choice], **extra)

    service.submit(work)
    finished: dict[int, StreamEvent] = {}
    try:
        for index in range(prepared.n):
            yield chunk(index, {"role": "assistant", "content": ""})
        while (item := await queue.get()) is not _END:
            if isinstance(item, Exception):
                if isinstance(item, ShuttingDown):
                    error = {"message": str(item), "type": "server_error", "code": "shutting_down"}
                else:
                    log.error("streamed generation failed: %s", item)
                    error = {"message": f"generation failed: {type(item).__name__}: {item}", "type": "server_error"}
                yield f"data: {json.dumps({'error': error})}\n\n"
                continue
            if item.text:
                yield chunk(item.index, {"content": item.text})
            if item.finish_reason is None:
                continue
            finished[item.index] = item
            finish = "stop" if item.finish_reason == "cancelled" else item.finish_reason
            if len(finished) < prepared.n:
                yield chunk(item.index, {}, finish, item.constraint)
                continue
            total = usage(item.prompt_tokens, sum(e.completion_tokens for e in finished.values()))
            first = finished[0].constraint if 0 in finished else None  # choice 0's report, as for n=1
            if include_usage:
                yield chunk(item.index, {}, finish, item.constraint)
                yield chunk_body(completion_id, created, engine.model_id, [], usage=total, vox_constraint=first)
            else:
                yield chunk(item.index, {}, finish, item.constraint, usage=total, vox_constraint=first)
        yield "data: [DONE]\n\n"
    finally:
        cancel.set()  # client went away or we finished: stop generating, free the queue
        service.release(cancel)
