"""One runner at a time per run directory (training, export): an OS file lock with a clear message.

``filelock.FileLock`` holds an ``flock`` on ``<dir>/.lock``; the kernel drops it when the holder
exits, even on SIGKILL, so a crashed runner never leaves a stale lock behind. A second runner
waits up to ``timeout`` seconds (``$VOX_LOCK_TIMEOUT``, default one hour: training the same run
twice at once would corrupt its checkpoints) and then fails with a message naming the directory
and the process holding it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import TrainingError

log = logging.getLogger(__name__)

LOCK_NAME = ".lock"
#: default wait for a busy run directory, in seconds (``$VOX_LOCK_TIMEOUT`` overrides)
DEFAULT_TIMEOUT_S = 3600.0


def _holder(info: Path) -> str:
    try:
        return info.read_text(encoding="utf-8").strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def run_lock(directory: Path, what: str, timeout: float | None = None) -> Iterator[None]:
    """Hold the lock of ``directory`` for the block.

    Args:
        directory: the run directory (created if missing); the lock file is ``directory/.lock``.
        what: what the runner does, for messages (``"training"``, ``"export"``).
        timeout: seconds to wait for another holder (``None``: ``$VOX_LOCK_TIMEOUT`` or one hour;
            ``0``: fail at once).

    Raises:
        TrainingError: the lock was still held after ``timeout`` seconds (names the directory and
            the holder's pid and command).
    """
    from filelock import FileLock, Timeout

    directory.mkdir(parents=True, exist_ok=True)
    wait = float(os.environ.get("VOX_LOCK_TIMEOUT", DEFAULT_TIMEOUT_S)) if timeout is None else timeout
    lock, info = FileLock(str(directory / LOCK_NAME)), directory / f"{LOCK_NAME}.holder"
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log.info("%s: %s is busy (%s); waiting up to %.0f s", what, directory, _holder(info), wait)
        try:
            lock.acquire(timeout=wait)
        except Timeout:
            raise TrainingError(f"{what}: {directory} is in use by {_holder(info)} (waited {wait:g} s); "
                                f"let it finish or stop it, then run again") from None
    try:
        info.write_text(f"pid {os.getpid()} ({what})\n", encoding="utf-8")
        yield
    finally:
        info.unlink(missing_ok=True)
        lock.release()
