"""Checking programs nested deeper than the caller's stack allows, in a child process.

The front end never changes process-wide settings (:mod:`vox_lang.depth`). When a pass runs
out of stack budget, :func:`vox_lang.check` calls :func:`check_in_child`: a fresh Python
process (``python -m vox_lang.deep``) raises *its own* recursion limit, runs the whole check
in a thread with a large stack and sends the :class:`~vox_lang.api.CheckResult` back pickled
over a pipe (our own child: trusted data). Only pathological inputs (nesting beyond about 30
levels, call or method chains of hundreds of links) take this path; it costs one interpreter
start.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from vox_lang.api import CheckResult

#: the child's recursion limit and thread stack (a 2,500-level tree takes ~25,000 frames
#: in the deepest pass; CPython 3.11 keeps Python-to-Python calls off the C stack)
CHILD_RECURSION_LIMIT: Final = 60_000
CHILD_STACK_BYTES: Final = 512 * 1024 * 1024
#: seconds a child may take (1 MB pathological inputs take a few seconds)
CHILD_TIMEOUT: Final = 300


class DeepCheckError(RuntimeError):
    """The child process could not be started or did not answer (a bug or a broken install)."""


def check_in_child(source: str | bytes, path: str, strict: bool) -> CheckResult:
    """Run :func:`vox_lang.api.check_here` on ``source`` in a child process.

    Raises:
        DeepCheckError: the child failed to start, crashed or timed out.
    """
    request = pickle.dumps((source, path, strict), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "vox_lang.deep"], input=request, capture_output=True,
            timeout=CHILD_TIMEOUT, check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise DeepCheckError(f"vox_lang.deep: cannot run the child process: {exc}") from exc
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise DeepCheckError(f"vox_lang.deep: child exited {proc.returncode}: {tail[0]}")
    result: CheckResult = pickle.loads(proc.stdout)
    return result


def _child() -> None:
    """Child side: read the request from stdin, check with a deep stack, write the result."""
    from vox_lang.api import check_here
    from vox_lang.depth import allow_unbounded

    source, path, strict = pickle.loads(sys.stdin.buffer.read())
    sys.setrecursionlimit(CHILD_RECURSION_LIMIT)  # this process only
    allow_unbounded()
    threading.stack_size(CHILD_STACK_BYTES)
    out: list[bytes] = []

    def work() -> None:
        result = check_here(source, path, strict)
        out.append(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))

    worker = threading.Thread(target=work, name="vox-deep-check")
    worker.start()
    worker.join()
    if not out:
        raise SystemExit("vox_lang.deep: the check raised (see above)")
    sys.stdout.buffer.write(out[0])


if __name__ == "__main__":
    _child()
