"""Stack budget for the front end's recursive passes, without touching interpreter state.

Parsing, lowering and checking recurse once per nesting level (several Python frames each). They
run under whatever recursion limit the process already has — nothing here changes the recursion
limit, the garbage collector or any other process-wide setting — and each descends at most
:func:`level_budget` levels. A pass that would need more marks its sink
(:attr:`~vox_lang.diagnostics.DiagnosticSink.incomplete`) and leaves the deeper part
unchecked; :func:`vox_lang.check` then reruns the whole check in a child process
(:mod:`vox_lang.deep`) that has its own large recursion limit and thread stack, so results
never depend on how deep the caller's stack is; a part the child cannot reach either is
E0206 (:func:`out_of_budget`), so no pass ever stops early silently. Ordinary programs
(nesting up to about 30 levels) never need the child. Flat operator chains (``a + b + … + z``)
are one level whatever their length: every pass walks a chain's left spine in a loop.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Final

from vox_lang import codes

if TYPE_CHECKING:
    from vox_lang.diagnostics import DiagnosticSink
    from vox_lang.source import Span

#: deepest tree a pass descends into even with stack to spare (deeper subtrees are left
#: unchecked, never a crash); also the child process's budget
MAX_DEPTH: Final = 2_500

#: Python frames one nesting level may cost (measured: a parenthesis level ~12 frames to
#: parse and visit, an `if { }` level ~22; lowering ~4 and checking ~9 per block level)
PARSE_FRAMES_PER_LEVEL: Final = 30
PASS_FRAMES_PER_LEVEL: Final = 10

#: frames kept free for the code a pass calls at its deepest point (rendering, lookups)
RESERVE: Final = 120

#: set in the child process of :mod:`vox_lang.deep`, whose recursion limit is its own
_unbounded = False


def stack_depth() -> int:
    """Number of Python frames on the calling thread's stack."""
    depth = 0
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def level_budget(frames_per_level: int) -> int:
    """How many nesting levels a pass started here may descend (at most :data:`MAX_DEPTH`)."""
    if _unbounded:
        return MAX_DEPTH
    headroom = sys.getrecursionlimit() - stack_depth() - RESERVE
    return max(0, min(MAX_DEPTH, headroom // frames_per_level))


def allow_unbounded() -> None:
    """Lift the budget to :data:`MAX_DEPTH` (only the child process of :mod:`vox_lang.deep`
    calls this, after raising its own recursion limit and stack size)."""
    global _unbounded
    _unbounded = True


def out_of_budget(sink: DiagnosticSink, span: Span) -> None:
    """A pass stopped descending at ``span`` for lack of stack budget: never a silent result.

    In the caller's process this marks ``sink`` :attr:`~vox_lang.diagnostics.DiagnosticSink.incomplete`
    (remembering the first place, ``incomplete_at``), so :func:`vox_lang.check` reruns the
    whole check in the child process of :mod:`vox_lang.deep`, or reports E0206 there if the
    child cannot answer. In that child the budget is the deepest the front end ever goes, so
    the place is reported as E0206 ("any internal recursion failure", spec §2), once per module.
    """
    if _unbounded:
        if sink.incomplete_at is None:
            sink.incomplete_at = span
            sink.report(codes.E0206, span)
        return
    sink.incomplete = True
    if sink.incomplete_at is None:
        sink.incomplete_at = span


@contextmanager
def pass_guard(limit: int = 30_000) -> Iterator[None]:
    """Deprecated for front-end passes (they no longer need it): raise the recursion limit to
    at least ``limit`` while the block runs. Kept for callers outside the front end; note it
    changes a process-wide setting."""
    old = sys.getrecursionlimit()
    if old < limit:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        if old < limit:
            sys.setrecursionlimit(old)
