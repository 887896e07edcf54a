"""Inference benchmark: KV-cache vs full-sequence decoding, and server time-to-first-token.

Builds a small random Qwen3 model offline (same builder as ``tests/serving/conftest.py``), then:
1. tokens/s for ``--new-tokens`` (default 256) greedy tokens with the cache and without it
   (target: cache ≥ 5x faster);
2. time to first token (median of ``--repeats``) in-process (``Engine.stream``) and through the
   OpenAI-compatible server on a loopback port (streaming request with the ``openai`` client);
   the difference is the server overhead;
3. ``n`` choices (default 4) in one request (one batched generation) vs ``n`` sequential
   one-choice requests through the server: wall time and tokens/s, with and without the Vox
   constraint (every choice runs to ``--n-tokens``).

Run: ``.venv/bin/python bench/inference.py [--hidden 512 --layers 8 --device cpu --threads 1]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROMPT = [{"role": "user", "content": "Write a Vox function that returns the total of a list of prices."}]


def _builder() -> Any:
    """``tests/serving/conftest.py`` as a module (its ``build_tiny_export`` is the one builder)."""
    spec = importlib.util.spec_from_file_location("serving_test_conftest", ROOT / "tests/serving/conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def decode_rate(engine: Any, new_tokens: int, use_cache: bool) -> tuple[float, float]:
    """Return (tokens/s, seconds) for ``new_tokens`` greedy tokens, EOS ignored."""
    from pipeline.decoding import SamplingParams, generate_ids

    prompt = engine.render(PROMPT)
    params = SamplingParams(max_new_tokens=new_tokens)
    list(generate_ids(engine.model, prompt, SamplingParams(max_new_tokens=4), use_cache=use_cache))  # warm-up
    start = time.perf_counter()
    count = sum(1 for _ in generate_ids(engine.model, prompt, params, use_cache=use_cache))
    seconds = time.perf_counter() - start
    assert count == new_tokens
    return count / seconds, seconds


def ttft_in_process(engine: Any, repeats: int) -> float:
    """Median seconds from request to first text, calling the engine directly (16-token requests)."""
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        first: float | None = None
        for event in engine.stream(engine.prepare(PROMPT, max_tokens=16, temperature=0.0)):
            if first is None and (event.text or event.finish_reason):
                first = time.perf_counter() - start
        times.append(time.perf_counter() - start if first is None else first)  # no content: time to the end
    return statistics.median(times)


def ttft_server(base_url: str, model: str, repeats: int) -> float:
    """Median seconds from request to first content chunk through the HTTP server (16-token requests)."""
    import openai
    from openai.types.chat import ChatCompletionUserMessageParam

    messages: list[ChatCompletionUserMessageParam] = [{"role": "user", "content": m["content"]} for m in PROMPT]
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    client.models.list()  # open the connection once
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        first: float | None = None
        # Read each stream to the end, so the next request never waits behind this one.
        for chunk in client.chat.completions.create(
            model=model, messages=messages, max_tokens=16, temperature=0, stream=True
        ):
            if first is None and chunk.choices and (chunk.choices[0].delta.content or chunk.choices[0].finish_reason):
                first = time.perf_counter() - start
        times.append(time.perf_counter() - start if first is None else first)  # no content: time to the end
    return statistics.median(times)


def n_vs_sequential(base_url: str, model: str, n: int, max_tokens: int, repeats: int,
                    constrained: bool = True) -> tuple[float, float, float, float]:
    """``n`` choices in one request vs ``n`` sequential one-choice requests through the server.

    Sampled (temperature 0.7, seeded), every choice runs to ``max_tokens`` (the caller serves an
    engine without EOS ids). Returns (one-request wall s, its tokens/s, sequential wall s, its
    tokens/s), medians of ``repeats``; tokens are the ``usage.completion_tokens`` reported.
    """
    import httpx

    body = {"model": model, "messages": PROMPT, "max_tokens": max_tokens, "temperature": 0.7,
            "vox_constrained": constrained}

    def timed(requests: list[dict[str, Any]]) -> tuple[float, int]:
        start = time.perf_counter()
        tokens = 0
        for i, extra in enumerate(requests):
            r = httpx.post(f"{base_url}/chat/completions", json={**body, "seed": i, **extra}, timeout=600)
            r.raise_for_status()
            tokens += r.json()["usage"]["completion_tokens"]
        return time.perf_counter() - start, tokens

    timed([{"max_tokens": 4}])  # warm-up
    batched = [timed([{"n": n}]) for _ in range(repeats)]
    serial = [timed([{}] * n) for _ in range(repeats)]
    b_wall = statistics.median(w for w, _ in batched)
    s_wall = statistics.median(w for w, _ in serial)
    return b_wall, batched[0][1] / b_wall, s_wall, serial[0][1] / s_wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=512, help="hidden size (512 x 8 layers: 26M parameters)")
    parser.add_argument("--layers", type=int, default=8, help="decoder layers")
    parser.add_argument("--new-tokens", type=int, default=256, help="tokens generated per decode run")
    parser.add_argument("--repeats", type=int, default=10, help="TTFT samples (median reported)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or mps")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1: robust on a shared, loaded CPU)")
    parser.add_argument("--n", type=int, default=4, help="choices per request for the n-vs-sequential figure")
    parser.add_argument("--n-tokens", type=int, default=64, help="tokens per choice for the n-vs-sequential figure")
    parser.add_argument("--n-repeats", type=int, default=3, help="n-vs-sequential samples (median reported)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from serving.engine import Engine
    from serving.server import ServerThread

    heads = max(2, args.hidden // 64)
    overrides = dict(
        hidden_size=args.hidden,
        intermediate_size=3 * args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=heads,
        num_key_value_heads=max(1, heads // 2),
        head_dim=64,
        max_position_embeddings=2048,
    )
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = _builder().build_tiny_export(Path(tmp) / "model", config_overrides=overrides)
        start = time.perf_counter()
        engine = Engine.load(model_dir, device=args.device)
        load_s = time.perf_counter() - start
        params = sum(p.numel() for p in engine.model.parameters()) / 1e6
        print(f"model: qwen3 hidden={args.hidden} layers={args.layers} params={params:.1f}M device={engine.device}"
              f" threads={args.threads} load+cache-check={load_s:.2f}s prompt={len(engine.render(PROMPT))} tokens")

        cached, cached_s = decode_rate(engine, args.new_tokens, use_cache=True)
        full, full_s = decode_rate(engine, args.new_tokens, use_cache=False)
        print(f"decode {args.new_tokens} tokens: cache {cached:.1f} tok/s ({cached_s:.2f}s), "
              f"no cache {full:.1f} tok/s ({full_s:.2f}s), speed-up {cached / full:.1f}x (target >= 5x)")

        in_process = ttft_in_process(engine, args.repeats)
        server = ServerThread(engine)
        server.start()
        try:
            through_server = ttft_server(server.base_url, engine.model_id, args.repeats)
        finally:
            server.stop()
        print(f"time to first token (median of {args.repeats}): in-process {in_process * 1000:.1f} ms, "
              f"server {through_server * 1000:.1f} ms, overhead {(through_server - in_process) * 1000:.1f} ms")

        engine.eos_ids = frozenset()  # every choice runs to --n-tokens: equal work both ways
        server = ServerThread(engine)
        server.start()
        try:
            for constrained in (True, False):
                b_wall, b_rate, s_wall, s_rate = n_vs_sequential(server.base_url, engine.model_id, args.n,
                                                                 args.n_tokens, args.n_repeats, constrained)
                label = "constrained" if constrained else "unconstrained"
                print(f"n={args.n} x {args.n_tokens} tokens ({label}, median of {args.n_repeats}): one request "
                      f"{b_wall:.2f}s {b_rate:.1f} tok/s; {args.n} sequential requests {s_wall:.2f}s "
                      f"{s_rate:.1f} tok/s; speed-up {s_wall / b_wall:.2f}x")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
