"""The replay test server itself: a client that hangs up never prints a traceback into the output
of the running test, and no handler thread outlives its server (test_chat_e2e's flake)."""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from typing import Any

import pytest


def _raw_post_then_hang_up(base_url: str, wait_s: float) -> None:
    host, port = base_url.split("//")[1].split("/")[0].split(":")
    body = b'{"messages": [], "stream": false}'
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        time.sleep(wait_s)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST


def test_a_client_that_gives_up_leaves_no_traceback_and_no_thread(replay: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # A client that times out (the probe under a GC pause, a cascade timeout) closes its socket; the
    # server then wrote its late answer into it and printed a ConnectionResetError/BrokenPipeError
    # traceback into whatever test was running, often seconds later (scripted delays).
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    before = set(threading.enumerate())
    with contextlib.redirect_stderr(err):
        with replay.ReplayServer([replay.Scripted("late", delay_s=0.3), "kept alive"], model="m") as server:
            _raw_post_then_hang_up(server.base_url, 0.05)  # gives up before the answer
            time.sleep(0.5)  # the answer is written into the reset connection
            with socket.create_connection(("127.0.0.1", int(server.base_url.split(":")[2].split("/")[0]))):
                pass  # an idle connection still open when the server stops
        left = [t for t in set(threading.enumerate()) - before if t.is_alive()]
    assert "Traceback" not in err.getvalue() and "Error" not in err.getvalue(), err.getvalue()
    assert left == []  # every handler ended with its server


def test_a_scripted_delay_ends_when_the_server_stops(replay: Any) -> None:
    with replay.ReplayServer([replay.Scripted("slow", delay_s=30.0)], model="m") as server:
        threading.Thread(target=_raw_post_then_hang_up, args=(server.base_url, 0.1), daemon=True).start()
        time.sleep(0.3)
        t0 = time.perf_counter()
    assert time.perf_counter() - t0 < 5.0  # not 30 s: the handler's wait is interrupted


def test_probe_timeout_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from serving.catalog import probe_local
    from serving.errors import CatalogError
    from serving.probe import DEFAULT_TIMEOUT_S, probe_timeout_s

    monkeypatch.delenv("VOX_PROBE_TIMEOUT", raising=False)
    assert probe_timeout_s() == DEFAULT_TIMEOUT_S == 0.2
    monkeypatch.setenv("VOX_PROBE_TIMEOUT", "2.5")
    assert probe_timeout_s() == 2.5
    for bad in ("soon", "0", "-1"):
        monkeypatch.setenv("VOX_PROBE_TIMEOUT", bad)
        with pytest.raises(CatalogError, match=f"VOX_PROBE_TIMEOUT must be a positive number of seconds, got '{bad}'"):
            probe_local([])


def test_a_local_endpoint_that_is_no_url_is_named_not_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    # a new-user trial's port 99999 was probed and reported "down: connection refused"
    from serving.catalog_sources import local_endpoint_urls
    from serving.errors import CatalogError

    for bad in ("http://127.0.0.1:99999/v1", "127.0.0.1:8000", "ftp://h/v1", "http://:80/v1", "http://h:x/v1"):
        monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", f"http://127.0.0.1:8000/v1, {bad}")
        with pytest.raises(CatalogError, match=r"VOX_LOCAL_ENDPOINTS: '.*' is not an http\(s\) URL"):
            local_endpoint_urls()
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "http://127.0.0.1:8000/v1/, https://gpu-box/v1")
    assert local_endpoint_urls()[:2] == ["http://127.0.0.1:8000/v1", "https://gpu-box/v1"]
