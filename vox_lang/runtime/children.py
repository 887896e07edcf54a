"""The host processes one run started (``std.process``, spec §11): each is started in its own
session, so it and everything it starts form one process group, and every group is killed
when the run ends, however it ends (normally, ``process.exit``, a fault, R0010). A Vox
program, model-written or not, cannot leave processes running behind it.

On POSIX a group is killed with ``SIGKILL`` via :func:`os.killpg`; elsewhere (Windows) only
the direct child is killed (:meth:`subprocess.Popen.kill`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import Any, Final

#: seconds to wait for a killed child to be reaped (it is already dead; this only collects it)
REAP_WAIT_S: Final = 1.0


def _own_group() -> bool:
    return os.name == "posix" and hasattr(os, "killpg")


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """Kill ``proc`` and, on POSIX, every process of its group (it was started as the leader
    of a new session, see :meth:`Children.popen`). Never raises: a group that is already gone,
    or that may not be signalled, is skipped."""
    if _own_group():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except OSError:
        pass


class Children:
    """The processes started by one run; thread-safe (a run's worker thread starts them, the
    caller's thread may end the run after R0010)."""

    def __init__(self) -> None:
        self._procs: list[subprocess.Popen[Any]] = []
        self._lock = threading.Lock()
        self._closed = False

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """Start ``argv`` (``subprocess.Popen`` arguments in ``kwargs``) in a new session and
        track it until :meth:`kill_all`.

        Raises:
            OSError: the command cannot be started, or the run has already ended (the
                program then sees ``Error(message)``).
        """
        if _own_group():
            kwargs["start_new_session"] = True
        with self._lock:
            if self._closed:
                raise OSError("the run has ended; no process may be started")
            proc = subprocess.Popen(argv, **kwargs)
            self._procs.append(proc)
        return proc

    def finish(self, proc: subprocess.Popen[Any]) -> None:
        """``proc`` was run to completion and reaped (``process.run``): kill what it left in its
        group (a ``cmd &`` it did not wait for) and stop tracking it. Never raises."""
        with self._lock:
            if proc in self._procs:
                self._procs.remove(proc)
        # the leader is reaped, so its id names the group only while a member is left; the
        # kill follows the reaping at once, before an unrelated process could take that id
        kill_group(proc)

    def kill_all(self) -> None:
        """Kill every tracked process group and reap the direct children; later
        :meth:`popen` calls fail. Idempotent; never raises.

        A child is reaped only here, after its group is killed, so the group id cannot have
        been reused by an unrelated process when the signal is sent.
        """
        with self._lock:
            self._closed = True
            procs, self._procs = self._procs, []
        for proc in procs:
            if proc.returncode is None:
                kill_group(proc)
        for proc in procs:
            try:
                proc.wait(timeout=REAP_WAIT_S)
            except subprocess.TimeoutExpired:
                pass

    def __len__(self) -> int:
        return len(self._procs)
