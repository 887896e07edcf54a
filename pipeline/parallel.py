"""Process pools for the CPU-bound corpus stages (generation with preflight checks, the gate)."""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.context import BaseContext


def pool_context() -> BaseContext:
    """``fork`` where available (workers inherit the imported front end: no re-import cost),
    else the platform default (``spawn`` on macOS/Windows)."""
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else None)


def warm_front_end() -> None:
    """Build the front end's lazily loaded state (grammar, tables) in this process, so forked
    workers inherit it instead of each building it again."""
    from vox_lang import check

    check("let warm = 1")
