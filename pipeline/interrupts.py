"""SIGTERM and SIGINT as one exception, so a stopped run can be closed properly.

By default SIGTERM ends Python at once (no ``finally``, no ``except``) and SIGINT raises a bare
``KeyboardInterrupt``. Inside :func:`interrupts_raise`, both raise :class:`Interrupted`, naming the
signal; the code that owns the run (:func:`pipeline.train.train`) ends its MLflow run ``KILLED``
and records why, and the CLI prints one line instead of a traceback (:func:`exit_status`).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final

log = logging.getLogger(__name__)

SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)


class Interrupted(KeyboardInterrupt):
    """The process was asked to stop (SIGTERM/SIGINT). A ``KeyboardInterrupt``, so code that treats
    Ctrl-C as "stop now" (Dagster, ``except Exception`` blocks that must not swallow it) also
    handles SIGTERM.

    Attributes:
        signal_name: ``"SIGTERM"`` or ``"SIGINT"``.
    """

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


def signal_name(exc: BaseException) -> str:
    """``SIGTERM``/``SIGINT`` for an interrupt (a bare ``KeyboardInterrupt`` is SIGINT)."""
    return exc.signal_name if isinstance(exc, Interrupted) else "SIGINT"


@contextmanager
def interrupts_raise() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise :class:`Interrupted` (once: a second signal while
    the first is being handled is logged and ignored, so cleanup can finish).

    Outside the main thread signals cannot be handled in Python; the block then runs unchanged.
    """
    fired: list[str] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if fired:
            log.warning("%s received while stopping after %s; finishing cleanup first", name, fired[0])
            return
        fired.append(name)
        raise Interrupted(name)

    with _handling(handler):
        yield


def exit_status(exc: BaseException) -> int:
    """The shell's status for a process ended by the signal: 128 + signal number (130, 143)."""
    return 128 + int(signal.Signals[signal_name(exc)])


@contextmanager
def interrupts_ignored(doing: str) -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT are logged and ignored, so that recording how a run ended
    (MLflow, ``run.json``) is not cut short by a stop request, e.g. the launcher stopping every worker
    after one failed; a launcher that cannot wait sends SIGKILL (torchelastic: ``shutdown_s`` later).

    Args:
        doing: what the block does, for the log line.

    Outside the main thread signals cannot be handled in Python; the block then runs unchanged.
    """

    def handler(signum: int, frame: FrameType | None) -> None:
        log.warning("%s received while %s; finishing that first", signal.Signals(signum).name, doing)

    with _handling(handler):
        yield


@contextmanager
def handlers_restored() -> Iterator[None]:
    """The SIGTERM and SIGINT handlers of before the block are back after it, whatever it did to them.

    For library code that changes them and does not put them back: Dagster's in-process execution
    (``execute_in_process``, ``execute_job``, ``materialize``) maps SIGTERM to SIGINT's handler and
    leaves it so. Where SIGINT is ignored (a process started in the background by a shell without job
    control) SIGTERM then stays ignored, and every process started afterwards inherits that across
    ``exec`` (a DDP launcher would no longer stop when told to).

    Outside the main thread handlers cannot change; the block then runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            if old is not None and signal.getsignal(s) != old:  # None: set outside Python, cannot be put back
                signal.signal(s, old)


@contextmanager
def _handling(handler: Any) -> Iterator[None]:
    """``handler`` for :data:`SIGNALS` within the block, the previous handlers restored after it;
    nothing changes outside the main thread (Python handles signals only there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
