"""Benchmark: corpus build + gate of 20,000 pairs through the partitioned backfill, 1 vs 2 processes.

Runs the ``corpus_backfill`` job (every corpus partition generated and gated, one step per
partition) with Dagster's multiprocess executor at ``max_concurrent`` 1 and then 2, each on a
fresh state directory, against an instance in a temporary ``DAGSTER_HOME`` (nothing outside the
temp folder is touched). Each step runs single-process (``workers: 1``), so the executor alone
sets the parallelism. A small untimed warm-up run starts the executor's forkserver first, so
neither timed run pays for it. Prints both wall times, the speed-up, the pass rate and whether
both runs wrote the same bytes.

    nice -n 5 .venv/bin/python bench/corpus_partitions.py [--pairs 20000] [--processes 1 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _digest(root: Path) -> str:
    """sha256 over every partition's gated and generated Parquet files (sorted by path)."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted((root / "artifacts").rglob("*.parquet")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def _run(instance: Any, processes: int, recipe: Path, state: Path) -> tuple[float, Any]:
    from assets.main import run_backfill

    shutil.rmtree(state, ignore_errors=True)
    os.environ["VOX_RECIPE"], os.environ["VOX_STATE_DIR"] = str(recipe), str(state)
    start = time.perf_counter()
    result = run_backfill(instance, concurrent=processes, tags={"bench": f"{processes}"}, log_level="WARNING")
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 0 when every run succeeded."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="vox-bench-partitions-"))
    os.environ["DAGSTER_HOME"] = str(tmp / "dagster")
    (tmp / "dagster").mkdir()
    (tmp / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    recipe, warm = tmp / "bench.yaml", tmp / "warm.yaml"
    recipe.write_text(f"corpus:\n  seed: {args.seed}\n  pairs: {args.pairs}\n  workers: 1\n")
    warm.write_text(f"corpus:\n  seed: {args.seed}\n  pairs: 200\n  workers: 1\n")

    import logging

    import dagster as dg

    logging.getLogger("dagster").setLevel(logging.WARNING)
    from assets.main import run_backfill
    from pipeline.stages import read_result

    load0 = os.getloadavg()[0]
    timings: dict[int, float] = {}
    digests: dict[int, str] = {}
    ok = True
    try:
        with dg.DagsterInstance.get() as instance:
            os.environ["VOX_RECIPE"], os.environ["VOX_STATE_DIR"] = str(warm), str(tmp / "warm")
            run_backfill(instance, concurrent=max(args.processes), log_level="WARNING")  # starts the forkserver
            for n in args.processes:
                state = tmp / f"state-{n}"
                seconds, result = _run(instance, n, recipe, state)
                ok &= bool(result.success)
                timings[n], digests[n] = seconds, _digest(state)
                gate = read_result("gated_pairs", state) if result.success else None
                rate = f"{gate['pass_rate']:.2%} of {gate['rows_in']} pairs" if gate else "run FAILED"
                print(f"{n} process(es)      : {seconds:7.1f} s wall  ({rate}; outputs {digests[n]})", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = timings.get(min(timings)) if timings else None
    for n, seconds in sorted(timings.items()):
        if base and n != min(timings):
            print(f"speed-up {min(timings)} -> {n}     : {base / seconds:7.2f}x")
    print(f"same outputs        : {len(set(digests.values())) == 1}")
    print(f"machine             : {os.cpu_count()} cores, load average {load0:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after (shared machine: other jobs compete for the cores)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
