"""Benchmark scripts run as ``python bench/NAME.py``, which puts ``bench/`` first on ``sys.path``:
a script named like an installed package hides it from every other script there
(``bench/requests.py`` broke litellm's ``import requests`` in ``bench/chat_user_tasks.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_no_bench_script_shadows_an_installed_module() -> None:
    bench = str(BENCH)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
    try:
        clashes = [p.name for p in sorted(BENCH.glob("*.py"))
                   if p.stem in sys.stdlib_module_names or importlib.util.find_spec(p.stem) is not None]
    finally:
        sys.path[:] = saved
    assert not clashes, f"rename these bench scripts (they shadow installed modules when run from {bench}): {clashes}"
