"""Reachability probe for local OpenAI-compatible endpoints (used by the router).

``probe(base_url)`` answers within a hard deadline (default 200 ms) whether the endpoint is up
and which model ids it serves (with their context window and system-prompt mode when the
server says: ``vox serve`` cards carry ``max_model_len`` and ``system_prompt_mode``), by
calling ``GET {base_url}/models`` with httpx (no proxies: a loopback probe must never leave the
machine or wait on a proxy). ``probe_all`` probes several endpoints in parallel under one
deadline. httpx is imported when the first probe runs, so importing this module is free.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import httpx

DEFAULT_ENDPOINT: Final = "http://127.0.0.1:8000/v1"
DEFAULT_TIMEOUT_S: Final = 0.2
MAX_BODY_BYTES: Final = 1_000_000  # a /models list is a few KB; more is not an OpenAI server
#: how a probe's error begins when something listens there but does not answer ``GET /models`` as an
#: OpenAI-compatible server would (a web page, another API, a 404)
NOT_OPENAI: Final = "answers, but not as an OpenAI-compatible server"


@dataclass(frozen=True, slots=True)
class ServedModel:
    """One model card of ``/models``.

    Attributes:
        id: the served model id.
        context_window: ``max_model_len`` (prompt + answer tokens), ``None`` if not given.
        system_prompt_mode: ``"ssot"`` or ``"none"`` (``vox serve``), ``None`` if not given.
        vox_pass_at_1: the export's Vox pass@1 (``vox serve``: ``pass_at_1`` of its
            ``vox_mens.json``), ``None`` if not given.
    """

    id: str
    context_window: int | None = None
    system_prompt_mode: str | None = None
    vox_pass_at_1: float | None = None


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What a probe found.

    Attributes:
        base_url: the endpoint probed (no trailing slash), e.g. ``http://127.0.0.1:8000/v1``.
        up: the endpoint answered ``/models`` with a valid model list in time.
        models: the served model ids (empty when down).
        served: the model cards, one per id of ``models``.
        latency_ms: time until the answer or the failure, in milliseconds.
        error: why it is down (``None`` when up), e.g. ``"connection refused"``, ``"timeout"``.
    """

    base_url: str
    up: bool
    models: tuple[str, ...] = ()
    latency_ms: float = 0.0
    error: str | None = None
    served: tuple[ServedModel, ...] = ()


def probe_timeout_s() -> float:
    """``VOX_PROBE_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT_S`): how long routing waits
    for local endpoints. Raise it for an endpoint on another machine, or in a process whose
    garbage collector can pause it longer than 200 ms (a full collection with torch and LiteLLM
    loaded takes ~1.5 s on a busy 2-core machine: a probe caught in one reads as "timeout").

    Raises:
        ValueError: the variable is not a positive number (the message names it).
    """
    raw = os.environ.get("VOX_PROBE_TIMEOUT")
    if raw is None or not raw.strip():
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"VOX_PROBE_TIMEOUT must be a positive number of seconds, got {raw!r}")
    return value


def local_endpoints() -> list[str]:
    """Base URLs from ``$VOX_LOCAL_ENDPOINTS`` (comma-separated), default ``[DEFAULT_ENDPOINT]``.

    Raises:
        ValueError: an entry is not an ``http``/``https`` URL with a host and, if it names one, a
            port in 1-65535 (the message names the variable and the entry; a new-user trial's
            port 99999 was probed and reported "down: connection refused").
    """
    from urllib.parse import urlsplit

    raw = os.environ.get("VOX_LOCAL_ENDPOINTS")
    if raw is None:
        return [DEFAULT_ENDPOINT]
    urls = [url.strip().rstrip("/") for url in raw.split(",") if url.strip()]
    for url in urls:
        try:
            parts = urlsplit(url)
            ok = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
        except ValueError:  # a port out of range or not a number
            ok = False
        if not ok:
            raise ValueError(f"VOX_LOCAL_ENDPOINTS: {url!r} is not an http(s) URL with a host and a port in 1-65535 "
                             "(e.g. http://127.0.0.1:8000/v1)")
    return urls


def _card(item: dict[str, object]) -> ServedModel:
    """A :class:`ServedModel` from one ``/models`` item (odd field values are ignored)."""
    ctx, mode = item.get("max_model_len"), item.get("system_prompt_mode")
    window = ctx if isinstance(ctx, int) and not isinstance(ctx, bool) and ctx > 0 else None
    return ServedModel(str(item["id"]), window, mode if isinstance(mode, str) and mode in ("ssot", "none") else None,
                       pass_rate(item.get("vox_pass_at_1")))


def pass_rate(value: object) -> float | None:
    """``value`` as a pass@1 in [0, 1] (a model card's ``vox_pass_at_1``, ``vox_mens.json``'s
    ``pass_at_1``), or ``None`` when it is not a number there (booleans included)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return None


_CLIENT: httpx.Client | None = None
_CLIENT_LOCK = threading.Lock()


def _client() -> httpx.Client:
    """The process's probe client (``httpx.Client``, thread-safe), built once outside any deadline:
    building one costs tens of milliseconds (TLS context), a probe's whole budget is 200.
    ``trust_env=False``: no proxy from the environment; no keep-alive: every probe closes its
    connection, so a probed server is left with no idle connection from us."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            import httpx

            _CLIENT = httpx.Client(trust_env=False, limits=httpx.Limits(max_keepalive_connections=0))
        return _CLIENT


def _fetch(base_url: str, timeout: float) -> tuple[tuple[ServedModel, ...], str | None]:
    """GET ``/models``; return ``(model cards, None)`` or ``((), reason)``."""
    import httpx

    try:
        with _client().stream("GET", f"{base_url}/models", headers={"Accept": "application/json"},
                              timeout=timeout) as response:
            if response.status_code >= 400:
                return (), f"{NOT_OPENAI}: GET /models gave HTTP {response.status_code}"
            raw = b""
            for piece in response.iter_bytes():
                raw += piece
                if len(raw) > MAX_BODY_BYTES:
                    return (), f"{NOT_OPENAI}: GET /models sent over {MAX_BODY_BYTES} bytes"
        body = httpx.Response(200, content=raw).json()
    except httpx.TimeoutException:
        return (), "timeout"
    except httpx.ConnectError as exc:
        refused = isinstance(exc.__cause__, ConnectionRefusedError) or "refused" in str(exc).lower()
        return (), "connection refused" if refused else str(exc) or type(exc).__name__
    except ValueError:
        return (), f"{NOT_OPENAI}: GET /models is not JSON"
    except httpx.HTTPError as exc:
        return (), f"bad response: {exc}"
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return (), f"{NOT_OPENAI}: GET /models has no model list"
    return tuple(_card(item) for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)), None


def probe_all(base_urls: Iterable[str], timeout: float = DEFAULT_TIMEOUT_S) -> list[ProbeResult]:
    """Probe every endpoint in parallel; all results are back within ``timeout`` seconds.

    Args:
        base_urls: OpenAI base URLs (``.../v1``).
        timeout: overall deadline in seconds; an endpoint not answered by then is down
            (``error="timeout"``).

    Returns:
        One :class:`ProbeResult` per URL, in the given order. Never raises for a bad endpoint.
    """
    _client()  # built before the deadline starts
    urls = [url.rstrip("/") for url in base_urls]
    results: list[ProbeResult | None] = [None] * len(urls)
    start = time.perf_counter()

    def run(i: int) -> None:
        served, error = _fetch(urls[i], timeout)
        ms = (time.perf_counter() - start) * 1000
        results[i] = ProbeResult(urls[i], error is None, tuple(m.id for m in served), round(ms, 1), error, served)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(urls))]
    for thread in threads:
        thread.start()
    deadline = start + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.perf_counter()))
    timeout_ms = round(timeout * 1000, 1)
    return [r if r is not None else ProbeResult(u, False, (), timeout_ms, "timeout") for u, r in zip(urls, results)]


def probe(base_url: str = DEFAULT_ENDPOINT, timeout: float = DEFAULT_TIMEOUT_S) -> ProbeResult:
    """Is the endpoint at ``base_url`` up, and which models does it serve? (≤ ``timeout`` s)."""
    return probe_all([base_url], timeout)[0]
