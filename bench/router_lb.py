"""Router load balancing: requests/s and latency through the router (``decide`` + ``complete``) with one
deployment vs two deployments of one local model.

Builds the serving tests' tiny export offline (``tests/serving/conftest.py``: a random 2-layer Qwen3,
hidden size 64), starts two ``vox serve`` processes of it on loopback (one torch thread each), and
sends the same closed-loop load (``--threads`` client threads, ``--requests`` in all, non-streaming,
``--max-tokens`` answer tokens) through the router to a catalog that lists one server, then both
(``simple-shuffle``, then ``least-busy``: ``VOX_ROUTING_STRATEGY``), in ``--rounds`` interleaved rounds
(medians printed last). ``vox serve`` answers one request at
a time per process, so a second process can at most double the throughput, if it gets a core of its own.

Run: ``nice -n 5 .venv/bin/python bench/router_lb.py`` (prints figures; nothing is asserted).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("VOX_HOME", tempfile.mkdtemp(prefix="vox-bench-home-"))

LISTENING = re.compile(r"serving '.*' on (http://127\.0\.0\.1:\d+/v1)")
MESSAGES = [{"role": "user", "content": "Write fn add(a: int, b: int) to int."}]


def build_export(out: Path) -> Path:
    """The serving tests' tiny export (no network), written to ``out``."""
    spec = importlib.util.spec_from_file_location("vox_bench_serving_fixtures", ROOT / "tests/serving/conftest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.build_tiny_export(out))


def start_server(model_dir: Path, log: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """``vox serve MODEL_DIR --port 0`` with its output in ``log``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "serving.cli", "serve", str(model_dir), "--port", "0",
                                 "--device", "cpu"], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    return proc, log


def wait_url(proc: subprocess.Popen[bytes], log: Path, timeout: float = 300.0) -> str:
    """The server's base URL once ``/health`` answers."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"vox serve exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        found = LISTENING.search(log.read_text(errors="replace"))
        if found:
            try:
                if httpx.get(found.group(1).removesuffix("/v1") + "/health", timeout=2).status_code == 200:
                    return found.group(1)
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    raise SystemExit(f"vox serve was not up within {timeout:.0f} s")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc``; 0.0 where unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def route(urls: list[str]) -> Any:
    """The router's decision for the tiny model served at ``urls`` (one catalog model)."""
    from serving.catalog import Catalog, probe_local
    from serving.router import RouteRequest, decide

    entries, status = probe_local(urls, timeout=5.0)
    assert len(entries) == 1 and entries[0].deployments == tuple(urls), status
    catalog = Catalog(tuple(entries), time.time(), {"local": status})
    return decide(RouteRequest("hello", est_input_tokens=20, local_only=True), entries[0].id, catalog=catalog,
                  keys=set())


def load(decision: Any, threads: int, requests: int, max_tokens: int, pids: tuple[int, ...] = ()) -> dict[str, Any]:
    """Closed loop: ``threads`` clients share ``requests`` calls; latency per call (s), throughput, and
    the CPU seconds spent by this (client) process and by the server processes ``pids``."""
    from serving.router import Completed, complete

    latencies: list[float] = []
    served: Counter[str] = Counter()
    failures: list[str] = []
    lock = threading.Lock()
    todo = iter(range(requests))

    def client() -> None:
        while True:
            with lock:
                if next(todo, None) is None:
                    return
            t0 = time.perf_counter()
            try:
                events = list(complete(decision, MESSAGES, keys={}, stream=False, timeout=60.0, max_tokens=max_tokens))
            except Exception as exc:  # reported, not raised: a bench prints what happened
                with lock:
                    failures.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            done = events[-1]
            with lock:
                latencies.append(time.perf_counter() - t0)
                if isinstance(done, Completed):
                    served[str(done.deployment)] += 1

    t0, c0, s0 = time.perf_counter(), time.process_time(), sum(cpu_s(p) for p in pids)
    pool = [threading.Thread(target=client) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    wall = time.perf_counter() - t0
    n = max(len(latencies), 1)
    return {"rps": len(latencies) / wall, "p50": statistics.median(latencies), "p95": pct(latencies, 95),
            "served": served, "failures": failures, "wall": wall,
            "client_cpu_ms": (time.process_time() - c0) / n * 1e3,
            "server_cpu_ms": (sum(cpu_s(p) for p in pids) - s0) / n * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=8, help="client threads")
    parser.add_argument("--requests", type=int, default=48, help="requests per configuration and round")
    parser.add_argument("--max-tokens", type=int, default=48, help="answer tokens per request")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the configurations (medians)")
    args = parser.parse_args()

    from serving.llm import import_litellm

    work = Path(tempfile.mkdtemp(prefix="vox-bench-lb-"))
    model_dir = build_export(work / "export")
    procs = [start_server(model_dir, work / f"server{i}.log") for i in range(2)]
    try:
        import_litellm()
        urls = [wait_url(p, log) for p, log in procs]
        for url in urls:  # warm each server and the client path
            load(route([url]), 1, 3, args.max_tokens)
        print(f"router load balancing: {args.requests} requests, {args.threads} client threads, "
              f"{args.max_tokens} answer tokens, tiny export ({model_dir}), 2 `vox serve` processes (1 torch "
              f"thread each); {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
        runs = [("1 deployment", [urls[0]], "simple-shuffle"), ("2 deployments", urls, "simple-shuffle"),
                ("2 deployments", urls, "least-busy")]
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        pids = tuple(p.pid for p, _ in procs)
        for round_ in range(args.rounds):  # configurations interleaved: a shared machine's load drifts
            for label, used, strategy in runs:
                os.environ["VOX_ROUTING_STRATEGY"] = strategy
                r = load(route(used), args.threads, args.requests, args.max_tokens, pids)
                results.setdefault((label, strategy), []).append(r)
                spread = ", ".join(f"{n}" for _, n in sorted(r["served"].items()))
                print(f"  round {round_ + 1} {label:14} {strategy:15} {r['rps']:6.2f} requests/s   latency p50 "
                      f"{r['p50'] * 1e3:6.0f} ms   p95 {r['p95'] * 1e3:6.0f} ms   per server [{spread}]   failures "
                      f"{len(r['failures'])}   CPU per request: router {r['client_cpu_ms']:.0f} ms, servers "
                      f"{r['server_cpu_ms']:.0f} ms   (load average {os.getloadavg()[0]:.1f})")
                for f in r["failures"][:3]:
                    print(f"    failure: {f}")
        print(f"medians over {args.rounds} rounds:")
        med = {k: {m: statistics.median(r[m] for r in rs) for m in ("rps", "p50", "p95")} for k, rs in results.items()}
        one = med[("1 deployment", "simple-shuffle")]["rps"]
        for (label, strategy), m in med.items():
            print(f"  {label:14} {strategy:15} {m['rps']:6.2f} requests/s ({m['rps'] / one:.2f}x)   "
                  f"p50 {m['p50'] * 1e3:6.0f} ms   p95 {m['p95'] * 1e3:6.0f} ms")
    finally:
        for p, _ in procs:
            p.kill()
            p.wait(30)


if __name__ == "__main__":
    main()
