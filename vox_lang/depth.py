"""Run guard for the front end's tree walks: recursion headroom and a paused collector.

Nesting up to 200 source levels takes several Python frames per level, and a long operator
chain nests as deep as it is long; the walks also stop descending past :data:`MAX_DEPTH`.
The cyclic garbage collector is paused while a pass runs: a pass allocates many small,
long-lived nodes, and full collections over a large live tree made lowering and checking
superlinear (about 3× slower at 50,000 lines); the passes create no garbage cycles that
need collecting before they end.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: frames allowed while a front-end pass runs (CPython 3.11 keeps Python-to-Python calls off
#: the C stack, so this is safe); the passes cap their own depth well below it
RECURSION_LIMIT = 30_000

#: deepest tree a pass descends into; deeper subtrees are left unchecked (never a crash)
MAX_DEPTH = 2_500


@contextmanager
def pass_guard(limit: int = RECURSION_LIMIT) -> Iterator[None]:
    """Raise the recursion limit to at least ``limit`` and pause the cyclic GC for the duration."""
    old = sys.getrecursionlimit()
    if old < limit:
        sys.setrecursionlimit(limit)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_enabled:
            gc.enable()
        if old < limit:
            sys.setrecursionlimit(old)
