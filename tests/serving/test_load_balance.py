"""Serving at scale, tested end to end: two real `vox serve` processes of one export on loopback are one
catalog model with two deployments; the router spreads requests over both, and after one is killed
(SIGKILL) every request is still answered, by the other.

This is the README's tested example for "Serving at scale" (VOX_LOCAL_ENDPOINTS with several
OpenAI-compatible servers of one model). Requests are counted on the server side, from each
server's access log (uvicorn logs one ``"POST /v1/chat/completions HTTP/1.1" 200`` line per answer).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from serving.catalog import Catalog, probe_local
from serving.router import AttemptFailed, Completed, RouteRequest, complete, decide, import_litellm

START_TIMEOUT_S = 180.0  # two processes importing torch on a loaded 2-core machine
ANSWERED = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" 200')
LISTENING = re.compile(r"serving '.*' on (http://127\.0\.0\.1:\d+/v1)")
MESSAGES = [{"role": "user", "content": "Write fn add(a: int, b: int) to int."}]


class Served:
    """One `vox serve` process (``--port 0``); its output (stderr, and the access log on stdout) goes to a
    file, read for the URL and the answered requests."""

    def __init__(self, model_dir: Path, log: Path) -> None:
        self.log = log
        self._file = log.open("w")
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "serving.cli", "serve", str(model_dir), "--port", "0", "--device", "cpu"],
            stdout=self._file, stderr=subprocess.STDOUT, env=env, cwd=Path(__file__).resolve().parents[2])
        self.base_url = ""

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_up(self, deadline: float) -> None:
        """Wait for the listening line and a healthy ``/health`` (fails the test with the log)."""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"vox serve exited with {self.proc.returncode}:\n{self.text()[-2000:]}")
            found = LISTENING.search(self.text())
            if found:
                self.base_url = found.group(1)
                try:
                    if httpx.get(self.base_url.removesuffix("/v1") + "/health", timeout=2).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
            time.sleep(0.1)
        pytest.fail(f"vox serve was not up within {START_TIMEOUT_S:.0f} s:\n{self.text()[-2000:]}")

    def answered(self) -> int:
        """Chat completions this server answered, from its access log."""
        return len(ANSWERED.findall(self.text()))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        self._file.close()


@pytest.fixture(scope="module")
def two_servers(tiny_export_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Served]]:
    """Two `vox serve` processes of the tiny export, started together (LiteLLM is imported meanwhile)."""
    logs = tmp_path_factory.mktemp("vox-serve-logs")
    servers = [Served(tiny_export_dir, logs / f"server{i}.log") for i in range(2)]
    try:
        import_litellm()  # ~5 s, while the servers load
        deadline = time.monotonic() + START_TIMEOUT_S
        for server in servers:
            server.wait_up(deadline)
        yield servers
    finally:
        for server in servers:
            server.stop()


def _route(servers: list[Served], tiny_model_name: str) -> Any:
    """Probe both endpoints (as VOX_LOCAL_ENDPOINTS would list them) and route a request to the model."""
    entries, status = probe_local([s.base_url for s in servers], timeout=5.0)
    assert [e.id for e in entries] == [f"local/{tiny_model_name}"], status
    assert entries[0].deployments == tuple(s.base_url for s in servers)
    catalog = Catalog(tuple(entries), time.time(), {"local": status})
    request = RouteRequest("hello", est_input_tokens=20, max_output_tokens=4, local_only=True)
    return decide(request, f"local/{tiny_model_name}", catalog=catalog, keys=set())


def _ask(decision: Any, stream: bool) -> tuple[Completed, list[AttemptFailed], list[str]]:
    """One request: ``(completed, other failures, deployments that answered empty)``. The tiny
    random model sometimes samples an answer without text (EmptyAnswer, a server-kind failure
    since 8e06bb3): its server did answer (HTTP 200 in its log) and the cascade tried again, as
    it should; such attempts count as served by that deployment."""
    events = list(complete(decision, MESSAGES, keys={}, stream=stream, timeout=30.0, max_tokens=4))
    done = events[-1]
    assert isinstance(done, Completed), events
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    empty = [f for f in failed if f.failure is not None and f.failure.error_type == "EmptyAnswer"]
    return done, [f for f in failed if f not in empty], [str(f.deployment) for f in empty]


def test_two_vox_serve_processes_share_the_traffic_and_survive_a_kill(
        two_servers: list[Served], tiny_model_name: str) -> None:
    a, b = two_servers
    decision = _route(two_servers, tiny_model_name)
    assert "2 deployments, load-balanced" in decision.explain()

    # traffic spreads: simple-shuffle over two deployments (all 16 on one side: odds 2**-15)
    served: Counter[str | None] = Counter()
    for i in range(16):
        done, failed, empty = _ask(decision, stream=i % 2 == 1)
        assert not failed and done.model == f"local/{tiny_model_name}"
        served.update([done.deployment, *empty])
    assert (a.answered(), b.answered()) == (served[a.base_url], served[b.base_url])  # counted by the servers
    assert a.answered() > 0 and b.answered() > 0 and a.answered() + b.answered() == sum(served.values()) >= 16

    # kill one: every request of the sequence after the kill is answered, by the other
    a.proc.kill()
    a.proc.wait(30)
    before = b.answered()
    retried, empties = [], 0
    for i in range(8):
        done, failed, empty = _ask(decision, stream=i % 2 == 0)
        assert done.deployment == b.base_url and done.text is not None
        assert all(e == b.base_url for e in empty)
        retried += failed
        empties += len(empty)
    assert b.answered() - before == 8 + empties
    # a request that still picked the dead one was retried on the live one; then it is cooled down
    assert len(retried) <= 1
    assert all(f.deployment == a.base_url and f.next_model == f"local/{tiny_model_name}" for f in retried)
    assert all(f.failure is not None and f.failure.kind == "server" for f in retried)
