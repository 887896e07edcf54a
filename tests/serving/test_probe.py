"""Reachability probe: up with its model ids, down (refused, silent, wrong answer) within 200 ms."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from serving.probe import DEFAULT_ENDPOINT, local_endpoints, probe, probe_all

DEADLINE_S = 0.2
SLACK_S = 0.15  # thread start-up and scheduling on a busy 2-core machine


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections (backlog) but never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def refused_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    return port


@pytest.fixture
def not_openai_port() -> Iterator[int]:
    """An HTTP server that answers every GET with a JSON body that is not a model list."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server API
            body = b'{"hello": "world"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_up_endpoint_lists_models(local_server: str, tiny_model_name: str) -> None:
    result = probe(local_server)
    assert result.up and result.error is None
    assert result.models == (tiny_model_name,)
    assert result.latency_ms < DEADLINE_S * 1000 + SLACK_S * 1000


def test_refused_is_down_fast(refused_port: int) -> None:
    start = time.perf_counter()
    result = probe(f"http://127.0.0.1:{refused_port}/v1")
    assert time.perf_counter() - start < DEADLINE_S + SLACK_S
    assert not result.up and result.models == () and result.error == "connection refused"


def test_silent_endpoint_times_out_within_deadline(silent_port: int) -> None:
    start = time.perf_counter()
    result = probe(f"http://127.0.0.1:{silent_port}/v1", timeout=DEADLINE_S)
    assert time.perf_counter() - start < DEADLINE_S + SLACK_S
    assert not result.up and result.error == "timeout"


def test_non_openai_server_is_down(not_openai_port: int) -> None:
    result = probe(f"http://127.0.0.1:{not_openai_port}/v1")
    assert not result.up
    assert result.error == "answers, but not as an OpenAI-compatible server: GET /models has no model list"


def test_probe_all_is_parallel_under_one_deadline(local_server: str, silent_port: int, refused_port: int) -> None:
    urls = [f"http://127.0.0.1:{silent_port}/v1", local_server + "/", f"http://127.0.0.1:{refused_port}/v1"] * 2
    start = time.perf_counter()
    results = probe_all(urls, timeout=DEADLINE_S)
    assert time.perf_counter() - start < DEADLINE_S + SLACK_S
    assert [r.up for r in results] == [False, True, False] * 2
    assert results[1].base_url == local_server  # trailing slash dropped


def test_local_endpoints_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOX_LOCAL_ENDPOINTS", raising=False)
    assert local_endpoints() == [DEFAULT_ENDPOINT]
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", " http://127.0.0.1:9000/v1/ , ,http://box:8000/v1")
    assert local_endpoints() == ["http://127.0.0.1:9000/v1", "http://box:8000/v1"]
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", "")
    assert local_endpoints() == []
