"""Recursion headroom for the tree walks of lowering and checking.

Nesting up to 200 source levels takes several Python frames per level, and a long operator
chain nests as deep as it is long; the walks also stop descending past their own depth caps.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

#: frames allowed while a front-end pass runs (CPython 3.11 keeps Python-to-Python calls off
#: the C stack, so this is safe); the passes cap their own depth well below it
RECURSION_LIMIT = 30_000

#: deepest tree a pass descends into; deeper subtrees are left unchecked (never a crash)
MAX_DEPTH = 2_500


@contextmanager
def deep_recursion(limit: int = RECURSION_LIMIT) -> Iterator[None]:
    """Raise the interpreter's recursion limit to at least ``limit`` for the duration."""
    old = sys.getrecursionlimit()
    if old < limit:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        if old < limit:
            sys.setrecursionlimit(old)
