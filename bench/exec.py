"""Benchmark: the Vox executor against plain CPython on the same machine, in the same run.

Two programs (issue 11): recursive ``fib(25)`` (about 243,000 calls) and a 1,000,000-iteration
loop summing ints (written as a ``while`` loop and as ``for i in range(…)``). Prints seconds and
the ratio to the same program in plain Python (goal: within 20x for both). Times are the best
of ``--repeat`` runs, compile time excluded (it is printed separately).

    .venv/bin/python bench/exec.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FIB_VOX = """
fn fib(n: int) to int {
  if n < 2 { ret n }
  ret fib(n - 1) + fib(n - 2)
}
print(fib(25))
"""

WHILE_VOX = """
let mut total = 0
let mut i = 0
while i < 1000000 {
  total = total + i
  i = i + 1
}
print(total)
"""

FOR_VOX = """
fn sum_to(n: int) to int {
  let mut total = 0
  for i in range(0, n) {
    total = total + i
  }
  ret total
}
print(sum_to(1000000))
"""


def fib(n: int) -> int:
    """The Python twin of ``FIB_VOX``."""
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def while_sum() -> int:
    """The Python twin of ``WHILE_VOX``."""
    total = 0
    i = 0
    while i < 1000000:
        total = total + i
        i = i + 1
    return total


def for_sum(n: int) -> int:
    """The Python twin of ``FOR_VOX``."""
    total = 0
    for i in range(n):
        total = total + i
    return total


def best(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 0 when both programs are within the 20x goal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--goal", type=float, default=20.0)
    args = parser.parse_args(argv)

    from vox_lang import check
    from vox_lang.runtime import RunConfig, run_checked
    from vox_lang.runtime.typed import TypeInfo

    cfg = RunConfig(max_steps=100_000_000, timeout_s=120.0)
    cases = [("fib(25)", FIB_VOX, lambda: fib(25), "75025"),
             ("while sum 1e6", WHILE_VOX, while_sum, "499999500000"),
             ("for-range sum 1e6", FOR_VOX, lambda: for_sum(1000000), "499999500000")]
    ok = True
    print(f"{'program':<20} {'vox s':>8} {'python s':>9} {'ratio':>7}   "
          f"(best of {args.repeat}; goal <= {args.goal:g}x)")
    for name, src, py, want in cases:
        t0 = time.perf_counter()
        res = check(src)
        assert res.hir is not None, f"{name}: {res.errors}"
        types = TypeInfo(res.hir, res.source)
        prep = time.perf_counter() - t0
        outputs: list[str] = []

        def run_vox(res: Any = res, types: Any = types, outputs: list[str] = outputs) -> None:
            r = run_checked(res, cfg, types)
            outputs.append(r.output.strip() if r.status == "ok" else f"{r.status}: {r.fault or r.message}")

        vox_s = best(run_vox, args.repeat)
        py_s = best(py, args.repeat)
        ratio = vox_s / py_s
        ok = ok and ratio <= args.goal and outputs[-1] == want
        print(f"{name:<20} {vox_s:8.3f} {py_s:9.4f} {ratio:6.1f}x   output {outputs[-1]} "
              f"(check+types {prep * 1000:.0f} ms)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
