"""Benchmark: build and gate 20,000 pairs (target <= 90 s on 2 CPU cores).

Prints pairs/s, the gate's share of the time, and the gate pass rate. Runs the same pipeline
functions as the assets (generation with preflight diagnostics, then the strict compiler gate),
in memory, with ``--workers`` processes.

    .venv/bin/python bench/corpus.py [--pairs 20000] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 0 when it meets the 90 s target, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--target-s", type=float, default=90.0)
    args = parser.parse_args(argv)

    import vox_lang  # noqa: F401  (imported before forking so workers share it)
    from pipeline.corpus import CorpusConfig
    from pipeline.gate import gate_pairs
    from pipeline.generators import generate_pairs, plan

    cfg = CorpusConfig(seed=args.seed, pairs=args.pairs, workers=args.workers)
    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    c0, t0 = cpu(), time.perf_counter()
    pairs = generate_pairs(plan(cfg.pairs, cfg.weights, cfg.seed, cfg.paraphrase_rate), workers=cfg.workers)
    c1, t1 = cpu(), time.perf_counter()
    result = gate_pairs(pairs, workers=cfg.workers)
    c2, t2 = cpu(), time.perf_counter()
    total, gen_s, gate_s = t2 - t0, t1 - t0, t2 - t1
    print(f"pairs built+gated : {len(pairs)} with {cfg.workers} worker(s)")
    print(f"build             : {gen_s:6.1f} s wall, {c1 - c0:6.1f} s CPU")
    print(f"gate              : {gate_s:6.1f} s wall, {c2 - c1:6.1f} s CPU "
          f"({result.checks} front-end runs, {result.cache_hits} cache hits)")
    print(f"total             : {total:6.1f} s wall, {c2 - c0:6.1f} s CPU  (target <= {args.target_s:.0f} s wall)")
    print(f"load average      : {os.getloadavg()[0]:6.2f}  (CPU / workers ~ wall time on idle cores)")
    print(f"throughput        : {len(pairs) / total:6.0f} pairs/s")
    print(f"gate share        : {gate_s / total:6.1%}")
    print(f"gate pass rate    : {result.pass_rate:6.2%}  ({len(result.rejections)} rejected)")
    print(f"@test execution   : {result.test_runs} programs' tests run, {result.tests_rejected} rows rejected by them")
    return 0 if total <= args.target_s else 1


if __name__ == "__main__":
    raise SystemExit(main())
